package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"streamd/feed"
	"streamd/gpusort"
	"streamd/internal/codec"
	"streamd/summary"
)

// restoreChain restores base and deltas into a new pipeline (not open).
func restoreChain(t *testing.T, base []byte, deltas ...[]byte) *Pipeline {
	t.Helper()
	return restoreChainWith(t, Config{Sorter: gpusort.NewCPU(0)}, base, deltas...)
}

// restoreChainWith is restoreChain into a pipeline made with cfg.
func restoreChainWith(t *testing.T, cfg Config, base []byte, deltas ...[]byte) *Pipeline {
	t.Helper()
	q, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Restore(base); err != nil {
		t.Fatal(err)
	}
	for i, d := range deltas {
		if err := q.RestoreDelta(d); err != nil {
			t.Fatalf("delta %d of %d: %v", i+1, len(deltas), err)
		}
	}
	return q
}

// sameAsSnapshot checks that q holds exactly what a pipeline restored
// from full holds.
func sameAsSnapshot(t *testing.T, what string, q *Pipeline, full []byte) {
	t.Helper()
	r := restoreChain(t, full)
	if !slices.Equal(q.List(), r.List()) {
		t.Fatalf("%s: streams %q from the deltas, %q from the snapshot", what, q.List(), r.List())
	}
	got, want := encodings(t, q), encodings(t, r)
	bad := 0
	for name, enc := range want {
		if got[name] != enc {
			bad++
			if bad <= 5 {
				gs, _ := q.Stream(name)
				ws, _ := r.Stream(name)
				t.Errorf("%s: stream %q restored from the deltas differs from the snapshot's (added %d vs %d, count %d vs %d)", what, name,
					gs.recent.Added(), ws.recent.Added(), gs.Stats().Count, ws.Stats().Count)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%s: %d streams differ", what, bad)
	}
	if !slices.Equal(sortedRejects(q), sortedRejects(r)) {
		t.Errorf("%s: rejects %v from the deltas, %v from the snapshot", what, q.Rejected(), r.Rejected())
	}
}

// mustRefuse checks that q refuses the delta d as corrupt, changing none
// of its streams.
func mustRefuse(t *testing.T, what string, q *Pipeline, d []byte) {
	t.Helper()
	before := encodings(t, q)
	if err := q.RestoreDelta(d); !errors.Is(err, codec.ErrCorrupt) {
		t.Errorf("%s: %v, want codec.ErrCorrupt", what, err)
	}
	if !maps.Equal(before, encodings(t, q)) {
		t.Errorf("%s: the refused delta changed the streams", what)
	}
}

// acceptRandom returns a function that accepts n values of rvals into
// stream name of p, at one time, failing t if it fails.
func acceptRandom(t *testing.T, p *Pipeline, rnd *rand.Rand) func(name string, n int) {
	return func(name string, n int) {
		t.Helper()
		if err := acceptValues(context.Background(), p, feed.Local, name, rvals(rnd, n), time.Unix(1, 0)); err != nil {
			t.Fatal(err)
		}
	}
}

func rvals(rnd *rand.Rand, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(rnd.IntN(100000)) / 16
	}
	return out
}

// TestDeltasWhileAccepting: several goroutines accept into
// shared and own streams, delete streams and make them again with other
// configurations, while the main goroutine takes deltas (some of them
// never committed). At the end, base and the committed deltas restore
// exactly what a snapshot at the last delta's cut does.
func TestDeltasWhileAccepting(t *testing.T) {
	ctx := context.Background()
	p := open(t, Config{Defaults: summary.Config{Epsilon: 0.1, WindowSize: 64, SlidingWindow: 300}, Sorter: gpusort.NewCPU(1)})
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range 10 {
		if err := acceptValues(ctx, p, feed.Local, fmt.Sprint("s", i), rvals(rnd, 50*i), time.Unix(1, 0)); err != nil {
			t.Fatal(err)
		}
	}
	quiesce(t, p)
	base, _ := save(t, p, false, true)

	var stop atomic.Bool
	var wg sync.WaitGroup
	configs := []summary.Config{
		{},
		{Float64: true},
		{SlidingWindow: 100},
		{SlidingWindow: 5000, Epsilon: 0.3},
		{Float64: true, SlidingWindow: 257},
	}
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(g), 99))
			for i := 0; !stop.Load(); i++ {
				name := fmt.Sprint("s", rnd.IntN(10))
				if rnd.IntN(3) == 0 {
					name = fmt.Sprint("own", g, "_", rnd.IntN(3))
				}
				k := 1 + rnd.IntN(40)
				if rnd.IntN(20) == 0 {
					k = 250 + rnd.IntN(400) // past the ring
				}
				src := feed.Local
				if rnd.IntN(4) == 0 {
					src = feed.Source{Topic: "t", Partition: rnd.IntN(3)}
				}
				_ = acceptValues(ctx, p, src, name, rvals(rnd, k), time.Unix(int64(i), 0))
				if g == 0 && rnd.IntN(15) == 0 {
					dn := fmt.Sprint("dyn", rnd.IntN(2))
					_ = p.Delete(dn)
					_, _ = p.Create(dn, configs[rnd.IntN(len(configs))])
					_ = acceptValues(ctx, p, feed.Local, dn, rvals(rnd, rnd.IntN(350)), time.Unix(int64(i), 0))
				}
				if rnd.IntN(8) == 0 {
					runtime.Gosched()
				}
			}
		}()
	}
	var deltas [][]byte
	for round := range 40 {
		time.Sleep(time.Duration(1+rnd.IntN(3)) * time.Millisecond)
		commit := round%5 != 3
		d, _ := save(t, p, true, commit)
		if commit {
			deltas = append(deltas, d)
		}
	}
	stop.Store(true)
	wg.Wait()
	quiesce(t, p)
	last, _ := save(t, p, true, true)
	deltas = append(deltas, last)
	full, _ := save(t, p, false, false)
	q := restoreChain(t, base, deltas...)
	sameAsSnapshot(t, "concurrent", q, full)
}

// TestDeltasOfRestoredPipelines: a pipeline restored from a base and
// deltas goes on taking values, and its own deltas follow the chain
// restored; restoring the whole chain (the original's base and deltas,
// then the restored pipeline's deltas) gives what a snapshot of the
// restored pipeline does. Done twice: a restore of a restore.
func TestDeltasOfRestoredPipelines(t *testing.T) {
	ctx := context.Background()
	cfg := Config{Defaults: summary.Config{Epsilon: 0.1, WindowSize: 64, SlidingWindow: 300}, Sorter: gpusort.NewCPU(1)}
	p := open(t, cfg)
	rnd := rand.New(rand.NewPCG(5, 6))
	feedSome := func(p *Pipeline, round int) {
		t.Helper()
		for i := range 12 {
			if rnd.IntN(3) == 0 {
				continue
			}
			k := rnd.IntN(30)
			switch rnd.IntN(6) {
			case 0:
				k = 300 - int(mustStreamOr(p, fmt.Sprint("s", i)))%300 // fill the ring exactly
			case 1:
				k = 301 + rnd.IntN(300)
			}
			if k == 0 {
				continue
			}
			if err := acceptValues(ctx, p, feed.Local, fmt.Sprint("s", i), rvals(rnd, k), time.Unix(int64(round), 0)); err != nil {
				t.Fatal(err)
			}
		}
		// Rejects only: the stream changes, its window does not.
		p.Reject("s11", feed.Local, feed.ReasonNaN, 1)
		if err := acceptValues(ctx, p, feed.Local, "s10", []float64{1e300}, time.Unix(int64(round), 0)); err != nil {
			t.Fatal(err)
		}
		quiesce(t, p)
	}
	feedSome(p, 0)
	base, _ := save(t, p, false, true)
	var chain [][]byte
	for round := range 6 {
		feedSome(p, round+1)
		d, _ := save(t, p, true, round != 2)
		if round != 2 {
			chain = append(chain, d)
		}
	}
	cur := p
	for gen := range 3 {
		full, _ := save(t, cur, false, false)
		q := restoreChain(t, base, chain...)
		sameAsSnapshot(t, fmt.Sprintf("generation %d", gen), q, full)
		if err := q.Open(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = q.Close(ctx) })
		cur = q
		for round := range 4 {
			feedSome(cur, 100*(gen+1)+round)
			d, _ := save(t, cur, true, true)
			chain = append(chain, d)
		}
	}
	full, _ := save(t, cur, false, false)
	sameAsSnapshot(t, "last", restoreChain(t, base, chain...), full)
}

func mustStreamOr(p *Pipeline, name string) int64 {
	s, err := p.Stream(name)
	if err != nil {
		return 0
	}
	return s.recent.Added()
}

// TestDeltaTwiceOrOutOfOrder: a delta applied twice, a delta
// applied before the one it follows, a delta after another base: refused
// with codec.ErrCorrupt and nothing changed, or (a delta of no value
// added since) restored to the same state.
func TestDeltaTwiceOrOutOfOrder(t *testing.T) {
	ctx := context.Background()
	p := open(t, Config{Defaults: summary.Config{Epsilon: 0.1, WindowSize: 64, SlidingWindow: 300}})
	accept := func(name string, v ...float64) {
		t.Helper()
		if err := acceptValues(ctx, p, feed.Local, name, v, time.Unix(1, 0)); err != nil {
			t.Fatal(err)
		}
	}
	accept("a", 1, 2, 3)
	accept("b", 4, 5)
	quiesce(t, p)
	base, _ := save(t, p, false, true)
	accept("a", 7, 8)
	quiesce(t, p)
	d1, _ := save(t, p, true, true)
	accept("a", 9)
	quiesce(t, p)
	d2, _ := save(t, p, true, true)

	q := restoreChain(t, base)
	mustRefuse(t, "d2 before d1", q, d2)
	if err := q.RestoreDelta(d1); err != nil {
		t.Fatal(err)
	}
	mustRefuse(t, "d1 twice", q, d1)
	if err := q.RestoreDelta(d2); err != nil {
		t.Fatal(err)
	}
	full, _ := save(t, p, false, false)
	sameAsSnapshot(t, "after refusals", q, full)
}

// TestDeltaMadeAgainAcrossFailedCheckpoints: a stream deleted and
// made again (another precision, another sliding window) in a delta whose
// checkpoint failed, then fed; the next delta must still restore it whole.
func TestDeltaMadeAgainAcrossFailedCheckpoints(t *testing.T) {
	p := open(t, Config{Defaults: summary.Config{Epsilon: 0.1, WindowSize: 64, SlidingWindow: 300}})
	rnd := rand.New(rand.NewPCG(8, 8))
	accept := acceptRandom(t, p, rnd)
	accept("x", 120)
	accept("y", 10)
	quiesce(t, p)
	base, _ := save(t, p, false, true)
	var chain [][]byte
	cfgs := []summary.Config{{Float64: true}, {SlidingWindow: 120}, {}, {Float64: true, SlidingWindow: 300}, {Epsilon: 0.1, SlidingWindow: 300}}
	for round, c := range cfgs {
		accept("x", 30)
		if err := p.Delete("x"); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Create("x", c); err != nil {
			t.Fatal(err)
		}
		accept("x", 120) // the same position as before, by design
		quiesce(t, p)
		save(t, p, true, false) // failed
		accept("x", 5)
		accept("y", 1)
		quiesce(t, p)
		d, _ := save(t, p, true, true)
		chain = append(chain, d)
		accept("x", 7)
		quiesce(t, p)
		d, _ = save(t, p, true, round%2 == 0)
		if round%2 == 0 {
			chain = append(chain, d)
		}
	}
	quiesce(t, p)
	d, _ := save(t, p, true, true)
	chain = append(chain, d)
	full, _ := save(t, p, false, false)
	sameAsSnapshot(t, "made again", restoreChain(t, base, chain...), full)
}

// TestDeltaMadeAgainWhileWriting: a stream deleted and made again
// while a delta is being written (after its cut).
func TestDeltaMadeAgainWhileWriting(t *testing.T) {
	p := open(t, Config{Defaults: summary.Config{Epsilon: 0.1, WindowSize: 64, SlidingWindow: 300}})
	rnd := rand.New(rand.NewPCG(9, 9))
	accept := acceptRandom(t, p, rnd)
	accept("a", 50)
	accept("b", 50)
	quiesce(t, p)
	base, _ := save(t, p, false, true)
	accept("a", 10)
	accept("b", 10)
	quiesce(t, p)
	d1, _ := save(t, p, true, true)
	accept("a", 10)
	accept("b", 10)
	quiesce(t, p)
	w := newRemake(t, p, "b", 70)
	_, sv, err := p.SaveTo(w, true)
	if err != nil {
		t.Fatal(err)
	}
	sv.Commit()
	accept("b", 3)
	accept("a", 3)
	quiesce(t, p)
	d3, _ := save(t, p, true, true)
	full, _ := save(t, p, false, false)
	sameAsSnapshot(t, "remade during write", restoreChain(t, base, d1, w.b.Bytes(), d3), full)
}

type remakeOnWrite struct {
	deleteOnWrite
	n    int
	done bool
}

func newRemake(t *testing.T, p *Pipeline, name string, n int) *remakeOnWrite {
	return &remakeOnWrite{deleteOnWrite: deleteOnWrite{t: t, p: p, name: name}, n: n}
}

func (w *remakeOnWrite) Write(data []byte) (int, error) {
	if !w.done {
		w.done = true
		name := w.name
		if err := w.p.Delete(name); err != nil {
			w.t.Error(err)
		}
		w.name = ""
		if err := acceptValues(context.Background(), w.p, feed.Local, name, make([]float64, w.n), time.Unix(2, 0)); err != nil {
			w.t.Error(err)
		}
	}
	return w.b.Write(data)
}

// TestDeltasWithPartitionsBlocksAndIdle: streams in Blocks mode (a ring of 427
// values in a window of 100000) and in Exact mode, of both precisions,
// fed from the local inputs and Kafka partitions; partitions moved to a
// second pipeline (PartitionState, ReplacePartition) and back, idle
// flushes, deltas under load of both pipelines; each pipeline's chain
// restores what its snapshot does.
func TestDeltasWithPartitionsBlocksAndIdle(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{now: idleStart}
	cfg := Config{Now: clock.Now, IdleFlush: time.Minute, Defaults: summary.Config{Epsilon: 0.3, WindowSize: 64, SlidingWindow: 100000}, Sorter: gpusort.NewCPU(1)}
	p1 := open(t, cfg)
	p2 := open(t, cfg)
	for _, p := range []*Pipeline{p1, p2} {
		if _, err := p.Create("exact", summary.Config{Epsilon: 0.1, WindowSize: 64, SlidingWindow: 300}); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Create("wide", summary.Config{Float64: true, Epsilon: 0.3, SlidingWindow: 100000}); err != nil {
			t.Fatal(err)
		}
	}
	rnd := rand.New(rand.NewPCG(11, 12))
	tp := func(i int) feed.Source { return feed.Source{Topic: "t", Partition: i} }
	names := []string{"exact", "wide", "blocks", "thin"}
	feedSome := func(p *Pipeline, parts []int) {
		t.Helper()
		for _, name := range names {
			for _, i := range parts {
				if rnd.IntN(3) == 0 {
					continue
				}
				k := 1 + rnd.IntN(30)
				if rnd.IntN(4) == 0 {
					k = 400 + rnd.IntN(600)
				}
				if name == "thin" {
					k = 1 + rnd.IntN(3)
				}
				src := tp(i)
				if i < 0 {
					src = feed.Local
				}
				if err := acceptValues(ctx, p, src, name, rvals(rnd, k), clock.Now()); err != nil {
					t.Fatal(err)
				}
			}
		}
		clock.Advance(time.Duration(rnd.IntN(90)) * time.Second)
		p.sweepIdle(ctx)
		quiesce(t, p)
	}
	feedSome(p1, []int{-1, 0, 1, 2})
	feedSome(p2, []int{-1, 3})
	base1, _ := save(t, p1, false, true)
	base2, _ := save(t, p2, false, true)
	var d1, d2 [][]byte
	move := func(from, to *Pipeline, i int) {
		t.Helper()
		states, err := from.PartitionState(tp(i))
		if err != nil {
			t.Fatal(err)
		}
		if err := from.ReplacePartition(ctx, tp(i), nil); err != nil {
			t.Fatal(err)
		}
		if err := to.ReplacePartition(ctx, tp(i), states); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 10 {
		feedSome(p1, []int{-1, 0, 1})
		feedSome(p2, []int{-1, 2, 3})
		switch round % 3 {
		case 0:
			move(p1, p2, 1)
		case 1:
			move(p2, p1, 1)
		case 2:
			move(p1, p2, 0)
			move(p2, p1, 0)
		}
		quiesce(t, p1)
		quiesce(t, p2)
		a, _ := save(t, p1, true, round != 4)
		if round != 4 {
			d1 = append(d1, a)
		}
		b, _ := save(t, p2, true, true)
		d2 = append(d2, b)
	}
	full1, _ := save(t, p1, false, false)
	full2, _ := save(t, p2, false, false)
	sameAsSnapshot(t, "p1", restoreChain(t, base1, d1...), full1)
	sameAsSnapshot(t, "p2", restoreChain(t, base2, d2...), full2)
}

// FuzzRestoreDeltaPayload is FuzzRestoreDelta behind the delta's
// checksum: the input is a version byte and a payload, sealed in a valid
// envelope, so that mutations reach the fields.
func FuzzRestoreDeltaPayload(f *testing.F) {
	base, delta := deltaFuzzSeeds(f)
	f.Add(delta[len(snapshotMagic) : len(delta)-4])
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) == 0 {
			return
		}
		checkRestoreDelta(t, base, codec.End(append(codec.Begin(nil, snapshotMagic, raw[0]), raw[1:]...), 0))
	})
}

// TestDeltaOfAFullRingWithNothingAdded: a stream whose ring is exactly full at a
// checkpoint, then changed only by rejects (a delta of no value added
// since), restores; the restored pipeline takes values that overwrite the
// ring's oldest, and its next delta restores right too.
func TestDeltaOfAFullRingWithNothingAdded(t *testing.T) {
	ctx := context.Background()
	cfg := Config{Defaults: summary.Config{Epsilon: 0.1, WindowSize: 64, SlidingWindow: 300}}
	p := open(t, cfg)
	rnd := rand.New(rand.NewPCG(4, 4))
	if err := acceptValues(ctx, p, feed.Local, "x", rvals(rnd, 300), time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	quiesce(t, p)
	base, _ := save(t, p, false, true)
	p.Reject("x", feed.Local, feed.ReasonNaN, 2)
	d1, names := save(t, p, true, true)
	if !slices.Equal(names, []string{"x"}) {
		t.Fatalf("delta holds %q", names)
	}
	q := restoreChain(t, base, d1)
	if err := q.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer q.Close(ctx)
	more := rvals(rnd, 50)
	for _, pp := range []*Pipeline{p, q} {
		if err := acceptValues(ctx, pp, feed.Local, "x", more, time.Unix(2, 0)); err != nil {
			t.Fatal(err)
		}
		quiesce(t, pp)
	}
	e1, _ := save(t, q, true, true)
	fullQ, _ := save(t, q, false, false)
	fullP, _ := save(t, p, false, false)
	sameAsSnapshot(t, "original vs restored", restoreChain(t, fullQ), fullP)
	sameAsSnapshot(t, "chain", restoreChain(t, base, d1, e1), fullQ)
}
