package corrsum

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"streamd/internal/codec"
)

// oracle is the exact answer key of a multiset of pairs: sorted by x, with
// prefix counts and sums at the end of each run of equal x. Sums are
// exact as float64 when every y is a multiple of 2^-10 of magnitude at
// most 2^40 and there are at most 2^20 pairs (all partial sums fit in 53
// bits); exactSums checks that.
type oracle struct {
	xs   []float64 // distinct x, ascending
	cnt  []int64   // pairs with x ≤ xs[i]
	sum  []float64 // Σy over them
	n    int64
	tot  float64 // Σy
	abs  float64 // Σ|y|
	sumX float64
}

func newOracle(t *testing.T, x, y []float64) *oracle {
	t.Helper()
	type pair struct{ x, y float64 }
	ps := make([]pair, len(x))
	for i := range x {
		if !exactValue(y[i]) {
			t.Fatalf("test y %v is not a multiple of 2^-10 within 2^40", y[i])
		}
		ps[i] = pair{x[i], y[i]}
	}
	slices.SortFunc(ps, func(a, b pair) int { return cmp.Compare(a.x, b.x) })
	o := &oracle{n: int64(len(ps))}
	for i, p := range ps {
		o.tot += p.y
		o.abs += math.Abs(p.y)
		o.sumX += p.x
		if i == len(ps)-1 || ps[i+1].x != p.x {
			o.xs = append(o.xs, p.x)
			o.cnt = append(o.cnt, int64(i+1))
			o.sum = append(o.sum, o.tot)
		}
	}
	return o
}

func exactValue(y float64) bool {
	return math.Abs(y) <= 0x1p40 && y*1024 == math.Trunc(y*1024)
}

// atMost returns the exact count and sum of the pairs with x ≤ t, or with
// x < t when strict.
func (o *oracle) atMost(t float64, strict bool) (int64, float64) {
	i, _ := slices.BinarySearchFunc(o.xs, t, func(v, t float64) int {
		if v < t || (!strict && v == t) {
			return -1
		}
		return 1
	})
	if i == 0 {
		return 0, 0
	}
	return o.cnt[i-1], o.sum[i-1]
}

// rankRange returns #{x < v} and #{x ≤ v}.
func (o *oracle) rankRange(v float64) (int64, int64) {
	lt, _ := o.atMost(v, true)
	le, _ := o.atMost(v, false)
	return lt, le
}

// checkBounds checks b against the exact count and sum, and the widths of
// the guarantee.
func checkBounds(t *testing.T, what string, eps float64, o *oracle, b Bounds, c int64, sum float64) {
	t.Helper()
	if c < b.CountLo || c > b.CountHi {
		t.Fatalf("%s(%v): count %d outside [%d, %d]", what, b.Threshold, c, b.CountLo, b.CountHi)
	}
	if float64(b.CountHi-b.CountLo) > eps*float64(o.n) {
		t.Fatalf("%s(%v): count bounds [%d, %d] wider than ε·N = %v", what, b.Threshold, b.CountLo, b.CountHi, eps*float64(o.n))
	}
	if !(b.SumLo <= sum && sum <= b.SumHi) {
		t.Fatalf("%s(%v): sum %v outside [%v, %v]", what, b.Threshold, sum, b.SumLo, b.SumHi)
	}
	if w := b.SumHi - b.SumLo; w > eps*o.abs*(1+1e-9)+0x1p-28*o.abs {
		t.Fatalf("%s(%v): sum bounds [%v, %v] of width %v wider than ε·Σ|y| = %v", what, b.Threshold, b.SumLo, b.SumHi, w, eps*o.abs)
	}
}

// checkAll checks AtMost and AtLeast at, between and outside every
// distinct x (a sample of them when there are many), and every aggregate
// threshold, against o.
func checkAll(t *testing.T, s *Summary, o *oracle) {
	t.Helper()
	eps := s.Epsilon()
	if s.Count() != o.n {
		t.Fatalf("Count = %d, want %d", s.Count(), o.n)
	}
	var ts []float64
	step := max(1, len(o.xs)/150)
	for i := 0; i < len(o.xs); i += step {
		v := o.xs[i]
		ts = append(ts, v, math.Nextafter(v, math.Inf(-1)), math.Nextafter(v, math.Inf(1)))
		if i+1 < len(o.xs) {
			ts = append(ts, v/2+o.xs[i+1]/2)
		}
	}
	if len(o.xs) > 0 {
		lo, hi := o.xs[0], o.xs[len(o.xs)-1]
		ts = append(ts, hi, lo-1, hi+1, math.Inf(-1), math.Inf(1), -math.MaxFloat64, math.MaxFloat64)
	}
	for _, th := range ts {
		c, sum := o.atMost(th, false)
		checkBounds(t, "AtMost", eps, o, s.AtMost(th), c, sum)
		c, sum = o.atMost(th, true)
		checkBounds(t, "AtLeast", eps, o, s.AtLeast(th), o.n-c, o.tot-sum)
	}
	if o.n == 0 {
		if _, err := s.Correlated(Query{Agg: AggMax, Factor: 1}); !errors.Is(err, ErrEmpty) {
			t.Fatalf("Correlated on empty: %v, want ErrEmpty", err)
		}
		return
	}
	var qs []Query
	for _, f := range []float64{1, 0.5, 2, -1, 0} {
		for _, phi := range []float64{0, 0.01, 0.1, 0.25, 0.5, 0.9, 0.99, 1} {
			qs = append(qs, Query{Agg: AggQuantile, Phi: phi, Factor: f})
		}
		qs = append(qs, Query{Agg: AggMin, Factor: f}, Query{Agg: AggMax, Factor: f}, Query{Agg: AggMean, Factor: f})
	}
	for _, q := range qs {
		a, err := s.Correlated(q)
		if err != nil {
			t.Fatalf("Correlated(%+v): %v", q, err)
		}
		lt, le := o.rankRange(a.Aggregate)
		switch q.Agg {
		case AggQuantile:
			// Some rank of the element lies within the error of ⌈φN⌉ and
			// within the rank bounds returned.
			target := min(max(int64(math.Ceil(q.Phi*float64(o.n))), 1), o.n)
			e := int64((eps*float64(o.n) + 1) / 2)
			if le <= lt || lt+1 > target+e || le < target-e {
				t.Fatalf("Correlated(%+v): value %v of ranks (%d, %d] not within %d of %d", q, a.Aggregate, lt, le, e, target)
			}
			if lt+1 > a.AggRankHi || le < a.AggRankLo {
				t.Fatalf("Correlated(%+v): value %v of ranks (%d, %d] outside rank bounds [%d, %d]", q, a.Aggregate, lt, le, a.AggRankLo, a.AggRankHi)
			}
		case AggMin, AggMax:
			want := o.xs[0]
			if q.Agg == AggMax {
				want = o.xs[len(o.xs)-1]
			}
			if a.Aggregate != want || lt >= a.AggRankHi || le < a.AggRankLo {
				t.Fatalf("Correlated(%+v): %v of ranks [%d, %d], want %v of ranks (%d, %d]", q, a.Aggregate, a.AggRankLo, a.AggRankHi, want, lt, le)
			}
		case AggMean:
			if want := o.sumX / float64(o.n); math.Abs(a.Aggregate-want) > 1e-9*max(math.Abs(want), 1) {
				t.Fatalf("Correlated(%+v): mean %v, want %v", q, a.Aggregate, want)
			}
			if le < a.AggRankLo || le > a.AggRankHi {
				t.Fatalf("Correlated(%+v): mean %v has %d values ≤ it, outside [%d, %d]", q, a.Aggregate, le, a.AggRankLo, a.AggRankHi)
			}
		}
		if a.Threshold != q.Factor*a.Aggregate {
			t.Fatalf("Correlated(%+v): threshold %v, want %v·%v", q, a.Threshold, q.Factor, a.Aggregate)
		}
		if a.AtMost != s.AtMost(a.Threshold) || a.AtLeast != s.AtLeast(a.Threshold) {
			t.Fatalf("Correlated(%+v): bounds differ from AtMost and AtLeast", q)
		}
		c, sum := o.atMost(a.Threshold, false)
		checkBounds(t, "Correlated AtMost", eps, o, a.AtMost, c, sum)
		c, sum = o.atMost(a.Threshold, true)
		checkBounds(t, "Correlated AtLeast", eps, o, a.AtLeast, o.n-c, o.tot-sum)
	}
}

// stream is a test stream of pairs in arrival order.
type stream struct {
	name string
	x, y []float64
}

// streams returns the pairs of every test case, n of each kind (fewer
// for the tiny ones).
func streams(n int) []stream {
	rng := rand.New(rand.NewPCG(1, 2))
	ry := func() float64 { return float64(rng.IntN(1<<20)-1<<19) / 1024 } // a signed y
	gen := func(name string, n int, f func(i int) (float64, float64)) stream {
		s := stream{name: name, x: make([]float64, n), y: make([]float64, n)}
		for i := range n {
			s.x[i], s.y[i] = f(i)
		}
		return s
	}
	var out []stream
	out = append(out,
		gen("empty", 0, nil),
		gen("one", 1, func(int) (float64, float64) { return 3, 5 }),
		gen("two", 2, func(i int) (float64, float64) { return float64(2 - i), float64(i) - 0.5 }),
		gen("three-equal", 3, func(int) (float64, float64) { return 1, -2 }),
		gen("random", n, func(int) (float64, float64) { return rng.NormFloat64() * 100, ry() }),
		gen("sorted", n, func(i int) (float64, float64) { return float64(i), ry() }),
		gen("reversed", n, func(i int) (float64, float64) { return float64(n - i), ry() }),
		gen("duplicates", n, func(int) (float64, float64) { return float64(rng.IntN(10)), ry() }),
		gen("negative-y", n, func(int) (float64, float64) { return rng.Float64(), -math.Abs(ry()) }),
		gen("positive-y", n, func(int) (float64, float64) { return rng.Float64(), math.Abs(ry()) }),
		gen("zero-y", n, func(int) (float64, float64) { return rng.Float64(), 0 }),
		gen("huge-y", n, func(i int) (float64, float64) {
			if i == n/3 {
				return rng.Float64(), 0x1p40
			}
			return rng.Float64(), ry()
		}),
		gen("huge-negative-y", n, func(i int) (float64, float64) {
			if i == n/2 {
				return 0.5, -0x1p40
			}
			return rng.Float64(), math.Round(ry())
		}),
		gen("equal-x", n, func(int) (float64, float64) { return 7, ry() }),
		gen("y-grows-with-x", n, func(int) (float64, float64) {
			v := rng.Float64()
			return v, math.Round(v * 1e6)
		}),
		gen("sawtooth", n, func(i int) (float64, float64) { return float64(i % 97), ry() }),
		gen("sorted-blocks-reversed", n, func(i int) (float64, float64) {
			// ascending runs in descending order: every window overlaps
			// no other
			return float64(n-(i/1000)*1000) + float64(i%1000)/1000, ry()
		}),
	)
	return out
}

// addAll adds the stream in windows of w pairs: sorted by AddWindow, or,
// for odd windows when viaSorted is set, sorted by the test and added by
// AddSorted. It checks Valid and the space bound after each window.
func addAll(t *testing.T, s *Summary, st stream, w int, viaSorted bool) {
	t.Helper()
	for i, k := 0, 0; i < len(st.x); i, k = i+w, k+1 {
		j := min(i+w, len(st.x))
		x, y := slices.Clone(st.x[i:j]), slices.Clone(st.y[i:j])
		var err error
		if viaSorted && k%2 == 1 {
			idx := make([]int, len(x))
			for m := range idx {
				idx[m] = m
			}
			slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(x[a], x[b]) })
			sx, sy := make([]float64, len(x)), make([]float64, len(x))
			for m, p := range idx {
				sx[m], sy[m] = x[p], y[p]
			}
			err = s.AddSorted(sx, sy)
		} else {
			err = s.AddWindow(x, y)
		}
		if err != nil {
			t.Fatalf("window %d: %v", k, err)
		}
		if err := s.Valid(); err != nil {
			t.Fatalf("window %d: %v", k, err)
		}
		if e, bound := int64(s.Entries()), SpaceBound(s.Epsilon(), int64(w), int64(j)); e > bound {
			t.Fatalf("window %d: %d entries above the space bound %d", k, e, bound)
		}
	}
}

func TestGuarantee(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 5000
	}
	for _, st := range streams(n) {
		for _, c := range []struct {
			eps float64
			w   int
		}{{0.01, 500}, {0.05, 64}, {0.002, 2048}} {
			t.Run(fmt.Sprintf("%s/ε=%v/W=%d", st.name, c.eps, c.w), func(t *testing.T) {
				s, err := New(c.eps)
				if err != nil {
					t.Fatal(err)
				}
				addAll(t, s, st, c.w, true)
				o := newOracle(t, st.x, st.y)
				checkAll(t, s, o)
				tot := s.Totals()
				if tot.Count != o.n || tot.SumY != o.tot || tot.SumAbsY != o.abs {
					t.Fatalf("Totals = %+v, want count %d, Σy %v, Σ|y| %v", tot, o.n, o.tot, o.abs)
				}
				if o.n > 0 && (tot.MinX != o.xs[0] || tot.MaxX != o.xs[len(o.xs)-1]) {
					t.Fatalf("Totals min, max = %v, %v, want %v, %v", tot.MinX, tot.MaxX, o.xs[0], o.xs[len(o.xs)-1])
				}
				// After encoding and decoding, the answers are the same.
				data, err := s.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				var d Summary
				if err := d.UnmarshalBinary(data); err != nil {
					t.Fatalf("decode: %v", err)
				}
				for _, v := range append(slices.Clone(o.xs[:min(len(o.xs), 50)]), -1e300, 1e300) {
					if d.AtMost(v) != s.AtMost(v) || d.AtLeast(v) != s.AtLeast(v) {
						t.Fatalf("decoded answers for %v differ", v)
					}
				}
				if d.Totals() != s.Totals() {
					t.Fatalf("decoded totals %+v, want %+v", d.Totals(), s.Totals())
				}
			})
		}
	}
}

// TestMerge splits each stream between two summaries in turns of windows,
// merges them, and checks the guarantee on the result.
func TestMerge(t *testing.T) {
	const w = 300
	for _, st := range streams(6000) {
		t.Run(st.name, func(t *testing.T) {
			a, _ := New(0.02)
			b, _ := New(0.02)
			for i, k := 0, 0; i < len(st.x); i, k = i+w, k+1 {
				j := min(i+w, len(st.x))
				dst := a
				if k%3 == 1 {
					dst = b
				}
				if err := dst.AddWindow(slices.Clone(st.x[i:j]), slices.Clone(st.y[i:j])); err != nil {
					t.Fatal(err)
				}
			}
			if err := a.Merge(b); err != nil {
				t.Fatal(err)
			}
			if err := a.Valid(); err != nil {
				t.Fatal(err)
			}
			checkAll(t, a, newOracle(t, st.x, st.y))
		})
	}
	// A summary merged with itself counts every pair twice.
	st := streams(3000)[4]
	s, _ := New(0.02)
	addAll(t, s, st, 256, false)
	if err := s.Merge(s); err != nil {
		t.Fatal(err)
	}
	if err := s.Valid(); err != nil {
		t.Fatal(err)
	}
	checkAll(t, s, newOracle(t, append(slices.Clone(st.x), st.x...), append(slices.Clone(st.y), st.y...)))

	a, _ := New(0.01)
	b, _ := New(0.02)
	if err := a.Merge(b); !errors.Is(err, ErrEpsilonMismatch) {
		t.Fatalf("Merge of different ε: %v, want ErrEpsilonMismatch", err)
	}
}

// TestInput checks that bad windows are refused and add nothing.
func TestInput(t *testing.T) {
	s, _ := New(0.1)
	if err := s.AddSorted([]float64{1, 2}, []float64{1, 1}); err != nil {
		t.Fatal(err)
	}
	want := s.Totals()
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		name string
		x, y []float64
	}{
		{"lengths", []float64{1, 2}, []float64{1}},
		{"unsorted", []float64{2, 1}, []float64{1, 1}},
		{"NaN x", []float64{1, nan}, []float64{1, 1}},
		{"Inf x", []float64{1, inf}, []float64{1, 1}},
		{"NaN y", []float64{1, 2}, []float64{nan, 1}},
		{"Inf y", []float64{1, 2}, []float64{1, -inf}},
		{"overflow", []float64{1, 2}, []float64{math.MaxFloat64, -math.MaxFloat64}},
	} {
		if err := s.AddSorted(slices.Clone(c.x), slices.Clone(c.y)); !errors.Is(err, ErrInput) {
			t.Errorf("AddSorted %s: %v, want ErrInput", c.name, err)
		}
		if c.name != "unsorted" {
			if err := s.AddWindow(slices.Clone(c.x), slices.Clone(c.y)); !errors.Is(err, ErrInput) {
				t.Errorf("AddWindow %s: %v, want ErrInput", c.name, err)
			}
		}
		if s.Totals() != want {
			t.Fatalf("%s: totals %+v after a refused window, want %+v", c.name, s.Totals(), want)
		}
	}
	if b := s.AtLeast(math.NaN()); b.CountHi != 0 || b.SumLo != 0 || b.SumHi != 0 {
		t.Errorf("AtLeast(NaN) = %+v, want nothing", b)
	}
	if b := s.AtMost(math.NaN()); b.CountHi != 0 || b.SumLo != 0 || b.SumHi != 0 {
		t.Errorf("AtMost(NaN) = %+v, want nothing", b)
	}
	if _, err := New(0); err == nil {
		t.Error("New(0) succeeded")
	}
	if _, err := s.Correlated(Query{Agg: AggQuantile, Phi: 1.5, Factor: 1}); err == nil {
		t.Error("φ = 1.5 accepted")
	}
	if _, err := s.Correlated(Query{Agg: 0, Factor: 1}); err == nil {
		t.Error("aggregate 0 accepted")
	}
	if _, err := s.Correlated(Query{Agg: AggMax, Factor: math.Inf(1)}); err == nil {
		t.Error("infinite threshold accepted")
	}
}

// TestRounding adds pairs whose y span the float64 range, so that every
// sum rounds, and checks the bounds against exact sums in big.Float.
func TestRounding(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, w, eps = 3000, 200, 0.05
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = float64(rng.IntN(500))
		y[i] = math.Ldexp(rng.Float64()-0.3, rng.IntN(200)-100)
	}
	s, _ := New(eps)
	for i := 0; i < n; i += w {
		if err := s.AddWindow(slices.Clone(x[i:i+w]), slices.Clone(y[i:i+w])); err != nil {
			t.Fatal(err)
		}
	}
	exactSum := func(keep func(float64) bool) (*big.Float, int64) {
		sum := new(big.Float).SetPrec(2200)
		var c int64
		for i := range x {
			if keep(x[i]) {
				sum.Add(sum, big.NewFloat(y[i]))
				c++
			}
		}
		return sum, c
	}
	abs := 0.0
	for _, v := range y {
		abs += math.Abs(v)
	}
	for th := -1.0; th <= 501; th += 7.5 {
		for _, c := range []struct {
			name string
			b    Bounds
			keep func(float64) bool
		}{
			{"AtMost", s.AtMost(th), func(v float64) bool { return v <= th }},
			{"AtLeast", s.AtLeast(th), func(v float64) bool { return v >= th }},
		} {
			sum, cnt := exactSum(c.keep)
			if sum.Cmp(big.NewFloat(c.b.SumLo)) < 0 || sum.Cmp(big.NewFloat(c.b.SumHi)) > 0 {
				t.Fatalf("%s(%v): exact sum %v outside [%v, %v]", c.name, th, sum, c.b.SumLo, c.b.SumHi)
			}
			if cnt < c.b.CountLo || cnt > c.b.CountHi {
				t.Fatalf("%s(%v): count %d outside [%d, %d]", c.name, th, cnt, c.b.CountLo, c.b.CountHi)
			}
			if wd := c.b.SumHi - c.b.SumLo; wd > eps*abs*(1+1e-6) {
				t.Fatalf("%s(%v): width %v above ε·Σ|y| = %v", c.name, th, wd, eps*abs)
			}
		}
	}
}

// TestSpace adds many windows of random pairs and holds the entries to
// the space bound, and well below the pairs added.
func TestSpace(t *testing.T) {
	const eps, w, windows = 0.01, 1024, 300
	rng := rand.New(rand.NewPCG(5, 6))
	s, _ := New(eps)
	x, y := make([]float64, w), make([]float64, w)
	for k := range windows {
		for i := range x {
			x[i], y[i] = rng.Float64(), rng.ExpFloat64()-0.5
		}
		if err := s.AddWindow(x, y); err != nil {
			t.Fatal(err)
		}
		n := int64((k + 1) * w)
		if e, bound := int64(s.Entries()), SpaceBound(eps, w, n); e > bound {
			t.Fatalf("after %d windows: %d entries above the bound %d", k+1, e, bound)
		}
	}
	if e := s.Entries(); e > windows*w/10 {
		t.Fatalf("%d entries for %d pairs", e, windows*w)
	}
	if err := s.Valid(); err != nil {
		t.Fatal(err)
	}
}

// TestCopyReset checks that Copy is deep and Reset empties.
func TestCopyReset(t *testing.T) {
	s, _ := New(0.1)
	if err := s.AddWindow([]float64{3, 1, 2}, []float64{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	c := s.Copy()
	s.Reset()
	if !s.IsEmpty() || s.Entries() != 0 || s.AtMost(10) != (Bounds{Threshold: 10}) {
		t.Fatalf("Reset left %d pairs", s.Count())
	}
	if b := c.AtMost(2); b.CountLo != 2 || b.CountHi != 2 || b.SumLo != 5 || b.SumHi != 5 {
		t.Fatalf("copy's AtMost(2) = %+v, want count 2, sum 5", b)
	}
}

// FuzzUnmarshal decodes arbitrary bytes, both as they are and as the
// payload of an envelope with the right magic, version and checksum (so
// that the fuzzer reaches the payload's checks). A decoded summary must be
// valid, answer queries, take a window and a merge, and encode to bytes
// that decode to the same answers.
func FuzzUnmarshal(f *testing.F) {
	s, _ := New(0.2)
	_ = s.AddWindow([]float64{5, 1, 4, 2, 3, 9, 9, 9, 0, 7}, []float64{1, -2, 3, 0, 5, 6, -7, 8, 9, 1})
	_ = s.AddWindow([]float64{5, 1, 4, 2, 3, 9, 9, 9, 0, 7}, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	for _, k := range []*Summary{s, {eps: 0.5}} {
		data, _ := k.MarshalBinary()
		f.Add(data)
		f.Add(data[5 : len(data)-4])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{data, codec.End(append(codec.Begin(nil, magic, formatVersion), data...), 0)} {
			var d Summary
			if err := d.UnmarshalBinary(in); err != nil {
				continue
			}
			if err := d.Valid(); err != nil {
				t.Fatalf("decoded invalid summary: %v", err)
			}
			again, _ := d.MarshalBinary()
			var e Summary
			if err := e.UnmarshalBinary(again); err != nil {
				t.Fatalf("re-encoded summary does not decode: %v", err)
			}
			for _, v := range []float64{-1, 0, 1, 5, 1e300} {
				if d.AtMost(v) != e.AtMost(v) || d.AtLeast(v) != e.AtLeast(v) {
					t.Fatalf("answers for %v differ after re-encoding", v)
				}
			}
			_, _ = d.Correlated(Query{Agg: AggQuantile, Phi: 0.5, Factor: 1})
			_, _ = d.Correlated(Query{Agg: AggMean, Factor: 2})
			if err := d.Merge(s); err == nil {
				if err := d.Valid(); err != nil {
					t.Fatalf("merge of a decoded summary: %v", err)
				}
			}
			if err := d.AddSorted([]float64{1, 2}, []float64{3, -4}); err == nil {
				if err := d.Valid(); err != nil {
					t.Fatalf("window added to a decoded summary: %v", err)
				}
			}
		}
	})
}
