package membudget

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
)

// BenchmarkBatch runs, in parallel over many accounts, what the pipeline
// does for each batch of values that fills a window: Grow for the batch's
// growth and its window, WindowFull, WindowDone once the window is
// summarised, and Summaries. One op is that sequence on one account.
func BenchmarkBatch(b *testing.B) {
	for _, bc := range []struct {
		name  string
		limit int64
	}{{"limit=0", 0}, {"limit=large", 1 << 50}} {
		b.Run(bc.name, func(b *testing.B) {
			const perGoroutine = 64
			budget := New(bc.limit)
			fp := Footprint{Reserve: 8 << 10, Window: 64 << 10, Summaries: 4 << 10}
			accounts := make([]*Account, perGoroutine*runtime.GOMAXPROCS(0))
			for i := range accounts {
				a, err := budget.Open(fp)
				if err != nil {
					b.Fatal(err)
				}
				accounts[i] = a
			}
			var next atomic.Int64
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				first := int(next.Add(1)-1) % runtime.GOMAXPROCS(0) * perGoroutine
				mine := accounts[first : first+perGoroutine]
				for i := 0; pb.Next(); i++ {
					a := mine[i%perGoroutine]
					if err := a.Grow(ctx, 256, 1); err != nil {
						b.Error(err)
						return
					}
					a.WindowFull()
					a.WindowDone()
					a.Summaries(4<<10 + 128)
				}
			})
			b.StopTimer()
			for _, a := range accounts {
				a.Close()
			}
			if st := budget.Stats(); st.Used != 0 {
				b.Errorf("charges left after every account closed: %+v", st)
			}
		})
	}
}

// BenchmarkThinBatch runs, in parallel over a million accounts, what the
// pipeline does for each batch of a thin stream: TryGrow for what the
// batch adds to its buffers, and Summaries once it holds them. One op is
// that on one account, picked at random.
func BenchmarkThinBatch(b *testing.B) {
	const accounts = 1 << 20
	budget := New(1 << 50)
	fp := Footprint{Reserve: 1 << 10, Window: 64 << 10, Summaries: 512}
	as := make([]Account, accounts)
	for i := range as {
		if err := budget.OpenAt(&as[i], fp); err != nil {
			b.Fatal(err)
		}
	}
	held := make([]atomic.Int64, accounts)
	var seed atomic.Uint64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		x := seed.Add(0x9e3779b97f4a7c15)
		for pb.Next() {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			i := x % accounts
			n := held[i].Add(64)
			if !as[i].TryGrow(64, 0) {
				b.Error("refused")
				return
			}
			as[i].Summaries(512 + n)
		}
	})
	b.StopTimer()
	for i := range as {
		as[i].Close()
	}
	if st := budget.Stats(); st.Used != 0 {
		b.Errorf("charges left after every account closed: %+v", st)
	}
}
