package pipeline

import (
	"context"
	"encoding/binary"
	"fmt"

	"streamd/ingest"
	"streamd/internal/codec"
	"streamd/items"
	"streamd/summary"
	"streamd/window"
)

// Snapshot encoding (see streamd/internal/codec for the envelope), magic
// "PIPE", version 2:
//
//	item key [16]byte (version 2)
//	rejects  uvarint count, then reason (length-prefixed) and uvarint n
//	streams  uvarint count, then per stream:
//	         name (length-prefixed), summary.Stream (length-prefixed),
//	         pending: uvarint count, float64 LE values (the partial window
//	         and the windows in flight, oldest first), rejects as above,
//	         and for an item stream (version 2) its items.Names
//	         (length-prefixed)
//
// Version 1, without item streams, is read too.
const (
	snapshotMagic   = "PIPE"
	snapshotVersion = 2
)

// Snapshot encodes every stream's state: its summaries, the values
// accepted but not yet summarised, and its reject counts. Each stream is
// encoded under its lock, so each is consistent; a caller that needs one
// consistent cut across streams (Kafka offsets) stops delivery around it.
func (p *Pipeline) Snapshot() ([]byte, error) {
	dst := codec.Begin(nil, snapshotMagic, snapshotVersion)
	dst = append(dst, p.itemKey[:]...)
	dst = appendRejects(dst, p.Rejected())
	p.mu.RLock()
	streams := make([]*Stream, 0, len(p.streams))
	for _, s := range p.streams {
		streams = append(streams, s)
	}
	p.mu.RUnlock()
	dst = binary.AppendUvarint(dst, uint64(len(streams)))
	var err error
	for _, s := range streams {
		if dst, err = s.appendState(dst); err != nil {
			return nil, fmt.Errorf("snapshot %q: %w", s.name, err)
		}
	}
	return codec.End(dst, 0), nil
}

func appendRejects(dst []byte, m map[ingest.Reason]uint64) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(m)))
	for r, n := range m {
		dst = codec.AppendBytes(dst, []byte(r))
		dst = binary.AppendUvarint(dst, n)
	}
	return dst
}

func readRejects(r *codec.Reader) map[ingest.Reason]uint64 {
	n := r.Int("rejects", int64(r.Remaining()))
	m := make(map[ingest.Reason]uint64, min(n, 64))
	for range n {
		reason := ingest.Reason(r.Bytes("reason", 64))
		m[reason] += r.Uvarint()
	}
	return m
}

func (s *Stream) appendState(dst []byte) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	dst = codec.AppendBytes(dst, []byte(s.name))
	sum, err := s.sum.MarshalBinary()
	if err != nil {
		return nil, err
	}
	dst = codec.AppendBytes(dst, sum)
	pending := s.pendingLocked()
	dst = binary.AppendUvarint(dst, uint64(len(pending)))
	for _, v := range pending {
		dst = codec.AppendFloat64(dst, v)
	}
	dst = appendRejects(dst, s.rejected)
	if s.items != nil {
		names, err := s.items.names.MarshalBinary()
		if err != nil {
			return nil, err
		}
		dst = codec.AppendBytes(dst, names)
	}
	return dst, nil
}

// pendingLocked returns the values accepted but not yet summarised: the
// windows in flight, oldest first, then the partial window.
func (s *Stream) pendingLocked() []float64 {
	n := s.filler.Len()
	for _, w := range s.inflight {
		n += w.Len()
	}
	out := make([]float64, 0, n)
	for _, w := range s.inflight {
		out = w.AppendValues(out)
	}
	return s.filler.AppendPartial(out)
}

// Restore replaces the pipeline's streams with those of a Snapshot. It
// must be called before Open; the restored windows that were in flight are
// sorted once the pipeline opens. Bad input gives an error wrapping
// codec.ErrCorrupt and changes nothing.
func (p *Pipeline) Restore(data []byte) error {
	payload, version, err := codec.OpenVersions(data, snapshotMagic, 1, snapshotVersion)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	r := codec.NewReader(payload)
	key := p.itemKey
	if version >= 2 {
		for i := range key {
			key[i] = r.Byte()
		}
	}
	hash := items.SipHash(key)
	rejected := readRejects(r)
	n := r.Int("streams", int64(r.Remaining()))
	streams := make(map[string]*Stream, min(n, 1<<16))
	for range n {
		name := string(r.Bytes("name", ingest.MaxStreamNameLen))
		sumBytes := r.Bytes("summary", r.Remaining())
		if err := r.Err(); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		if err := ingest.ValidStreamName(name); err != nil {
			return fmt.Errorf("restore: %w: %v", codec.ErrCorrupt, err)
		}
		sum := new(summary.Stream)
		if err := sum.UnmarshalBinary(sumBytes); err != nil {
			return fmt.Errorf("restore %q: %w", name, err)
		}
		s := newStream(name, sum, &p.buffers)
		np := r.Int("pending", int64(r.Remaining()/8))
		pending := make([]float64, 0, np)
		for range np {
			pending = append(pending, r.Float64())
		}
		s.rejected = readRejects(r)
		if err := r.Err(); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		if sum.Config().Items {
			names := new(items.Names)
			if err := names.UnmarshalBinary(r.Bytes("names", r.Remaining())); err != nil {
				return fmt.Errorf("restore %q: %w", name, err)
			}
			s.items = &itemStream{hash: hash, names: names}
		}
		st := sum.Stats()
		if int64(len(pending)) != st.Count-st.Summarised {
			return fmt.Errorf("restore %q: %w: %d pending values for %d unsummarised", name, codec.ErrCorrupt, len(pending), st.Count-st.Summarised)
		}
		// The pending values were observed before the snapshot: refill the
		// windows without observing them again.
		start := st.Summarised
		s.filler.Append(pending, func(w *window.Window) {
			s.addInflight(w)
			if s.items != nil {
				s.items.addWindow(w, start)
			}
			start += int64(w.Len())
		})
		s.pendingQ = nil
		s.pendingQ = append(s.pendingQ, s.inflight...)
		streams[name] = s
	}
	if err := r.Done(); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	// Restored streams are reserved even past the budget: their values
	// were accepted.
	for _, s := range streams {
		s.mem = p.mem.Restore(StreamFootprint(s.sum.Config()))
		for range s.inflight {
			s.mem.WindowFull()
		}
		s.mem.Summaries(s.summaryBytes())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.streams {
		s.mem.Close()
	}
	p.streams = streams
	p.itemKey, p.itemHash = key, hash
	p.rejectMu.Lock()
	p.rejected = rejected
	p.rejectMu.Unlock()
	return nil
}

// sendRestored queues the windows that were in flight at the snapshot.
func (p *Pipeline) sendRestored(ctx context.Context) {
	for _, name := range p.List() {
		s, err := p.Stream(name)
		if err != nil {
			continue
		}
		if err := p.AcceptTo(ctx, s, nil); err != nil {
			p.cfg.Logger.Error("queue restored windows", "stream", name, "err", err)
		}
	}
}
