package radix

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestKeys(t *testing.T) {
	vals := []float32{float32(math.Inf(-1)), -math.MaxFloat32, -1, -math.SmallestNonzeroFloat32, float32(math.Copysign(0, -1)), 0, math.SmallestNonzeroFloat32, 1, math.MaxFloat32, float32(math.Inf(1))}
	for i := 1; i < len(vals); i++ {
		if Key32(vals[i-1]) >= Key32(vals[i]) {
			t.Errorf("Key32(%v) ≥ Key32(%v)", vals[i-1], vals[i])
		}
		if FromKey32(Key32(vals[i])) != vals[i] || Key64(float64(vals[i-1])) >= Key64(float64(vals[i])) {
			t.Errorf("round trip or 64-bit order broken at %v", vals[i])
		}
	}
}

// TestSort compares with slices.Sort across sizes that take every path:
// insertion, LSD in cache, and the MSD split.
func TestSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{0, 1, 2, 3, 47, 48, 49, 1000, 1 << 17, 1<<17 + 1, 1 << 19} {
		for _, kind := range []string{"random", "dups", "negative", "equal"} {
			x := make([]float32, n)
			for i := range x {
				switch kind {
				case "random":
					x[i] = float32(rng.NormFloat64() * 1e6)
				case "dups":
					x[i] = float32(rng.IntN(10))
				case "negative":
					x[i] = -float32(rng.ExpFloat64())
				case "equal":
					x[i] = 3
				}
			}
			y := slices.Clone(x)
			slices.Sort(y)
			Float32s(x, nil)
			if !slices.Equal(x, y) {
				t.Fatalf("n=%d %s: float32 sort differs", n, kind)
			}
			x64 := make([]float64, n)
			for i := range x64 {
				x64[i] = float64(y[(i*7919)%max(n, 1)]) + rng.Float64()
			}
			y64 := slices.Clone(x64)
			slices.Sort(y64)
			Float64s(x64, nil)
			if !slices.Equal(x64, y64) {
				t.Fatalf("n=%d %s: float64 sort differs", n, kind)
			}
		}
	}
}

func TestNegativeZero(t *testing.T) {
	x := []float32{0, float32(math.Copysign(0, -1)), 0, float32(math.Copysign(0, -1))}
	Float32s(x, nil)
	for i, v := range x {
		if neg := math.Signbit(float64(v)); neg != (i < 2) {
			t.Fatalf("−0 must sort before +0: %v", x)
		}
	}
}

var sink32 []float32

// BenchmarkSort compares the radix sort with slices.Sort on uniform random
// float32 windows, one core.
func BenchmarkSort(b *testing.B) {
	for shift := 12; shift <= 22; shift += 2 {
		n := 1 << shift
		src := make([]float32, n)
		rng := rand.New(rand.NewPCG(uint64(n), 2))
		for i := range src {
			src[i] = rng.Float32()
		}
		x := make([]float32, n)
		scratch := make([]uint32, n)
		b.Run(fmt.Sprintf("radix/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				copy(x, src)
				scratch = Float32s(x, scratch)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
			sink32 = x
		})
		// The baseline: restoring the input, which each sort round includes.
		b.Run(fmt.Sprintf("copy/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				copy(x, src)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
			sink32 = x
		})
		b.Run(fmt.Sprintf("slices.Sort/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				copy(x, src)
				slices.Sort(x)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
			sink32 = x
		})
	}
}
