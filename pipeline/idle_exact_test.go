package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"streamd/feed"
	"streamd/internal/exact"
	"streamd/summary"
	"streamd/synth"
)

// answers are the queries that an all-history view and a sliding
// window's snapshot share.
type answers interface {
	Count() int64
	Quantile(phi float64) (v float64, rankMin, rankMax int64)
	Rank(v float64) (lo, hi int64)
	Counter
}

// checkExact checks every answer of s's all-history view, and of its last
// lastN values, against the exact answers over values: see checkAnswersExact.
func checkExact(t *testing.T, s *Stream, values []float64, lastN int64, eps float64) {
	t.Helper()
	checkAnswersExact(t, s.Name(), s.View(true), values, eps)
	last, err := s.Last(lastN)
	if err != nil {
		t.Fatal(err)
	}
	checkAnswersExact(t, s.Name()+" last "+strconv.FormatInt(lastN, 10), last, values[max(0, len(values)-int(lastN)):], eps)
}

// checkAnswersExact checks the answers of v against the exact answers
// over values: quantiles over a grid of φ and their reported rank bounds,
// rank bounds, the count bounds of the most frequent values, of values
// spread over the range and of values absent from the stream, and heavy
// hitters at several supports.
func checkAnswersExact(t *testing.T, name string, v answers, values []float64, eps float64) {
	t.Helper()
	rounded := make([]float64, len(values))
	for i, v := range values {
		rounded[i] = float64(float32(v))
	}
	key := exact.New(rounded)
	if v.Count() != key.N() {
		t.Fatalf("%s: counts %d, want %d", name, v.Count(), key.N())
	}
	for i := 0; i <= 40; i++ {
		phi := float64(i) / 40
		x, lo, hi := v.Quantile(phi)
		if err := key.CheckQuantile(phi, x, eps, lo, hi); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if lo, hi := v.Rank(x); key.CheckRank(x, lo, hi, eps) != nil {
			t.Fatalf("%s: %v", name, key.CheckRank(x, lo, hi, eps))
		}
	}
	sorted := key.Sorted()
	ask := []float64{sorted[0] - 1, sorted[len(sorted)-1] + 1}
	for _, r := range key.HeavyHitters(0.001) {
		ask = append(ask, r.Value)
	}
	for i := 0; i < len(sorted); i += max(1, len(sorted)/50) {
		ask = append(ask, sorted[i])
	}
	for _, x := range ask {
		lo, hi := v.Frequency(x)
		if err := key.CheckFrequency(x, lo, hi, eps); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for _, support := range []float64{2 * eps, 0.05, 0.2} {
		var hh []float64
		for _, e := range v.HeavyHitters(support) {
			hh = append(hh, e.Value)
		}
		if err := key.CheckHeavyHitters(support, eps, hh); err != nil {
			t.Fatalf("%s: support %v: %v", name, support, err)
		}
	}
}

// TestIdleFlushExactOrders: streams of every arrival order, several with
// many duplicates or one value, whose partial windows the sweeper flushes
// again and again — short windows digested by the sweeper and through the
// sorter, between full windows — answer within ε of exact: quantiles,
// ranks, count bounds and heavy hitters; and so do they after a snapshot
// and restore, and after more values and flushes in the restored pipeline.
func TestIdleFlushExactOrders(t *testing.T) {
	const eps = 0.01
	const w = 1 << 15
	// Chunks, each followed by a quiet sweep: partial windows digested by
	// the sweeper (2,500 and 5,000 values) and through the sorter (20,000
	// and 17,000, over sorterMin), full windows between them, and one of
	// 700 values too small to pay its digest, which stays raw across the
	// snapshot and joins the next chunk's windows.
	chunks := []int{2500, 20000, 700, 2*w + 4300, 3000, w + 17000}
	const saveAfter = 3
	n := 0
	for _, k := range chunks {
		n += k
	}
	defaults := summary.Config{Epsilon: eps, WindowSize: w, SlidingWindow: 1 << 12}
	for _, d := range []synth.Dist{synth.Normal, synth.Zipf, synth.TwoValued, synth.Constant} {
		for _, o := range synth.Orders {
			t.Run(fmt.Sprintf("%s/%s", d, o), func(t *testing.T) {
				x, err := synth.Generate(synth.Spec{Dist: d, Order: o, Seed: 17, Period: n / 37}, n)
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				clock := &fakeClock{now: idleStart}
				cfg := Config{Now: clock.Now, IdleFlush: time.Minute, Defaults: defaults}
				p := open(t, cfg)
				// Accept the first three chunks, flushing the partial
				// window after each; snapshot and restore; the rest.
				// pending is the stream's partial window.
				pending := 0
				accept := func(p *Pipeline, from, to int) {
					t.Helper()
					at := 0
					for _, k := range chunks[:from] {
						at += k
					}
					for _, k := range chunks[from:to] {
						if err := acceptValues(ctx, p, feed.Local, "q", x[at:at+k], time.Time{}); err != nil {
							t.Fatal(err)
						}
						at += k
						pending = (pending + k) % w
						s := mustStream(t, p, "q")
						waitIdle(t, p)
						st := sweepQuiet(p, clock, time.Minute)
						if digest := digestPays(defaults, pending); digest != (st.Digested == 1) {
							t.Fatalf("after %d values: sweep %+v of a partial window of %d values, want digested %v", at, st, pending, digest)
						} else if digest {
							pending = 0
						}
						waitStreamSummarised(t, s, int64(at-pending))
						if st := s.Stats(); st.Pending != int64(pending) || st.Count != int64(at) {
							t.Fatalf("after %d values: count %d, %d pending; want %d pending", at, st.Count, st.Pending, pending)
						}
						checkExact(t, s, x[:at], defaults.SlidingWindow, eps)
					}
				}
				accept(p, 0, saveAfter)
				var buf bytes.Buffer
				if _, _, err := p.SaveTo(&buf, false); err != nil {
					t.Fatal(err)
				}
				q := openRestored(t, cfg, buf.Bytes())
				m := 0
				for _, k := range chunks[:saveAfter] {
					m += k
				}
				s := mustStream(t, q, "q")
				if st := s.Stats(); st.Pending != int64(pending) || st.Count != int64(m) {
					t.Fatalf("restored: count %d, %d pending; want %d, %d pending", st.Count, st.Pending, m, pending)
				}
				checkExact(t, s, x[:m], defaults.SlidingWindow, eps)
				accept(q, saveAfter, len(chunks))
			})
		}
	}
}
