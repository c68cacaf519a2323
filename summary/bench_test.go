package summary

import (
	"fmt"
	"testing"

	"streamd/feed"
	"streamd/internal/radix"
	"streamd/synth"
)

var sinkView *View

// BenchmarkPath measures the whole per-value path of one stream, single
// goroutine: the sliding window and statistics (Window.Add, AddMoments), rounding a window
// to float32, the radix sort, the digest (sample and lossy runs) and the
// all-history summaries — everything but network decoding. It reports
// ns/value over a stream of 10^7 values.
func BenchmarkPath(b *testing.B) {
	const n = 10_000_000
	for _, tc := range []struct {
		dist synth.Dist
		eps  float64
		w    int
	}{
		{synth.Uniform, 0.001, 1 << 16},
		{synth.Zipf, 0.001, 1 << 16},
		{synth.Normal, 0.01, 1 << 16},
		{synth.Uniform, 0.001, 1 << 20},
	} {
		x, _ := synth.Generate(synth.Spec{Dist: tc.dist, Seed: 1}, n)
		b.Run(fmt.Sprintf("%s/ε=%v/W=%d", tc.dist, tc.eps, tc.w), func(b *testing.B) {
			win := make([]float32, tc.w)
			var scratch []uint32
			var d Digest
			var known []float64
			b.ReportAllocs()
			for b.Loop() {
				cfg := Config{Epsilon: tc.eps, WindowSize: tc.w}
				s, _ := NewHistory(cfg)
				recent, _ := NewSlidingWindow(cfg)
				for i := 0; i+tc.w <= n; i += tc.w {
					chunk := x[i : i+tc.w]
					recent.Add(0, chunk...)
					s.AddMoments(feed.Measure(chunk))
					for j, v := range chunk {
						win[j] = float32(v)
					}
					scratch = radix.Float32s(win, scratch)
					spec := s.Spec(tc.w, known)
					known = spec.Known
					DigestSorted(win, spec, &d)
					if err := s.AddWindow(&d); err != nil {
						b.Fatal(err)
					}
				}
				sinkView = s.View(nil, true)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/value")
		})
	}
}
