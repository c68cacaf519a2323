package corrsum

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"streamd/gksketch"
	"streamd/internal/radix"
)

var sinkSummary *Summary

// BenchmarkAdd measures the cost per pair of adding windows of W pairs
// (normal x, signed y) to a Summary: AddSorted on windows sorted
// beforehand, AddWindow sorting them (the radix key–value sort), and,
// beside them, gksketch's plain values: the sample of a sorted window
// (FromSorted with spacing εW/2) added to a gksketch.Sketch. Each op adds
// 32 windows.
func BenchmarkAdd(b *testing.B) {
	const eps, windows = 0.001, 32
	for _, w := range []int{1 << 16, 1 << 20} {
		if testing.Short() && w > 1<<16 {
			continue
		}
		rng := rand.New(rand.NewPCG(uint64(w), 1))
		xs, ys := make([][]float64, windows), make([][]float64, windows)
		sx, sy := make([][]float64, windows), make([][]float64, windows)
		for k := range windows {
			xs[k], ys[k] = make([]float64, w), make([]float64, w)
			for i := range w {
				xs[k][i], ys[k][i] = rng.NormFloat64(), rng.NormFloat64()*1000
			}
			sx[k], sy[k] = slices.Clone(xs[k]), slices.Clone(ys[k])
			radix.Pairs64(sx[k], sy[k], nil)
		}
		x, y := make([]float64, w), make([]float64, w)
		perPair := func(b *testing.B) {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(windows*w), "ns/pair")
		}
		b.Run(fmt.Sprintf("AddSorted/W=%d", w), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s, _ := New(eps)
				for k := range windows {
					if err := s.AddSorted(sx[k], sy[k]); err != nil {
						b.Fatal(err)
					}
				}
				sinkSummary = s
			}
			perPair(b)
		})
		b.Run(fmt.Sprintf("AddWindow/W=%d", w), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s, _ := New(eps)
				for k := range windows {
					copy(x, xs[k])
					copy(y, ys[k])
					if err := s.AddWindow(x, y); err != nil {
						b.Fatal(err)
					}
				}
				sinkSummary = s
			}
			perPair(b)
		})
		b.Run(fmt.Sprintf("gksketch/W=%d", w), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				k, _ := gksketch.NewSketch(eps)
				for i := range windows {
					if err := k.AddWindow(gksketch.FromSorted(sx[i], eps*float64(w)/2)); err != nil {
						b.Fatal(err)
					}
				}
			}
			perPair(b)
		})
	}
}
