package pipeline

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"slices"

	"streamd/feed"
	"streamd/internal/codec"
	"streamd/items"
	"streamd/slidingwindow"
	"streamd/summary"
	"streamd/window"
)

// Snapshot encoding (see streamd/internal/codec for the envelope), magic
// "PIPE", version 2:
//
//	item key [16]byte
//	rejects  uvarint count, then reason (length-prefixed) and uvarint n
//	streams  uvarint count, then per stream:
//	         name (length-prefixed), configuration (epsilon float64,
//	         window size uvarint, sliding window uvarint, flags uint8: 1
//	         float64, 2 items, 4 pairs, 8 hierarchy, then for a
//	         hierarchy its string form, length-prefixed), sliding window
//	         (length-prefixed), for an item stream the strings of its
//	         newest items (items.Names, length-prefixed), for a pair stream
//	         its pairs (length-prefixed: the corrsum.Summary encoding,
//	         length-prefixed, then the uvarint count of the pairs of its
//	         partial window and each pair as x and y float64 LE), uvarint
//	         count of parts (at least one), each a part encoding
//	         (length-prefixed; version 2 for the only part of a stream
//	         whose partial window is its sliding window's newest values,
//	         else version 1), the local part first if the stream has one;
//	         for a hierarchy stream then uvarint count of its level streams,
//	         levels 1 to L−2, each encoded as a stream is
//
// A snapshot without hierarchy or pair streams, or streams without a
// local part, is what it was before they were kept (flags 4 and 8 are
// new, and every stream had a local part), so version 2 stays.
//
// A delta (SaveTo), version 4, holds what changed since the snapshot or
// delta saved before it (see Saved):
//
//	item key [16]byte, as the snapshot's it follows
//	rejects  as above, all of them
//	deleted  uvarint count, then each name deleted since (length-prefixed)
//	streams  as above, only those changed or made since, each whole but
//	         for the sliding window of a value stream saved before, which
//	         holds only the values added since it was (the slidingwindow
//	         encoding's version 4: AppendBinarySince)
//
// So a delta's size follows the values added and the streams changed, not
// the values the streams hold. Version 3, from before, holds every stream
// whole, and restores as version 4 does.
//
// Restoring a snapshot, then each delta after it in order (RestoreDelta),
// gives the streams the pipeline had when the last delta was taken: a
// delta removes the streams it names deleted, then replaces or adds each
// stream it holds, a sliding window of the values added since taking the
// values before them from the stream it replaces. A stream deleted and
// made again under its name is in both lists, whole.
//
// Part encoding, magic "PART", version 1 (also what PartitionState hands
// to another daemon) or 2:
//
//	source   topic (length-prefixed, empty for the local part), partition
//	         uvarint, released flag uint8
//	summary  summary.History, history only (length-prefixed)
//	pending  uvarint count, float64 LE values (the windows in flight,
//	         oldest first, and the partial window)
//	rejects  as above
//	items    for a part of an item stream: the item key its fingerprints
//	         are taken under [16]byte, and the strings of its lossy table
//	         and of its pending items (items.Names, length-prefixed)
//
// Version 2 is version 1 without the pending values, only their count:
// they are the newest values of the stream's sliding window, written
// before the part. A snapshot writes it for the part of a stream that
// mirrors its partial window (see Stream), so that a thin stream's values
// are written once; a part on its own (PartitionState) is always version 1.
//
// Version 1, from before a stream kept its parts apart, still restores:
// see snapshot_v1.go.
const (
	snapshotMagic   = "PIPE"
	snapshotVersion = 2
	deltaVersion    = 4
	partMagic       = "PART"
	partVersion     = 1
	// partMirrored is the version of a part encoding whose pending
	// values are its stream's sliding window's newest.
	partMirrored = 2

	flagFloat64 = 1
	flagItems   = 2
	flagPairs   = 4
	// flagHierarchy marks a hierarchy stream: an item stream whose
	// hierarchy's string form follows the flags.
	flagHierarchy = 8
)

// Snapshot encodes every stream's state: its sliding window and the
// summaries, pending values and reject counts of each of its parts, and the
// item key. Each stream is encoded under its lock, so each is consistent; a
// caller that needs one consistent cut across streams (Kafka offsets) stops
// delivery around it. It holds the whole encoding in memory: SnapshotTo
// writes the same bytes as it goes.
func (p *Pipeline) Snapshot() ([]byte, error) {
	var b bytes.Buffer
	if _, err := p.SnapshotTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// SnapshotTo writes what Snapshot returns to w, one stream at a time, and
// returns the number of bytes written: each stream is encoded under its
// lock into a buffer reused from one stream to the next, then written with
// the lock released, and the checksum is computed on the way. So it holds
// in memory the encoding of one stream, not of all of them; w should be
// buffered when the streams are many and small. Kafka delivery stopped
// around it gives one consistent cut, as with Snapshot.
func (p *Pipeline) SnapshotTo(w io.Writer) (int64, error) {
	n, _, err := p.snapshotTo(w, false)
	return n, err
}

// SaveTo writes a snapshot to w as SnapshotTo does, or with delta a delta
// (see the encoding above): the streams changed since the last snapshot or
// delta saved, and the names deleted since. A stream has changed when
// anything it encodes has: its values, windows, summaries or rejects; a
// hierarchy stream, when any of its levels has. The cost of a delta
// follows the streams changed: the others are passed over by comparing two
// counters under their locks. It returns the bytes written and the Saved
// to commit once what it wrote is durable; a delta follows the last Saved
// committed (or the last Restore or RestoreDelta), so one not committed
// (its checkpoint failed) is taken again, changes and all, by the next.
func (p *Pipeline) SaveTo(w io.Writer, delta bool) (int64, *Saved, error) {
	return p.snapshotTo(w, delta)
}

// Saved is a snapshot or delta written by SaveTo, to be committed once it
// is durable.
type Saved struct {
	p         *Pipeline
	delta     bool
	streams   []*Stream // those written, levels included
	versions  []uint64  // the version of each, as written
	positions []int64   // and its sliding window's position
	// gone holds the names a delta deletes: a stream of such a name is
	// whole in it, as RestoreDelta reads it (restoredWindow).
	gone    map[string]bool
	deleted int       // how many of p.deleted it holds
	tops    []*Stream // the streams written, levels not included
}

// Commit records that what sv wrote is durable: the next delta leaves out
// the streams it wrote while they do not change again, and the deletions
// it wrote, and holds the values their sliding windows take from here on.
// It must be called at most once, before the next SaveTo, or never, when
// what sv wrote failed: a delta follows the last Saved committed, so one
// saved while an earlier one might still be committed would not follow it
// in a chain of checkpoints.
func (sv *Saved) Commit() {
	for i, s := range sv.streams {
		s.mu.Lock()
		s.saved = max(s.saved, sv.versions[i]+1)
		s.savedAt = max(s.savedAt, sv.positions[i])
		s.mu.Unlock()
	}
	p := sv.p
	// No stream is deleted from here on until Delete records deletions.
	p.streams.rlockAll()
	defer p.streams.runlockAll()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deleted = p.deleted[sv.deleted:]
	if len(p.deleted) == 0 {
		p.deleted = []string{} // not nil: Delete records deletions from now on
	}
	// A stream deleted while sv was written, maybe before Delete recorded
	// deletions, is deleted by the next delta.
	for _, s := range sv.tops {
		if p.streams.getLocked(s.name) != s {
			p.deleted = append(p.deleted, s.name)
		}
	}
}

// Streams reports how many streams sv wrote, not counting the levels of
// hierarchy streams.
func (sv *Saved) Streams() int { return len(sv.tops) }

func (p *Pipeline) snapshotTo(w io.Writer, delta bool) (int64, *Saved, error) {
	table := crc32.MakeTable(crc32.Castagnoli)
	var crc uint32
	var n int64
	write := func(b []byte) error {
		crc = crc32.Update(crc, table, b)
		m, err := w.Write(b)
		n += int64(m)
		if err != nil {
			return fmt.Errorf("write snapshot: %w", err)
		}
		return nil
	}
	sv := &Saved{p: p, delta: delta}
	var buf encodeBuf
	version := byte(snapshotVersion)
	if delta {
		version = deltaVersion
	}
	buf.b = codec.Begin(buf.b, snapshotMagic, version)
	buf.b = append(buf.b, p.itemKey[:]...)
	buf.b = appendRejects(buf.b, p.Rejected())
	// The streams and the names deleted at one cut.
	p.streams.rlockAll()
	streams := p.streams.allLocked()
	p.mu.Lock()
	deleted := p.deleted
	p.writing++
	p.mu.Unlock()
	p.streams.runlockAll()
	defer p.written()
	sv.deleted = len(deleted)
	if delta {
		buf.b = binary.AppendUvarint(buf.b, uint64(len(deleted)))
		sv.gone = make(map[string]bool, len(deleted))
		for _, name := range deleted {
			buf.b = codec.AppendBytes(buf.b, []byte(name))
			sv.gone[name] = true
		}
		streams = slices.DeleteFunc(streams, func(s *Stream) bool { return !s.changed() })
	}
	buf.b = binary.AppendUvarint(buf.b, uint64(len(streams)))
	if err := write(buf.b); err != nil {
		return n, nil, err
	}
	sv.tops = streams
	for _, s := range streams {
		if err := s.writeState(&buf, p.itemKey, write, sv); err != nil {
			return n, nil, err
		}
	}
	m, err := w.Write(binary.LittleEndian.AppendUint32(buf.b[:0], crc))
	n += int64(m)
	if err != nil {
		return n, nil, fmt.Errorf("write snapshot: %w", err)
	}
	return n, sv, nil
}

// written ends the writing of a snapshot, releasing the streams deleted
// while it was written once no other is being written.
func (p *Pipeline) written() {
	p.mu.Lock()
	p.writing--
	var streams []*Stream
	if p.writing == 0 {
		streams, p.unreleased = p.unreleased, nil
	}
	p.mu.Unlock()
	for _, s := range streams {
		p.releaseStream(s)
	}
}

// changed reports whether s, or a level of it, changed since it was last
// saved. A stream that changes after this and before it is written is
// written as it is then, and saved at that version.
func (s *Stream) changed() bool {
	if s.unsaved() {
		return true
	}
	for _, lvl := range s.levelStreams() {
		if lvl.unsaved() {
			return true
		}
	}
	return false
}

// unsaved reports whether s itself changed since it was last saved.
func (s *Stream) unsaved() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saved != s.version+1
}

// markSaved records s and its levels as saved as they are: restored.
func (s *Stream) markSaved() {
	for _, x := range s.withLevels() {
		x.mu.Lock()
		x.saved = x.version + 1
		x.savedAt = x.recent.Added()
		x.mu.Unlock()
	}
}

// An encodeBuf holds the buffers that encoding a stream uses, reused from
// one stream to the next.
type encodeBuf struct {
	b    []byte    // the stream's encoding
	vals []float64 // a part's pending values
}

// all returns every stream.
func (p *Pipeline) all() []*Stream { return p.streams.all() }

// appendRejects appends the counts of m, sorted by reason, so that equal
// states encode alike.
func appendRejects(dst []byte, m map[feed.Reason]uint64) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(m)))
	if len(m) <= 1 { // the common case, with nothing to sort
		for r, n := range m {
			dst = codec.AppendBytes(dst, []byte(r))
			dst = binary.AppendUvarint(dst, n)
		}
		return dst
	}
	for _, r := range slices.Sorted(maps.Keys(m)) {
		dst = codec.AppendBytes(dst, []byte(r))
		dst = binary.AppendUvarint(dst, m[r])
	}
	return dst
}

func readRejects(r *codec.Reader) map[feed.Reason]uint64 {
	n := r.Int("rejects", int64(r.Remaining()))
	m := make(map[feed.Reason]uint64, min(n, 64))
	for range n {
		reason := feed.Reason(r.Bytes("reason", 64))
		m[reason] += r.Uvarint()
	}
	return m
}

// writeState encodes s into buf.b and writes it with write, then, for a
// hierarchy stream, each of its levels likewise, one at a time, all under
// the hierarchy's lock: one cut of them all. It records each in sv at the
// version encoded.
func (s *Stream) writeState(buf *encodeBuf, key items.Key, write func([]byte) error, sv *Saved) error {
	if s.hier != nil {
		s.hier.mu.Lock()
		defer s.hier.mu.Unlock()
	}
	for _, x := range s.withLevels() {
		buf.b = buf.b[:0]
		since := sv.delta && x == s && s.savesSince() && !sv.gone[s.name]
		if err := x.appendState(buf, key, sv, since); err != nil {
			return fmt.Errorf("snapshot %q: %w", x.name, err)
		}
		if err := write(buf.b); err != nil {
			return err
		}
	}
	return nil
}

// savesSince reports whether a delta holds the stream's sliding window as
// the values added since it was last saved: for a value stream, whose
// window is the bulk of its state. An item stream's strings, a pair
// stream's pairs and a hierarchy's levels are whole in every delta.
func (s *Stream) savesSince() bool { return s.items == nil && s.pairs == nil && s.hier == nil }

// appendState appends the stream's encoding to buf.b, under its lock; for
// a hierarchy stream, the count of its levels, whose encodings follow
// (writeState). With since, its sliding window holds only the values
// added since it was last saved, if it was.
func (s *Stream) appendState(buf *encodeBuf, key items.Key, sv *Saved, since bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sv.streams = append(sv.streams, s)
	sv.versions = append(sv.versions, s.version)
	sv.positions = append(sv.positions, s.recent.Added())
	dst := codec.AppendBytes(buf.b, []byte(s.name))
	dst = appendConfig(dst, *s.cfg)
	// The values before savedAt are in the checkpoints before a delta.
	from := int64(-1)
	if since && s.savedAt > 0 {
		from = s.savedAt
	}
	dst, err := appendPrefixed(dst, func(dst []byte) ([]byte, error) {
		return s.recent.AppendBinarySince(dst, from)
	})
	if err != nil {
		return err
	}
	if s.items != nil {
		if dst, err = appendPrefixed(dst, s.items.recent.AppendBinary); err != nil {
			return err
		}
	}
	if s.pairs != nil {
		if dst, err = appendPrefixed(dst, s.pairs.appendState); err != nil {
			return err
		}
	}
	parts := s.partsLocked()
	dst = binary.AppendUvarint(dst, uint64(len(parts)))
	for _, pt := range parts {
		dst, err = appendPrefixed(dst, func(dst []byte) ([]byte, error) {
			return pt.appendEncoding(dst, key, &buf.vals, true)
		})
		if err != nil {
			return err
		}
	}
	if s.hier != nil {
		dst = binary.AppendUvarint(dst, uint64(len(s.hier.levels)))
	}
	buf.b = dst
	return nil
}

// appendPrefixed appends what enc appends to dst, preceded by its length
// as a uvarint, as codec.AppendBytes does, without a copy of it elsewhere
// (codec.BeginLength).
func appendPrefixed(dst []byte, enc func([]byte) ([]byte, error)) ([]byte, error) {
	dst, start := codec.BeginLength(dst)
	dst, err := enc(dst)
	if err != nil {
		return nil, err
	}
	return codec.EndLength(dst, start), nil
}

func appendConfig(dst []byte, cfg summary.Config) []byte {
	dst = codec.AppendFloat64(dst, cfg.Epsilon)
	dst = binary.AppendUvarint(dst, uint64(cfg.WindowSize))
	dst = binary.AppendUvarint(dst, uint64(cfg.SlidingWindow))
	var flags byte
	if cfg.Float64 {
		flags |= flagFloat64
	}
	if cfg.Items {
		flags |= flagItems
	}
	if cfg.Pairs {
		flags |= flagPairs
	}
	if cfg.Hierarchy != "" {
		flags |= flagHierarchy
	}
	dst = append(dst, flags)
	if cfg.Hierarchy != "" {
		dst = codec.AppendBytes(dst, []byte(cfg.Hierarchy))
	}
	return dst
}

func readConfig(r *codec.Reader) (summary.Config, error) {
	var cfg summary.Config
	cfg.Epsilon = r.Float64()
	cfg.WindowSize = int(r.Int("window size", summary.MaxWindowSize))
	cfg.SlidingWindow = r.Int("sliding window", summary.MaxSlidingWindow)
	flags := r.Byte()
	if err := r.Err(); err != nil {
		return cfg, err
	}
	// Item and pair streams keep float64 precision (summary.Config.Items,
	// Pairs), a stream is of one kind, and a hierarchy stream is an item
	// stream.
	if flags&^(flagFloat64|flagItems|flagPairs|flagHierarchy) != 0 ||
		flags&(flagFloat64|flagItems) == flagItems || flags&(flagFloat64|flagPairs) == flagPairs ||
		flags&(flagItems|flagPairs) == flagItems|flagPairs ||
		flags&flagHierarchy != 0 && flags&flagItems == 0 {
		return cfg, fmt.Errorf("%w: bad flags %#x", codec.ErrCorrupt, flags)
	}
	cfg.Float64, cfg.Items, cfg.Pairs = flags&flagFloat64 != 0, flags&flagItems != 0, flags&flagPairs != 0
	if flags&flagHierarchy != 0 {
		cfg.Hierarchy = string(r.Bytes("hierarchy", 64))
		if err := r.Err(); err != nil {
			return cfg, err
		}
		if cfg.WithDefaults().Hierarchy != cfg.Hierarchy {
			return cfg, fmt.Errorf("%w: hierarchy %q not in canonical form", codec.ErrCorrupt, cfg.Hierarchy)
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("%w: %w", codec.ErrCorrupt, err)
	}
	return cfg, nil
}

// marshal returns the part's encoding; key is the item key its
// fingerprints are taken under. The caller holds the stream's lock.
func (pt *part) marshal(key items.Key) ([]byte, error) {
	var vals []float64
	return pt.appendEncoding(nil, key, &vals, false)
}

// appendEncoding appends the part's encoding to dst, with *vals as the
// buffer of its pending values: version 2 (partMirrored) when inStream is
// set, for a snapshot of the part's stream, and the part mirrors its
// partial window, else version 1. The caller holds the stream's lock.
func (pt *part) appendEncoding(dst []byte, key items.Key, vals *[]float64, inStream bool) ([]byte, error) {
	start := len(dst)
	mirrored := inStream && pt.mirrored > 0 && len(pt.inflight) == 0
	version := byte(partVersion)
	if mirrored {
		version = partMirrored
	}
	dst = codec.Begin(dst, partMagic, version)
	dst = codec.AppendBytes(dst, []byte(pt.src.Topic))
	dst = binary.AppendUvarint(dst, uint64(pt.src.Partition))
	var released byte
	if pt.released {
		released = 1
	}
	dst = append(dst, released)
	dst, err := appendPrefixed(dst, pt.sum.AppendBinary)
	if err != nil {
		return nil, err
	}
	if mirrored {
		dst = binary.AppendUvarint(dst, uint64(pt.mirrored))
		dst = appendRejects(dst, pt.rejected)
		return codec.End(dst, start), nil
	}
	// The pending values, as pendingLocked returns them.
	n := pt.partialLen()
	for _, w := range pt.inflight {
		n += w.Len()
	}
	pending := slices.Grow((*vals)[:0], n)
	for _, w := range pt.inflight {
		pending = w.AppendValues(pending)
	}
	pending = pt.appendPartialLocked(pending)
	*vals = pending
	dst = appendPending(dst, pending)
	dst = appendRejects(dst, pt.rejected)
	if pt.items != nil {
		dst = append(dst, key[:]...)
		if dst, err = appendPrefixed(dst, pt.items.names.AppendBinary); err != nil {
			return nil, err
		}
	}
	return codec.End(dst, start), nil
}

func appendPending(dst []byte, pending []float64) []byte {
	dst = slices.Grow(dst, binary.MaxVarintLen64+8*len(pending))
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

// checkPending checks a part's pending values against its summary: as
// many as it has not summarised, and each of them finite, as ingest lets
// only finite values in. A NaN would fail the sort's summary of its window
// later, in the sorter's loop, which panics on a digest the summaries
// refuse.
func checkPending(sum *summary.History, pending []float64) error {
	return checkPendingCount(sum, len(pending), pending)
}

// checkPendingCount is checkPending for n pending values, of which those
// given are checked for NaN and ±Inf: the others, a mirrored part's, are
// its stream's sliding window's, which its decoding checked.
func checkPendingCount(sum *summary.History, n int, pending []float64) error {
	if st := sum.Stats(); int64(n) != st.Count-st.Summarised {
		return fmt.Errorf("%w: %d pending values for %d unsummarised", codec.ErrCorrupt, n, st.Count-st.Summarised)
	}
	for _, v := range pending {
		if v-v != 0 { // NaN or ±Inf
			return fmt.Errorf("%w: pending value %v", codec.ErrCorrupt, v)
		}
	}
	return nil
}

// A decodedPart is a part's state read from its encoding, not yet part of
// a stream.
type decodedPart struct {
	src      feed.Source
	released bool
	sum      *summary.History
	blk      *partBlock // where sum lies and the part goes
	pending  []float64
	rejected map[feed.Reason]uint64
	key      items.Key    // for an item part: the key of its fingerprints
	names    *items.Names // for an item part: its strings
	// mirrored counts the pending values of a part of version 2, in
	// place of pending: they are the newest of the stream's sliding
	// window, which the part mirrors again.
	mirrored int
}

// unmarshalPart decodes a part encoding: version 1, or with recent, the
// sliding window of the stream whose only part it is, version 2, whose
// pending values are recent's newest. Its history is decoded into blk,
// which the part is installed in; a nil blk is a new one. Bad input gives
// an error wrapping codec.ErrCorrupt.
func unmarshalPart(data []byte, recent *slidingwindow.Window, blk *partBlock) (*decodedPart, error) {
	newest := byte(partVersion)
	if recent != nil {
		newest = partMirrored
	}
	payload, version, err := codec.OpenVersions(data, partMagic, partVersion, newest)
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
	if blk == nil {
		blk = new(partBlock)
	}
	d.blk, d.sum = blk, &blk.history
	if err := d.sum.UnmarshalBinary(sumBytes); err != nil {
		return nil, err
	}
	if version == partMirrored {
		n := r.Int("pending", recent.RawLen())
		if d.sum.Config().Items || d.sum.Config().Pairs {
			return nil, fmt.Errorf("%w: a mirrored part of an item or pair stream", codec.ErrCorrupt)
		}
		if err := r.Err(); err != nil {
			return nil, err
		}
		d.mirrored = int(n)
	} else {
		d.pending = readPending(r)
	}
	d.rejected = readRejects(r)
	cfg := d.sum.Config()
	if cfg.Items {
		for i := range d.key {
			d.key[i] = r.Byte()
		}
		namesBytes := r.Bytes("names", r.Remaining())
		if err := r.Err(); err != nil {
			return nil, err
		}
		d.names = new(items.Names)
		if err := d.names.UnmarshalBinary(namesBytes); err != nil {
			return nil, err
		}
	}
	if err := r.Done(); err != nil {
		return nil, err
	}
	if err := checkPendingCount(d.sum, len(d.pending)+d.mirrored, d.pending); err != nil {
		return nil, err
	}
	if d.names != nil {
		// The strings follow the part item for item: its pending items are
		// the pending values (see rekey).
		pending := d.names.AppendPending(nil)
		switch {
		case d.names.IsRecent() || d.names.Retain() != 0 || d.names.Window() != cfg.WindowSize || d.names.Pos() != d.sum.Count():
			return nil, fmt.Errorf("%w: the part's strings do not match its summary", codec.ErrCorrupt)
		case !slices.EqualFunc(pending, d.pending, func(fp uint64, v float64) bool { return items.Value(fp) == v }):
			return nil, fmt.Errorf("%w: the part's pending strings do not match its pending values", codec.ErrCorrupt)
		}
	}
	return d, nil
}

// rekey moves an item part's fingerprints to hash, from those of another
// item key (another daemon's): the strings of its lossy table and of its
// pending items are hashed again, the table's counts follow their strings
// (summary.History.RemapCounts), and the pending values are the new
// fingerprints. A table entry whose string the part does not keep (only
// possible after a collision) keeps its old fingerprint: its count stays
// in the stream's total, under a fingerprint no item maps to.
func (d *decodedPart) rekey(hash items.Hash) {
	moved := d.names.Rekey(hash)
	d.sum.RemapCounts(func(v float64) float64 {
		if fp, ok := moved[items.FromValue(v)]; ok {
			return items.Value(fp)
		}
		return v
	})
	for i, fp := range d.names.AppendPending(nil) {
		d.pending[i] = items.Value(fp)
	}
}

// install makes d a part of s, refilling its windows from the pending
// values (observed already: they are not observed again) and queueing the
// full ones for the sorter; a part of s's already there for its source is
// dropped. key is the item key of s's fingerprints: an item part taken
// under another is rekeyed first. The caller holds s.mu, and has checked
// that d and s are of one kind.
func (s *Stream) install(d *decodedPart, key items.Key) *part {
	s.unmirrorLocked()
	s.version++
	// The part shares its stream's configuration, as when it was made,
	// rather than keep the copy it was decoded with, unless it was made
	// with another (a part handed over from a daemon configured otherwise).
	d.sum.ShareConfig(s.cfg)
	pt := &d.blk.part
	pt.init(s, d.src, d.sum, &d.blk.filler)
	pt.released = d.released
	if len(d.rejected) > 0 { // else none, as a part keeps until its first reject
		pt.rejected = d.rejected
	}
	if d.names != nil {
		if d.key != key {
			d.rekey(s.items.hash)
		}
		pt.items = newItemPart(d.sum.Config(), d.names)
	}
	if d.mirrored > 0 && mirrors(s.cfg, s.recent) && d.mirrored < s.cfg.WindowSize {
		// The values are the sliding window's newest, and were the
		// part's partial window when it was written: the part mirrors
		// them again rather than copy them.
		pt.mirrored, pt.mirror = int32(d.mirrored), true
	} else {
		if d.mirrored > 0 {
			d.pending = s.recent.AppendNewest(nil, int64(d.mirrored))
		}
		// The pending items fill the part's windows not yet summarised,
		// in order (unmarshalPart checks it): the i-th window refilled
		// starts where the i-th of them does.
		var starts []int64
		if pt.items != nil {
			starts = d.names.PendingStarts()
		}
		pt.filler.Append(d.pending, func(w *window.Buffer) {
			pt.addInflight(w)
			if pt.items != nil {
				pt.items.addWindow(w, starts[0])
				starts = starts[1:]
			}
			s.pendingQ = append(s.pendingQ, fullWindow{Buffer: w, Owner: pt})
		})
	}
	if d.src == feed.Local {
		s.local = pt
		return pt
	}
	if old := s.putKafkaPart(pt); old != nil {
		s.dropLocked(old)
	}
	s.account.Summaries(s.summaryBytes())
	return pt
}

// Restore replaces the pipeline's streams and item key with those of a
// Snapshot. It must be called before Open; the restored windows that were
// in flight are sorted once the pipeline opens. Restored streams are
// reserved in the memory budget even past it: their values were accepted.
// Bad input gives an error wrapping codec.ErrCorrupt and changes nothing.
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
		name := string(r.Bytes("name", feed.MaxNameLen))
		if err := r.Err(); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		if err := feed.ValidName(name); err != nil {
			return fmt.Errorf("restore: %w: %v", codec.ErrCorrupt, err)
		}
		var s *Stream
		var err error
		if version == 1 {
			s, err = p.readStreamV1(r, name)
		} else {
			s, err = p.readStream(r, name, key, hash, nil)
		}
		if err != nil {
			return fmt.Errorf("restore %q: %w", name, err)
		}
		if streams[name] != nil {
			return fmt.Errorf("restore: %w: stream %q twice", codec.ErrCorrupt, name)
		}
		streams[s.name] = s // the name the stream keeps, in its block if it fits
	}
	if err := r.Done(); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	for _, s := range streams {
		for _, x := range append([]*Stream{s}, s.levelStreams()...) {
			p.mem.RestoreAt(&x.account, p.footprint(x.cfg))
			for _, pt := range x.partsLocked() {
				for range pt.inflight {
					x.account.WindowFull()
				}
			}
			x.account.Summaries(x.summaryBytes())
		}
	}
	for _, s := range streams {
		s.markSaved() // what is restored is saved
	}
	p.streams.lockAll()
	defer p.streams.unlockAll()
	for _, s := range p.streams.replaceLocked(streams) {
		s.account.Close()
		for _, lvl := range s.levelStreams() {
			lvl.account.Close()
		}
	}
	p.mu.Lock()
	p.deleted = []string{} // deletions count from the state restored
	p.mu.Unlock()
	p.itemKey, p.itemHash = key, hash
	p.rejectMu.Lock()
	p.rejected = rejected
	p.rejectMu.Unlock()
	return nil
}

// RestoreDelta applies a delta (SaveTo) to the pipeline restored from the
// snapshot, or snapshot and deltas, that it follows: it removes the
// streams the delta names deleted, then replaces or adds each stream it
// holds, and takes its reject counts. It must be called before Open, after
// Restore. Bad input gives an error wrapping codec.ErrCorrupt and changes
// nothing; so does a delta taken under another item key, or one whose
// sliding windows follow other positions than those restored, which
// cannot follow what was restored. A stream it replaces gives its sliding
// window's memory to the one that replaces it: a *Stream taken from the
// pipeline before must not be used after.
func (p *Pipeline) RestoreDelta(data []byte) error {
	payload, _, err := codec.OpenVersions(data, snapshotMagic, 3, deltaVersion)
	if err != nil {
		return fmt.Errorf("restore delta: %w", err)
	}
	r := codec.NewReader(payload)
	var key items.Key
	for i := range key {
		key[i] = r.Byte()
	}
	if err := r.Err(); err != nil {
		return fmt.Errorf("restore delta: %w", err)
	}
	if key != p.itemKey {
		return fmt.Errorf("restore delta: %w: another item key than the snapshot's", codec.ErrCorrupt)
	}
	rejected := readRejects(r)
	nd := r.Int("deleted", int64(r.Remaining()))
	deleted := make(map[string]bool, min(nd, 1<<16))
	for range nd {
		deleted[string(r.Bytes("name", feed.MaxNameLen))] = true
	}
	n := r.Int("streams", int64(r.Remaining()))
	streams := make(map[string]*Stream, min(n, 1<<16))
	for range n {
		name := string(r.Bytes("name", feed.MaxNameLen))
		if err := r.Err(); err != nil {
			return fmt.Errorf("restore delta: %w", err)
		}
		if err := feed.ValidName(name); err != nil {
			return fmt.Errorf("restore delta: %w: %v", codec.ErrCorrupt, err)
		}
		s, err := p.readStream(r, name, key, p.itemHash, p.restoredWindow(name, deleted))
		if err != nil {
			return fmt.Errorf("restore delta %q: %w", name, err)
		}
		if streams[name] != nil {
			return fmt.Errorf("restore delta: %w: stream %q twice", codec.ErrCorrupt, name)
		}
		streams[s.name] = s // the name the stream keeps, in its block if it fits
	}
	if err := r.Done(); err != nil {
		return fmt.Errorf("restore delta: %w", err)
	}
	for _, s := range streams {
		for _, x := range s.withLevels() {
			p.mem.RestoreAt(&x.account, p.footprint(x.cfg))
			for _, pt := range x.partsLocked() {
				for range pt.inflight {
					x.account.WindowFull()
				}
			}
			x.account.Summaries(x.summaryBytes())
		}
		s.markSaved()
	}
	p.streams.lockAll()
	defer p.streams.unlockAll()
	// The name index follows the map name by name: a chain of deltas
	// restores in time that follows their changes, not the stream count.
	drop := func(sh *streamShard, h uint64, name string) {
		if s := p.streams.deleteLocked(sh, h, name); s != nil {
			// Its full windows were never sent (the pipeline is not open):
			// done with them, as Delete is, its charges come back.
			for _, x := range s.withLevels() {
				x.account.Close()
				x.release(&p.buffers)
			}
		}
	}
	for name := range deleted {
		sh, h := p.streams.locate(name)
		drop(sh, h, name)
	}
	for name, s := range streams {
		sh, h := p.streams.locate(name)
		drop(sh, h, name)
		p.streams.putLocked(sh, h, s)
	}
	p.streams.recountLocked()
	p.rejectMu.Lock()
	p.rejected = rejected
	p.rejectMu.Unlock()
	return nil
}

// restoredWindow returns the sliding window of the value stream named
// name that a delta being restored follows: nil if there is none, or the
// delta deletes it (a stream made again under its name is whole in it).
func (p *Pipeline) restoredWindow(name string, deleted map[string]bool) *slidingwindow.Window {
	s := p.streams.get(name)
	if s == nil || deleted[name] || !s.savesSince() {
		return nil
	}
	return s.recent
}

// readStream reads a stream of a version 2 snapshot, whose item key is
// key, with hash; in a delta, its sliding window may hold only the values
// added since prev, the window of the stream it follows.
func (p *Pipeline) readStream(r *codec.Reader, name string, key items.Key, hash items.Hash, prev *slidingwindow.Window) (*Stream, error) {
	cfg, err := readConfig(r)
	if err != nil {
		return nil, err
	}
	recentBytes := r.Bytes("sliding window", r.Remaining())
	var namesBytes, pairBytes []byte
	if cfg.Items {
		namesBytes = r.Bytes("names", r.Remaining())
	}
	if cfg.Pairs {
		pairBytes = r.Bytes("pairs", r.Remaining())
	}
	nparts := r.Int("parts", int64(r.Remaining()))
	if err := r.Err(); err != nil {
		return nil, err
	}
	blk := new(streamBlock)
	s := &blk.stream
	*s = Stream{name: blk.keepName(name), pool: &p.buffers, cfg: p.sharedConfig(cfg), recent: new(slidingwindow.Window)}
	if err := s.recent.UnmarshalBinaryAfter(recentBytes, prev); err != nil {
		return nil, err
	}
	if s.recent.Epsilon() != cfg.Epsilon || s.recent.Capacity() != cfg.SlidingWindow {
		return nil, fmt.Errorf("%w: sliding window does not match the configuration", codec.ErrCorrupt)
	}
	if !cfg.Float64 {
		s.recent.KeepFloat32() // as summary.NewSlidingWindow makes it
	}
	if cfg.Items {
		names := new(items.Names)
		if err := names.UnmarshalBinary(namesBytes); err != nil {
			return nil, err
		}
		if !names.IsRecent() || names.Pos() != s.recent.Added() {
			return nil, fmt.Errorf("%w: the strings of the newest items do not match the sliding window", codec.ErrCorrupt)
		}
		names.SetLimit(recentNamesLimit(cfg.WindowSize, s.recent.RawCapacity()))
		s.items = &itemStream{hash: hash, recent: names}
	}
	if cfg.Pairs {
		pr := codec.NewReader(pairBytes)
		if s.pairs, err = readPairs(pr, cfg); err != nil {
			return nil, err
		}
		if err := pr.Done(); err != nil {
			return nil, err
		}
	}
	for i := range nparts {
		b := r.Bytes("part", r.Remaining())
		if err := r.Err(); err != nil {
			return nil, err
		}
		var recent *slidingwindow.Window
		if nparts == 1 {
			recent = s.recent
		}
		var pb *partBlock // the first part lies in the stream's block
		if i == 0 {
			pb = &blk.first
		}
		d, err := unmarshalPart(b, recent, pb)
		if err != nil {
			return nil, err
		}
		if (i > 0 && d.src == feed.Local) || s.kafkaPart(d.src) != nil {
			return nil, fmt.Errorf("%w: parts out of order", codec.ErrCorrupt)
		}
		if c := d.sum.Config(); c.Items != cfg.Items || c.Pairs != cfg.Pairs {
			return nil, fmt.Errorf("%w: a part of another kind of stream", codec.ErrCorrupt)
		}
		s.install(d, key)
	}
	if s.local == nil && len(s.kafka) == 0 {
		return nil, fmt.Errorf("%w: a stream without parts", codec.ErrCorrupt)
	}
	s.first = s.partsLocked()[0]
	s.remirrorLocked()
	if cfg.Hierarchy != "" {
		if s.hier, err = p.readLevels(r, name, cfg, key, hash); err != nil {
			return nil, err
		}
		for l, lvl := range s.hier.levels {
			if err := sameCounts(s, lvl); err != nil {
				return nil, fmt.Errorf("%w: level %d: %w", codec.ErrCorrupt, l+1, err)
			}
		}
	}
	return s, nil
}

// sameCounts checks that lvl, a level stream of the hierarchy stream s
// being restored, counts in each part what s counts in its part of the
// same source: a part that counts nothing may be missing from either, as
// one that only rejected items is from the levels.
func sameCounts(s, lvl *Stream) error {
	count := func(x *Stream, src feed.Source) int64 {
		pt := x.local
		if src != feed.Local {
			pt = x.kafkaPart(src)
		}
		if pt == nil {
			return 0
		}
		return pt.sum.Count()
	}
	for _, pair := range [][2]*Stream{{s, lvl}, {lvl, s}} {
		for _, pt := range pair[0].partsLocked() {
			if n, m := count(s, pt.src), count(lvl, pt.src); n != m {
				return fmt.Errorf("its part of %s counts %d items, the stream's %d", pt.src, m, n)
			}
		}
	}
	return nil
}

// readLevels reads the level streams of the hierarchy stream name of cfg,
// and checks that their configurations match it.
func (p *Pipeline) readLevels(r *codec.Reader, name string, cfg summary.Config, key items.Key, hash items.Hash) (*hierarchy, error) {
	hr, err := parseHierarchy(cfg.Hierarchy)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", codec.ErrCorrupt, err)
	}
	if n := r.Int("levels", int64(r.Remaining())); n != int64(hr.h.Levels()-2) {
		if err := r.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %d levels for hierarchy %s", codec.ErrCorrupt, n, cfg.Hierarchy)
	}
	for l := range hr.h.Levels() - 2 {
		lname := string(r.Bytes("name", 2*feed.MaxNameLen))
		if err := r.Err(); err != nil {
			return nil, err
		}
		if lname != levelName(name, l+1) {
			return nil, fmt.Errorf("%w: level %q of stream %q", codec.ErrCorrupt, lname, name)
		}
		lvl, err := p.readStream(r, lname, key, hash, nil)
		if err != nil {
			return nil, fmt.Errorf("level %d: %w", l+1, err)
		}
		if c, want := lvl.cfg, levelConfig(cfg); c.Epsilon != want.Epsilon || c.WindowSize != want.WindowSize ||
			c.SlidingWindow != want.SlidingWindow || c.Items != want.Items || c.Hierarchy != "" {
			return nil, fmt.Errorf("%w: level %d's configuration does not match its stream's", codec.ErrCorrupt, l+1)
		}
		hr.levels = append(hr.levels, lvl)
	}
	return hr, nil
}

// sendRestored queues the windows that were in flight at the snapshot.
func (p *Pipeline) sendRestored(ctx context.Context) {
	for _, s := range p.all() {
		for _, x := range append([]*Stream{s}, s.levelStreams()...) {
			if err := p.sendPending(ctx, x); err != nil {
				p.cfg.Logger.Error("queue restored windows", "stream", x.name, "err", err)
			}
		}
	}
}
