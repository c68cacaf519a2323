package pipeline

import (
	"context"
	"testing"

	"streamd/feed"
	"streamd/summary"
	"streamd/synth"
)

// BenchmarkAcceptPairs measures what one producer pays per pair accepted
// into one pair stream (windows of 65536 pairs sorted by x and summarised
// on the accepting goroutine), beside what it pays per value accepted
// into one value stream of float64 values (windows sorted by the CPU
// sorter's goroutines), until everything is summarised: 2^20 pairs or
// values an iteration, in batches of 4096.
func BenchmarkAcceptPairs(b *testing.B) {
	const n, batch = 1 << 20, 4096
	x, y, err := synth.GeneratePairs(1, n, synth.Random)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	defaults := summary.Config{Epsilon: 0.001, Float64: true}
	bx, by := make([]float64, batch), make([]float64, batch)
	b.Run("pairs", func(b *testing.B) {
		p := open(b, Config{Sorter: benchSorter(b), Defaults: defaults})
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			for i := 0; i < n; i += batch {
				copy(bx, x[i:i+batch])
				copy(by, y[i:i+batch])
				if _, err := p.Accept(ctx, &feed.Batch{Stream: "pairs", Pairs: feed.Pairs{X: bx, Y: by}}); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/pair")
	})
	b.Run("values", func(b *testing.B) {
		p := open(b, Config{Sorter: benchSorter(b), Defaults: defaults})
		b.ReportAllocs()
		b.ResetTimer()
		for k := range b.N {
			for i := 0; i < n; i += batch {
				copy(bx, x[i:i+batch])
				if _, err := p.Accept(ctx, &feed.Batch{Stream: "values", Values: bx}); err != nil {
					b.Fatal(err)
				}
			}
			waitSummarised(b, p, int64(k+1)*n)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/value")
	})
}
