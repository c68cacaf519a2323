package pipeline

import (
	"context"
	"errors"
	"fmt"

	"streamd/feed"
	"streamd/items"
	"streamd/summary"
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
		// A hierarchy stream's levels change at one cut (hierarchy.mu).
		if s.hier != nil {
			s.hier.mu.Lock()
		}
		for _, x := range s.withLevels() {
			x.mu.Lock()
			for _, pt := range x.kafka {
				pt.released = !set[pt.src]
			}
			x.version++
			x.mu.Unlock()
		}
		if s.hier != nil {
			s.hier.mu.Unlock()
		}
	}
}

// A PartState is the encoded state of one stream's values from one Kafka
// partition: what a daemon hands to the next owner of the partition.
type PartState struct {
	Stream string
	Data   []byte
}

// PartitionState returns the state of every stream's part of partition tp,
// streams in no particular order; a hierarchy stream's is followed by
// that of each of its levels' parts, named "stream#level" (levels 1 to
// L−2), all taken at one cut. Each part is encoded under its stream's
// lock; for one consistent cut of the partition, the caller stops its
// delivery around the call (as a Kafka barrier does).
func (p *Pipeline) PartitionState(tp feed.Source) ([]PartState, error) {
	if tp == feed.Local {
		return nil, errors.New("partition state: not a kafka partition")
	}
	var out []PartState
	for _, s := range p.all() {
		states, err := s.partitionState(p.streams, tp, p.itemKey)
		if err != nil {
			return nil, fmt.Errorf("partition state of %s, stream %q: %w", tp, s.name, err)
		}
		out = append(out, states...)
	}
	return out, nil
}

// partitionState returns the state of s's part of tp, none if it has
// none or s is no longer in t, and for a hierarchy stream those of its
// levels' parts. A stream is deleted from t before its buffers, which hold
// its pending values, are released under its lock and its hierarchy's
// (Delete): one still in t under them is whole until they are unlocked.
func (s *Stream) partitionState(t *streamTable, tp feed.Source, key items.Key) ([]PartState, error) {
	if s.hier != nil {
		s.hier.mu.Lock()
		defer s.hier.mu.Unlock()
	}
	var out []PartState
	for _, x := range s.withLevels() {
		x.mu.Lock()
		if x == s && t.get(s.name) != s { // deleted: its state may be gone
			x.mu.Unlock()
			return nil, nil
		}
		pt := x.kafkaPart(tp)
		var data []byte
		var err error
		if pt != nil {
			data, err = pt.marshal(key)
		}
		x.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if data != nil {
			out = append(out, PartState{Stream: x.name, Data: data})
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
// reason (feed.RefusalReason) and logged. So does the part of a hierarchy
// stream that comes without its levels' parts (the states PartitionState
// names "stream#level"), or with levels that do not match the stream's
// here, as do levels' parts for a stream without a hierarchy here: a
// hierarchy stream must be created on every daemon of the group before
// its partitions move.
func (p *Pipeline) ReplacePartition(ctx context.Context, tp feed.Source, states []PartState) error {
	if tp == feed.Local {
		return errors.New("replace partition: not a kafka partition")
	}
	decoded := make(map[string]*decodedPart, len(states))
	levels := make(map[string]map[int]*decodedPart) // of hierarchy streams, by stream and level
	for _, st := range states {
		name, level, err := splitLevelName(st.Stream)
		if err != nil {
			return fmt.Errorf("replace partition %s: %w", tp, err)
		}
		d, err := unmarshalPart(st.Data, nil, nil)
		if err != nil {
			return fmt.Errorf("replace partition %s, stream %q: %w", tp, st.Stream, err)
		}
		if d.src != tp {
			return fmt.Errorf("replace partition %s: a part of %s", tp, d.src)
		}
		d.released = false
		if level > 0 {
			if levels[name] == nil {
				levels[name] = make(map[int]*decodedPart)
			}
			levels[name][level] = d
			continue
		}
		decoded[st.Stream] = d
	}
	for _, s := range p.all() {
		if d := decoded[s.name]; d != nil && s.IsItems() == d.sum.Config().Items && s.checkLevelParts(d, levels[s.name]) == nil {
			continue // installed below, in place of its part of tp, with its levels'
		}
		// A hierarchy stream's part and its levels' go at one cut
		// (hierarchy.mu), as they are installed: a query or a snapshot
		// never sees the levels count other items than the stream, which
		// a snapshot would not restore (sameCounts).
		if s.hier != nil {
			s.hier.mu.Lock()
		}
		s.mu.Lock()
		if pt := s.removeKafkaPart(tp); pt != nil {
			s.dropLocked(pt)
		}
		s.mu.Unlock()
		s.dropLevelParts(tp)
		if s.hier != nil {
			s.hier.mu.Unlock()
		}
	}
	// The parts that came with another configuration than their stream's,
	// and the first of them.
	var other struct {
		n            int
		name         string
		part, stream summary.Config
	}
	for name, d := range decoded {
		s, _, err := p.getOrCreate(name, d.sum.Config(), d.src)
		if err == nil && s.IsItems() != d.sum.Config().Items {
			err = fmt.Errorf("%w: a part of an item stream and a value stream %q, or the other way round", ErrWrongKind, name)
		}
		if err == nil {
			err = s.checkLevelParts(d, levels[name])
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
		// A part made with another ε, window or sliding window (a daemon
		// of the group configured otherwise) keeps its own (install): its
		// values are kept, and the stream's answers merge both bounds.
		if c := d.sum.Config(); !c.SameSummaries(*s.cfg) {
			if other.n == 0 {
				other.name, other.part, other.stream = name, c, *s.cfg
			}
			other.n++
		}
		if s.hier != nil {
			s.hier.mu.Lock()
		}
		// Each level's part of tp is replaced in the cut that replaces the
		// stream's (install drops the old one), or dropped where the level
		// has none to install: an empty part (checkLevelParts).
		for l, x := range s.withLevels() {
			dl := d
			if l > 0 {
				dl = levels[name][l]
			}
			x.mu.Lock()
			if dl != nil {
				x.install(dl, p.itemKey)
			} else if pt := x.removeKafkaPart(tp); pt != nil {
				x.dropLocked(pt)
			}
			x.mu.Unlock()
		}
		if s.hier != nil {
			s.hier.mu.Unlock()
		}
		for _, x := range s.withLevels() {
			if err := p.sendPending(ctx, x); err != nil {
				return fmt.Errorf("replace partition %s: %w", tp, err)
			}
		}
	}
	if other.n > 0 {
		p.cfg.Logger.Warn("replace partition: parts made with another configuration than their streams' here; kept, and their streams' answers merge both bounds",
			"partition", tp.String(), "parts", other.n, "stream", other.name,
			"part_epsilon", other.part.Epsilon, "stream_epsilon", other.stream.Epsilon,
			"part_window", other.part.WindowSize, "stream_window", other.stream.WindowSize,
			"part_sliding_window", other.part.SlidingWindow, "stream_sliding_window", other.stream.SlidingWindow)
	}
	for name := range levels {
		if decoded[name] == nil {
			p.cfg.Logger.Error("replace partition: the parts of a hierarchy stream's levels without its own; dropped", "partition", tp.String(), "stream", name)
		}
	}
	return nil
}
