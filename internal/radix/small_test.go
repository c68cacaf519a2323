package radix

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkSortSmall compares, for the small windows of quiet streams, the
// package's sort of a copy (SortedFloat32s, SortedFloat64s) with the
// comparison sort of the keys it falls back to below its radix cut-off
// (pdq), on uniform random values.
func BenchmarkSortSmall(b *testing.B) {
	for _, n := range []int{20, 100, 200, 500, 1000, 2000, 5000} {
		rng := rand.New(rand.NewPCG(uint64(n), 5))
		src32 := make([]float32, n)
		src64 := make([]float64, n)
		for i := range src32 {
			src32[i] = rng.Float32()
			src64[i] = rng.NormFloat64()
		}
		dst32 := make([]float32, n)
		dst64 := make([]float64, n)
		var s32 []uint32
		var s64 []uint64
		b.Run(fmt.Sprintf("sorted32/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				dst32, s32 = SortedFloat32s(dst32, src32, s32)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
			sink32 = dst32
		})
		b.Run(fmt.Sprintf("lsd32/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				d, s := bits32(dst32), bits32(src32)
				s32 = lsd32x11(d, s, s32)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
			sink32 = dst32
		})
		b.Run(fmt.Sprintf("pdq32/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				pdqSorted(bits32(dst32), bits32(src32))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
			sink32 = dst32
		})
		b.Run(fmt.Sprintf("sorted64/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				dst64, s64 = SortedFloat64s(dst64, src64, s64)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
		})
		b.Run(fmt.Sprintf("lsd64/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				d, s := bits64(dst64), bits64(src64)
				s64 = lsd64x11(d, s, s64)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
		})
		b.Run(fmt.Sprintf("pdq64/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				pdqSorted(bits64(dst64), bits64(src64))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
		})
	}
}
