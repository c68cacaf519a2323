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
// kept raw and shrunk (ε = 0.001); and 1,000 streams (100) with 40,000
// values each, whose windows the sweeper queues for the sorter (the sweep
// waits for room in the sorter's queue, so its time is mostly the sort's). B/stream-before and -after are
// what a stream holds (its summaries, sliding window and partial window:
// what the budget measures) before the flush and once it is summarised; seen-ns/stream is the sweep before,
// which finds every stream busy and flushes none: what a sweep costs per
// stream with nothing to flush. Each iteration fills the streams again
// with the timer stopped, which takes seconds: run it with -benchtime=1x.
func BenchmarkIdleFlush(b *testing.B) {
	streams := 100000
	if testing.Short() {
		streams = 10000
	}
	for _, c := range []struct {
		name    string
		n       int
		eps     float64
		streams int
	}{
		{"values=50/digest", 50, 0.5, streams},
		{"values=50/shrink", 50, 0.001, streams},
		{"values=1000/digest", 1000, 0.05, streams},
		{"values=1000/shrink", 1000, 0.001, streams},
		{"values=40000/sorter", 40000, 0.001, streams / 100},
	} {
		b.Run(c.name, func(b *testing.B) {
			streams := c.streams
			values := make([]float64, c.n)
			for i := range values {
				values[i] = float64(i*7919%1000) / 8
			}
			var st IdleStats
			var observe time.Duration
			var before, after int64
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
				before = heldBytes(p)
				b.StartTimer()
				st = p.sweepIdle(ctx)
				b.StopTimer()
				waitSummarised(b, p, int64(streams*c.n))
				after = heldBytes(p)
				if err := p.Close(ctx); err != nil {
					b.Fatal(err)
				}
			}
			if st.Digested+st.Shrunk != int64(streams) {
				b.Fatalf("flushed %+v of %d streams", st, streams)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(streams), "ns/stream")
			b.ReportMetric(float64(observe.Nanoseconds())/float64(b.N)/float64(streams), "seen-ns/stream")
			b.ReportMetric(float64(before)/float64(streams), "B/stream-before")
			b.ReportMetric(float64(after)/float64(streams), "B/stream-after")
		})
	}
}

// heldBytes returns what p's streams hold, as the memory budget measures
// it (Stream.summaryBytes).
func heldBytes(p *Pipeline) int64 {
	var n int64
	for _, s := range p.all() {
		s.mu.Lock()
		n += s.summaryBytes()
		s.mu.Unlock()
	}
	return n
}
