// Package pipeline holds the set of named streams and moves their values
// through the stages of streamd's design: each stream's values fill
// windows (package window), full windows from any streams are packed four
// to a batch and sorted (package gpusort), and each sorted window's digest
// goes into its stream's summaries (package summary).
//
// Queues between the stages are bounded. When sorting falls behind, Accept
// blocks: that is the back-pressure that stops TCP reads and Kafka fetches
// instead of letting memory grow. A query sees every value accepted before
// it started: the partial window and the windows still being sorted are
// counted exactly from the windows themselves, which the sorter only reads.
//
// Item streams (Accept of items) take strings: each is hashed to its
// fingerprint (package items) under the pipeline's key, which snapshots
// keep, and the fingerprints travel through the same windows, sorters and
// summaries as float64 values; the stream keeps the strings answers name.
// Every value's arrival time is the pipeline's clock at Accept (Config.Now)
// or the time its batch gives (feed.Batch.At); Stream.Since answers time
// windows.
//
// A hierarchy stream (summary.Config.Hierarchy, created with Create only)
// is an item stream whose items are in a prefix hierarchy (package hhh):
// it counts each item in canonical form, and keeps one more item stream
// per level of the hierarchy but the root, fed with each item's prefix of
// that level, so that Stream.HierarchicalHeavyHitters answers from the
// count bounds of every level at one cut. Items not in the hierarchy are
// rejected (feed.ReasonNotInHierarchy).
//
// A stream keeps the values (and items) of each Kafka partition apart from
// those of the local inputs and of other partitions (feed.Batch.Source;
// see Stream), so that a partition's state can move
// to another daemon whole (PartitionState, ReplacePartition) and a cluster
// answer can count each partition once. Memory is accounted per stream
// against a budget (Config.MaxMemory, StreamFootprint), every part's
// windows and summaries included. A part that gets no value for
// Config.IdleFlush has its partial window flushed: digested into its
// summaries as a short window, or kept raw in a buffer of just its values,
// whichever takes less memory (see idle.go), so that streams that go quiet
// cost only their summaries.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"streamd/feed"
	"streamd/gpusort"
	"streamd/internal/membudget"
	"streamd/items"
	"streamd/summary"
	"streamd/window"
)

// Errors returned by the pipeline.
var (
	// ErrNotFound is returned for a stream that does not exist.
	ErrNotFound = errors.New("stream not found")
	// ErrExists is returned by Create for a stream that exists.
	ErrExists = errors.New("stream already exists")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("pipeline closed")
	// ErrBadName is returned for an invalid stream name.
	ErrBadName = errors.New("bad stream name")
	// ErrStreamLimit is returned when creating a stream would pass the
	// limit on streams. It is feed.ErrStreamLimit, so that ingest counts
	// it.
	ErrStreamLimit = feed.ErrStreamLimit
	// ErrWrongKind is returned for values, items or pairs sent to a
	// stream of another kind, and questions a stream of that kind cannot
	// answer. It is feed.ErrWrongKind, so that ingest counts it.
	ErrWrongKind = feed.ErrWrongKind
	// ErrPairLengths is returned for pairs whose x and y differ in length.
	ErrPairLengths = errors.New("pairs: x and y differ in length")
	// ErrMemoryBudget is returned when the memory budget cannot hold a new
	// stream's reservation, or the growth that a batch needs when nothing
	// in flight would make room (StreamFootprint). It is
	// feed.ErrMemoryBudget, so that ingest counts it.
	ErrMemoryBudget = feed.ErrMemoryBudget
)

// Config configures a Pipeline.
type Config struct {
	// Defaults configures streams created on first data.
	Defaults summary.Config
	// MaxStreams limits the number of streams (default 1000000).
	MaxStreams int
	// Queue is the number of full windows that may wait for the sorter
	// before Accept blocks (default 16).
	Queue int
	// Linger is how long the packer waits for a batch to fill up to four
	// windows (default 2ms).
	Linger time.Duration
	// Sorter sorts the batches and digests their windows (on a GPU: reading
	// back only the digests); required. Every gpusort back-end is one.
	Sorter gpusort.Digester
	// Workers is the number of batches sorted and summarised at once
	// (default runtime.GOMAXPROCS(0), and at least minWorkers). Batches of
	// one stream are sorted in parallel too; only adding their digests to
	// the stream's summaries takes the stream's lock.
	Workers int
	// Logger receives the pipeline's logs (default slog.Default()).
	Logger *slog.Logger
	// Now is the clock that stamps each value's arrival time at Accept
	// and that time-window queries count back from (default time.Now).
	Now func() time.Time
	// ItemKey is the key of the item streams' fingerprints (package
	// items). Zero draws a random key; Restore replaces it with the key of
	// the snapshot, so that fingerprints stay the same across restarts.
	ItemKey items.Key
	// MaxMemory is the memory budget in bytes (0: none): new streams are
	// refused with ErrMemoryBudget when it cannot hold their reservation
	// (or their worst case is more than all of it), Accept waits while
	// more windows in flight would pass it, and refuses a batch whose
	// growth it cannot hold when nothing in flight would make room (see
	// StreamFootprint and streamd/internal/membudget).
	MaxMemory int64
	// IdleFlush is how long a part of a stream (its local values, or a
	// Kafka partition's) must go without a value before its partial
	// window is flushed, so that streams that go quiet cost only their
	// summaries: digested into them when its raw values take more memory
	// than their digest would, else kept raw, and exact, in a buffer of
	// just their size (see idle.go). Default DefaultIdleFlush; negative:
	// never.
	IdleFlush time.Duration
}

// Pipeline is the set of streams and the goroutines that sort and
// summarise their windows. Open starts them; Close stops them.
type Pipeline struct {
	cfg Config

	streams *streamTable
	closed  atomic.Bool // set by Close; read by accepts and creations without a lock

	mu      sync.Mutex // guards deleted, writing and unreleased
	deleted []string   // names deleted since the last snapshot saved (snapshot.go); nil before one
	// writing counts the snapshots cut and being written. A stream deleted
	// meanwhile may be one of theirs: its buffers, which hold its pending
	// values, wait in unreleased until the last is written.
	writing    int
	unreleased []*Stream

	rejectMu sync.Mutex
	rejected map[feed.Reason]uint64

	mem              *membudget.Budget
	defaultFootprint membudget.Footprint // StreamFootprint(cfg.Defaults)

	sendMu  [openStripes]openStripe // guard sending on full against its closing (lockOpen)
	stripes sync.Pool               // of *openStripe: the stripe of sendMu each processor last took
	striped atomic.Uint32           // stripes handed out by stripes.New, round robin
	full    chan fullWindow
	buffers window.Pool // window buffers, recycled once digested

	rounded sync.Pool // of *[]float32: values rounded for a float32 stream

	fallback *gpusort.CPU // digests batches the configured sorter fails on
	batches  chan *window.Quad[*part]
	cancel   context.CancelFunc
	wg       sync.WaitGroup

	stopSweep context.CancelFunc // stops the idle sweeper (idle.go); nil when none runs
	swept     sync.WaitGroup     // the idle sweeper

	itemKey  items.Key
	itemHash items.Hash // SipHash under itemKey
	itemBufs sync.Pool  // of *itemBuf

	// Counters for metrics.
	windowsSorted atomic.Int64
	valuesSorted  atomic.Int64
	sortNanos     atomic.Int64
	sortErrors    atomic.Int64
	idleDigested  atomic.Int64
	idleShrunk    atomic.Int64
	idleFreed     atomic.Int64
}

// New returns a pipeline with cfg, not yet running.
func New(cfg Config) (*Pipeline, error) {
	if cfg.Sorter == nil {
		return nil, errors.New("pipeline: no sorter")
	}
	cfg.Defaults = cfg.Defaults.WithDefaults()
	if err := cfg.Defaults.Validate(); err != nil {
		return nil, fmt.Errorf("pipeline: default stream config: %w", err)
	}
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = 1000000
	}
	if cfg.Queue <= 0 {
		cfg.Queue = 16
	}
	if cfg.Workers <= 0 {
		cfg.Workers = max(runtime.GOMAXPROCS(0), minWorkers)
	}
	if cfg.Linger <= 0 {
		cfg.Linger = 2 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.IdleFlush == 0 {
		cfg.IdleFlush = DefaultIdleFlush
	}
	if cfg.ItemKey == (items.Key{}) {
		k, err := items.NewKey()
		if err != nil {
			return nil, fmt.Errorf("pipeline: %w", err)
		}
		cfg.ItemKey = k
	}
	p := &Pipeline{
		cfg:      cfg,
		streams:  newStreamTable(),
		rejected: make(map[feed.Reason]uint64),
		mem:      membudget.New(cfg.MaxMemory),
		full:     make(chan fullWindow, cfg.Queue),
		fallback: gpusort.NewCPU(0),
		batches:  make(chan *window.Quad[*part], 1),
		itemKey:  cfg.ItemKey,
		itemHash: items.SipHash(cfg.ItemKey),
	}
	p.defaultFootprint = StreamFootprint(p.cfg.Defaults)
	p.stripes.New = func() any { return &p.sendMu[p.striped.Add(1)%openStripes] }
	// Windows are filled in place in the sorter's upload memory when it
	// lends some (the GPU back-ends: no host copy before the upload).
	if st, ok := cfg.Sorter.(gpusort.Stager); ok {
		p.buffers.Stager = st
	}
	return p, nil
}

// Defaults returns the configuration of the streams that ingest creates.
func (p *Pipeline) Defaults() summary.Config { return p.cfg.Defaults }

// Now returns the time of the pipeline's clock (Config.Now).
func (p *Pipeline) Now() time.Time { return p.cfg.Now() }

// minWorkers is the fewest sort workers by default: a GPU sorter keeps
// several batches in flight, each waiting on the GPU while it works, even
// when the daemon has only a core or two.
const minWorkers = 4

// Open starts the packer, the sorting goroutines and the sweeper of idle
// streams (Config.IdleFlush).
func (p *Pipeline) Open(ctx context.Context) error {
	if c, ok := p.cfg.Sorter.(gpusort.Calibrator); ok {
		// Measure for the default window size now, not on the first batch.
		d := p.cfg.Defaults
		if err := c.Calibrate(ctx, d.WindowSize, d.Float64); err != nil {
			p.cfg.Logger.Warn("calibrate sorter", "sorter", p.cfg.Sorter.Name(), "err", err)
		}
	}
	ctx, p.cancel = context.WithCancel(context.WithoutCancel(ctx))
	packer := window.Packer[*part]{In: p.full, Out: p.batches, Linger: p.cfg.Linger}
	p.wg.Go(func() {
		if err := packer.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			p.cfg.Logger.Error("packer stopped", "err", err)
		}
	})
	for range p.cfg.Workers {
		p.wg.Go(func() { p.sortLoop(ctx) })
	}
	p.sendRestored(ctx)
	p.startSweeper(ctx)
	return nil
}

// Close stops accepting values, sorts and summarises every full window
// already accepted, and stops the goroutines. Partial windows stay in
// their streams, counted by queries and kept by Snapshot. Close waits for
// the accepts in progress; every accept after it fails with ErrClosed and
// adds nothing, so a Snapshot taken after Close holds exactly the values
// of the accepts that succeeded. If ctx ends first, Close abandons the
// windows in flight and returns ctx's error.
func (p *Pipeline) Close(ctx context.Context) error {
	if !p.closed.CompareAndSwap(false, true) {
		return nil
	}
	// Creations check closed under their shard's lock: once each shard's
	// lock has been taken, none creates a stream.
	p.streams.lockAll()
	p.streams.unlockAll()
	p.stopSweeper()
	p.mem.Close()
	// Accepts hold a read lock of sendMu from their check of closed until
	// they have sent (lockOpen), so once Close holds them all none is
	// adding values, and none will.
	for i := range p.sendMu {
		p.sendMu[i].Lock()
	}
	close(p.full)
	for i := range p.sendMu {
		p.sendMu[i].Unlock()
	}
	done := make(chan struct{})
	go func() {
		p.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		p.cancel()
		return nil
	case <-ctx.Done():
		p.cancel()
		<-done
		return fmt.Errorf("close pipeline: %w", ctx.Err())
	}
}

// sortLoop sorts batches and hands each window's digest to its stream.
// The specs are taken before the batch is sorted, while earlier windows of
// the same streams may still be in flight (see summary.History.AddDigest).
// A batch the sorter fails on is digested on the CPU with the same specs,
// so no value is lost.
func (p *Pipeline) sortLoop(ctx context.Context) {
	var (
		specs   [gpusort.Channels]summary.WindowSpec
		digests [gpusort.Channels]summary.Digest
	)
	for b := range p.batches {
		for i, w := range b.Windows {
			specs[i] = w.Owner.spec(w.Buffer.Len(), specs[i].Known)
		}
		for i := len(b.Windows); i < gpusort.Channels; i++ {
			specs[i] = summary.WindowSpec{Spacing: 1}
		}
		start := time.Now()
		err := p.cfg.Sorter.Digest(ctx, &b.Sort, &specs, &digests)
		p.sortNanos.Add(int64(time.Since(start)))
		if err != nil {
			p.sortErrors.Add(1)
			p.cfg.Logger.Error("sort failed; sorting the batch on the CPU", "sorter", p.cfg.Sorter.Name(), "err", err)
			if err := p.fallback.Digest(context.WithoutCancel(ctx), &b.Sort, &specs, &digests); err != nil {
				// The windows stay in flight: queries still count them.
				p.cfg.Logger.Error("cpu sort failed", "err", err)
				continue
			}
		}
		for i, w := range b.Windows {
			n := w.Buffer.Len()
			w.Owner.addDigest(w.Buffer, &digests[i], specs[i])
			p.windowsSorted.Add(1)
			p.valuesSorted.Add(int64(n))
			p.buffers.Recycle(w.Buffer)
		}
	}
}

// Stream returns the named stream.
func (p *Pipeline) Stream(name string) (*Stream, error) {
	s := p.streams.get(name)
	if s == nil {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, name)
	}
	return s, nil
}

// Create creates a stream with cfg (zero fields take the pipeline's
// defaults). It fails with ErrExists if the stream exists.
func (p *Pipeline) Create(name string, cfg summary.Config) (*Stream, error) {
	if err := feed.ValidName(name); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadName, err)
	}
	d := p.cfg.Defaults
	if cfg.Epsilon == 0 {
		cfg.Epsilon = d.Epsilon
	}
	if cfg.WindowSize == 0 {
		cfg.WindowSize = d.WindowSize
	}
	if cfg.SlidingWindow == 0 {
		cfg.SlidingWindow = d.SlidingWindow
	}
	s, created, err := p.getOrCreate(name, cfg, feed.Local)
	if err != nil {
		return nil, err
	}
	if !created {
		return nil, fmt.Errorf("%w: %q", ErrExists, name)
	}
	return s, nil
}

// getOrCreate returns the named stream, creating it with cfg if needed,
// for values from src.
func (p *Pipeline) getOrCreate(name string, cfg summary.Config, src feed.Source) (*Stream, bool, error) {
	if old := p.streams.get(name); old != nil {
		return old, false, nil
	}
	if err := feed.ValidName(name); err != nil {
		return nil, false, fmt.Errorf("%w: %v", ErrBadName, err)
	}
	return p.create(name, cfg, src)
}

// create is getOrCreate for a valid name that a lookup did not find just
// before: it makes the stream, and returns it unless one was created
// meanwhile.
func (p *Pipeline) create(name string, cfg summary.Config, src feed.Source) (*Stream, bool, error) {
	s, err := p.newStream(name, cfg, src)
	if err != nil {
		return nil, false, err
	}
	// What the stream is charged is worked out (a sliding window made to
	// measure it) before its shard's lock, which the shard's lookups share.
	fp := p.footprint(s.cfg)
	sh, h := p.streams.locate(name)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if old := sh.find(h, name); old != nil {
		return old, false, nil
	}
	if p.closed.Load() {
		return nil, false, ErrClosed
	}
	if !p.streams.reserve(p.cfg.MaxStreams) {
		return nil, false, fmt.Errorf("%w: %d streams", ErrStreamLimit, p.cfg.MaxStreams)
	}
	if err := p.mem.OpenAt(&s.account, fp); err != nil {
		p.streams.unreserve()
		return nil, false, fmt.Errorf("stream %q: %w", name, err)
	}
	if err := p.openLevels(s); err != nil {
		s.account.Close()
		p.streams.unreserve()
		return nil, false, err
	}
	p.streams.putLocked(sh, h, s)
	return s, true, nil
}

// Delete removes a stream. Windows of it still being sorted are dropped
// when they come back.
func (p *Pipeline) Delete(name string) error {
	sh, h := p.streams.locate(name)
	sh.mu.Lock()
	s := p.streams.deleteLocked(sh, h, name)
	if s == nil {
		sh.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrNotFound, name)
	}
	p.mu.Lock()
	if p.deleted != nil { // a snapshot was saved: the next delta deletes it
		p.deleted = append(p.deleted, name)
	}
	// A snapshot being written may write s after this: its pending values
	// stay until it has.
	later := p.writing > 0
	if later {
		p.unreleased = append(p.unreleased, s)
	}
	p.mu.Unlock()
	s.account.Close()
	for _, lvl := range s.levelStreams() {
		lvl.account.Close()
	}
	sh.mu.Unlock()
	if !later {
		p.releaseStream(s)
	}
	return nil
}

// releaseStream gives the buffers of s, a deleted stream, and of its
// levels back to the pool, under the hierarchy's lock for a hierarchy
// stream: one who holds it sees every level released or none.
func (p *Pipeline) releaseStream(s *Stream) {
	if s.hier != nil {
		s.hier.mu.Lock()
		defer s.hier.mu.Unlock()
	}
	s.release(&p.buffers)
	for _, lvl := range s.levelStreams() {
		lvl.release(&p.buffers)
	}
}

// List returns the streams' names, sorted. It costs O(N) for N streams;
// Names returns a page of them.
func (p *Pipeline) List() []string { return p.streams.list() }

// Names returns the names of streams that come after the name after (""
// for the first) and start with prefix, in increasing order, at most n of
// them: a page of the streams, which the next page starts after the last
// name of. It costs O(log N + n) for N streams, and sees every stream
// created before it and none deleted before it. Hierarchy streams' levels
// are no streams of the pipeline: they are not named.
func (p *Pipeline) Names(after, prefix string, n int) []string {
	return p.streams.page(nil, after, prefix, n)
}

// Len reports the number of streams.
func (p *Pipeline) Len() int { return p.streams.len() }

// Accept adds the payload of b to its stream and returns how many values,
// items or pairs it accepted: every later query counts them. It creates
// the stream with the default config (as an item stream for items, a pair
// stream for pairs) on the
// first values or items it keeps: a payload of which none would be kept
// creates no stream, and its rejects are counted as belonging to none
// (Rejected). Accept blocks while the sorter's queue is full
// (back-pressure), and while the stream has windows in flight and the
// memory budget cannot hold another.
//
// The values and items of each source (b.Source) are kept apart (see
// Stream). Their arrival time is b.At, or the pipeline's clock (Config.Now)
// if b.At is zero; a time older than the stream's newest arrival is taken
// as that (arrival times never go back; see slidingwindow).
//
// Values (b.Values, clean as feed.CleanValues leaves them) go into a
// float32 stream rounded to float32 (feed.Float32): a value beyond
// float32's range is left out and counted as a reject of the stream
// (feed.ReasonInf). Values decoded from float32 (b.Float32, with their
// moments) go into a stream of either precision as they are. Items must
// be valid (items.Check). Pairs (b.Pairs, clean as feed.CleanPairs leaves
// them) go into a pair stream, created as one by the first pairs; its
// windows are sorted and summarised by Accept itself (see pairStream), and
// it has no arrival times.
//
// Accept fails with an error wrapping ErrBadName for an invalid name,
// ErrWrongKind for a payload sent to a stream of another kind (values to
// an item or pair stream, items to a value or pair stream, pairs to a
// value or item stream), ErrPairLengths for pairs whose x and y differ in
// length, ErrStreamLimit or ErrMemoryBudget when the stream cannot be
// created or the growth the values or the items' strings need cannot be
// held (see chargeValues), and ErrClosed after Close;
// it has then accepted none of the payload. The caller may reuse b and its
// payload once Accept returns.
func (p *Pipeline) Accept(ctx context.Context, b *feed.Batch) (accepted int, err error) {
	switch {
	case b.Items != nil:
		return p.acceptItems(ctx, b)
	case len(b.Pairs.X) > 0 || len(b.Pairs.Y) > 0:
		return p.acceptPairs(ctx, b)
	}
	s, err := p.valueStream(b)
	if s == nil {
		return 0, err
	}
	if (s.items != nil || s.pairs != nil) && b.Len() > 0 {
		return 0, fmt.Errorf("%w: values for %s stream %q", ErrWrongKind, s.kind(), s.name)
	}
	now := p.arrival(b.At)
	if len(b.Float32) > 0 || s.cfg.Float64 {
		m := b.Moments
		if len(b.Float32) == 0 {
			m = feed.Measure(b.Values)
		}
		if err := p.keep(ctx, s, b.Source, b.Values, b.Float32, m, 0, now); err != nil {
			return 0, err
		}
		return b.Len(), nil
	}
	// Round and measure before taking the stream's lock, so that
	// connections feeding one stream share only the copies.
	buf, _ := p.rounded.Get().(*[]float32)
	if buf == nil {
		buf = new([]float32)
	}
	defer p.rounded.Put(buf)
	vals, m, inf := feed.AppendFloat32((*buf)[:0], b.Values)
	*buf = vals
	if err := p.keep(ctx, s, b.Source, nil, vals, m, inf, now); err != nil {
		return 0, err
	}
	return len(vals), nil
}

// keep keeps clean values from src, values or f32, of moments m, arrived
// at now, in s, with inf values rejected as beyond float32's range, and
// sends the windows they fill. When they fit the buffers s holds and fill
// no window, as a small batch mostly does, that takes one section under
// the stream's lock; otherwise the growth they need, found in that
// section, is charged first (chargeValues), which may wait or refuse them,
// and they are kept in a second.
func (p *Pipeline) keep(ctx context.Context, s *Stream, src feed.Source, values []float64, f32 []float32, m feed.Moments, inf int, now int64) error {
	open, err := p.lockOpen()
	if err != nil {
		return err
	}
	full, need, ok := s.appendIfRoom(src, values, f32, m, inf, now)
	if !ok {
		// chargeValues may send the stream's pending windows, under a
		// read lock of sendMu of its own.
		open.RUnlock()
		if err := p.chargeValues(ctx, s, need); err != nil {
			return err
		}
		if open, err = p.lockOpen(); err != nil {
			return err
		}
		full = s.append(src, values, f32, m, inf, now)
	}
	return p.send(ctx, s, full, open)
}

// arrival returns the arrival time at in Unix nanoseconds, the pipeline's
// clock if at is zero.
func (p *Pipeline) arrival(at time.Time) int64 {
	if at.IsZero() {
		at = p.cfg.Now()
	}
	return at.UnixNano()
}

// valueStream returns the stream of b, a batch of values. It creates the
// stream with the default config only if such a stream would keep some of
// b's values: a stream's kind comes from the values or items it keeps,
// never from rejects. Otherwise it returns nil, having counted the values
// that a float32 stream rejects as rejects that belong to no stream, and
// a nil error for a valid name.
func (p *Pipeline) valueStream(b *feed.Batch) (*Stream, error) {
	if s := p.lookup(b.Stream); s != nil {
		return s, nil
	}
	if err := feed.ValidName(b.Stream); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadName, err)
	}
	kept, inf := len(b.Float32)+len(b.Values), 0
	if len(b.Values) > 0 && !p.cfg.Defaults.Float64 {
		kept, inf = feed.KeptFloat32(b.Values)
	}
	if kept == 0 {
		p.rejectNone(feed.ReasonInf, inf)
		return nil, nil
	}
	s, _, err := p.create(b.Stream, p.cfg.Defaults, b.Source)
	return s, err
}

// lookup returns the named stream, or nil.
func (p *Pipeline) lookup(name string) *Stream { return p.streams.get(name) }

// sendPending queues s's full windows not yet sent to the sorter: those
// restored or left unsent by a cancelled Accept.
func (p *Pipeline) sendPending(ctx context.Context, s *Stream) error {
	open, err := p.lockOpen()
	if err != nil {
		return err
	}
	return p.send(ctx, s, s.takePending(), open)
}

// openStripes is how many read-write locks sendMu is split into.
const openStripes = 32

// An openStripe is a lock of sendMu, alone on its cache lines.
type openStripe struct {
	sync.RWMutex
	_ [64]byte
}

// lockOpen read-locks one of sendMu's locks for an accept and returns it,
// or fails with ErrClosed, and unlocked, once Close has begun. The accept
// then adds its values to the stream and calls send, which unlocks it:
// Close write-locks them all, so it waits for the accepts that got in, and
// no values are added after it.
//
// An accept takes the lock its processor took last, which the processor's
// own slot of the stripes pool keeps: accepts on different cores then
// take turns at no one lock's counter, and a lock's cache line stays with
// its core. A lock picked at random, as before, was mostly one another
// core had just written.
//
// Under the race detector an accept picks its lock at random: there a
// sync.Pool orders each Get after the Put of the same object, which would
// order every accept after those that took its lock before, and hide
// from the detector any race between them.
func (p *Pipeline) lockOpen() (*openStripe, error) {
	var open *openStripe
	if raceEnabled {
		open = &p.sendMu[rand.Uint32()%openStripes]
	} else {
		open = p.stripes.Get().(*openStripe)
		p.stripes.Put(open)
	}
	open.RLock()
	if p.closed.Load() {
		open.RUnlock()
		return nil, fmt.Errorf("accept: %w", ErrClosed)
	}
	return open, nil
}

// send queues s's full windows for the sorter and unlocks open, which the
// caller read-locked with lockOpen. Then it waits while the stream has
// windows in flight and one more would pass the memory budget.
func (p *Pipeline) send(ctx context.Context, s *Stream, full []fullWindow, open *openStripe) error {
	defer s.account.Wait(ctx)
	defer open.RUnlock()
	for i, w := range full {
		select {
		case p.full <- w:
		case <-ctx.Done():
			// The values are accepted and counted (queries sort the windows
			// in flight themselves); the unsent windows go out with the
			// stream's next Accept or at the next Open. So this is no
			// failure of Accept, whose contract is about counting.
			s.requeue(full[i:])
			return nil
		}
	}
	return nil
}

// Reject counts n values or items of a stream from src rejected for
// reason. It never creates a stream — a stream's kind comes from the
// values or items it keeps — so rejects of a name with no stream (when
// they are counted), like those without a name (a bad name, the stream
// limit), are counted on the pipeline, by reason only, which bounds them:
// see Rejected.
func (p *Pipeline) Reject(stream string, src feed.Source, reason feed.Reason, n int) {
	if s := p.lookup(stream); s != nil {
		s.reject(src, reason, n)
		return
	}
	p.rejectNone(reason, n)
}

// rejectNone counts n rejects for reason that belong to no stream.
func (p *Pipeline) rejectNone(reason feed.Reason, n int) {
	if n == 0 {
		return
	}
	p.rejectMu.Lock()
	p.rejected[reason] += uint64(n)
	p.rejectMu.Unlock()
}

// Rejected returns the counts of rejects that belong to no stream: those
// without a valid stream name, those refused a stream (the stream limit,
// the memory budget), and those of a name that had no stream when they
// were counted.
func (p *Pipeline) Rejected() map[feed.Reason]uint64 {
	p.rejectMu.Lock()
	defer p.rejectMu.Unlock()
	m := make(map[feed.Reason]uint64, len(p.rejected))
	for r, n := range p.rejected {
		m[r] = n
	}
	return m
}

// Counters are the pipeline's counters, for metrics.
type Counters struct {
	Streams       int
	WindowsSorted int64
	ValuesSorted  int64
	SortSeconds   float64
	SortErrors    int64
	Queued        int
}

// Sorter returns the sorter the pipeline digests its windows with
// (Config.Sorter).
func (p *Pipeline) Sorter() gpusort.Digester { return p.cfg.Sorter }

// Counters returns the pipeline's counters.
func (p *Pipeline) Counters() Counters {
	return Counters{
		Streams:       p.Len(),
		WindowsSorted: p.windowsSorted.Load(),
		ValuesSorted:  p.valuesSorted.Load(),
		SortSeconds:   float64(p.sortNanos.Load()) / 1e9,
		SortErrors:    p.sortErrors.Load(),
		Queued:        len(p.full),
	}
}
