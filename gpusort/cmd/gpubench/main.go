// Command gpubench times the gpusort back-ends on batches of four windows
// of n float32 values each, n = 2^min … 2^max, against the CPU radix sort
// on all cores (gpusort.NewCPU(0)), and checks every result against the
// CPU's: each Sort's windows bit for bit, each Digest's digests exactly. A
// mismatch stops it with exit status 1.
//
// Two tables come out. The first is one batch at a time (median of -reps
// runs after one warm-up, in milliseconds): the upload, sort, digest
// (quantile sample and lossy-counting runs, with the readback of the
// digests) and readback (of whole sorted windows) phases, timed on the
// wall clock after glFinish; the end-to-end time of Sort (whole windows
// back) and of Digest (digests back), timed without the phase waits, with
// the windows in ordinary memory (the host copies them into staging memory
// first) and, for back-ends that lend staging memory (gpusort.Stager), with
// the windows filled in place there. The second is a stream: -workers
// goroutines each digest the same batch over and over, -stream batches in
// all, so that the GPU back-ends have batches in flight in both of their
// slots; it reports keys per second, from ordinary and from staging
// memory.
//
// Build with the gpu tag for the GPU back-ends:
//
//	go build -tags gpu -o .gpubin/gpubench ./gpusort/cmd/gpubench
//	.gpubin/gpubench -min 16 -max 24
//
// The measured choice ("compute") calibrates each size before it is timed
// and prints its choices at the end. The fragment back-ends (pbsn,
// bitonic) draw log²n passes; they stop at -fragmax because larger sizes
// take seconds.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"streamd/gpusort"
	"streamd/gpusort/registry"
	"streamd/summary"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gpubench:", err)
		os.Exit(1)
	}
}

type config struct {
	backends []string
	minLog   int
	maxLog   int
	fragMax  int
	reps     int
	eps      float64
	workers  int
	stream   int
}

func run() error {
	var cfg config
	backends := flag.String("backends", "cpu,compute-radix,compute-bitonic,compute", "comma-separated back-ends to time (also pbsn, bitonic, auto)")
	flag.IntVar(&cfg.minLog, "min", 16, "smallest window, log2")
	flag.IntVar(&cfg.maxLog, "max", 24, "largest window, log2")
	flag.IntVar(&cfg.fragMax, "fragmax", 20, "largest window for pbsn and bitonic, log2")
	flag.IntVar(&cfg.reps, "reps", 5, "timed runs per size (median)")
	flag.Float64Var(&cfg.eps, "eps", 0.01, "ε of the digests' sample spacing")
	flag.IntVar(&cfg.workers, "workers", 2, "goroutines digesting at once in the stream table")
	flag.IntVar(&cfg.stream, "stream", 16, "batches per back-end and size in the stream table (0: no stream table)")
	flag.Parse()
	cfg.backends = strings.Split(*backends, ",")
	if cfg.minLog < 1 || cfg.maxLog < cfg.minLog || cfg.reps < 1 || cfg.workers < 1 {
		return errors.New("bad flags: want 1 ≤ -min ≤ -max, -reps ≥ 1, -workers ≥ 1")
	}

	var sorters []*backend
	for _, name := range cfg.backends {
		b, err := open(name, cfg)
		if err != nil {
			return err
		}
		defer b.s.Close()
		sorters = append(sorters, b)
	}
	fmt.Printf("cpu: %d cores (GOMAXPROCS %d), %s/%s\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
	fmt.Printf("four windows of n float32 each (4n keys); every result checked against the CPU's\n\n")

	var streamRows []string
	for lg := cfg.minLog; lg <= cfg.maxLog; lg++ {
		w := newWorkload(lg, cfg.eps)
		if lg == cfg.minLog {
			fmt.Printf("one batch at a time: ms, median of %d; Mkeys/s = 4n / Digest end to end\n\n", cfg.reps)
			fmt.Println("| back-end | n | upload | sort | digest | readback | Sort end to end | Digest end to end | Digest, staged | Mkeys/s | Mkeys/s staged |")
			fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
		}
		for _, b := range sorters {
			if b.fragment && lg > cfg.fragMax {
				continue
			}
			if err := b.calibrate(w); err != nil {
				return err
			}
			row, err := b.latency(w, cfg.reps)
			if err != nil {
				return err
			}
			fmt.Println(row)
			if cfg.stream > 0 {
				row, err := b.throughput(w, cfg.workers, cfg.stream)
				if err != nil {
					return err
				}
				streamRows = append(streamRows, row)
			}
		}
	}
	if len(streamRows) > 0 {
		fmt.Printf("\nstream: %d goroutines digest %d batches in all; Mkeys/s = keys digested / wall time\n\n", cfg.workers, cfg.stream)
		fmt.Println("| back-end | n | from memory, Mkeys/s | staged, Mkeys/s |")
		fmt.Println("|---|---|---|---|")
		for _, r := range streamRows {
			fmt.Println(r)
		}
	}
	for _, b := range sorters {
		printChoices(b)
	}
	return nil
}

// backend is one back-end under test.
type backend struct {
	name     string
	s        gpusort.Sorter
	dig      gpusort.Digester
	prof     gpusort.Profiler
	stager   gpusort.Stager
	fragment bool
	// ownStaging: the back-end was given staging memory for this run
	// (compute), so running out of it is an error; others (auto) may
	// have none or too little, and their staged columns stay empty.
	ownStaging bool
}

// open starts the named back-end.
func open(name string, cfg config) (*backend, error) {
	b := &backend{name: name, fragment: name == "pbsn" || name == "bitonic"}
	s, err := openCompute(name, cfg)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	b.ownStaging = s != nil // a compute back-end, given staging memory for this run
	if s == nil {
		newSorter, err := registry.Lookup(name)
		if err != nil {
			return nil, err
		}
		if s, err = newSorter(); err != nil {
			return nil, fmt.Errorf("start %s: %w", name, err)
		}
	}
	b.s = s
	if in, ok := b.s.(interface{ Info() string }); ok {
		fmt.Printf("%s: %s\n", name, in.Info())
	}
	var ok bool
	if b.dig, ok = b.s.(gpusort.Digester); !ok {
		b.s.Close()
		return nil, fmt.Errorf("%s is not a Digester", name)
	}
	b.prof, _ = b.s.(gpusort.Profiler)
	b.stager, _ = b.s.(gpusort.Stager)
	return b, nil
}

// workload is one size: the windows' values, the specs, and the CPU's
// sorted windows and digests to check results against.
type workload struct {
	lg     int
	n      int
	src    [gpusort.Channels][]float32
	sorted [gpusort.Channels][]float32
	specs  [gpusort.Channels]summary.WindowSpec
	want   [gpusort.Channels]summary.Digest
}

func newWorkload(lg int, eps float64) *workload {
	n := 1 << lg
	w := &workload{lg: lg, n: n}
	r := rand.New(rand.NewPCG(1, uint64(lg)))
	for c := range w.src {
		w.src[c] = make([]float32, n)
		for i := range w.src[c] {
			// Normal values rounded to 0.1: many duplicates, as streams have.
			w.src[c][i] = float32(math.Round(r.NormFloat64()*1e4) / 10)
		}
		w.specs[c] = summary.WindowSpec{
			Spacing:   summary.SampleSpacing(eps, n),
			Threshold: int64(eps * float64(n) / 10),
			Known:     []float64{-100, 0, 0.5, 12.3},
		}
		w.sorted[c] = slices.Clone(w.src[c])
		gpusort.SortFloat32(w.sorted[c], nil)
		summary.DigestSorted(w.sorted[c], w.specs[c], &w.want[c])
	}
	return w
}

// batch returns a batch of w's windows, in staging memory lent by the
// back-end when staged, else in ordinary memory; nil if the staging memory
// runs out.
func (b *backend) batch(w *workload, staged bool) *gpusort.Quad {
	var batch gpusort.Quad
	for c := range batch.F32 {
		if !staged {
			batch.F32[c] = make([]float32, w.n)
			continue
		}
		if batch.F32[c] = b.stager.StageF32(w.n); batch.F32[c] == nil {
			b.unstage(&batch)
			return nil
		}
	}
	w.refill(&batch)
	return &batch
}

func (w *workload) refill(b *gpusort.Quad) {
	for c := range b.F32 {
		copy(b.F32[c], w.src[c])
	}
}

// checkSorted compares b's windows with the CPU's, bit for bit.
func (w *workload) checkSorted(name string, b *gpusort.Quad) error {
	for c := range b.F32 {
		for i, v := range b.F32[c] {
			if math.Float32bits(v) != math.Float32bits(w.sorted[c][i]) {
				return fmt.Errorf("MISMATCH: %s n=2^%d: Sort window %d [%d] = %v, the CPU has %v", name, w.lg, c, i, v, w.sorted[c][i])
			}
		}
	}
	return nil
}

// checkDigests compares digests with the CPU's, exactly.
func (w *workload) checkDigests(name string, out *[gpusort.Channels]summary.Digest) error {
	for c := range out {
		if d := summary.DiffDigests(&out[c], &w.want[c]); d != "" {
			return fmt.Errorf("MISMATCH: %s n=2^%d: Digest of window %d differs from the CPU's: %s", name, w.lg, c, d)
		}
	}
	return nil
}

// calibrate makes a measured back-end's choice for the workload's size
// before anything is timed.
func (b *backend) calibrate(w *workload) error {
	c, ok := b.s.(gpusort.Calibrator)
	if !ok {
		return nil
	}
	if err := c.Calibrate(context.Background(), w.n, false); err != nil {
		return fmt.Errorf("%s: %w", b.name, err)
	}
	return nil
}

// unstage hands back a staged batch's windows.
func (b *backend) unstage(batch *gpusort.Quad) {
	if b.stager != nil && batch != nil {
		for _, x := range batch.F32 {
			b.stager.UnstageF32(x)
		}
	}
}

// latency times one batch at a time and returns its table row.
func (b *backend) latency(w *workload, reps int) (string, error) {
	ctx := context.Background()
	mem := b.batch(w, false)
	var staged *gpusort.Quad
	if b.stager != nil {
		staged = b.batch(w, true)
		if staged == nil && b.ownStaging {
			return "", fmt.Errorf("%s n=2^%d: no staging memory for a batch", b.name, w.lg)
		}
		defer b.unstage(staged)
	}
	var out [gpusort.Channels]summary.Digest
	digest := func(batch *gpusort.Quad) (time.Duration, error) {
		start := time.Now()
		if err := b.dig.Digest(ctx, batch, &w.specs, &out); err != nil {
			return 0, fmt.Errorf("%s n=2^%d: %w", b.name, w.lg, err)
		}
		d := time.Since(start)
		if err := w.checkDigests(b.name, &out); err != nil {
			return 0, err
		}
		return d, nil
	}
	sort := func() (time.Duration, error) {
		w.refill(mem)
		start := time.Now()
		if err := b.s.Sort(ctx, mem); err != nil {
			return 0, fmt.Errorf("%s n=2^%d: %w", b.name, w.lg, err)
		}
		d := time.Since(start)
		return d, w.checkSorted(b.name, mem)
	}

	var phases []gpusort.Phases
	var sortT, digT, stagedT []time.Duration
	for rep := range reps + 1 {
		if b.prof != nil {
			// Phases, with glFinish between them.
			b.prof.SetProfile(true)
			if _, err := digest(mem); err != nil {
				return "", err
			}
			p := b.prof.LastPhases()
			p.Digest += p.Readback // the GPU digest and its small readback
			if _, err := sort(); err != nil {
				return "", err
			}
			p.Readback, p.Upload = b.prof.LastPhases().Readback, b.prof.LastPhases().Upload
			b.prof.SetProfile(false)
			if rep > 0 {
				phases = append(phases, p)
			}
		}
		st, err := sort()
		if err != nil {
			return "", err
		}
		w.refill(mem) // Sort left it sorted
		dt, err := digest(mem)
		if err != nil {
			return "", err
		}
		var gt time.Duration
		if staged != nil {
			if gt, err = digest(staged); err != nil {
				return "", err
			}
		}
		if rep > 0 {
			sortT, digT, stagedT = append(sortT, st), append(digT, dt), append(stagedT, gt)
		}
	}
	cols := make([]string, 4)
	if len(phases) > 0 {
		for i, f := range []func(gpusort.Phases) time.Duration{
			func(p gpusort.Phases) time.Duration { return p.Upload },
			func(p gpusort.Phases) time.Duration { return p.Sort },
			func(p gpusort.Phases) time.Duration { return p.Digest },
			func(p gpusort.Phases) time.Duration { return p.Readback },
		} {
			cols[i] = ms(median(phases, f))
		}
	}
	id := func(d time.Duration) time.Duration { return d }
	dm := median(digT, id)
	stagedMs, stagedRate := "", ""
	if staged != nil {
		gm := median(stagedT, id)
		stagedMs, stagedRate = ms(gm), rate(4*w.n, gm)
	}
	return fmt.Sprintf("| %s | 2^%d | %s | %s | %s | %s | %s | %s | %s | %s | %s |", b.name, w.lg, cols[0], cols[1], cols[2], cols[3],
		ms(median(sortT, id)), ms(dm), stagedMs, rate(4*w.n, dm), stagedRate), nil
}

// throughput digests a stream of batches from several goroutines, first
// from ordinary memory, then staged, and returns its table row.
func (b *backend) throughput(w *workload, workers, total int) (string, error) {
	cols := []string{"", ""}
	for mode := range 2 {
		if mode == 1 && b.stager == nil {
			continue
		}
		batches := make([]*gpusort.Quad, workers)
		for i := range batches {
			batches[i] = b.batch(w, mode == 1)
		}
		if slices.Contains(batches, nil) {
			for _, batch := range batches {
				b.unstage(batch)
			}
			if b.ownStaging {
				return "", fmt.Errorf("%s n=2^%d: no staging memory for %d batches", b.name, w.lg, workers)
			}
			continue
		}
		var wg sync.WaitGroup
		errs := make([]error, workers)
		outs := make([][gpusort.Channels]summary.Digest, workers)
		start := time.Now()
		for i := range workers {
			wg.Go(func() {
				for k := i; k < total; k += workers {
					if err := b.dig.Digest(context.Background(), batches[i], &w.specs, &outs[i]); err != nil {
						errs[i] = fmt.Errorf("%s n=2^%d: %w", b.name, w.lg, err)
						return
					}
				}
			})
		}
		wg.Wait()
		d := time.Since(start)
		for _, batch := range batches {
			b.unstage(batch)
		}
		if err := errors.Join(errs...); err != nil {
			return "", err
		}
		// Checked after the clock stops: each goroutine's last digest.
		for i := range outs {
			if err := w.checkDigests(b.name+" stream", &outs[i]); err != nil {
				return "", err
			}
		}
		cols[mode] = rate(total*4*w.n, d)
	}
	return fmt.Sprintf("| %s | 2^%d | %s | %s |", b.name, w.lg, cols[0], cols[1]), nil
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

// rate returns keys per d in millions per second.
func rate(keys int, d time.Duration) string {
	return mega(float64(keys) / max(d, time.Nanosecond).Seconds())
}

// mega formats x in millions: whole ones, or two decimals below 10.
func mega(x float64) string {
	if x < 1e7 {
		return fmt.Sprintf("%.2f", x/1e6)
	}
	return fmt.Sprintf("%.0f", x/1e6)
}
