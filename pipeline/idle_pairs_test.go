package pipeline

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"streamd/feed"
	"streamd/summary"
)

// TestIdleFlushPairs: the partial window of a pair stream that goes quiet
// for IdleFlush is digested into its summary when that keeps it in less
// memory, else kept raw in buffers of exactly its pairs, without the copy
// of its summary a query made; not before, and once. Its answers stay
// within their bounds of the exact ones, for every arrival order, after
// the flush, after a restore and after more pairs; its charge drops.
func TestIdleFlushPairs(t *testing.T) {
	const eps, w = 0.01, 4096 // a digest pays above 4·(400+2) = 1608 pairs
	// Below, at, between and above the x of idlePairs.
	thresholds := []float64{-1, 0, 250, 250.5, 499, 1000}
	for _, c := range []struct {
		name     string
		n        int
		digested bool
	}{
		{"digest", 3000, true},
		{"digest after a window", w + 2500, true},
		{"shrink", 700, false},
	} {
		for _, order := range []string{"random", "sorted", "reversed"} {
			t.Run(c.name+"/"+order, func(t *testing.T) {
				clock := &fakeClock{now: idleStart}
				cfg := Config{Now: clock.Now, IdleFlush: time.Minute, Defaults: summary.Config{Epsilon: eps, WindowSize: w}}
				p := open(t, cfg)
				if _, err := p.Create("lat", summary.Config{Pairs: true}); err != nil {
					t.Fatal(err)
				}
				x, y := idlePairs(order, c.n)
				ctx := context.Background()
				for i := 0; i < c.n; i += 100 {
					j := min(i+100, c.n)
					if n, err := p.Accept(ctx, &feed.Batch{Stream: "lat", Pairs: feed.Pairs{X: slices.Clone(x[i:j]), Y: slices.Clone(y[i:j])}}); n != j-i || err != nil {
						t.Fatalf("accept %d pairs: %d, %v", j-i, n, err)
					}
				}
				s := mustStream(t, p, "lat")
				checkPairStream(t, s, x, y, thresholds...)
				before := s.Stats()
				if st := sweepQuiet(p, clock, time.Minute-time.Second); st != (IdleStats{}) {
					t.Fatalf("flushed %+v before IdleFlush", st)
				}
				clock.Advance(time.Second)
				st := p.sweepIdle(ctx)
				partial := c.n % w
				s.mu.Lock()
				held, room, view := len(s.pairs.x), cap(s.pairs.x), s.pairs.view
				s.mu.Unlock()
				if view != nil {
					t.Fatal("the summary's copy that a query made is kept after the flush")
				}
				after := s.Stats()
				if c.digested {
					if st.Digested != 1 || st.Shrunk != 0 || held != 0 || room != 0 {
						t.Fatalf("sweep %+v, %d pairs held in room for %d; want one window digested, none held", st, held, room)
					}
					if after.Summarised != int64(c.n) {
						t.Fatalf("%d pairs summarised, want %d", after.Summarised, c.n)
					}
				} else {
					if st.Shrunk != 1 || st.Digested != 0 || held != partial || room != partial || st.Freed <= 0 {
						t.Fatalf("sweep %+v, %d pairs held in room for %d; want one window shrunk to %d pairs", st, held, room, partial)
					}
				}
				if after.Count != int64(c.n) || after.Memory >= before.Memory {
					t.Fatalf("count %d (want %d), charge %d after the flush, %d before", after.Count, c.n, after.Memory, before.Memory)
				}
				if st := p.sweepIdle(ctx); st != (IdleStats{}) {
					t.Fatalf("a second flush: %+v", st)
				}
				// A query makes a copy of the summary with the partial
				// window in it, which the next sweep drops again; with the
				// window digested, the summary answers alone.
				checkPairStream(t, s, x, y, thresholds...)
				if st := p.sweepIdle(ctx); c.digested != (st == (IdleStats{})) || !c.digested && (st.Shrunk != 1 || st.Freed <= 0) {
					t.Fatalf("a sweep after a query: %+v", st)
				}
				checkPairStream(t, s, x, y, thresholds...)

				data, err := p.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				r := openRestored(t, Config{Defaults: cfg.Defaults}, data)
				checkPairStream(t, mustStream(t, r, "lat"), x, y, thresholds...)

				// Pairs after the flush go into a new partial window.
				more := min(c.n, 1000)
				if n, err := p.Accept(ctx, &feed.Batch{Stream: "lat", Pairs: feed.Pairs{X: slices.Clone(x[:more]), Y: slices.Clone(y[:more])}}); n != more || err != nil {
					t.Fatalf("accept %d pairs: %d, %v", more, n, err)
				}
				checkPairStream(t, s, append(slices.Clone(x), x[:more]...), append(slices.Clone(y), y[:more]...), thresholds...)
			})
		}
	}
}

// idlePairs returns n pairs with x in one of the arrival orders, many
// duplicates among them, and integer y of both signs, so that every sum is
// exact.
func idlePairs(order string, n int) (x, y []float64) {
	rng := rand.New(rand.NewPCG(5, 6))
	x, y = make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = float64(rng.IntN(500))
		y[i] = float64(rng.IntN(2001) - 1000)
	}
	switch order {
	case "sorted":
		slices.Sort(x)
	case "reversed":
		slices.Sort(x)
		slices.Reverse(x)
	}
	return x, y
}

// checkPairStream checks s's answers to the aggregate queries and at the
// thresholds against the exact ones over the pairs x, y.
func checkPairStream(t *testing.T, s *Stream, x, y []float64, thresholds ...float64) {
	t.Helper()
	for _, q := range pairQueries() {
		a, err := s.Correlated(q)
		if err != nil {
			t.Fatal(err)
		}
		checkPairAnswer(t, x, y, a)
	}
	for _, c := range thresholds {
		a, err := s.CorrelatedAt(c)
		if err != nil {
			t.Fatal(err)
		}
		checkPairAnswer(t, x, y, a)
	}
}
