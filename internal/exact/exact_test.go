package exact

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestNewCounted checks that a counted key answers exactly as the key of
// the same multiset written out value by value.
func TestNewCounted(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	negZero := math.Copysign(0, -1)
	cases := []struct {
		name   string
		values []float64
		counts []int64
	}{
		{"empty", nil, nil},
		{"one", []float64{2.5}, []int64{3}},
		{"zero counts", []float64{1, 2, 3}, []int64{0, 2, 0}},
		{"signed zeros", []float64{negZero, 0, -1, negZero}, []int64{1, 2, 3, 1}},
	}
	for _, n := range []int{10, 1000, 50000} {
		for _, kind := range []string{"distinct", "dups", "runs", "random counts"} {
			values := make([]float64, n)
			counts := make([]int64, n)
			for i := range values {
				switch kind {
				case "dups", "random counts":
					values[i] = float64(rng.IntN(20)) - 5
				default:
					values[i] = rng.NormFloat64()
				}
				switch kind {
				case "runs":
					// As a pre-rendered payload sent over and over: a
					// base count, one more over a few ranges.
					counts[i] = 4
					if i%(n/5+1) < n/10 {
						counts[i]++
					}
				case "random counts":
					counts[i] = int64(rng.IntN(4))
				default:
					counts[i] = 1 + int64(i/(n/3+1))
				}
			}
			cases = append(cases, struct {
				name   string
				values []float64
				counts []int64
			}{kind, values, counts})
		}
	}
	for _, tc := range cases {
		var all []float64
		for i, v := range tc.values {
			for range tc.counts[i] {
				all = append(all, v)
			}
		}
		want, got := New(all), NewCounted(tc.values, tc.counts)
		if got.N() != want.N() {
			t.Fatalf("%s: N = %d, want %d", tc.name, got.N(), want.N())
		}
		if !sameBits(got.Sorted(), want.Sorted()) {
			t.Fatalf("%s: sorted values differ", tc.name)
		}
		if want.N() == 0 {
			continue
		}
		for _, phi := range []float64{0, 1e-9, 0.001, 0.1, 0.25, 0.5, 0.77, 0.999, 1} {
			if g, w := got.Quantile(phi), want.Quantile(phi); g != w {
				t.Fatalf("%s: Quantile(%v) = %v, want %v", tc.name, phi, g, w)
			}
		}
		for _, v := range append(slices.Clone(tc.values), -100, 0.5, 100) {
			gb, ga := got.RankRange(v)
			wb, wa := want.RankRange(v)
			if gb != wb || ga != wa {
				t.Fatalf("%s: RankRange(%v) = (%d, %d), want (%d, %d)", tc.name, v, gb, ga, wb, wa)
			}
		}
		for _, s := range []float64{0.001, 0.01, 0.1} {
			if g, w := got.HeavyHitters(s), want.HeavyHitters(s); !slices.Equal(g, w) {
				t.Fatalf("%s: HeavyHitters(%v) = %v, want %v", tc.name, s, g, w)
			}
		}
		q := want.Quantile(0.5)
		lo, hi := want.RankRange(q)
		if err := got.CheckQuantile(0.5, q, 0, lo+1, hi); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if err := got.CheckFrequency(q, hi-lo, hi-lo, 0); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
	}
}

func TestNewCountedPanics(t *testing.T) {
	for _, counts := range [][]int64{{1}, {1, -1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("counts %v: no panic", counts)
				}
			}()
			NewCounted([]float64{1, 2}, counts)
		}()
	}
}

// sameBits reports whether a and b hold the same float64 values bit for
// bit: −0 and +0 differ.
func sameBits(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}
