package pipeline

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"streamd/corrsum"
	"streamd/feed"
	"streamd/gpusort"
	"streamd/summary"
)

// exactSide returns the number of pairs with x ≤ t (atLeast false) or
// x ≥ t and the sum of their y, and the sum of |y| of all pairs.
func exactSide(x, y []float64, t float64, atLeast bool) (count int64, sum float64) {
	for i, v := range x {
		if (!atLeast && v <= t) || (atLeast && v >= t) {
			count++
			sum += y[i]
		}
	}
	return count, sum
}

// checkPairAnswer checks a against the exact answer over the pairs x, y
// (integer y, so that every sum is exact): both sides' bounds bracket the
// exact count and sum within ε·N and ε·Σ|y|, a quantile's threshold has a
// true rank within ⌊(εN+1)/2⌋ of ⌈φN⌉, and the totals are exact.
func checkPairAnswer(t *testing.T, x, y []float64, a PairAnswer) {
	t.Helper()
	n := int64(len(x))
	var absY, sumY float64
	for _, v := range y {
		absY += math.Abs(v)
		sumY += v
	}
	if a.Totals.Count != n || a.Totals.SumY != sumY || a.Totals.SumAbsY != absY {
		t.Fatalf("totals %+v, want count %d, Σy %v, Σ|y| %v", a.Totals, n, sumY, absY)
	}
	eps := a.Epsilon
	for _, side := range []struct {
		b       corrsum.Bounds
		atLeast bool
	}{{a.AtMost, false}, {a.AtLeast, true}} {
		c, s := exactSide(x, y, a.Threshold, side.atLeast)
		b := side.b
		if b.Threshold != a.Threshold {
			t.Fatalf("bounds of threshold %v in an answer for %v", b.Threshold, a.Threshold)
		}
		if c < b.CountLo || c > b.CountHi || float64(b.CountHi-b.CountLo) > eps*float64(n) {
			t.Fatalf("%+v (at least %v): count %d outside [%d, %d] or wider than εN = %v", a.Query, side.atLeast, c, b.CountLo, b.CountHi, eps*float64(n))
		}
		if s < b.SumLo || s > b.SumHi || b.SumHi-b.SumLo > eps*absY*(1+1e-9) {
			t.Fatalf("%+v (at least %v): sum %v outside [%v, %v] or wider than εΣ|y| = %v", a.Query, side.atLeast, s, b.SumLo, b.SumHi, eps*absY)
		}
	}
	if a.Query.Agg == corrsum.AggQuantile {
		below, _ := exactSide(x, y, math.Nextafter(a.Aggregate, math.Inf(-1)), false)
		atOrBelow, _ := exactSide(x, y, a.Aggregate, false)
		want := int64(math.Ceil(a.Query.Phi * float64(n)))
		slack := int64((eps*float64(n) + 1) / 2)
		if atOrBelow < want-slack || below+1 > want+slack {
			t.Fatalf("φ %v: value %v of ranks (%d, %d], want %d ± %d", a.Query.Phi, a.Aggregate, below, atOrBelow, want, slack)
		}
	}
}

// pairQueries are the aggregate queries the tests ask: quantiles, the
// minimum, the maximum and twice the mean.
func pairQueries() []corrsum.Query {
	return []corrsum.Query{
		{Agg: corrsum.AggQuantile, Phi: 0.5, Factor: 1},
		{Agg: corrsum.AggQuantile, Phi: 0.99, Factor: 1},
		{Agg: corrsum.AggQuantile, Phi: 0, Factor: 1},
		{Agg: corrsum.AggMin, Factor: 1},
		{Agg: corrsum.AggMax, Factor: 1},
		{Agg: corrsum.AggMean, Factor: 2},
	}
}

func TestPairStream(t *testing.T) {
	const eps, w = 0.01, 500
	rng := rand.New(rand.NewPCG(1, 2))
	n := 5321 // ten full windows and a partial one
	base := make([]float64, n)
	yb := make([]float64, n)
	for i := range base {
		base[i] = float64(rng.IntN(300)) // duplicates at every threshold
		yb[i] = float64(rng.IntN(2001) - 1000)
	}
	sorted := slices.Clone(base)
	slices.Sort(sorted)
	reversed := slices.Clone(sorted)
	slices.Reverse(reversed)
	for _, order := range []struct {
		name string
		x    []float64
	}{{"random", base}, {"sorted", sorted}, {"reversed", reversed}} {
		t.Run(order.name, func(t *testing.T) {
			ctx := context.Background()
			p := open(t, Config{Defaults: summary.Config{Epsilon: eps, WindowSize: w}})
			s, err := p.Create("lat", summary.Config{Pairs: true})
			if err != nil {
				t.Fatal(err)
			}
			x := slices.Clone(order.x)
			y := slices.Clone(yb)
			for i := 0; i < n; i += 777 {
				j := min(i+777, n)
				if err := p.acceptPairs(ctx, s, feed.Local, slices.Clone(x[i:j]), slices.Clone(y[i:j])); err != nil {
					t.Fatal(err)
				}
			}
			check := func(s *Stream) {
				t.Helper()
				for _, q := range pairQueries() {
					a, err := s.Correlated(q)
					if err != nil {
						t.Fatal(err)
					}
					checkPairAnswer(t, x, y, a)
				}
				for _, c := range []float64{-1, 0, 150, 150.5, 299, 1000} {
					a, err := s.CorrelatedAt(c)
					if err != nil {
						t.Fatal(err)
					}
					checkPairAnswer(t, x, y, a)
				}
				st := s.Stats()
				if st.Count != int64(n) || st.Summarised != int64(n/w*w) || st.Min != sorted[0] || st.Max != sorted[n-1] {
					t.Fatalf("stats %+v", st.Stats)
				}
			}
			check(s)
			data, err := p.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			q, err := New(Config{Sorter: gpusort.NewCPU(0)})
			if err != nil {
				t.Fatal(err)
			}
			if err := q.Restore(data); err != nil {
				t.Fatal(err)
			}
			r, err := q.Stream("lat")
			if err != nil {
				t.Fatal(err)
			}
			if !r.IsPairs() || !r.Config().Pairs {
				t.Fatal("restored stream is not a pair stream")
			}
			check(r)
		})
	}
}

func TestPairRejects(t *testing.T) {
	ctx := context.Background()
	p := open(t, Config{Defaults: summary.Config{Epsilon: 0.1, WindowSize: 4}})
	nan, inf := math.NaN(), math.Inf(1)
	// Pairs of which none is kept create no stream.
	s, err := p.pairStreamFor("xy", []float64{nan, 1}, []float64{1, inf})
	if s != nil || err != nil {
		t.Fatalf("pairStreamFor of bad pairs: %v, %v", s, err)
	}
	if got := p.Rejected(); got[feed.ReasonNaN] != 1 || got[feed.ReasonInf] != 1 {
		t.Fatalf("rejects of no stream %v", got)
	}
	x := []float64{1, nan, 2, -inf, 3, math.Copysign(0, -1)}
	y := []float64{nan, 1, 5, 1, inf, -7}
	s, err = p.pairStreamFor("xy", x, y)
	if err != nil || s == nil || !s.IsPairs() {
		t.Fatalf("pairStreamFor: %v, %v", s, err)
	}
	if err := p.acceptPairs(ctx, s, feed.Local, x, y); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	if st.Count != 2 || st.Rejected[feed.ReasonNaN] != 2 || st.Rejected[feed.ReasonInf] != 2 {
		t.Fatalf("stats %+v", st)
	}
	a, err := s.Correlated(corrsum.Query{Agg: corrsum.AggMin, Factor: 1})
	if err != nil {
		t.Fatal(err)
	}
	if math.Signbit(a.Threshold) || a.AtMost.CountLo != 1 || a.AtMost.SumLo != -7 || a.AtMost.SumHi != -7 {
		t.Fatalf("−0 not made +0, or wrong answer: %+v", a)
	}
	v, err := p.Create("v", summary.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.acceptPairs(ctx, v, feed.Local, []float64{1}, []float64{2}); !errors.Is(err, ErrWrongKind) {
		t.Fatalf("pairs to a value stream: %v", err)
	}
	if _, err := v.Correlated(corrsum.Query{Agg: corrsum.AggMin, Factor: 1}); !errors.Is(err, ErrWrongKind) {
		t.Fatalf("correlated sum of a value stream: %v", err)
	}
	if err := p.acceptPairs(ctx, s, feed.Local, []float64{1}, nil); !errors.Is(err, ErrPairLengths) {
		t.Fatalf("pairs of different lengths: %v", err)
	}
}
