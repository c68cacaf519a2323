package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"streamd/feed"
	"streamd/gpusort"
	"streamd/summary"
	"streamd/synth"
)

// TestBudgetRefusesStreams: Create and the first data of a new stream are
// refused once the budget cannot hold a stream's reservation, are counted,
// and room comes back when a stream is deleted; a stream whose worst case
// is more than the whole budget is refused.
func TestBudgetRefusesStreams(t *testing.T) {
	cfg := summary.Config{Epsilon: 0.01, WindowSize: 1024, SlidingWindow: 10000}
	fp := StreamFootprint(cfg)
	limit := fp.Worst
	fits := limit / fp.Reserve
	p := open(t, Config{Defaults: cfg, MaxMemory: limit})
	ctx := context.Background()
	if _, err := p.Create("a", cfg); err != nil {
		t.Fatal(err)
	}
	if err := acceptValues(ctx, p, feed.Local, "b", []float64{1}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	for i := range fits - 2 {
		if _, err := p.Create(fmt.Sprint("c", i), cfg); err != nil {
			t.Fatalf("stream %d of %d: %v", i+3, fits, err)
		}
	}
	_, err := p.Create("d", cfg)
	if !errors.Is(err, ErrMemoryBudget) || !errors.Is(err, feed.ErrMemoryBudget) {
		t.Fatalf("stream %d: %v", fits+1, err)
	}
	err = acceptValues(ctx, p, feed.Local, "e", []float64{1, 2}, time.Time{})
	if r, ok := feed.RefusalReason(err); !ok || r != feed.ReasonMemoryBudget {
		t.Fatalf("first data of stream %d: %v", fits+2, err)
	}
	// A stream larger than the whole budget says so.
	if _, err := p.Create("huge", summary.Config{WindowSize: summary.MaxWindowSize}); err == nil {
		t.Fatal("created a stream larger than the budget")
	} else {
		t.Log(err)
	}
	m := p.Memory()
	if m.Reserved != fits*fp.Reserve || m.Refused != 3 {
		t.Errorf("memory %+v, want %d reservations of %d", m, fits, fp.Reserve)
	}
	if err := p.Delete("a"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Create("d", cfg); err != nil {
		t.Fatalf("after a delete: %v", err)
	}
	s, _ := p.Stream("d")
	if st := s.Stats(); st.Reserved != fp.Reserve || st.Memory != fp.Reserve {
		t.Errorf("stream stats: reserved %d, charged %d; want %d", st.Reserved, st.Memory, fp.Reserve)
	}
}

// TestFootprintCoversStreams fills streams of several configurations with
// N values and checks that what they hold stays within their worst case,
// and that their charge is their reservation and what they hold past its
// share.
func TestFootprintCoversStreams(t *testing.T) {
	for _, cfg := range []summary.Config{
		{Epsilon: 0.01, WindowSize: 1000, SlidingWindow: 20000},
		{Epsilon: 0.001, WindowSize: 4096, SlidingWindow: 1 << 16},
		{Epsilon: 0.1, WindowSize: 500, SlidingWindow: 1 << 18},
		{Epsilon: 0.0001, WindowSize: 1 << 15, SlidingWindow: 1 << 15, Float64: true},
	} {
		t.Run(fmt.Sprintf("ε=%v,W=%d,N=%d", cfg.Epsilon, cfg.WindowSize, cfg.SlidingWindow), func(t *testing.T) {
			fp := StreamFootprint(cfg)
			p := open(t, Config{Defaults: cfg, MaxMemory: 1 << 40})
			for _, d := range []synth.Dist{synth.Uniform, synth.Zipf} {
				x, _ := synth.Generate(synth.Spec{Dist: d, Seed: 9}, int(cfg.SlidingWindow))
				name := string(d)
				if err := acceptValues(context.Background(), p, feed.Local, name, x, time.Time{}); err != nil {
					t.Fatal(err)
				}
				s, _ := p.Stream(name)
				waitStreamSummarised(t, s, int64(len(x)/cfg.WindowSize*cfg.WindowSize))
				s.mu.Lock()
				got := s.summaryBytes()
				s.mu.Unlock()
				if most := fp.Worst - fp.Window - streamOverhead; got > most {
					t.Errorf("%s: the stream holds %d bytes after N values, more than the %d of its worst case", d, got, most)
				}
				if st, want := s.Stats(), fp.Reserve+max(got-fp.Summaries, 0); st.Memory != want {
					t.Errorf("%s: charged %d, want %d (reserved %d, holding %d)", d, st.Memory, want, fp.Reserve, got)
				}
			}
		})
	}
}

func waitStreamSummarised(t *testing.T, s *Stream, n int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for s.Stats().Summarised < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s: summarised %d of %d", s.Name(), s.Stats().Summarised, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestBudgetBackPressure: with room for only a few windows in flight and a
// sorter that holds them, Accept waits instead of passing the budget, goes
// on as windows are summarised, and every value is counted within ε.
func TestBudgetBackPressure(t *testing.T) {
	cfg := summary.Config{Epsilon: 0.01, WindowSize: 1000, SlidingWindow: 5000}
	fp := StreamFootprint(cfg)
	limit := 2 * fp.Worst // two streams at their bounds, and windows in flight
	bs := &blockingSorter{CPU: gpusort.NewCPU(1), release: make(chan struct{})}
	var once sync.Once
	release := func() { once.Do(func() { close(bs.release) }) }
	p := open(t, Config{Defaults: cfg, Sorter: bs, MaxMemory: limit, Linger: time.Millisecond})
	t.Cleanup(release)

	x, _ := synth.Generate(synth.Spec{Dist: synth.Normal, Seed: 2}, 40000)
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted := map[string]int{}
	// Both streams exist before either producer starts: a producer that
	// started first could fill the budget before the other stream is
	// created.
	for _, name := range []string{"p", "q"} {
		if _, err := p.Create(name, cfg); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"p", "q"} {
		wg.Go(func() {
			for i := 0; i < len(x); i += 500 {
				if err := acceptValues(context.Background(), p, feed.Local, name, append([]float64(nil), x[i:i+500]...), time.Time{}); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				accepted[name] += 500
				mu.Unlock()
			}
		})
	}
	// With the sorter stuck, the producers stop once the budget is full,
	// far before the sorter's queue would stop them: past the limit by at
	// most the window each producer fills between two waits.
	var stuck int
	for range 50 {
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		n := accepted["p"] + accepted["q"]
		mu.Unlock()
		if n == stuck {
			break
		}
		stuck = n
	}
	m := p.Memory()
	t.Logf("with the sorter stuck: %d values accepted, %+v", stuck, m)
	if m.Used > limit+2*fp.Window || m.Waits == 0 {
		t.Errorf("with the sorter stuck: %+v, limit %d", m, limit)
	}
	// Each stream's partial window, the windows in flight that the budget
	// holds, and one per producer past the limit.
	if max := 2*cfg.WindowSize + int(limit/fp.Window+2)*cfg.WindowSize; stuck > max {
		t.Errorf("accepted %d values with the sorter stuck, want at most %d", stuck, max)
	}
	release()
	wg.Wait()
	for _, name := range []string{"p", "q"} {
		s, _ := p.Stream(name)
		checkStream(t, s, x, cfg.Epsilon)
	}
	// Once both streams are summarised, their windows go back to the
	// budget as the workers release them.
	for _, name := range []string{"p", "q"} {
		waitStreamSummarised(t, mustStream(t, p, name), int64(len(x)))
	}
	deadline := time.Now().Add(10 * time.Second)
	for m := p.Memory(); m.Windows != 0 || m.Reserved != 2*fp.Reserve; m = p.Memory() {
		if time.Now().After(deadline) {
			t.Fatalf("after: %+v", m)
		}
		time.Sleep(time.Millisecond)
	}
}

func mustStream(t *testing.T, p *Pipeline, name string) *Stream {
	t.Helper()
	s, err := p.Stream(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRestoreReservesPastTheBudget: streams restored from a snapshot are
// kept even when they no longer fit, new ones are refused, and so are
// values that need more memory, whole: every value restored is kept.
func TestRestoreReservesPastTheBudget(t *testing.T) {
	cfg := summary.Config{Epsilon: 0.01, WindowSize: 1000, SlidingWindow: 5000}
	fp := StreamFootprint(cfg)
	p := open(t, Config{Defaults: cfg})
	for i := range 4 {
		if err := acceptValues(context.Background(), p, feed.Local, fmt.Sprint("r", i), make([]float64, 1500), time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	q, _ := New(Config{Defaults: cfg, Sorter: gpusort.NewCPU(0), MaxMemory: 2 * fp.Reserve})
	if err := q.Restore(snap); err != nil {
		t.Fatal(err)
	}
	_ = q.Open(context.Background())
	defer q.Close(context.Background())
	if q.Len() != 4 || q.Memory().Reserved != 4*fp.Reserve {
		t.Errorf("restored %d streams, memory %+v", q.Len(), q.Memory())
	}
	if err := acceptValues(context.Background(), q, feed.Local, "new", []float64{1}, time.Time{}); !errors.Is(err, ErrMemoryBudget) {
		t.Errorf("new stream past the budget: %v", err)
	}
	// Values that fill windows need memory the budget does not hold: they
	// are refused, all of them, and the restored ones are kept.
	err = acceptValues(context.Background(), q, feed.Local, "r0", make([]float64, 3000), time.Time{})
	if r, ok := feed.RefusalReason(err); !ok || r != feed.ReasonMemoryBudget {
		t.Fatalf("values past the budget: %v", err)
	}
	if st := mustStream(t, q, "r0").Stats(); st.Count != 1500 {
		t.Errorf("after a refused batch: %d values, want the 1500 restored", st.Count)
	}
}

// TestDeleteReturnsTheBudget: deleting a stream with windows being sorted
// and windows never sent (their Accept's context ended) returns its whole
// charge once the sorted ones come back.
func TestDeleteReturnsTheBudget(t *testing.T) {
	cfg := summary.Config{Epsilon: 0.01, WindowSize: 100, SlidingWindow: 1000}
	bs := &blockingSorter{CPU: gpusort.NewCPU(1), release: make(chan struct{})}
	var once sync.Once
	release := func() { once.Do(func() { close(bs.release) }) }
	p := open(t, Config{Defaults: cfg, Sorter: bs, Queue: 1, MaxMemory: 1 << 30, Linger: time.Millisecond})
	t.Cleanup(release)
	// With the sorter stuck, the queue fills and an Accept whose context
	// ends leaves its windows unsent.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	for ctx.Err() == nil {
		if err := acceptValues(ctx, p, feed.Local, "d", make([]float64, 100), time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	s := mustStream(t, p, "d")
	s.mu.Lock()
	unsent, inflight := len(s.pendingQ), len(s.local.inflight)
	s.mu.Unlock()
	if unsent == 0 {
		t.Fatalf("no unsent windows (%d in flight)", inflight)
	}
	if err := p.Delete("d"); err != nil {
		t.Fatal(err)
	}
	release()
	deadline := time.Now().Add(10 * time.Second)
	for p.Memory().Used != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("after the delete: %+v (%d windows were unsent, %d in flight)", p.Memory(), unsent, inflight)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestPartSummaryBytes: a part's summary bytes, read without Stats, are
// its summaries' bytes (a history-only summary: no sliding window) and the
// merged copy of its quantile sketch.
func TestPartSummaryBytes(t *testing.T) {
	p := open(t, Config{Defaults: summary.Config{Epsilon: 0.01, WindowSize: 500}})
	x, _ := synth.Generate(synth.Spec{Dist: synth.Zipf, Seed: 3}, 20000)
	tp := feed.Source{Topic: "t", Partition: 1}
	if err := acceptValues(context.Background(), p, tp, "s", x, time.Time{}); err != nil {
		t.Fatal(err)
	}
	s, _ := p.Stream("s")
	waitStreamSummarised(t, s, int64(len(x)))
	s.mu.Lock()
	defer s.mu.Unlock()
	pt := s.kafkaPart(tp)
	want := pt.sum.Stats().Bytes + pt.sum.Sketch().Bytes()
	if got := pt.summaryBytes(); got != want || got == 0 {
		t.Errorf("part summary bytes %d, want %d", got, want)
	}
}
