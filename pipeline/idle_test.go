package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"streamd/feed"
	"streamd/gpusort"
	"streamd/summary"
	"streamd/synth"
)

// idleStart is when the fake clocks of the idle tests start.
var idleStart = time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)

// sweepQuiet sweeps p once to see its streams, then again d later on clock,
// when the parts without values since are quiet, and returns what the
// second sweep flushed.
func sweepQuiet(p *Pipeline, clock *fakeClock, d time.Duration) IdleStats {
	p.sweepIdle(context.Background())
	clock.Advance(d)
	return p.sweepIdle(context.Background())
}

// idleValues returns n float32 values in one of the arrival orders.
func idleValues(order string, n int, seed uint64) []float64 {
	x, _ := synth.Generate(synth.Spec{Dist: synth.Normal, Seed: seed}, n)
	for i := range x {
		x[i] = float64(float32(x[i]))
	}
	switch order {
	case "sorted":
		slices.Sort(x)
	case "dups":
		for i := range x {
			x[i] = float64(i * 7919 % 13)
		}
	}
	return x
}

// acceptChunks accepts x into the named stream in chunks of 100 values,
// so that its partial window's buffer doubles as it grows.
func acceptChunks(t *testing.T, p *Pipeline, name string, x []float64) {
	t.Helper()
	for i := 0; i < len(x); i += 100 {
		if err := acceptValues(context.Background(), p, feed.Local, name, slices.Clone(x[i:min(i+100, len(x))]), time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
}

// waitIdle waits, for at most 20 seconds, until no stream of p, nor any
// level of a hierarchy stream, has windows in flight or queued, as
// quiesce does.
func waitIdle(t *testing.T, p *Pipeline) {
	t.Helper()
	quiesce(t, p)
}

// partialBytes returns the number of values of the local part's partial
// window and the bytes of its buffer.
func partialBytes(s *Stream) (n, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.local.partialLen(), s.local.filler.Bytes()
}

// TestIdleFlushDigests: the partial window of a stream that goes quiet for
// IdleFlush is digested into its summaries — by the sweeper for a small
// one, through the sorter for one of sorterMin values or more — not
// before, and the answers stay within ε of exact for every arrival order;
// the stream's charge drops.
func TestIdleFlushDigests(t *testing.T) {
	for _, c := range []struct {
		name    string
		eps     float64
		w, n    int
		partial int
	}{
		{"cpu", 0.02, 8192, 2*8192 + 5000, 5000},
		{"sorter", 0.01, 1 << 16, 20000, 20000},
	} {
		for _, order := range []string{"random", "sorted", "dups"} {
			t.Run(c.name+"/"+order, func(t *testing.T) {
				clock := &fakeClock{now: idleStart}
				p := open(t, Config{Now: clock.Now, IdleFlush: time.Minute,
					Defaults: summary.Config{Epsilon: c.eps, WindowSize: c.w, SlidingWindow: 1 << 12}})
				x := idleValues(order, c.n, 7)
				ctx := context.Background()
				if err := acceptValues(ctx, p, feed.Local, "q", x, time.Time{}); err != nil {
					t.Fatal(err)
				}
				s := mustStream(t, p, "q")
				waitStreamSummarised(t, s, int64(c.n-c.partial))
				before := s.Stats().Memory
				if st := sweepQuiet(p, clock, time.Minute-time.Second); st != (IdleStats{}) {
					t.Fatalf("flushed %+v before IdleFlush", st)
				}
				clock.Advance(time.Second)
				if st := p.sweepIdle(ctx); st.Digested != 1 || st.Shrunk != 0 {
					t.Fatalf("sweep after IdleFlush: %+v, want one window digested", st)
				}
				waitStreamSummarised(t, s, int64(c.n))
				st := s.Stats()
				if st.Count != int64(c.n) || st.Summarised != int64(c.n) || st.Pending != 0 {
					t.Fatalf("count %d, summarised %d, pending %d; want %d, %d, 0", st.Count, st.Summarised, st.Pending, c.n, c.n)
				}
				if n, b := partialBytes(s); n != 0 || b != 0 {
					t.Fatalf("partial window of %d values in %d bytes after the flush", n, b)
				}
				if st.Memory >= before {
					t.Fatalf("charge %d after the flush, %d before", st.Memory, before)
				}
				checkStream(t, s, x, c.eps)
				if st := p.sweepIdle(ctx); st != (IdleStats{}) {
					t.Fatalf("a second flush: %+v", st)
				}
			})
		}
	}
}

// TestIdleFlushShrinks: a quiet stream whose partial window takes less raw
// than digested stays exact, in a buffer of just its values, and its
// charge drops by the bytes freed; an item stream's partial window is only
// shrunk, as is a tiny one. The sliding windows keep fewer values raw than
// a window, so that the partial windows have buffers of their own (see
// TestMirroredPartialWindow).
func TestIdleFlushShrinks(t *testing.T) {
	clock := &fakeClock{now: idleStart}
	p := open(t, Config{Now: clock.Now, IdleFlush: time.Minute, Defaults: summary.Config{SlidingWindow: 1 << 12}})
	ctx := context.Background()
	x := idleValues("random", 3000, 3)
	acceptChunks(t, p, "small", x)
	// Two batches, so that the tiny stream's buffer, sized to its first,
	// doubles and has room to spare.
	tiny := idleValues("random", 20, 4)
	for _, part := range [][]float64{tiny[:12], tiny[12:]} {
		if err := acceptValues(ctx, p, feed.Local, "tiny", part, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	list := make([]string, 3000)
	for i := range list {
		list[i] = fmt.Sprintf("item-%d", i%50)
	}
	for i := 0; i < len(list); i += 100 {
		if err := acceptItemBatch(ctx, p, feed.Local, "items", itemBatch(list[i:i+100]...), time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	small, tinyS, items := mustStream(t, p, "small"), mustStream(t, p, "tiny"), mustStream(t, p, "items")
	cases := []struct {
		s     *Stream
		n, v  int
		check func()
	}{
		{small, 3000, 4, func() { checkStream(t, small, x, 0.001) }},
		{tinyS, 20, 4, func() { checkStream(t, tinyS, tiny, 0) }},
		{items, 3000, 8, func() { checkItems(t, items, items.View(true), list, 0.001) }},
	}
	freed := 0
	for _, c := range cases {
		_, b := partialBytes(c.s)
		if b <= c.n*c.v {
			t.Fatalf("%s: partial window of %d values in %d bytes: no room to spare", c.s.Name(), c.n, b)
		}
		freed += b - c.n*c.v
	}
	_, smallBytes := partialBytes(small)
	before := small.Stats().Memory
	if st := sweepQuiet(p, clock, time.Minute); st.Shrunk != 3 || st.Digested != 0 || st.Freed != int64(freed) {
		t.Fatalf("sweep: %+v, want 3 windows shrunk, %d bytes freed", st, freed)
	}
	for _, c := range cases {
		if n, b := partialBytes(c.s); n != c.n || b != c.n*c.v {
			t.Errorf("%s: partial window of %d values in %d bytes, want %d in %d", c.s.Name(), n, b, c.n, c.n*c.v)
		}
		if st := c.s.Stats(); st.Pending != int64(c.n) {
			t.Errorf("%s: %d values pending, want %d", c.s.Name(), st.Pending, c.n)
		}
		c.check()
	}
	if after, want := small.Stats().Memory, before-int64(smallBytes-3000*4); after != want {
		t.Errorf("charge %d after the flush, want %d", after, want)
	}
	// The stream grows again as it needs.
	more := idleValues("random", 2000, 5)
	if err := acceptValues(ctx, p, feed.Local, "small", more, time.Time{}); err != nil {
		t.Fatal(err)
	}
	checkStream(t, small, append(slices.Clone(x), more...), 0.001)
}

// TestIdleFlushDisabled: with a negative IdleFlush no sweeper runs and a
// sweep flushes nothing.
func TestIdleFlushDisabled(t *testing.T) {
	clock := &fakeClock{now: idleStart}
	p := open(t, Config{Now: clock.Now, IdleFlush: -1, Defaults: summary.Config{Epsilon: 0.02, WindowSize: 8192}})
	ctx := context.Background()
	x := idleValues("random", 5000, 1)
	if err := acceptValues(ctx, p, feed.Local, "q", x, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if p.stopSweep != nil {
		t.Fatal("a sweeper runs")
	}
	s := mustStream(t, p, "q")
	_, b := partialBytes(s)
	for range 3 {
		if st := sweepQuiet(p, clock, time.Hour); st != (IdleStats{}) {
			t.Fatalf("disabled sweep flushed %+v", st)
		}
	}
	if n, b2 := partialBytes(s); n != 5000 || b2 != b || s.Stats().Pending != 5000 {
		t.Fatalf("partial window of %d values in %d bytes, want 5000 in %d", n, b2, b)
	}
}

// TestIdleSweeper: the sweeper Open starts flushes a quiet stream on its
// own, by the real clock. The stream's sliding window keeps fewer values
// than a window, so that its partial window holds its values.
func TestIdleSweeper(t *testing.T) {
	p := open(t, Config{IdleFlush: 20 * time.Millisecond, Defaults: summary.Config{Epsilon: 0.02, WindowSize: 8192, SlidingWindow: 4096}})
	x := idleValues("random", 5000, 2)
	if err := acceptValues(context.Background(), p, feed.Local, "q", x, time.Time{}); err != nil {
		t.Fatal(err)
	}
	s := mustStream(t, p, "q")
	waitStreamSummarised(t, s, 5000)
	checkStream(t, s, x, 0.02)
	if st := p.IdleStats(); st.Digested != 1 {
		t.Fatalf("idle stats %+v, want one window digested", st)
	}
}

// TestIdleFlushConcurrentAccept: sweeps that flush streams while values
// keep arriving in them, from several goroutines and sources, lose and
// double-count no value; queries run meanwhile.
func TestIdleFlushConcurrentAccept(t *testing.T) {
	clock := &fakeClock{now: idleStart}
	const eps = 0.05
	p := open(t, Config{Now: clock.Now, IdleFlush: time.Second,
		Defaults: summary.Config{Epsilon: eps, WindowSize: 4096, SlidingWindow: 1 << 12}})
	ctx, cancel := context.WithCancel(context.Background())
	const streams, producers = 8, 4
	var mu sync.Mutex
	sent := map[string][]float64{}
	var wg sync.WaitGroup
	for g := range producers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range 150 {
				name := fmt.Sprintf("s%d", rng.IntN(streams))
				src := feed.Local
				if rng.IntN(3) == 0 {
					src = feed.Source{Topic: "t", Partition: rng.IntN(2)}
				}
				x := idleValues("random", 1+rng.IntN(2500), rng.Uint64())
				mu.Lock() // keeps sent in the order of each stream's accepts
				err := acceptValues(ctx, p, src, name, x, time.Time{})
				sent[name] = append(sent[name], x...)
				mu.Unlock()
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	var flushed IdleStats
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			st := p.sweepIdle(ctx)
			flushed.Digested += st.Digested
			flushed.Shrunk += st.Shrunk
			clock.Advance(time.Second)
			if s, err := p.Stream("s0"); err == nil {
				s.View(true)
			}
			if _, _, err := p.SaveTo(io.Discard, false); err != nil {
				t.Error(err)
			}
		}
	}()
	wg.Wait()
	cancel()
	<-done
	if flushed.Digested == 0 || flushed.Shrunk == 0 {
		t.Fatalf("sweeps flushed %+v: want some of both", flushed)
	}
	waitIdle(t, p)
	for name, x := range sent {
		s := mustStream(t, p, name)
		if st := s.Stats(); st.Count != int64(len(x)) || st.Summarised+st.Pending != st.Count {
			t.Fatalf("%s: count %d (%d summarised, %d pending), sent %d", name, st.Count, st.Summarised, st.Pending, len(x))
		}
		checkStream(t, s, x, eps)
	}
}

// TestIdleFlushSnapshot: a snapshot taken after a flush restores the
// streams identically, flushed windows in their summaries and shrunk ones
// raw, and a flush racing snapshots loses no value.
func TestIdleFlushSnapshot(t *testing.T) {
	clock := &fakeClock{now: idleStart}
	// Sliding windows shorter than a window: the partial windows have
	// buffers of their own, but for the stream "mirrored", whose partial
	// window its sliding window holds.
	cfg := Config{Now: clock.Now, IdleFlush: time.Minute, Defaults: summary.Config{Epsilon: 0.02, WindowSize: 8192, SlidingWindow: 4096}}
	p := open(t, cfg)
	ctx := context.Background()
	digested := idleValues("random", 8192+5000, 11)
	shrunk := idleValues("dups", 300, 12)
	if err := acceptValues(ctx, p, feed.Local, "digested", digested, time.Time{}); err != nil {
		t.Fatal(err)
	}
	acceptChunks(t, p, "shrunk", shrunk)
	if _, err := p.Create("mirrored", summary.Config{Epsilon: 0.02, WindowSize: 8192, SlidingWindow: 1 << 14}); err != nil {
		t.Fatal(err)
	}
	acceptChunks(t, p, "mirrored", shrunk)
	waitIdle(t, p)
	if st := sweepQuiet(p, clock, time.Minute); st.Digested != 1 || st.Shrunk != 1 {
		t.Fatalf("sweep: %+v", st)
	}
	want := encodings(t, p)
	var buf bytes.Buffer
	if _, _, err := p.SaveTo(&buf, false); err != nil {
		t.Fatal(err)
	}
	q := openRestored(t, cfg, buf.Bytes())
	got := encodings(t, q)
	if len(got) != len(want) {
		t.Fatalf("restored %d streams, want %d", len(got), len(want))
	}
	for name, enc := range want {
		if got[name] != enc {
			t.Errorf("%s: restored stream encodes differently", name)
		}
	}
	s := mustStream(t, q, "digested")
	if st := s.Stats(); st.Pending != 0 || st.Count != int64(len(digested)) {
		t.Errorf("digested: restored with %d of %d values pending", st.Pending, st.Count)
	}
	checkStream(t, s, digested, 0.02)
	checkStream(t, mustStream(t, q, "shrunk"), shrunk, 0)
	checkStream(t, mustStream(t, q, "mirrored"), shrunk, 0)
}

// TestIdleFlushRaces: sweeps that flush a stream's parts while its
// partition is handed over (ReplacePartition), while another stream is
// deleted, and while the pipeline closes, count every value once: the
// part handed over holds just the values of its state, the local part
// every value sent to it.
func TestIdleFlushRaces(t *testing.T) {
	const eps = 0.01
	cfg := summary.Config{Epsilon: eps, WindowSize: 1 << 15, SlidingWindow: 1 << 12}
	tp := feed.Source{Topic: "t", Partition: 5}
	ctx := context.Background()
	from := open(t, Config{Defaults: cfg})
	handed := idleValues("random", 9000, 20)
	if err := acceptValues(ctx, from, tp, "h", handed, time.Time{}); err != nil {
		t.Fatal(err)
	}
	states, err := from.PartitionState(tp)
	if err != nil {
		t.Fatal(err)
	}

	clock := &fakeClock{now: idleStart}
	p := open(t, Config{Now: clock.Now, IdleFlush: time.Second, Defaults: cfg})
	var local []float64
	for round := range 12 {
		// Partials of 9,000 values are digested by the sweeper, of 20,000
		// through the sorter; those of 1,000 are shrunk.
		n := []int{9000, 20000, 1000}[round%3]
		if err := acceptValues(ctx, p, tp, "h", idleValues("sorted", n, uint64(round)), time.Time{}); err != nil {
			t.Fatal(err)
		}
		x := idleValues("random", n, uint64(100+round))
		if err := acceptValues(ctx, p, feed.Local, "h", x, time.Time{}); err != nil {
			t.Fatal(err)
		}
		local = append(local, x...)
		if err := acceptValues(ctx, p, feed.Local, "tmp", idleValues("dups", n, 0), time.Time{}); err != nil {
			t.Fatal(err)
		}
		p.sweepIdle(ctx)
		clock.Advance(time.Second)
		var wg sync.WaitGroup
		wg.Go(func() { p.sweepIdle(ctx) })
		wg.Go(func() {
			if err := p.ReplacePartition(ctx, tp, states); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			if err := p.Delete("tmp"); err != nil {
				t.Error(err)
			}
		})
		wg.Wait()
		waitIdle(t, p)
		s := mustStream(t, p, "h")
		parts := s.Parts(false, nil)
		if len(parts) != 2 || parts[1].Source != tp {
			t.Fatalf("round %d: %d parts", round, len(parts))
		}
		if c := parts[0].View.Count(); c != int64(len(local)) || parts[0].Stats.Count != c {
			t.Fatalf("round %d: local part counts %d (stats %d), want %d", round, c, parts[0].Stats.Count, len(local))
		}
		if c := parts[1].View.Count(); c != int64(len(handed)) || parts[1].Stats.Count != c {
			t.Fatalf("round %d: partition's part counts %d (stats %d), want %d", round, c, parts[1].Stats.Count, len(handed))
		}
	}
	// Close while a sweep flushes: what it took is counted still.
	x := idleValues("random", 20000, 30)
	if err := acceptValues(ctx, p, feed.Local, "h", x, time.Time{}); err != nil {
		t.Fatal(err)
	}
	local = append(local, x...)
	p.sweepIdle(ctx)
	clock.Advance(time.Second)
	var wg sync.WaitGroup
	wg.Go(func() { p.sweepIdle(ctx) })
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	s := mustStream(t, p, "h")
	if c := s.Parts(false, nil)[0].View.Count(); c != int64(len(local)) {
		t.Fatalf("after Close: local part counts %d, want %d", c, len(local))
	}
	checkStream(t, s, append(local, handed...), eps)
}

// TestIdleFlushSendsQueued: a quiet stream whose full windows an Accept
// left unsent (its context ended while the sorter's queue was full) has
// them sent along with its flushed window, not left for its next Accept.
func TestIdleFlushSendsQueued(t *testing.T) {
	bs := &blockingSorter{CPU: gpusort.NewCPU(1), release: make(chan struct{})}
	var once sync.Once
	release := func() { once.Do(func() { close(bs.release) }) }
	clock := &fakeClock{now: idleStart}
	const w = 1 << 15
	p := open(t, Config{Now: clock.Now, IdleFlush: time.Minute, Queue: 1, Workers: 1, Sorter: bs,
		Defaults: summary.Config{Epsilon: 0.01, WindowSize: w, SlidingWindow: 1 << 12}})
	t.Cleanup(release) // runs before the pipeline's Close
	x := idleValues("random", 30*w+20000, 9)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- acceptValues(ctx, p, feed.Local, "q", x, time.Time{}) }()
	deadline := time.Now().Add(20 * time.Second)
	for len(p.full) < cap(p.full) { // the sorter holds a batch and the queue is full
		if time.Now().After(deadline) {
			t.Fatal("the sorter's queue never filled")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s := mustStream(t, p, "q")
	s.mu.Lock()
	queued := len(s.pendingQ)
	s.mu.Unlock()
	if queued == 0 {
		t.Fatal("no window left unsent")
	}
	release()
	if st := sweepQuiet(p, clock, time.Minute); st.Digested != 1 {
		t.Fatalf("sweep: %+v, want one window digested", st)
	}
	waitStreamSummarised(t, s, int64(len(x)))
	checkStream(t, s, x, 0.01)
}

// TestIdleSweepEveryShard checks that a sweep reaches every stream, in
// every shard, when shards hold more than a page of streams, and that
// what it digests is still counted: more streams than streamShards pages
// of sweepPage, each with one quiet partial window that digesting pays
// for.
func TestIdleSweepEveryShard(t *testing.T) {
	const values = 200
	n := streamShards*sweepPage + 500
	clock := &fakeClock{now: idleStart}
	// A sliding window of fewer values than a window: the partial windows
	// hold their values (see TestMirroredPartialWindow).
	p := open(t, Config{Now: clock.Now, IdleFlush: time.Minute, MaxStreams: n,
		Defaults: summary.Config{Epsilon: 0.25, WindowSize: 1024, SlidingWindow: 1000}})
	x := idleValues("random", values, 3)
	ctx := context.Background()
	for i := range n {
		if err := acceptValues(ctx, p, feed.Local, fmt.Sprintf("s%06d", i), x, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	if !digestPays(p.cfg.Defaults, values) {
		t.Fatal("digesting a partial window does not pay: the sweep would only shrink")
	}
	if st := sweepQuiet(p, clock, time.Minute); st.Digested != int64(n) {
		t.Fatalf("sweep digested %d partial windows of %d streams", st.Digested, n)
	}
	waitIdle(t, p)
	for i := range n {
		s := mustStream(t, p, fmt.Sprintf("s%06d", i))
		if c := s.View(true).Count(); c != values {
			t.Fatalf("stream %d counts %d values after the sweep, want %d", i, c, values)
		}
	}
}
