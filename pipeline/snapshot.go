package pipeline

import (
	"context"
	"encoding/binary"
	"fmt"

	"streamd/ingest"
	"streamd/internal/codec"
	"streamd/slidingwindow"
	"streamd/summary"
	"streamd/window"
)

// Snapshot encoding (see streamd/internal/codec for the envelope), magic
// "PIPE", version 2:
//
//	rejects  uvarint count, then reason (length-prefixed) and uvarint n
//	streams  uvarint count, then per stream:
//	         name (length-prefixed), configuration (epsilon float64,
//	         window size uvarint, sliding window uvarint, float64 flag
//	         uint8), sliding window (length-prefixed), uvarint count of
//	         parts, each a part encoding (length-prefixed), local part
//	         first
//
// Part encoding, magic "PART", version 1 (also what PartitionState hands
// to another daemon):
//
//	source   topic (length-prefixed, empty for the local part), partition
//	         uvarint, released flag uint8
//	summary  summary.Stream, history only (length-prefixed)
//	pending  uvarint count, float64 LE values (the windows in flight,
//	         oldest first, and the partial window)
//	rejects  as above
//
// Version 1 kept one summary.Stream per stream, sliding window included,
// with its pending values and rejects; it still restores, as the local
// part of each stream.
const (
	snapshotMagic     = "PIPE"
	snapshotVersion   = 2
	snapshotVersionV1 = 1
	partMagic         = "PART"
	partVersion       = 1
)

// Snapshot encodes every stream's state: its sliding window and the
// summaries, pending values and reject counts of each of its parts. Each
// stream is encoded under its lock, so each is consistent; a caller that
// needs one consistent cut across streams (Kafka offsets) stops delivery
// around it.
func (p *Pipeline) Snapshot() ([]byte, error) {
	dst := codec.Begin(nil, snapshotMagic, snapshotVersion)
	dst = appendRejects(dst, p.Rejected())
	streams := p.all()
	dst = binary.AppendUvarint(dst, uint64(len(streams)))
	var err error
	for _, s := range streams {
		if dst, err = s.appendState(dst); err != nil {
			return nil, fmt.Errorf("snapshot %q: %w", s.name, err)
		}
	}
	return codec.End(dst, 0), nil
}

// all returns every stream.
func (p *Pipeline) all() []*Stream {
	p.mu.RLock()
	defer p.mu.RUnlock()
	streams := make([]*Stream, 0, len(p.streams))
	for _, s := range p.streams {
		streams = append(streams, s)
	}
	return streams
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
	dst = appendConfig(dst, s.cfg)
	recent, err := s.recent.MarshalBinary()
	if err != nil {
		return nil, err
	}
	dst = codec.AppendBytes(dst, recent)
	dst = binary.AppendUvarint(dst, uint64(1+len(s.kafka)))
	for _, src := range append([]ingest.TopicPartition{Local}, sortedSources(s.kafka)...) {
		b, err := s.partLocked(src).marshal()
		if err != nil {
			return nil, err
		}
		dst = codec.AppendBytes(dst, b)
	}
	return dst, nil
}

func appendConfig(dst []byte, cfg summary.Config) []byte {
	dst = codec.AppendFloat64(dst, cfg.Epsilon)
	dst = binary.AppendUvarint(dst, uint64(cfg.WindowSize))
	dst = binary.AppendUvarint(dst, uint64(cfg.SlidingWindow))
	if cfg.Float64 {
		return append(dst, 1)
	}
	return append(dst, 0)
}

func readConfig(r *codec.Reader) (summary.Config, error) {
	var cfg summary.Config
	cfg.Epsilon = r.Float64()
	cfg.WindowSize = int(r.Int("window size", summary.MaxWindowSize))
	cfg.SlidingWindow = r.Int("sliding window", summary.MaxSlidingWindow)
	switch r.Byte() {
	case 0:
	case 1:
		cfg.Float64 = true
	default:
		return cfg, fmt.Errorf("%w: bad precision flag", codec.ErrCorrupt)
	}
	if err := r.Err(); err != nil {
		return cfg, err
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("%w: %w", codec.ErrCorrupt, err)
	}
	return cfg, nil
}

// marshal returns the part's encoding. The caller holds the stream's lock.
func (pt *part) marshal() ([]byte, error) {
	dst := codec.Begin(nil, partMagic, partVersion)
	dst = codec.AppendBytes(dst, []byte(pt.src.Topic))
	dst = binary.AppendUvarint(dst, uint64(pt.src.Partition))
	var released byte
	if pt.released {
		released = 1
	}
	dst = append(dst, released)
	sum, err := pt.sum.MarshalBinary()
	if err != nil {
		return nil, err
	}
	dst = codec.AppendBytes(dst, sum)
	dst = appendPending(dst, pt.pendingLocked())
	dst = appendRejects(dst, pt.rejected)
	return codec.End(dst, 0), nil
}

func appendPending(dst []byte, pending []float64) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(pending)))
	for _, v := range pending {
		dst = codec.AppendFloat64(dst, v)
	}
	return dst
}

func readPending(r *codec.Reader) []float64 {
	n := r.Int("pending", int64(r.Remaining()/8))
	pending := make([]float64, 0, n)
	for range n {
		pending = append(pending, r.Float64())
	}
	return pending
}

// A decodedPart is a part's state read from its encoding, not yet part of
// a stream.
type decodedPart struct {
	src      ingest.TopicPartition
	released bool
	sum      *summary.Stream
	pending  []float64
	rejected map[ingest.Reason]uint64
}

// unmarshalPart decodes a part encoding; bad input gives an error wrapping
// codec.ErrCorrupt.
func unmarshalPart(data []byte) (*decodedPart, error) {
	payload, err := codec.Open(data, partMagic, partVersion)
	if err != nil {
		return nil, err
	}
	r := codec.NewReader(payload)
	d := &decodedPart{}
	d.src.Topic = string(r.Bytes("topic", 255))
	d.src.Partition = int(r.Int("partition", 1<<31-1))
	switch r.Byte() {
	case 0:
	case 1:
		d.released = true
	default:
		return nil, fmt.Errorf("%w: bad released flag", codec.ErrCorrupt)
	}
	sumBytes := r.Bytes("summary", r.Remaining())
	if err := r.Err(); err != nil {
		return nil, err
	}
	if d.src.Topic == "" && (d.src.Partition != 0 || d.released) {
		return nil, fmt.Errorf("%w: local part with a partition", codec.ErrCorrupt)
	}
	d.sum = new(summary.Stream)
	if err := d.sum.UnmarshalBinary(sumBytes); err != nil {
		return nil, err
	}
	if d.sum.Recent() != nil {
		return nil, fmt.Errorf("%w: a part with a sliding window", codec.ErrCorrupt)
	}
	d.pending = readPending(r)
	d.rejected = readRejects(r)
	if err := r.Done(); err != nil {
		return nil, err
	}
	if st := d.sum.Stats(); int64(len(d.pending)) != st.Count-st.Summarised {
		return nil, fmt.Errorf("%w: %d pending values for %d unsummarised", codec.ErrCorrupt, len(d.pending), st.Count-st.Summarised)
	}
	return d, nil
}

// install makes d a part of s, refilling its windows from the pending
// values (observed already: they are not observed again) and queueing the
// full ones for the sorter. The caller holds s.mu.
func (s *Stream) install(d *decodedPart) *part {
	s.version++
	pt := partOf(s, d.src, d.sum)
	pt.released = d.released
	pt.rejected = d.rejected
	pt.filler.Append(d.pending, func(w *window.Window) {
		pt.addInflight(w)
		s.pendingQ = append(s.pendingQ, w)
	})
	if d.src == Local {
		s.local = pt
		return pt
	}
	if s.kafka == nil {
		s.kafka = make(map[ingest.TopicPartition]*part)
	}
	if old := s.kafka[d.src]; old != nil {
		old.detached = true
	}
	s.kafka[d.src] = pt
	return pt
}

// Restore replaces the pipeline's streams with those of a Snapshot. It
// must be called before Open; the restored windows that were in flight are
// sorted once the pipeline opens. Bad input gives an error wrapping
// codec.ErrCorrupt and changes nothing.
func (p *Pipeline) Restore(data []byte) error {
	version := byte(snapshotVersion)
	if len(data) > 4 && data[4] == snapshotVersionV1 {
		version = snapshotVersionV1
	}
	payload, err := codec.Open(data, snapshotMagic, version)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	r := codec.NewReader(payload)
	rejected := readRejects(r)
	n := r.Int("streams", int64(r.Remaining()))
	streams := make(map[string]*Stream, min(n, 1<<16))
	for range n {
		name := string(r.Bytes("name", ingest.MaxStreamNameLen))
		if err := r.Err(); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		if err := ingest.ValidStreamName(name); err != nil {
			return fmt.Errorf("restore: %w: %v", codec.ErrCorrupt, err)
		}
		read := readStream
		if version == snapshotVersionV1 {
			read = readStreamV1
		}
		s, err := read(r, name, &p.buffers)
		if err != nil {
			return fmt.Errorf("restore %q: %w", name, err)
		}
		streams[name] = s
	}
	if err := r.Done(); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.streams = streams
	p.rejectMu.Lock()
	p.rejected = rejected
	p.rejectMu.Unlock()
	return nil
}

// readStream reads a stream of a version 2 snapshot.
func readStream(r *codec.Reader, name string, pool *window.Pool) (*Stream, error) {
	cfg, err := readConfig(r)
	if err != nil {
		return nil, err
	}
	recentBytes := r.Bytes("sliding window", r.Remaining())
	nparts := r.Int("parts", int64(r.Remaining()))
	if err := r.Err(); err != nil {
		return nil, err
	}
	s := &Stream{name: name, float64: cfg.Float64, pool: pool, cfg: cfg, recent: new(slidingwindow.Window)}
	if err := s.recent.UnmarshalBinary(recentBytes); err != nil {
		return nil, err
	}
	if s.recent.Epsilon() != cfg.Epsilon || s.recent.Capacity() != cfg.SlidingWindow {
		return nil, fmt.Errorf("%w: sliding window does not match the configuration", codec.ErrCorrupt)
	}
	for i := range nparts {
		b := r.Bytes("part", r.Remaining())
		if err := r.Err(); err != nil {
			return nil, err
		}
		d, err := unmarshalPart(b)
		if err != nil {
			return nil, err
		}
		if (i == 0) != (d.src == Local) || (i > 0 && s.kafka[d.src] != nil) {
			return nil, fmt.Errorf("%w: parts out of order", codec.ErrCorrupt)
		}
		s.install(d)
	}
	if s.local == nil {
		return nil, fmt.Errorf("%w: no local part", codec.ErrCorrupt)
	}
	return s, nil
}

// readStreamV1 reads a stream of a version 1 snapshot: one summary with
// its sliding window, which becomes the stream's, and the rest its local
// part.
func readStreamV1(r *codec.Reader, name string, pool *window.Pool) (*Stream, error) {
	sumBytes := r.Bytes("summary", r.Remaining())
	if err := r.Err(); err != nil {
		return nil, err
	}
	sum := new(summary.Stream)
	if err := sum.UnmarshalBinary(sumBytes); err != nil {
		return nil, err
	}
	recent := sum.DetachRecent()
	if recent == nil {
		return nil, fmt.Errorf("%w: no sliding window", codec.ErrCorrupt)
	}
	d := &decodedPart{src: Local, sum: sum}
	d.pending = readPending(r)
	d.rejected = readRejects(r)
	if err := r.Err(); err != nil {
		return nil, err
	}
	if st := sum.Stats(); int64(len(d.pending)) != st.Count-st.Summarised {
		return nil, fmt.Errorf("%w: %d pending values for %d unsummarised", codec.ErrCorrupt, len(d.pending), st.Count-st.Summarised)
	}
	cfg := sum.Config()
	s := &Stream{name: name, float64: cfg.Float64, pool: pool, cfg: cfg, recent: recent}
	s.install(d)
	return s, nil
}

// sendRestored queues the windows that were in flight at the snapshot.
func (p *Pipeline) sendRestored(ctx context.Context) {
	for _, s := range p.all() {
		if err := p.AcceptTo(ctx, s, nil); err != nil {
			p.cfg.Logger.Error("queue restored windows", "stream", s.name, "err", err)
		}
	}
}
