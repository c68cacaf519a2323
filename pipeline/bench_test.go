package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"streamd/feed"
	"streamd/ingest"
	"streamd/summary"
	"streamd/synth"
)

// BenchmarkIngest measures the daemon's ingest path without the network:
// producers decode pre-rendered float32 frames of the binary protocol
// (ingest.Decoder) into one pipeline with the CPU sorter, and the clock
// stops once every value is in a summarised window. Each producer is one
// connection; "streams=N" spreads them over N streams (one hot stream when
// N is 1). Run it with -cpu 1,2,4,... for a scaling table: the producers,
// the sort workers and the sorter's goroutines all follow GOMAXPROCS.
func BenchmarkIngest(b *testing.B) {
	const perProducer = 1 << 22
	vals, err := synth.Generate(synth.Spec{Dist: synth.LogNormal, Seed: 1}, perProducer)
	if err != nil {
		b.Fatal(err)
	}
	for _, streams := range []int{0, 1} {
		name := "streams=per-producer"
		if streams == 1 {
			name = "streams=1"
		}
		b.Run(name, func(b *testing.B) {
			producers := runtime.GOMAXPROCS(0)
			inputs := make([][]byte, producers)
			for i := range inputs {
				stream := fmt.Sprintf("bench.%d", i)
				if streams == 1 {
					stream = "bench"
				}
				in := make([]byte, 0, len(ingest.Magic)+len(vals)/(1<<14)*(7+len(stream))+4*len(vals))
				in = append(in, ingest.Magic...)
				for j := 0; j < len(vals); j += 1 << 14 {
					if in, err = ingest.AppendFrame(in, stream, vals[j:j+1<<14], true); err != nil {
						b.Fatal(err)
					}
				}
				inputs[i] = in
			}
			p := open(b, Config{Defaults: summary.Config{Epsilon: 0.001}})
			ctx := context.Background()
			sent := int64(0)
			send := func() {
				var wg sync.WaitGroup
				for _, in := range inputs {
					wg.Go(func() {
						d := ingest.Decoder{Sink: p}
						if err := d.Decode(ctx, bytes.NewReader(in)); err != nil {
							b.Error(err)
						}
					})
				}
				wg.Wait()
				sent += int64(producers * perProducer)
				waitSummarised(b, p, sent)
			}
			// Fill the streams' sliding windows first: the benchmark
			// measures the steady state of a long-running daemon.
			send()
			b.ReportAllocs()
			b.SetBytes(int64(producers * len(inputs[0])))
			// A plain loop over b.N, not b.Loop: GOMAXPROCS follows -cpu
			// only in the calls that run b.N iterations.
			b.ResetTimer()
			for range b.N {
				send()
			}
			total := float64(producers*perProducer) * float64(b.N)
			b.ReportMetric(total/b.Elapsed().Seconds()/1e6, "Mvalues/s")
		})
	}
}

// waitSummarised polls until every full window of the pipeline's streams
// is in their summaries and the streams hold want values in all (the
// partial windows stay pending).
func waitSummarised(b *testing.B, p *Pipeline, want int64) {
	for {
		var count, inFlight int64
		for _, name := range p.List() {
			s, err := p.Stream(name)
			if err != nil {
				b.Fatal(err)
			}
			s.mu.Lock()
			for _, pt := range s.answeringLocked() {
				st := pt.sum.Stats()
				count += st.Count
				inFlight += st.Count - st.Summarised - int64(pt.filler.Len())
			}
			s.mu.Unlock()
		}
		if count == want && inFlight == 0 {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// BenchmarkAcceptThin measures the cost of a small batch: each Accept
// carries 20 float32 values of one stream of the default configuration,
// as ingest hands over a binary frame's, the streams in random order, no
// window filling, under a memory budget as the daemon always has one. An
// op is one batch. With 200,000 streams most of it is cache misses on the
// stream's state; with 1,000 streams, which fit the caches, what is left
// is the work of a batch. With ahead 0 each batch comes alone, as to a
// sink that takes no hints; with ahead 32, the streams of each 32 batches
// are told first with Prefetch, as the TCP frame decoder tells them (on
// at least prefetchMinStreams streams).
func BenchmarkAcceptThin(b *testing.B) {
	for _, streams := range []int{200000, 30000, 10000, 1000} {
		for _, ahead := range []int{0, 32} {
			b.Run(fmt.Sprintf("streams=%d/ahead=%d", streams, ahead), func(b *testing.B) { benchmarkAcceptThin(b, streams, ahead) })
		}
	}
}

func benchmarkAcceptThin(b *testing.B, streams, ahead int) {
	const batch = 20
	p := open(b, Config{MaxMemory: 8 << 30})
	ctx := context.Background()
	x, _ := synth.Generate(synth.Spec{Dist: synth.LogNormal, Seed: 1}, batch)
	vals, m, _ := feed.AppendFloat32(nil, x)
	names := make([]string, streams)
	for i := range names {
		names[i] = fmt.Sprintf("host%07d.cpu", i)
	}
	// Every stream exists, with its first values: the benchmark measures
	// the batches of streams already known.
	for _, name := range names {
		if _, err := p.Accept(ctx, &feed.Batch{Stream: name, Float32: vals, Moments: m}); err != nil {
			b.Fatal(err)
		}
	}
	order := rand.New(rand.NewPCG(1, 2)).Perm(streams)
	keys := make([][]byte, streams)
	for i, name := range names {
		keys[i] = []byte(name)
	}
	next := make([][]byte, 0, ahead)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if ahead > 0 && i%ahead == 0 {
			next = next[:0]
			for j := i; j < min(i+ahead, streams); j++ {
				next = append(next, keys[order[j]])
			}
			p.Prefetch(next)
		}
		fb := feed.Batch{Stream: names[order[i]], Float32: vals, Moments: m}
		if _, err := p.Accept(ctx, &fb); err != nil {
			b.Fatal(err)
		}
		if i++; i == streams {
			i = 0
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/batch, "ns/value")
}

// BenchmarkAcceptParallel measures a batch of 20 values on every core at
// once, as many connections bring them, each goroutine feeding its own
// 1,024 streams of the default configuration, which stay in the caches
// and fill no window in 10^6 batches a core: what it measures beyond
// BenchmarkAcceptThin's 1,000 streams is the cost of the locks and
// counters that every accept shares.
func BenchmarkAcceptParallel(b *testing.B) {
	const batch, perG = 20, 1024
	p := open(b, Config{MaxMemory: 8 << 30})
	ctx := context.Background()
	x, _ := synth.Generate(synth.Spec{Dist: synth.LogNormal, Seed: 1}, batch)
	vals, m, _ := feed.AppendFloat32(nil, x)
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		g := next.Add(1)
		names := make([]string, perG)
		for i := range names {
			names[i] = fmt.Sprintf("g%d.s%d", g, i)
		}
		for i := 0; pb.Next(); i = (i + 1) % perG {
			if _, err := p.Accept(ctx, &feed.Batch{Stream: names[i], Float32: vals, Moments: m}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
