package sorttest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"streamd/gpusort"
)

// A PairPattern fills the keys x of a window of pairs.
type PairPattern struct {
	Name string
	Fill func(r *rand.Rand, x []float64)
}

// PairPatterns returns the key patterns of the pair table: random,
// sorted, reversed, duplicates, equal, negative, magnitudes (huge and
// tiny, denormals), ulps (keys that differ only in their lowest bits)
// and mixed (all of these at once).
func PairPatterns() []PairPattern {
	ps := []PairPattern{
		{"random", func(r *rand.Rand, x []float64) {
			for i := range x {
				x[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(20)-10))
			}
		}},
		{"sorted", func(r *rand.Rand, x []float64) {
			for i := range x {
				x[i] = float64(i) - float64(len(x)/3)
			}
		}},
		{"reversed", func(r *rand.Rand, x []float64) {
			for i := range x {
				x[i] = float64(len(x)-i) * 0.5
			}
		}},
		{"duplicates", func(r *rand.Rand, x []float64) {
			for i := range x {
				x[i] = float64(r.IntN(17) - 8)
			}
		}},
		{"equal", func(r *rand.Rand, x []float64) {
			for i := range x {
				x[i] = 42.5
			}
		}},
		{"negative", func(r *rand.Rand, x []float64) {
			for i := range x {
				x[i] = -r.ExpFloat64() * 1e5
			}
		}},
		{"magnitudes", func(r *rand.Rand, x []float64) {
			v := []float64{math.MaxFloat64, -math.MaxFloat64, 1e308, -1e308, 1e-308, -1e-308,
				math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 2.5e-310, -2.5e-310, 0, 1, -1}
			for i := range x {
				x[i] = v[r.IntN(len(v))]
			}
		}},
		{"ulps", func(r *rand.Rand, x []float64) {
			for i := range x {
				x[i] = math.Float64frombits(math.Float64bits(1) + uint64(r.IntN(1<<20)))
				if r.IntN(2) == 0 {
					x[i] = -x[i]
				}
			}
		}},
	}
	mixed := PairPattern{"mixed", func(r *rand.Rand, x []float64) {
		for i := range x {
			ps[r.IntN(len(ps))].Fill(r, x[i:i+1])
		}
	}}
	return append(ps, mixed)
}

// PairSizes are the window lengths of the pair table: 0, 1, 2, odd ones,
// one past a GPU tile, 2^16, and 2^20 without -short.
func PairSizes() []int {
	s := []int{0, 1, 2, 3, 5, 21, 1001, 2049, 1 << 16}
	if !testing.Short() {
		s = append(s, 1<<20)
	}
	return s
}

// SortPairs sorts x and y with s and checks the result bit for bit
// against a stable sort of the pairs by Key64: x sorted, and the pairs
// the same multiset, each y still next to its x, equal keys in their input
// order.
func SortPairs(t *testing.T, s gpusort.PairSorter, name string, x, y []float64) {
	t.Helper()
	type pair struct{ x, y uint64 }
	want := make([]pair, len(x))
	for i := range x {
		want[i] = pair{math.Float64bits(x[i]), math.Float64bits(y[i])}
	}
	slices.SortStableFunc(want, func(a, b pair) int {
		return cmp.Compare(gpusort.Key64(math.Float64frombits(a.x)), gpusort.Key64(math.Float64frombits(b.x)))
	})
	if err := s.SortPairs(context.Background(), x, y); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for i, w := range want {
		if g := (pair{math.Float64bits(x[i]), math.Float64bits(y[i])}); g != w {
			t.Fatalf("%s: pair %d = (%v, %#x), want (%v, %#x)", name, i,
				x[i], g.y, math.Float64frombits(w.x), w.y)
		}
	}
}

// PairSorter runs the pair table on a back-end: every size of sizes (see
// PairSizes) and pattern, with values y of arbitrary bits (every bit must
// travel), and the errors of mismatched lengths, a canceled context and
// Close.
func PairSorter(t *testing.T, newSorter func() (gpusort.Sorter, error), sizes []int) {
	s, err := newSorter()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ps, ok := s.(gpusort.PairSorter)
	if !ok {
		t.Fatalf("%s is not a PairSorter", s.Name())
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range sizes {
		for pi, p := range PairPatterns() {
			if n > 1<<16 && pi%3 != 0 {
				continue // keep the largest size quick
			}
			x, y := make([]float64, n), make([]float64, n)
			p.Fill(r, x)
			for i := range y {
				y[i] = math.Float64frombits(r.Uint64())
			}
			SortPairs(t, ps, fmt.Sprintf("%s/n=%d", p.Name, n), x, y)
		}
	}
	t.Run("lengths", func(t *testing.T) {
		x, y := []float64{2, 1}, []float64{1}
		if err := ps.SortPairs(context.Background(), x, y); err == nil {
			t.Fatal("SortPairs of 2 keys and 1 value succeeded")
		}
		if !slices.Equal(x, []float64{2, 1}) {
			t.Fatalf("SortPairs of mismatched slices changed x: %v", x)
		}
	})
	t.Run("canceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		x, y := []float64{3, 1, 2}, []float64{30, 10, 20}
		if err := ps.SortPairs(ctx, x, y); !errors.Is(err, context.Canceled) {
			t.Fatalf("SortPairs with a canceled context: %v, want context.Canceled", err)
		}
		for i := range x {
			if y[i] != 10*x[i] {
				t.Fatalf("canceled SortPairs split a pair: x %v, y %v", x, y)
			}
		}
	})
	t.Run("closed", func(t *testing.T) {
		s, err := newSorter()
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		x, y := []float64{2, 1}, []float64{20, 10}
		if err := s.(gpusort.PairSorter).SortPairs(context.Background(), x, y); !errors.Is(err, gpusort.ErrClosed) {
			t.Fatalf("SortPairs after Close: %v, want ErrClosed", err)
		}
	})
}

// BenchmarkPairs sorts windows of 2^16, 2^20 and 2^22 random pairs with s
// and reports nanoseconds per pair. Each sort includes copying the
// unsorted window in.
func BenchmarkPairs(b *testing.B, s gpusort.PairSorter) {
	for _, lg := range []int{16, 20, 22} {
		n := 1 << lg
		b.Run(fmt.Sprintf("n=2^%d", lg), func(b *testing.B) {
			r := rand.New(rand.NewPCG(9, 10))
			x0, y0 := make([]float64, n), make([]float64, n)
			for i := range x0 {
				x0[i], y0[i] = r.NormFloat64()*1e3, r.Float64()
			}
			x, y := make([]float64, n), make([]float64, n)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				copy(x, x0)
				copy(y, y0)
				if err := s.SortPairs(ctx, x, y); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/pair")
		})
	}
}
