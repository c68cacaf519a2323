package pipeline

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"streamd/feed"
	"streamd/summary"
	"streamd/synth"
)

// BenchmarkManyStreams measures many thin streams: small windows from
// many streams at once, where a GPU sorter must sort many windows per
// submission to keep up. GOMAXPROCS producers spread float32 values over
// the streams, each producer its own share of them, one stream after the
// other, in batches of 1024 values (as decoded binary frames, moments
// measured ahead). Every stream has windows of W values and a sliding
// window of W, so that memory stays small with many streams. One op is
// one window for every stream (streams × W values); the clock stops when
// all of them are summarised. The streams are created and filled once
// before the clock starts. It reports Mvalues/s and, for a sorter that
// counts them (compute), the windows per GL submission.
//
// The environment sets the size: STREAMD_BENCH_STREAMS (default 100000),
// STREAMD_BENCH_W (default 4096), STREAMD_BENCH_EPSILON (default 0.01),
// STREAMD_BENCH_WORKERS (Config.Workers, default the pipeline's),
// STREAMD_BENCH_QUEUE (Config.Queue, default the pipeline's), and
// STREAMD_BENCH_SORTER the sorter (benchSorter). For example, from a test
// binary built with go test -c -tags gpu ./pipeline:
//
//	STREAMD_BENCH_SORTER=compute ./pipeline.test -test.run '^$' \
//		-test.bench ManyStreams -test.benchtime 5x -test.cpu 8,16
//
// -test.cpu sets GOMAXPROCS only: the GL thread's driver calls and the
// runtime's own threads may still run on other cores. To give the
// benchmark N cores and no more, pin it as well (taskset -c 0-7 with
// -test.cpu 8); the compute sorter gains from the cores it is not given
// more than the cpu sorter does.
func BenchmarkManyStreams(b *testing.B) {
	streams := benchEnvInt(b, "STREAMD_BENCH_STREAMS", 100000)
	w := benchEnvInt(b, "STREAMD_BENCH_W", 4096)
	workers := benchEnvInt(b, "STREAMD_BENCH_WORKERS", 0)
	queue := benchEnvInt(b, "STREAMD_BENCH_QUEUE", 0)
	eps := 0.01
	if s := os.Getenv("STREAMD_BENCH_EPSILON"); s != "" {
		var err error
		if eps, err = strconv.ParseFloat(s, 64); err != nil {
			b.Fatalf("STREAMD_BENCH_EPSILON: %v", err)
		}
	}
	const batch = 1024
	if w%batch != 0 {
		b.Fatalf("STREAMD_BENCH_W=%d: want a multiple of %d", w, batch)
	}
	vals, err := synth.Generate(synth.Spec{Dist: synth.LogNormal, Seed: 1}, 256*batch)
	if err != nil {
		b.Fatal(err)
	}
	batches := make([]feed.Batch, 256)
	for i := range batches {
		f := make([]float32, batch)
		for j := range f {
			f[j] = float32(vals[i*batch+j])
		}
		batches[i] = feed.Batch{Float32: f, Moments: feed.Measure(f)}
	}
	names := make([]string, streams)
	for i := range names {
		names[i] = fmt.Sprintf("thin.%d", i)
	}
	sorter := benchSorter(b)
	p := open(b, Config{
		Sorter:     sorter,
		Workers:    workers,
		Queue:      queue,
		MaxStreams: streams,
		Defaults:   summary.Config{Epsilon: eps, WindowSize: w, SlidingWindow: int64(w)},
	})
	ctx := context.Background()
	windows := int64(0)
	round := func() {
		producers := runtime.GOMAXPROCS(0)
		var wg sync.WaitGroup
		for j := range producers {
			wg.Go(func() {
				for s := j; s < streams; s += producers {
					for k := range w / batch {
						bt := batches[(s*7+k)%len(batches)]
						bt.Stream = names[s]
						if _, err := p.Accept(ctx, &bt); err != nil {
							b.Error(err)
							return
						}
					}
				}
			})
		}
		wg.Wait()
		windows += int64(streams)
		for p.Counters().WindowsSorted < windows {
			time.Sleep(100 * time.Microsecond)
		}
	}
	round()
	subs0, wins0, counted := submissions(sorter)
	b.SetBytes(int64(streams) * int64(w) * 4)
	// A plain loop over b.N, not b.Loop: GOMAXPROCS follows -cpu only in
	// the calls that run b.N iterations.
	b.ResetTimer()
	for range b.N {
		round()
	}
	b.StopTimer()
	if e := p.Counters().SortErrors; e > 0 {
		b.Fatalf("the sorter failed on %d batches (digested on the CPU instead)", e)
	}
	b.ReportMetric(float64(streams)*float64(w)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mvalues/s")
	if subs, wins, _ := submissions(sorter); counted && subs > subs0 {
		b.ReportMetric(float64(wins-wins0)/float64(subs-subs0), "windows/submission")
	}
}

// benchEnvInt returns the environment variable name as an int, or def if
// it is not set.
func benchEnvInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		b.Fatalf("%s=%q: want a number ≥ 0", name, s)
	}
	return n
}
