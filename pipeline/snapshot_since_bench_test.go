package pipeline

import (
	"context"
	"fmt"
	"testing"
	"time"

	"streamd/checkpoint"
	"streamd/feed"
	"streamd/gpusort"
)

// BenchmarkDeltaAfterValues measures a checkpoint delta, written durably
// through a checkpoint.Store, after every one of 2,000 streams at the
// default configuration took 20 values, when each held 100, 1,000 or
// 10,000 before: a stream's record, and the values added, against the
// values it holds. It reports the delta's bytes.
func BenchmarkDeltaAfterValues(b *testing.B) {
	const streams, added = 2000, 20
	ctx := context.Background()
	for _, held := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("held=%d", held), func(b *testing.B) {
			p, err := New(Config{Sorter: gpusort.NewCPU(0)})
			if err != nil {
				b.Fatal(err)
			}
			if err := p.Open(ctx); err != nil {
				b.Fatal(err)
			}
			defer p.Close(ctx)
			vals := make([]float64, held)
			for i := range vals {
				vals[i] = float64(i*7919%10007) / 4
			}
			names := make([]string, streams)
			for i := range names {
				names[i] = fmt.Sprintf("s%07d", i)
				if err := acceptValues(ctx, p, feed.Local, names[i], vals, time.Time{}); err != nil {
					b.Fatal(err)
				}
			}
			store := &checkpoint.Store{Dir: b.TempDir()}
			saveDurably(b, store, p, false)
			var size int64
			for b.Loop() {
				b.StopTimer()
				for _, name := range names {
					if err := acceptValues(ctx, p, feed.Local, name, vals[:added], time.Time{}); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				size = saveDurably(b, store, p, true)
			}
			b.ReportMetric(float64(size), "bytes")
			b.ReportMetric(float64(size)/streams, "bytes/stream")
		})
	}
}
