package pipeline

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
	"unsafe"

	"streamd/feed"
	"streamd/internal/membudget"
	"streamd/internal/radix"
	"streamd/slidingwindow"
	"streamd/summary"
	"streamd/window"
)

// Stream is one named stream in a pipeline. Its methods are safe for
// concurrent use.
//
// A stream keeps the values of each source apart: one part for the local
// inputs and one for each Kafka partition it has values from, each with
// its own windows and all-history summaries (and, for an item stream, the
// strings of its lossy table), so that a partition's state can be handed
// to another daemon and a cluster answer can count each partition once
// (see OwnPartitions, PartitionState, ReplacePartition). One sliding
// window over all sources answers last-n and time-window queries in
// arrival order. A stream has a part only for a source it has had values
// (or rejects) from: one fed only by the local inputs has just the local
// part, and one fed only by a Kafka partition just that partition's, so a
// Kafka topic's keys cost what the local inputs' streams do.
//
// A pair stream (summary.Config.Pairs) keeps its pairs, from every source
// together, in one all-history correlated-sum summary (see pairStream);
// its parts keep only their reject counts, and its sliding window stays
// empty.
type Stream struct {
	name string
	pool *window.Pool // its windows' buffers
	// cfg is set when the stream is made and never changed: the
	// pipeline's defaults, shared, for a stream of them (sharedConfig).
	cfg *summary.Config

	mu     sync.Mutex
	recent *slidingwindow.Window
	local  *part // nil until the local inputs send the stream anything
	// kafka holds the parts of the Kafka partitions, in order of source:
	// a slice, since a stream has few, mostly one.
	kafka    []*part
	pendingQ []fullWindow // full windows not yet sent to the sorter
	items    *itemStream  // nil for a value stream
	hier     *hierarchy   // nil unless a hierarchy stream
	pairs    *pairStream  // nil but for a pair stream
	// first is the part the stream was made or restored with, set before
	// the stream is published and never changed, so that Prefetch reads
	// it without the lock; it may have left the stream since
	// (ReplacePartition).
	first *part

	// version counts the changes to the parts; merged caches the merged
	// view of the parts, nil until View makes one.
	version uint64
	saved   uint64 // version+1 when last saved in a snapshot (snapshot.go); 0: never
	// savedAt is the sliding window's position (Added) when last saved:
	// a delta holds the window's values added since (snapshot.go).
	savedAt int64
	merged  *mergedView

	// account is its share of the memory budget, once opened (create,
	// Restore); a zero account charges nothing. It lies inside the
	// stream: an object fewer for the collector to trace a stream.
	account membudget.Account
}

// mergedView is the merged view of a stream's parts at version, made with
// counts if counts. Only a stream with Kafka parts makes one: apart from
// the Stream, it costs the many streams of the local inputs nothing.
type mergedView struct {
	view    *summary.View
	version uint64
	counts  bool
}

// part is the values of a stream from one source: its summaries, its
// partial window and its windows in flight.
type part struct {
	stream   *Stream
	src      feed.Source
	sum      *summary.History // history only
	filler   *window.Filler
	inflight []*window.Buffer       // full windows not yet summarised, oldest first
	rejected map[feed.Reason]uint64 // nil until the first reject
	items    *itemPart              // nil for a value stream

	// view caches the part's last view until the part changes; viewCounts
	// says whether it was made with counts.
	view       *summary.View
	viewCounts bool

	// released marks the part of a partition that the daemon no longer
	// consumes: another member of its group does. Its values are kept (they
	// may be handed over) but left out of the stream's answers.
	released bool
	// detached marks a part replaced or dropped by ReplacePartition:
	// windows of it that come back from the sorter are dropped.
	detached bool

	// mirrored counts the values of the partial window that only the
	// stream's sliding window holds, while mirror is set: see Mirrored
	// partial windows. Beside the flags above, they take no room of their
	// own.
	mirror   bool
	mirrored int32

	// seen is the part's count as the sweeps of idle streams see it (see
	// quietLocked).
	seen quietWatch
}

// Mirrored partial windows.
//
// Below W values, a stream would hold each value twice: in its part's
// partial window, for the all-history summaries, and in its sliding
// window's ring of raw values, for last-n answers, each in a buffer that
// grows by doubling copies. So while a stream has one part and that part
// has never filled a window, and the ring keeps at least W values raw, the
// part's partial window is the ring's newest values: the part counts them
// (mirrored) and its filler holds none. Queries and snapshots read them
// from the ring; an idle flush leaves them there, since a digest would
// free nothing. A batch that would fill a window, or a second part, first
// copies them into the filler (unmirrorLocked), and the part stops
// mirroring for good. A thin stream thus holds its values once, and a fat
// one pays a copy of its first window's values, once.

// mirrors reports whether a stream of cfg, whose sliding window is recent,
// mirrors its first part's partial window: a value stream whose ring keeps
// at least a window's values raw.
func mirrors(cfg *summary.Config, recent *slidingwindow.Window) bool {
	return !cfg.Items && !cfg.Pairs && cfg.Hierarchy == "" && recent.RawCapacity() >= int64(cfg.WindowSize)
}

// mirrorsNext reports whether n more values join pt's mirrored partial
// window, which they do while it mirrors and they do not fill it.
func (pt *part) mirrorsNext(n int) bool {
	return pt.mirror && int(pt.mirrored)+n < pt.filler.Size()
}

// partialLen reports how many values pt's partial window holds.
func (pt *part) partialLen() int { return pt.filler.Len() + int(pt.mirrored) }

// appendPartialLocked appends the values of pt's partial window to dst.
// The caller holds the stream's lock.
func (pt *part) appendPartialLocked(dst []float64) []float64 {
	if pt.mirrored > 0 {
		return pt.stream.recent.AppendNewest(dst, int64(pt.mirrored))
	}
	return pt.filler.AppendPartial(dst)
}

// unmirrorLocked copies the mirrored values of pt's partial window from
// the sliding window into its filler, and stops mirroring. The caller
// holds the stream's lock.
func (pt *part) unmirrorLocked() {
	if pt.mirrored > 0 {
		vals := pt.stream.recent.AppendNewest(nil, int64(pt.mirrored))
		pt.filler.Append(vals, func(*window.Buffer) {
			panic("pipeline: a mirrored partial window of a whole window")
		})
		pt.mirrored = 0
	}
	pt.mirror = false
}

// remirrorLocked makes s's only part mirror its partial window, as the
// part of a stream that Accept made does, when the sliding window's newest
// values are that window's values: a restored stream's part holds them in
// its filler (a snapshot keeps them with the part), and would otherwise
// hold them twice until its next window. The caller holds s.mu, or has s
// to itself.
func (s *Stream) remirrorLocked() {
	var pt *part
	switch {
	case s.local != nil && len(s.kafka) == 0:
		pt = s.local
	case s.local == nil && len(s.kafka) == 1:
		pt = s.kafka[0]
	default:
		return
	}
	n := pt.filler.Len()
	if pt.mirror || !mirrors(s.cfg, s.recent) || int64(n) > s.recent.RawLen() {
		return
	}
	if !slices.Equal(pt.filler.AppendPartial(nil), s.recent.AppendNewest(nil, int64(n))) {
		return
	}
	pt.filler.Release(s.pool)
	pt.mirrored, pt.mirror = int32(n), true
}

// unmirrorLocked stops s's parts mirroring their partial windows, before
// s takes a second part. The caller holds s.mu.
func (s *Stream) unmirrorLocked() {
	if s.local != nil {
		s.local.unmirrorLocked()
	}
	for _, pt := range s.kafka {
		pt.unmirrorLocked()
	}
}

// A fullWindow is a full window of a part on its way to the sorter, which
// hands its digest back to the part.
type fullWindow = window.Full[*part]

// newStream returns an empty stream with cfg (zero fields take defaults)
// and an empty part for src, the source of its first values, with no
// memory account yet.
func (p *Pipeline) newStream(name string, cfg summary.Config, src feed.Source) (*Stream, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	recent, err := summary.NewSlidingWindow(cfg)
	if err != nil {
		return nil, err
	}
	blk := new(streamBlock)
	s := &blk.stream
	*s = Stream{name: blk.keepName(name), pool: &p.buffers, cfg: p.sharedConfig(cfg), recent: recent}
	if cfg.Items {
		s.items = p.newItems(cfg, recent, nil)
	}
	if cfg.Pairs {
		if s.pairs, err = newPairs(cfg); err != nil {
			return nil, err
		}
	}
	if err := s.initPart(&blk.first, src); err != nil {
		return nil, err
	}
	s.first = &blk.first.part
	if src == feed.Local {
		s.local = s.first
	} else {
		s.kafka = []*part{s.first}
	}
	s.first.mirror = mirrors(s.cfg, recent)
	if cfg.Hierarchy != "" {
		if s.hier, err = p.newHierarchy(name, cfg, src); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// sharedConfig returns cfg to keep in a stream: the pipeline's defaults,
// shared, for a stream of them, or a copy of its own.
func (p *Pipeline) sharedConfig(cfg summary.Config) *summary.Config {
	if sameConfig(cfg, p.cfg.Defaults) {
		return &p.cfg.Defaults
	}
	own := cfg // only this copy goes to the heap
	return &own
}

// sameConfig reports whether a and b configure streams alike: every field
// equal, and an ItemHash only when both have none, since funcs do not
// compare. It is reflect.DeepEqual's answer without its cost on every
// stream created (TestSameConfig holds it to that for every field).
func sameConfig(a, b summary.Config) bool {
	return a.Epsilon == b.Epsilon && a.WindowSize == b.WindowSize &&
		a.SlidingWindow == b.SlidingWindow && a.Float64 == b.Float64 &&
		a.Items == b.Items && a.Pairs == b.Pairs &&
		a.ItemHash == nil && b.ItemHash == nil && a.Hierarchy == b.Hierarchy
}

// streamBlock is a stream and its first part, allocated together. A batch
// reads the stream (its memory account inside it), its name, its part,
// the part's filler and its history one after the other: in one block
// they share a page and neighbouring cache lines, where each would cost a
// miss of its own among many streams, and the collector traces one object
// where it would trace five. At 512 bytes the block stays in a size class
// that needs no header, and its name fills the room the class leaves.
type streamBlock struct {
	stream Stream
	first  partBlock
	name   [blockNameLen]byte // the stream's name, if it fits
}

// blockNameLen is the longest name a streamBlock holds: the room left in
// its 512-byte size class.
const blockNameLen = 32

// keepName returns name, as the string the stream keeps: its bytes in the
// block when they fit, else name itself. The block's bytes never change.
func (b *streamBlock) keepName(name string) string {
	if len(name) == 0 || len(name) > len(b.name) {
		return name
	}
	n := copy(b.name[:], name)
	return unsafe.String(&b.name[0], n)
}

// partBlock is a part, its filler and its history, allocated together
// (see streamBlock).
type partBlock struct {
	part    part
	filler  window.Filler
	history summary.History
}

// newPart returns an empty part of s for src.
func (s *Stream) newPart(src feed.Source) (*part, error) {
	blk := new(partBlock)
	if err := s.initPart(blk, src); err != nil {
		return nil, err
	}
	return &blk.part, nil
}

// mustNewPart is newPart for a stream made: s.cfg was validated then, so
// newPart cannot fail.
func (s *Stream) mustNewPart(src feed.Source) *part {
	pt, err := s.newPart(src)
	if err != nil {
		panic(fmt.Sprintf("pipeline: new part of %q: %v", s.name, err))
	}
	return pt
}

// initPart makes blk's part an empty part of s for src, with its filler
// and its history, which shares s's configuration.
func (s *Stream) initPart(blk *partBlock, src feed.Source) error {
	if err := blk.history.Init(s.cfg); err != nil {
		return err
	}
	blk.part.init(s, src, &blk.history, &blk.filler)
	if s.cfg.Items {
		blk.part.items = newItemPart(*s.cfg, nil)
	}
	return nil
}

// init makes pt a part of s for src with the summaries sum and an empty
// partial window, filled by f.
func (pt *part) init(s *Stream, src feed.Source, sum *summary.History, f *window.Filler) {
	cfg := sum.Config()
	f.Init(cfg.WindowSize, cfg.Float64, s.pool)
	*pt = part{stream: s, src: src, sum: sum, filler: f}
}

// Name returns the stream's name.
func (s *Stream) Name() string { return s.name }

// Config returns the stream's configuration. It never changes: it needs
// no lock.
func (s *Stream) Config() summary.Config { return *s.cfg }

// partLocked returns the part of src, creating it if needed. A part made
// is measured for the budget at once, with the copy of the first part's
// mirrored values that a second part makes (see Mirrored partial
// windows): a source may send only rejects, which no measure follows.
// The caller holds s.mu.
func (s *Stream) partLocked(src feed.Source) *part {
	if src == feed.Local && s.local != nil {
		return s.local
	}
	if src != feed.Local {
		if pt := s.kafkaPart(src); pt != nil {
			return pt
		}
	}
	s.unmirrorLocked()
	pt := s.mustNewPart(src)
	if src == feed.Local {
		s.local = pt
	} else {
		s.putKafkaPart(pt)
	}
	s.account.Summaries(s.summaryBytes())
	return pt
}

// kafkaPart returns the part of the Kafka partition src, or nil. The
// caller holds s.mu.
func (s *Stream) kafkaPart(src feed.Source) *part {
	if i, ok := s.kafkaIndex(src); ok {
		return s.kafka[i]
	}
	return nil
}

// kafkaIndex returns where the part of src is in s.kafka, or would be,
// and whether it is there. The caller holds s.mu.
func (s *Stream) kafkaIndex(src feed.Source) (int, bool) {
	return slices.BinarySearchFunc(s.kafka, src, func(pt *part, src feed.Source) int { return pt.src.Compare(src) })
}

// putKafkaPart makes pt the part of its partition, and returns the part
// it replaces, or nil. The caller holds s.mu.
func (s *Stream) putKafkaPart(pt *part) (old *part) {
	i, ok := s.kafkaIndex(pt.src)
	if ok {
		old, s.kafka[i] = s.kafka[i], pt
		return old
	}
	s.kafka = slices.Insert(s.kafka, i, pt)
	return nil
}

// removeKafkaPart removes the part of the Kafka partition src, and
// returns it, or nil if there is none. A stream keeps one part at least,
// which its answers and its encoding start from: one that loses its last
// gets an empty local part, an empty stream's. The caller holds s.mu.
func (s *Stream) removeKafkaPart(src feed.Source) *part {
	i, ok := s.kafkaIndex(src)
	if !ok {
		return nil
	}
	pt := s.kafka[i]
	s.kafka = slices.Delete(s.kafka, i, i+1)
	if s.local == nil && len(s.kafka) == 0 {
		s.local = s.mustNewPart(feed.Local)
	}
	return pt
}

// partsLocked returns every part of s: the local part first, if s has
// one, then the Kafka partitions in order. The caller holds s.mu.
func (s *Stream) partsLocked() []*part {
	parts := make([]*part, 0, 1+len(s.kafka))
	if s.local != nil {
		parts = append(parts, s.local)
	}
	return append(parts, s.kafka...)
}

// append counts inf values from src rejected as beyond float32's range
// (feed.Float32) and adds clean values from src, values or f32 (float32
// values, at least one of them), of moments m, arrived at now, in one
// section under the stream's lock, and returns the windows they filled,
// after any left unsent by an earlier, cancelled Accept.
func (s *Stream) append(src feed.Source, values []float64, f32 []float32, m feed.Moments, inf int, now int64) []fullWindow {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rejectLocked(src, feed.ReasonInf, inf)
	full := s.pendingQ
	s.pendingQ = nil
	return s.appendLocked(s.partLocked(src), values, f32, m, now, full)
}

// takePending returns the full windows of s not yet sent to the sorter,
// which it no longer keeps.
func (s *Stream) takePending() []fullWindow {
	s.mu.Lock()
	defer s.mu.Unlock()
	full := s.pendingQ
	s.pendingQ = nil
	return full
}

// appendIfRoom is append, for any number of values, when the growth they
// need (chargeValues) is none, as when they fit the buffers the stream
// holds and fill no window, or fits the budget now and the stream has no
// windows pending: then it charges the growth under the stream's lock,
// where it measures what the values make the stream hold, rather than
// leaving the lock to wait for memory and taking it again. It reports
// whether it kept them; if not, it changed nothing, and returns the growth
// they need.
func (s *Stream) appendIfRoom(src feed.Source, values []float64, f32 []float32, m feed.Moments, inf int, now int64) ([]fullWindow, growth, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pt := s.partLocked(src)
	if s.account.Opened() {
		if grow, windows := s.growthLocked(pt, len(values)+len(f32)); grow > 0 || windows > 0 {
			if len(s.pendingQ) > 0 || !s.account.TryGrow(grow, windows) {
				return nil, growth{bytes: grow, windows: windows, pending: len(s.pendingQ) > 0}, false
			}
			s.rejectLocked(src, feed.ReasonInf, inf)
			return s.appendLocked(pt, values, f32, m, now, nil), growth{}, true
		}
	}
	s.rejectLocked(src, feed.ReasonInf, inf)
	full := s.pendingQ
	s.pendingQ = nil
	if len(values)+len(f32) == 0 {
		return full, growth{}, true
	}
	// The values grow no buffer and fill no window (or there is no
	// budget): what the stream holds changes only if the sliding window's
	// time marks or blocks grow, and the budget measures it again only
	// then.
	before := s.recent.Bytes()
	full = s.addLocked(pt, values, f32, m, now, full)
	if s.recent.Bytes() != before {
		s.account.Summaries(s.summaryBytes())
	}
	return full, growth{}, true
}

// appendLocked adds values or f32 of moments m to pt, appends the windows
// they filled to full, and measures what s holds for the budget
// (membudget.Account.Summaries). The caller holds s.mu.
func (s *Stream) appendLocked(pt *part, values []float64, f32 []float32, m feed.Moments, now int64, full []fullWindow) []fullWindow {
	full = s.addLocked(pt, values, f32, m, now, full)
	// Measure what the stream holds, which replaces what chargeValues
	// charged.
	s.account.Summaries(s.summaryBytes())
	return full
}

// addLocked is appendLocked but for the budget's measure. The caller holds
// s.mu.
func (s *Stream) addLocked(pt *part, values []float64, f32 []float32, m feed.Moments, now int64, full []fullWindow) []fullWindow {
	pt.changedLocked()
	if n := len(values) + len(f32); pt.mirrorsNext(n) {
		if len(f32) > 0 {
			s.recent.AddFloat32(now, f32)
		} else {
			s.recent.Add(now, values...)
		}
		pt.mirrored += int32(n)
		pt.sum.AddMoments(m)
		return full
	}
	if pt.mirror {
		pt.unmirrorLocked()
	}
	start := pt.sum.Count() - int64(pt.filler.Len())
	filled := func(w *window.Buffer) {
		pt.addInflight(w)
		if pt.items != nil {
			pt.items.addWindow(w, start)
		}
		start += int64(w.Len())
		full = append(full, fullWindow{Buffer: w, Owner: pt})
	}
	if len(f32) > 0 {
		pt.filler.AppendFloat32(f32, filled)
		s.recent.AddFloat32(now, f32)
	} else {
		pt.filler.Append(values, filled)
		s.recent.Add(now, values...)
	}
	pt.sum.AddMoments(m)
	return full
}

// growthLocked returns what n more values from pt make s hold, to charge
// before they are kept (membudget.Account.Grow): the growth in bytes of
// pt's partial window and of the sliding window's ring, and the windows
// they fill. The caller holds s.mu.
func (s *Stream) growthLocked(pt *part, n int) (bytes int64, windows int) {
	if n == 0 {
		return 0, 0
	}
	if pt.mirrorsNext(n) {
		return s.recent.Growth(int64(n)), 0
	}
	// Mirrored values, if any, join the n in the filler (addLocked).
	windows = (pt.partialLen() + n) / pt.filler.Size()
	return int64(pt.filler.BytesAfter(int(pt.mirrored)+n)-pt.filler.Bytes()) + s.recent.Growth(int64(n)), windows
}

// addRejects counts n rejects of pt for reason. The caller holds the
// stream's lock.
func (pt *part) addRejects(reason feed.Reason, n int) {
	if pt.rejected == nil {
		pt.rejected = make(map[feed.Reason]uint64, 1)
	}
	pt.rejected[reason] += uint64(n)
}

// addInflight records a full window, a window of the stream in flight for
// the memory budget. Queries read its values until it is summarised: the
// sorter leaves them unchanged (gpusort.Digester).
func (pt *part) addInflight(w *window.Buffer) {
	pt.stream.account.WindowFull()
	pt.inflight = append(pt.inflight, w)
}

// release gives back to pool the buffers of a deleted stream's partial
// windows and of its full windows that never went to the sorter (those in
// the sorter come back on their own). An Accept still under way on the
// stream starts a new buffer.
func (s *Stream) release(pool *window.Pool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.pendingQ {
		pt := f.Owner
		pt.inflight = slices.DeleteFunc(pt.inflight, func(w *window.Buffer) bool { return w == f.Buffer })
		s.account.WindowDone()
		pool.Recycle(f.Buffer)
	}
	s.pendingQ = nil
	for _, pt := range s.partsLocked() {
		pt.filler.Release(pool)
		pt.changedLocked()
	}
}

// dropLocked detaches pt, a part leaving s: windows of it that come back
// from the sorter are dropped, and the buffers of its partial window and
// of its windows never sent go back to the pool (those in the sorter come
// back on their own); the budget's charges follow. The caller holds s.mu
// and has removed pt from s.kafka.
func (s *Stream) dropLocked(pt *part) {
	pt.detached = true
	kept := s.pendingQ[:0]
	for _, f := range s.pendingQ {
		if f.Owner != pt {
			kept = append(kept, f)
			continue
		}
		s.account.WindowDone()
		s.pool.Recycle(f.Buffer)
	}
	clear(s.pendingQ[len(kept):])
	s.pendingQ = kept
	pt.inflight = nil
	pt.filler.Release(s.pool)
	pt.mirrored, pt.mirror = 0, false
	// Nothing reads the part again, but it may stay reachable: the
	// stream's first part lies in the stream's block (Stream.first). What
	// it held goes, uncharged as it now is.
	pt.sum.Release()
	pt.view, pt.items, pt.rejected = nil, nil, nil
	s.version++
	s.account.Summaries(s.summaryBytes())
}

// requeue keeps windows that could not be sent, for the next Accept.
func (s *Stream) requeue(ws []fullWindow) {
	s.mu.Lock()
	s.pendingQ = append(ws, s.pendingQ...)
	s.mu.Unlock()
}

// spec returns the spec of a window of n values, reusing known.
func (pt *part) spec(n int, known []float64) summary.WindowSpec {
	pt.stream.mu.Lock()
	defer pt.stream.mu.Unlock()
	return pt.sum.Spec(n, known)
}

// addDigest adds a window digested against spec and drops it from the
// windows in flight.
func (pt *part) addDigest(w *window.Buffer, d *summary.Digest, spec summary.WindowSpec) {
	s := pt.stream
	s.mu.Lock()
	defer s.mu.Unlock()
	s.account.WindowDone()
	pt.addDigestLocked(w, d, spec)
}

// addDigestLocked is addDigest for a window not charged as a window in
// flight, or whose charge the caller returned. The caller holds the
// stream's lock.
func (pt *part) addDigestLocked(w *window.Buffer, d *summary.Digest, spec summary.WindowSpec) {
	s := pt.stream
	if pt.detached {
		return
	}
	if err := pt.sum.AddDigest(d, spec); err != nil {
		panic(fmt.Sprintf("pipeline: add digest to %q: %v", s.name, err))
	}
	if pt.items != nil {
		pt.items.sync(w, pt.sum.Counts())
	}
	pt.changedLocked()
	pt.inflight = slices.DeleteFunc(pt.inflight, func(f *window.Buffer) bool { return f == w })
	s.account.Summaries(s.summaryBytes())
}

// changedLocked drops the views of the part and its stream, which no
// longer match it. The caller holds the stream's lock.
func (pt *part) changedLocked() {
	pt.view = nil
	pt.stream.version++
}

// reject counts n rejected values from src; none if n is 0.
func (s *Stream) reject(src feed.Source, reason feed.Reason, n int) {
	if n <= 0 {
		return
	}
	s.mu.Lock()
	s.rejectLocked(src, reason, n)
	s.mu.Unlock()
}

// rejectLocked is reject with s.mu held.
func (s *Stream) rejectLocked(src feed.Source, reason feed.Reason, n int) {
	if n <= 0 {
		return
	}
	s.partLocked(src).addRejects(reason, n)
	s.version++
}

// pendingLocked returns the values accepted but not yet summarised: the
// windows in flight, oldest first, then the partial window. The caller
// holds the stream's lock.
func (pt *part) pendingLocked() []float64 {
	n := pt.partialLen()
	for _, w := range pt.inflight {
		n += w.Len()
	}
	out := make([]float64, 0, n)
	for _, w := range pt.inflight {
		out = w.AppendValues(out)
	}
	return pt.appendPartialLocked(out)
}

// viewInput is what a part's all-history view is made from, taken under
// the stream's lock: the part's cached view, or its summaries and pending
// values, from which build makes the view without the lock.
type viewInput struct {
	pt      *part
	view    *summary.View
	base    summary.Base
	pending []float64
	built   bool // view is new: build made it
}

// viewInputLocked returns what pt's view is made from. The caller holds the
// stream's lock.
func (pt *part) viewInputLocked(counts bool) viewInput {
	if pt.view != nil && (pt.viewCounts || !counts) {
		return viewInput{pt: pt, view: pt.view}
	}
	return viewInput{pt: pt, base: pt.sum.Base(counts), pending: pt.pendingLocked()}
}

// buildViewsLocked makes the views of ins that are not cached with the
// stream's lock released — sorting the pending values costs a few hundred
// microseconds per window, and ingest into the stream goes on meanwhile —
// and caches them in their parts if the stream did not change. The caller
// holds s.mu; it holds it again on return.
func (s *Stream) buildViewsLocked(ins []viewInput, counts bool) {
	todo := false
	for _, in := range ins {
		todo = todo || in.view == nil
	}
	if !todo {
		return
	}
	version := s.version
	s.mu.Unlock()
	for i := range ins {
		if in := &ins[i]; in.view == nil {
			radix.Float64s(in.pending, nil)
			in.view, in.built = in.base.View(in.pending), true
		}
	}
	s.mu.Lock()
	if s.version != version {
		return
	}
	for _, in := range ins {
		if in.built {
			in.pt.view, in.pt.viewCounts = in.view, counts
		}
	}
}

// answeringLocked returns the parts whose values the stream's answers
// count: the local part and the parts of partitions not released, at
// least one of them. A stream fed only by partitions the daemon released
// answers from an empty local part, made for the answer and not kept:
// such streams are many on a member of a group after a rebalance, and
// the part would cost each of them its fixed part again. The caller holds
// s.mu.
func (s *Stream) answeringLocked() []*part {
	parts := make([]*part, 0, 1+len(s.kafka))
	if s.local != nil {
		parts = append(parts, s.local)
	}
	for _, pt := range s.kafka {
		if !pt.released {
			parts = append(parts, pt)
		}
	}
	if len(parts) == 0 {
		parts = append(parts, s.mustNewPart(feed.Local))
	}
	return parts
}

// Stats are a stream's statistics.
type Stats struct {
	summary.Stats
	Config   summary.Config
	Pending  int64 // values accepted but not yet in the all-history summaries
	Rejected map[feed.Reason]uint64
	// Memory is what the memory budget charges the stream now, and
	// Reserved the part reserved when it was made (StreamFootprint).
	Memory, Reserved int64
}

// Stats returns the stream's statistics over the values its answers count
// (see View); Entries and Bytes count everything the stream holds, the
// strings of an item stream included, and for a hierarchy stream, Entries,
// Bytes, Memory and Reserved include those of its levels.
func (s *Stream) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Config: *s.cfg, Rejected: make(map[feed.Reason]uint64)}
	st.Entries, st.Bytes = s.recent.Entries(), s.recent.Bytes()
	if s.items != nil {
		st.Bytes += s.items.recent.Bytes()
	}
	for _, pt := range s.kafka {
		if pt.released {
			x := pt.sum.Stats()
			st.Entries += x.Entries
			st.Bytes += x.Bytes
		}
	}
	for _, pt := range s.answeringLocked() {
		addStats(&st, pt.sum.Stats(), pt.rejected)
	}
	for _, pt := range s.partsLocked() {
		if pt.items != nil {
			st.Bytes += pt.items.names.Bytes()
		}
	}
	if s.pairs != nil {
		s.pairStatsLocked(&st)
	}
	st.Pending = st.Count - st.Summarised
	st.Memory, st.Reserved = s.account.Charged(), s.account.Footprint().Reserve
	for _, lvl := range s.levelStreams() {
		x := lvl.Stats()
		st.Entries += x.Entries
		st.Bytes += x.Bytes
		st.Memory += x.Memory
		st.Reserved += x.Reserved
	}
	return st
}

// addStats adds the statistics and rejects of one part to st.
func addStats(st *Stats, x summary.Stats, rejected map[feed.Reason]uint64) {
	st.Stats.Add(x)
	for r, n := range rejected {
		st.Rejected[r] += n
	}
}

// View returns the all-history view of the stream, counting every value
// accepted so far from the local inputs and from the Kafka partitions the
// daemon consumes (not those released: see OwnPartitions). The partial
// windows and the windows in flight are sorted (a copy, on the CPU) and
// counted exactly. With counts false the view answers quantiles and ranks
// only, and is cheaper (summary.History.View). The views of several parts
// are merged (summary.MergeViews).
func (s *Stream) View(counts bool) *summary.View {
	s.mu.Lock()
	defer s.mu.Unlock()
	parts := s.answeringLocked()
	if len(parts) == 1 {
		ins := []viewInput{parts[0].viewInputLocked(counts)}
		s.buildViewsLocked(ins, counts)
		return ins[0].view
	}
	if m := s.merged; m != nil && m.version == s.version && (m.counts || !counts) {
		return m.view
	}
	version := s.version
	ins := make([]viewInput, 0, len(parts))
	for _, pt := range parts {
		ins = append(ins, pt.viewInputLocked(counts))
	}
	s.buildViewsLocked(ins, counts)
	views := make([]*summary.View, len(ins))
	for i, in := range ins {
		views[i] = in.view
	}
	s.mu.Unlock()
	v := summary.MergeViews(views)
	s.mu.Lock()
	if s.version == version {
		s.merged = &mergedView{view: v, version: version, counts: counts}
	}
	return v
}

// Last returns a snapshot of the last n values that reached the stream,
// from every source, in arrival order (see slidingwindow).
func (s *Stream) Last(n int64) (*slidingwindow.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recent.Last(n)
}

// Since returns a snapshot of the values that arrived at or after cutoff,
// from every source, and what it covers (see slidingwindow.Window.Since).
func (s *Stream) Since(cutoff time.Time) (*slidingwindow.Snapshot, slidingwindow.Span) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recent.Since(cutoff.UnixNano())
}

// A PartView is the all-history view of one part of a stream: the values
// from one source.
type PartView struct {
	Source   feed.Source // feed.Local, or a Kafka partition
	Released bool        // the daemon no longer consumes the partition
	Config   summary.Config
	Stats    summary.Stats
	Rejected map[feed.Reason]uint64
	View     *summary.View
}

// Parts returns the view of each part of the stream that keep accepts (all
// of them if keep is nil), released or not: the local part first, then the
// Kafka partitions in order. counts is as for View. A stream that has had
// nothing from the local inputs reports an empty local part, as a stream
// did when it had one always: a cluster member's share of a stream holds
// its local inputs' part, whose configuration the answer takes when no
// partition of the member counts.
func (s *Stream) Parts(counts bool, keep func(feed.Source) bool) []PartView {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []PartView
	var ins []viewInput
	parts := s.partsLocked()
	if s.local == nil {
		parts = append([]*part{s.mustNewPart(feed.Local)}, parts...)
	}
	for _, pt := range parts {
		if keep != nil && !keep(pt.src) {
			continue
		}
		out = append(out, PartView{
			Source: pt.src, Released: pt.released, Config: pt.sum.Config(), Stats: pt.sum.Stats(),
			Rejected: maps.Clone(pt.rejected),
		})
		ins = append(ins, pt.viewInputLocked(counts))
	}
	s.buildViewsLocked(ins, counts)
	for i, in := range ins {
		out[i].View = in.view
	}
	return out
}

// itemPartsLocked returns the item halves of s's parts, local first; nil
// for a value stream. The caller holds s.mu.
func (s *Stream) itemPartsLocked() []*itemPart {
	if s.items == nil {
		return nil
	}
	var out []*itemPart
	for _, pt := range s.partsLocked() {
		out = append(out, pt.items)
	}
	return out
}
