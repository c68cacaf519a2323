// Command gpubench times the gpusort back-ends on batches of four windows
// of n float32 values each, n = 2^min … 2^max, against the CPU radix sort
// on all cores (gpusort.NewCPU(0)).
//
// For each back-end and size it prints, in milliseconds (median of -reps
// runs after one warm-up): the upload, sort, digest (quantile sample and
// lossy-counting runs, with the readback of the digests) and readback (of
// whole sorted windows) phases, timed on the wall clock after
// glFinish; and the end-to-end time of Sort (whole windows back) and of
// Digest (digests back), timed without the phase waits. Build with the gpu
// tag for the GPU back-ends:
//
//	go run -tags gpu ./gpusort/cmd/gpubench -min 18 -max 26
//
// The fragment back-ends (pbsn, bitonic) draw log²n passes; they stop at
// -fragmax (2^22 by default) because larger sizes take seconds.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"streamd/gpusort"
	"streamd/summary"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gpubench:", err)
		os.Exit(1)
	}
}

func run() error {
	backends := flag.String("backends", "cpu,compute,bitonic,pbsn", "comma-separated back-ends to time")
	minLog := flag.Int("min", 18, "smallest window, log2")
	maxLog := flag.Int("max", 26, "largest window, log2")
	fragMax := flag.Int("fragmax", 22, "largest window for pbsn and bitonic, log2")
	reps := flag.Int("reps", 5, "timed runs per size (median)")
	eps := flag.Float64("eps", 0.01, "ε of the digests' sample spacing")
	flag.Parse()

	ctx := context.Background()
	type entry struct {
		name string
		s    gpusort.Sorter
	}
	var sorters []entry
	for _, name := range strings.Split(*backends, ",") {
		newSorter, err := gpusort.Lookup(name)
		if err != nil {
			return err
		}
		s, err := newSorter()
		if err != nil {
			return fmt.Errorf("start %s: %w", name, err)
		}
		defer s.Close()
		if in, ok := s.(interface{ Info() string }); ok {
			fmt.Printf("%s: %s\n", name, in.Info())
		}
		sorters = append(sorters, entry{name, s})
	}
	fmt.Printf("cpu: %d cores (GOMAXPROCS %d), %s/%s\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
	fmt.Printf("four windows of n float32 each; ms, median of %d; Mkeys/s = 4n / digest end-to-end\n\n", *reps)
	fmt.Println("| back-end | n | upload | sort | digest | readback | Sort end-to-end | Digest end-to-end | Mkeys/s |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")

	r := rand.New(rand.NewPCG(1, 2))
	for lg := *minLog; lg <= *maxLog; lg++ {
		n := 1 << lg
		var src [gpusort.Channels][]float32
		for c := range src {
			src[c] = make([]float32, n)
			for i := range src[c] {
				// Normal values rounded to 0.1: many duplicates, as streams have.
				src[c][i] = float32(math.Round(r.NormFloat64()*1e4) / 10)
			}
		}
		var specs [gpusort.Channels]summary.WindowSpec
		for c := range specs {
			specs[c] = summary.WindowSpec{
				Spacing:   summary.SampleSpacing(*eps, n),
				Threshold: int64(*eps * float64(n) / 10),
				Known:     []float64{-100, 0, 0.5, 12.3},
			}
		}
		var b gpusort.Batch
		for c := range b.F32 {
			b.F32[c] = make([]float32, n)
		}
		fill := func() {
			for c := range b.F32 {
				copy(b.F32[c], src[c])
			}
		}
		for _, e := range sorters {
			if (e.name == "pbsn" || e.name == "bitonic") && lg > *fragMax {
				continue
			}
			prof, _ := e.s.(gpusort.Profiler)
			dig, _ := e.s.(gpusort.Digester)
			var out [gpusort.Channels]summary.Digest
			var phases []gpusort.Phases
			var sortT, digT []time.Duration
			for rep := range *reps + 1 {
				// Phases, with glFinish between them.
				if prof != nil {
					prof.SetProfile(true)
					fill()
					if err := dig.Digest(ctx, &b, &specs, &out); err != nil {
						return fmt.Errorf("%s n=%d: %w", e.name, n, err)
					}
					p := prof.LastPhases()
					p.Digest += p.Readback // GPU digest and its small readback
					fill()
					if err := e.s.Sort(ctx, &b); err != nil {
						return fmt.Errorf("%s n=%d: %w", e.name, n, err)
					}
					p.Readback, p.Upload = prof.LastPhases().Readback, prof.LastPhases().Upload
					if rep > 0 {
						phases = append(phases, p)
					}
					prof.SetProfile(false)
				}
				fill()
				t0 := time.Now()
				if err := e.s.Sort(ctx, &b); err != nil {
					return fmt.Errorf("%s n=%d: %w", e.name, n, err)
				}
				t1 := time.Now()
				if !slices.IsSorted(b.F32[0]) {
					return fmt.Errorf("%s n=%d: not sorted", e.name, n)
				}
				fill()
				t2 := time.Now()
				if dig != nil {
					if err := dig.Digest(ctx, &b, &specs, &out); err != nil {
						return fmt.Errorf("%s n=%d: %w", e.name, n, err)
					}
				}
				t3 := time.Now()
				if rep > 0 {
					sortT = append(sortT, t1.Sub(t0))
					digT = append(digT, t3.Sub(t2))
				}
			}
			var up, so, di, rb string = "", "", "", ""
			if len(phases) > 0 {
				up = ms(median(phases, func(p gpusort.Phases) time.Duration { return p.Upload }))
				so = ms(median(phases, func(p gpusort.Phases) time.Duration { return p.Sort }))
				di = ms(median(phases, func(p gpusort.Phases) time.Duration { return p.Digest }))
				rb = ms(median(phases, func(p gpusort.Phases) time.Duration { return p.Readback }))
			}
			dm := median(digT, func(d time.Duration) time.Duration { return d })
			fmt.Printf("| %s | 2^%d | %s | %s | %s | %s | %s | %s | %.0f |\n", e.name, lg, up, so, di, rb,
				ms(median(sortT, func(d time.Duration) time.Duration { return d })), ms(dm),
				4*float64(n)/dm.Seconds()/1e6)
		}
	}
	return nil
}

func median[T any](xs []T, f func(T) time.Duration) time.Duration {
	d := make([]time.Duration, len(xs))
	for i, x := range xs {
		d[i] = f(x)
	}
	slices.Sort(d)
	return d[len(d)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", d.Seconds()*1e3) }
