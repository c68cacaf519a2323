package radix

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPairs64 sorts pairs of every input kind and size against a stable
// sort of the same pairs by x: the same x bits in the same order, and the
// same y with each.
func TestPairs64(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var scratch []uint64
	for _, kind := range append(slices.Clone(kinds), "onedigit") {
		for _, n := range []int{0, 1, 2, 3, 47, 48, 49, 100, 1000, 5000} {
			var x []float64
			if kind == "onedigit" { // keys that differ in one digit: one pass
				x = make([]float64, n)
				for i := range x {
					x[i] = 1 + float64(rng.IntN(2))/2
				}
			} else {
				x = input(rng, kind, n)
			}
			y := make([]float64, n)
			for i := range y {
				y[i] = float64(i) // the input position, to check the order of ties
			}
			type pair struct{ x, y float64 }
			want := make([]pair, n)
			for i := range x {
				want[i] = pair{x[i], y[i]}
			}
			slices.SortStableFunc(want, func(a, b pair) int { return cmp.Compare(Key64(a.x), Key64(b.x)) })
			scratch = Pairs64(x, y, scratch)
			for i := range want {
				if math.Float64bits(x[i]) != math.Float64bits(want[i].x) || y[i] != want[i].y {
					t.Fatalf("%s/n=%d: pair %d is (%v, %v), want (%v, %v)", kind, n, i, x[i], y[i], want[i].x, want[i].y)
				}
			}
		}
	}
}

// BenchmarkPairs64 sorts windows of normal float64 keys carrying float64
// values, beside Float64s on the keys alone.
func BenchmarkPairs64(b *testing.B) {
	for _, shift := range []int{16, 20} {
		n := 1 << shift
		rng := rand.New(rand.NewPCG(uint64(n), 4))
		src := make([]float64, n)
		for i := range src {
			src[i] = rng.NormFloat64()
		}
		x, y := make([]float64, n), make([]float64, n)
		var scratch []uint64
		b.Run(fmt.Sprintf("pairs/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				copy(x, src)
				scratch = Pairs64(x, y, scratch)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/pair")
			sink64 = x
		})
		b.Run(fmt.Sprintf("keys/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				copy(x, src)
				scratch = Float64s(x, scratch)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
			sink64 = x
		})
	}
}
