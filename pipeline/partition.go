package pipeline

import (
	"context"
	"errors"
	"fmt"

	"streamd/feed"
)

// OwnPartitions says which Kafka partitions the daemon consumes now: the
// parts of every other partition are released — kept, since another
// member of the group may ask for them (PartitionState), but left out of
// the streams' answers — and the parts of these partitions count again.
// A daemon calls it at the start of each generation of its group.
func (p *Pipeline) OwnPartitions(owned []feed.Source) {
	set := make(map[feed.Source]bool, len(owned))
	for _, tp := range owned {
		set[tp] = true
	}
	for _, s := range p.all() {
		s.mu.Lock()
		for src, pt := range s.kafka {
			pt.released = !set[src]
		}
		s.version++
		s.mu.Unlock()
	}
}

// A PartState is the encoded state of one stream's values from one Kafka
// partition: what a daemon hands to the next owner of the partition.
type PartState struct {
	Stream string
	Data   []byte
}

// PartitionState returns the state of every stream's part of partition tp,
// streams in no particular order. Each part is encoded under its stream's
// lock; for one consistent cut of the partition, the caller stops its
// delivery around the call (as a Kafka barrier does).
func (p *Pipeline) PartitionState(tp feed.Source) ([]PartState, error) {
	if tp == feed.Local {
		return nil, errors.New("partition state: not a kafka partition")
	}
	var out []PartState
	for _, s := range p.all() {
		s.mu.Lock()
		pt := s.kafka[tp]
		var data []byte
		var err error
		if pt != nil {
			data, err = pt.marshal(p.itemKey)
		}
		s.mu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("partition state of %s, stream %q: %w", tp, s.name, err)
		}
		if data != nil {
			out = append(out, PartState{Stream: s.name, Data: data})
		}
	}
	return out, nil
}

// ReplacePartition replaces the state of partition tp in every stream with
// states, from PartitionState (here or in another daemon): the streams
// named there get those parts, creating the stream (with the part's
// configuration) when needed, and every other stream loses its part of
// tp. With no states it empties the partition's parts, for a partition
// consumed again from its start. The parts count in answers. A part of an
// item stream taken under another item key (another daemon's) is moved to
// this pipeline's (see items.Names.Rekey). A part replaced or emptied gives
// back its windows' buffers and memory. Bad input gives an error wrapping
// codec.ErrCorrupt and changes nothing. The caller stops delivery from tp
// around the call.
//
// A part whose stream cannot be created (the stream limit, the memory
// budget) or is of the other kind (values for an item stream, items for a
// value stream) loses its values: they are counted as rejected with the
// reason (feed.RefusalReason) and logged.
func (p *Pipeline) ReplacePartition(ctx context.Context, tp feed.Source, states []PartState) error {
	if tp == feed.Local {
		return errors.New("replace partition: not a kafka partition")
	}
	decoded := make(map[string]*decodedPart, len(states))
	for _, st := range states {
		if err := feed.ValidName(st.Stream); err != nil {
			return fmt.Errorf("replace partition %s: %w", tp, err)
		}
		d, err := unmarshalPart(st.Data)
		if err != nil {
			return fmt.Errorf("replace partition %s, stream %q: %w", tp, st.Stream, err)
		}
		if d.src != tp {
			return fmt.Errorf("replace partition %s: a part of %s", tp, d.src)
		}
		d.released = false
		decoded[st.Stream] = d
	}
	for _, s := range p.all() {
		if d := decoded[s.name]; d != nil && s.IsItems() == d.sum.Config().Items {
			continue // installed below, in place of its part of tp
		}
		s.mu.Lock()
		if pt := s.kafka[tp]; pt != nil {
			delete(s.kafka, tp)
			s.dropLocked(pt)
		}
		s.mu.Unlock()
	}
	for name, d := range decoded {
		s, _, err := p.getOrCreate(name, d.sum.Config())
		if err == nil && s.IsItems() != d.sum.Config().Items {
			err = fmt.Errorf("%w: a part of an item stream and a value stream %q, or the other way round", ErrWrongKind, name)
		}
		if err != nil {
			st := d.sum.Stats()
			p.cfg.Logger.Error("replace partition: a part not installed; its values are lost", "partition", tp.String(), "stream", name, "values", st.Count, "err", err)
			reason, ok := feed.RefusalReason(err)
			if !ok {
				reason = feed.ReasonStreamLimit
			}
			p.Reject(name, tp, reason, int(st.Count))
			continue
		}
		s.mu.Lock()
		s.install(d, p.itemKey)
		s.mu.Unlock()
		if err := p.sendPending(ctx, s); err != nil {
			return fmt.Errorf("replace partition %s: %w", tp, err)
		}
	}
	return nil
}
