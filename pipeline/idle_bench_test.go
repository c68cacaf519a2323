package pipeline

import (
	"context"
	"fmt"
	"testing"
	"time"

	"streamd/feed"
	"streamd/gpusort"
	"streamd/summary"
)

// BenchmarkIdleFlush measures the sweep that flushes 100,000 quiet streams
// (10,000 with -short), each with a partial window of 50 or 1,000 values,
// in ns per stream: digested on the CPU by the sweeper (at an ε whose
// digest takes less than the raw values: 0.05 for 1,000, 0.5 for 50) or
// kept raw and shrunk (ε = 0.001); seen-ns/stream is the sweep before,
// which finds every stream busy and flushes none: what a sweep costs per
// stream with nothing to flush. Each iteration fills the streams again
// with the timer stopped, which takes seconds: run it with -benchtime=1x.
func BenchmarkIdleFlush(b *testing.B) {
	streams := 100000
	if testing.Short() {
		streams = 10000
	}
	for _, c := range []struct {
		name string
		n    int
		eps  float64
	}{
		{"values=50/digest", 50, 0.5},
		{"values=50/shrink", 50, 0.001},
		{"values=1000/digest", 1000, 0.05},
		{"values=1000/shrink", 1000, 0.001},
	} {
		b.Run(c.name, func(b *testing.B) {
			values := make([]float64, c.n)
			for i := range values {
				values[i] = float64(i*7919%1000) / 8
			}
			var st IdleStats
			var observe time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				clock := &fakeClock{now: idleStart}
				p, err := New(Config{Sorter: gpusort.NewCPU(0), MaxStreams: streams, Now: clock.Now, IdleFlush: time.Minute,
					Defaults: summary.Config{Epsilon: c.eps, SlidingWindow: 64}})
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				if err := p.Open(ctx); err != nil {
					b.Fatal(err)
				}
				for j := range streams {
					name := fmt.Sprintf("s%07d", j)
					// In two batches, so that the buffer has room to spare.
					for _, x := range [][]float64{values[:c.n*3/5], values[c.n*3/5:]} {
						if _, err := p.Accept(ctx, &feed.Batch{Stream: name, Values: x}); err != nil {
							b.Fatal(err)
						}
					}
				}
				start := time.Now()
				p.sweepIdle(ctx)
				observe += time.Since(start)
				clock.Advance(time.Minute)
				b.StartTimer()
				st = p.sweepIdle(ctx)
				b.StopTimer()
				if err := p.Close(ctx); err != nil {
					b.Fatal(err)
				}
			}
			if st.Digested+st.Shrunk != int64(streams) {
				b.Fatalf("flushed %+v of %d streams", st, streams)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(streams), "ns/stream")
			b.ReportMetric(float64(observe.Nanoseconds())/float64(b.N)/float64(streams), "seen-ns/stream")
		})
	}
}
