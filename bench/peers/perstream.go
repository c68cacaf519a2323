package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/bits"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
	"weak"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"streamd/feed"
	"streamd/gpusort"
	"streamd/pipeline"
	"streamd/summary"
	"streamd/synth"
)

// The bytes-per-stream mode measures what one more stream costs in memory
// with each sketch: it makes M instances, feeds each the same n values,
// and divides the growth of the live heap (runtime.GC, then
// runtime.MemStats.HeapAlloc, before and after) by M. streamd is measured
// as the daemon holds streams: one pipeline.Pipeline with the CPU sorter
// and its default stream configuration, M streams fed through Accept, the
// heap read once every full window has been sorted and summarised.

// perStreamOptions are the bytes-per-stream mode's flags.
type perStreamOptions struct {
	Counts  []int // values fed to each instance
	Streams []int // instances made, one figure per count
	Seed    uint64
	DDAlpha float64
	KLLK    int
	TDigest float64
}

// frameValues is the most values one Accept carries: loadgen's default
// batch.
const frameValues = 8192

// perStream is what one instance of a contender costs, fed n values.
type perStream struct {
	Heap       float64 // growth of the live heap per instance, bytes
	Serialized int     // the library's own encoding of one instance; 0 when it has none
}

// A memContender is one kind of per-stream state the mode measures.
type memContender struct {
	name  string // with its parameters
	keeps string // what it answers, and how well
	// estimate marks Serialized as an estimate (no serializer).
	estimate bool
	measure  func(ctx context.Context, m int, x []float64) (perStream, error)
}

// memResult is one contender at every count.
type memResult struct {
	c   memContender
	per []perStream // one per count
}

// memContenders returns the contenders of the mode.
func memContenders(o perStreamOptions) []memContender {
	d := summary.Config{}.WithDefaults()
	sketch := func(newSketch func() (quantileSketch, error)) func(context.Context, int, []float64) (perStream, error) {
		return func(_ context.Context, m int, x []float64) (perStream, error) {
			return measureSketches(m, x, newSketch)
		}
	}
	kllErr := 0.0
	if k, err := kllContender(o.KLLK).make(); err == nil {
		kllErr = k.(*kllSketch).s.GetNormalizedRankError(false)
	}
	streamdKeeps := fmt.Sprintf("quantiles ±εN, counts and heavy hitters ±εN (deterministic, bounds reported, all history); last %s values (last-n, time windows); count, sum, min, max", fmtPow2(int(d.SlidingWindow)))
	return []memContender{
		{
			name:  fmt.Sprintf("streamd (ε=%g, W=%s, N=%s), float32 frames", d.Epsilon, fmtPow2(d.WindowSize), fmtPow2(int(d.SlidingWindow))),
			keeps: streamdKeeps,
			measure: func(ctx context.Context, m int, x []float64) (perStream, error) {
				return measureStreamd(ctx, m, x, streamdFloat32)
			},
		},
		{
			name:  "streamd, float64 values (line protocol, gRPC Push)",
			keeps: "the same, stored as float32",
			measure: func(ctx context.Context, m int, x []float64) (perStream, error) {
				return measureStreamd(ctx, m, x, streamdFloat64)
			},
		},
		{
			name:  "streamd, float64 stream",
			keeps: "the same, stored as float64",
			measure: func(ctx context.Context, m int, x []float64) (perStream, error) {
				return measureStreamd(ctx, m, x, streamdWide)
			},
		},
		{
			name:    fmt.Sprintf("DDSketch α=%g", o.DDAlpha),
			keeps:   fmt.Sprintf("quantiles ±%g%% of the value (all history)", 100*o.DDAlpha),
			measure: sketch(ddContender(o.DDAlpha).make),
		},
		{
			name:    fmt.Sprintf("KLL k=%d", o.KLLK),
			keeps:   fmt.Sprintf("quantiles and ranks ±%.2g%%·N with 99%% probability (randomized, all history)", 100*kllErr),
			measure: sketch(kllContender(o.KLLK).make),
		},
		{
			name:     fmt.Sprintf("t-digest δ=%g", o.TDigest),
			keeps:    "quantiles, no stated bound (all history)",
			estimate: true,
			measure:  sketch(tdigestContender(o.TDigest).make),
		},
		{
			name:  "Prometheus summary {0.5:0.05, 0.9:0.01, 0.99:0.001}",
			keeps: "p50 ±5%, p90 ±1%, p99 ±0.1% of rank over the last 10 min; count and sum (all history)",
			measure: func(_ context.Context, m int, x []float64) (perStream, error) {
				return measureSketches(m, x, newPromSummary)
			},
		},
	}
}

// liveHeap returns the bytes of live heap: after runtime.GC, which sweeps
// everything before it returns, HeapAlloc counts only reachable objects.
// Two collections empty the sync.Pools too (their victim caches).
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// measureSketches makes m sketches, feeds each x, and returns their heap
// per sketch and the encoding of one.
func measureSketches(m int, x []float64, newSketch func() (quantileSketch, error)) (perStream, error) {
	held := make([]quantileSketch, m) // made before the heap is read: not counted
	before := liveHeap()
	for i := range held {
		s, err := newSketch()
		if err != nil {
			return perStream{}, err
		}
		if err := s.ingest(x); err != nil {
			return perStream{}, err
		}
		held[i] = s
	}
	after := liveHeap()
	b, err := held[0].bytes()
	if err != nil {
		return perStream{}, fmt.Errorf("encode: %w", err)
	}
	runtime.KeepAlive(held)
	return perStream{Heap: float64(after-before) / float64(m), Serialized: b}, nil
}

// How the streamd streams are fed.
type streamdFeed int

const (
	streamdFloat32 streamdFeed = iota // float32 frames (feed.Batch.Float32) into a default stream
	streamdFloat64                    // float64 values (feed.Batch.Values) into a default stream
	streamdWide                       // float64 values into a stream created with Float64
)

// measureStreamd opens a pipeline with the CPU sorter and the default
// stream configuration, creates m streams and feeds each x through Accept
// in frames of frameValues, waits until every full window is summarised,
// and returns the heap per stream and the snapshot bytes per stream. The
// pipeline is warmed up first (a few streams of full windows, sorted and
// deleted), so that the sorter's buffers are not counted, and keeps a
// baseline stream beside the m, counted before and after alike.
func measureStreamd(ctx context.Context, m int, x []float64, how streamdFeed) (perStream, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	p, err := pipeline.New(pipeline.Config{
		Sorter: gpusort.NewCPU(0),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return perStream{}, err
	}
	if err := p.Open(ctx); err != nil {
		return perStream{}, err
	}
	defer p.Close(context.WithoutCancel(ctx))
	cfg := p.Defaults()
	cfg.Float64 = how == streamdWide
	w := int64(cfg.WindowSize)

	// feedStream feeds the stream name x and its float32 copy x32 as a
	// producer does, in frames of frameValues.
	feedStream := func(name string, x []float64, x32 []float32) error {
		for i := 0; i < len(x); i += frameValues {
			j := min(i+frameValues, len(x))
			b := &feed.Batch{Stream: name}
			if how == streamdFloat32 {
				b.Float32, b.Moments = x32[i:j], feed.Measure(x32[i:j])
			} else {
				b.Values = x[i:j]
			}
			if _, err := p.Accept(ctx, b); err != nil {
				return fmt.Errorf("accept %s: %w", name, err)
			}
		}
		return nil
	}
	create := func(name string) error {
		if how != streamdWide {
			return nil // created on first data, as ingest does
		}
		_, err := p.Create(name, cfg)
		return err
	}

	// Warm up: full windows through the sort workers, in streams then
	// deleted.
	warm := make([]float64, 8*w)
	for i := range warm {
		warm[i] = x[i%len(x)]
	}
	warm32 := float32s(warm)
	var gone []weak.Pointer[pipeline.Stream]
	for i := range 4 {
		name := fmt.Sprint("warm-up-", i)
		if err := create(name); err != nil {
			return perStream{}, err
		}
		if err := feedStream(name, warm, warm32); err != nil {
			return perStream{}, err
		}
		s, err := p.Stream(name)
		if err != nil {
			return perStream{}, err
		}
		gone = append(gone, weak.Make(s))
	}
	sorted := 4 * int64(len(warm))
	if err := waitSorted(ctx, p, sorted); err != nil {
		return perStream{}, err
	}
	for i := range 4 {
		if err := p.Delete(fmt.Sprint("warm-up-", i)); err != nil {
			return perStream{}, err
		}
	}
	// A deleted stream may stay reachable until more windows have gone
	// through the sorter after its own: a stream that stays, counted
	// before and after alike, sends them until every warm-up stream is
	// gone from the heap.
	if err := create("baseline"); err != nil {
		return perStream{}, err
	}
	for try := 0; ; try++ {
		if err := feedStream("baseline", warm[:4*w], warm32[:4*w]); err != nil {
			return perStream{}, err
		}
		sorted += 4 * w
		if err := waitSorted(ctx, p, sorted); err != nil {
			return perStream{}, err
		}
		liveHeap()
		if !slices.ContainsFunc(gone, func(s weak.Pointer[pipeline.Stream]) bool { return s.Value() != nil }) {
			break
		}
		if try == 10 {
			return perStream{}, errors.New("deleted warm-up streams still reachable")
		}
	}
	empty, err := p.SnapshotTo(io.Discard)
	if err != nil {
		return perStream{}, fmt.Errorf("snapshot: %w", err)
	}

	x32 := float32s(x)
	before := liveHeap()
	for i := range m {
		// The name is made here: the stream keeps it, and it counts.
		name := fmt.Sprintf("stream-%07d", i)
		if err := create(name); err != nil {
			return perStream{}, err
		}
		if err := feedStream(name, x, x32); err != nil {
			return perStream{}, err
		}
	}
	sorted += int64(m) * (int64(len(x)) / w * w)
	if err := waitSorted(ctx, p, sorted); err != nil {
		return perStream{}, err
	}
	after := liveHeap()
	runtime.KeepAlive(x32)
	if n := p.Len(); n != m+1 {
		return perStream{}, fmt.Errorf("%d streams, want %d and the baseline", n, m)
	}
	s, err := p.Stream(fmt.Sprintf("stream-%07d", m-1))
	if err != nil {
		return perStream{}, err
	}
	if st := s.Stats(); st.Count != int64(len(x)) || st.Pending != int64(len(x))%w {
		return perStream{}, fmt.Errorf("stream %s counts %d values, %d pending; want %d, %d", s.Name(), st.Count, st.Pending, len(x), int64(len(x))%w)
	}
	all, err := p.SnapshotTo(io.Discard)
	if err != nil {
		return perStream{}, fmt.Errorf("snapshot: %w", err)
	}
	return perStream{Heap: float64(after-before) / float64(m), Serialized: int((all - empty) / int64(m))}, nil
}

// float32s returns x rounded to float32.
func float32s(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}

// waitSorted polls until the pipeline has sorted and summarised want
// values in all, or ctx ends.
func waitSorted(ctx context.Context, p *pipeline.Pipeline, want int64) error {
	for {
		got := p.Counters().ValuesSorted
		if got >= want {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %d values sorted, %d so far: %w", want, got, ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
}

// promSummary is a Prometheus client_golang summary with the objectives
// users usually give it, and its default MaxAge (10 min) and AgeBuckets
// (5).
type promSummary struct{ s prometheus.Summary }

func newPromSummary() (quantileSketch, error) {
	return &promSummary{prometheus.NewSummary(prometheus.SummaryOpts{
		Name:       "values",
		Help:       "Values of one stream.",
		Objectives: map[float64]float64{0.5: 0.05, 0.9: 0.01, 0.99: 0.001},
	})}, nil
}

// ingest observes x, then collects the summary once, as a scrape does:
// that waits for the flushes Observe started and flushes the values it
// still buffers.
func (p *promSummary) ingest(x []float64) error {
	for _, v := range x {
		p.s.Observe(v)
	}
	var m dto.Metric
	return p.s.Write(&m)
}

// quantile answers φ only for the summary's objectives.
func (p *promSummary) quantile(phi float64) (float64, error) {
	var m dto.Metric
	if err := p.s.Write(&m); err != nil {
		return 0, err
	}
	for _, q := range m.GetSummary().GetQuantile() {
		if q.GetQuantile() == phi {
			return q.GetValue(), nil
		}
	}
	return 0, fmt.Errorf("prometheus summary: no objective %v", phi)
}

// bytes is 0: the summary has no encoding of its state (a scrape carries
// only its quantiles, count and sum).
func (p *promSummary) bytes() (int, error) { return 0, nil }

// perStreamReport is everything the mode measured.
type perStreamReport struct {
	opts    perStreamOptions
	started time.Time
	elapsed time.Duration
	results []memResult
}

// collectPerStream measures every contender at every count.
func collectPerStream(ctx context.Context, o perStreamOptions, logw io.Writer) (*perStreamReport, error) {
	if len(o.Counts) == 0 || len(o.Counts) != len(o.Streams) {
		return nil, fmt.Errorf("bytes per stream: %d counts and %d stream numbers, want as many of each", len(o.Counts), len(o.Streams))
	}
	r := &perStreamReport{opts: o, started: time.Now()}
	values := map[int][]float64{}
	for _, n := range o.Counts {
		x, err := synth.Generate(synth.Spec{Dist: synth.LogNormal, Order: synth.Random, Seed: o.Seed}, n)
		if err != nil {
			return nil, fmt.Errorf("generate %d values: %w", n, err)
		}
		values[n] = round32(x)
	}
	for _, c := range memContenders(o) {
		res := memResult{c: c}
		for i, n := range o.Counts {
			t0 := time.Now()
			ps, err := c.measure(ctx, o.Streams[i], values[n])
			if err != nil {
				return nil, fmt.Errorf("%s, %d values: %w", c.name, n, err)
			}
			res.per = append(res.per, ps)
			fmt.Fprintf(logw, "%-56s n=%-8d M=%-6d %s/stream %v\n", c.name, n, o.Streams[i], fmtBytes(int(ps.Heap)), time.Since(t0).Round(time.Millisecond))
		}
		r.results = append(r.results, res)
	}
	r.elapsed = time.Since(r.started)
	return r, nil
}

// fmtCount prints a count of values as a power of ten where it is one
// above 100.
func fmtCount(n int) string {
	e, m := 0, n
	for m >= 10 && m%10 == 0 {
		m /= 10
		e++
	}
	if m == 1 && e > 2 {
		return fmt.Sprintf("10^%d", e)
	}
	return itoa(n)
}

// fmtPow2 prints n as 2^k when it is a power of two above 1000.
func fmtPow2(n int) string {
	if n > 1000 && n&(n-1) == 0 {
		return fmt.Sprintf("2^%d", bits.TrailingZeros(uint(n)))
	}
	return itoa(n)
}

// writePerStream writes the mode's markdown section.
func writePerStream(w io.Writer, r *perStreamReport) error {
	bw := bufio.NewWriter(w)
	o := r.opts
	fmt.Fprintf(bw, "## Bytes per stream\n\n")
	fmt.Fprintf(bw, "Generated by `bench/peers -bytes-per-stream` (see bench/peers/README.md) on %s, in %s.\n\n", r.started.UTC().Format("2006-01-02"), r.elapsed.Round(time.Second))
	fmt.Fprintf(bw, "- Machine: %s, shared with other work.\n", machine())
	var counts, streams []string
	for i, n := range o.Counts {
		counts = append(counts, fmtCount(n))
		streams = append(streams, fmt.Sprintf("%d at %s", o.Streams[i], fmtCount(n)))
	}
	fmt.Fprintf(bw, "- Each contender makes M instances (%s values: M = %s), feeds each the same n values (lognormal, seed %d, rounded to float32), and divides the growth of the live heap by M: `runtime.GC` twice, then `runtime.MemStats.HeapAlloc`, before the first instance and after the last. That counts what the heap has allocated, buffers' capacity not yet written included, which the OS may not have made resident.\n", strings.Join(counts, ", "), strings.Join(streams, ", "), o.Seed)
	fmt.Fprintf(bw, "- **streamd** is the daemon's structure: one `pipeline.Pipeline` with the CPU sorter and the default stream configuration, warmed up first (its sorter's buffers are not counted), M streams created on first data and fed through `Accept` in frames of up to %d values, as the TCP frames deliver them (`feed.Batch.Float32` with its moments), or as float64 values (`feed.Batch.Values`: the line protocol, gRPC Push), or into streams created with `float64`; the heap is read once every full window is sorted and summarised. Serialized is the stream's share of the pipeline's snapshot (`SnapshotTo`), what a checkpoint writes.\n", frameValues)
	fmt.Fprintf(bw, "- The others: `DDSketch.Encode`, KLL `ToSlice`; influxdata/tdigest has no serializer (estimate of 16 bytes per centroid, marked *); the Prometheus summary has none of its state (a scrape carries its 3 quantiles, count and sum). The Prometheus summary is collected once after its values (`Write`, as a scrape does), which waits for the flushes `Observe` started; it is `prometheus.NewSummary`, one per stream, not registered.\n\n")
	var vr [][]string
	for _, v := range versions("github.com/prometheus/client_golang") {
		vr = append(vr, []string{v[0], v[1]})
	}
	table(bw, []string{"module", "version"}, vr)

	head := []string{"contender"}
	for _, n := range o.Counts {
		head = append(head, "n = "+fmtCount(n))
	}
	fmt.Fprintf(bw, "Live heap per stream:\n\n")
	var rows [][]string
	for _, res := range r.results {
		row := []string{res.c.name, res.c.keeps}
		for _, ps := range res.per {
			row = append(row, fmtBytes(int(ps.Heap)))
		}
		rows = append(rows, row)
	}
	fmt.Fprintf(bw, "| %s |\n|---|---|%s\n", strings.Join(append(head[:1:1], append([]string{"keeps"}, head[1:]...)...), " | "), strings.Repeat("---:|", len(head)-1))
	for _, row := range rows {
		fmt.Fprintf(bw, "| %s |\n", strings.Join(row, " | "))
	}
	fmt.Fprintln(bw)

	fmt.Fprintf(bw, "Serialized bytes per stream:\n\n")
	rows = nil
	for _, res := range r.results {
		row := []string{res.c.name}
		for _, ps := range res.per {
			switch {
			case ps.Serialized == 0:
				row = append(row, "—")
			case res.c.estimate:
				row = append(row, fmtBytes(ps.Serialized)+"*")
			default:
				row = append(row, fmtBytes(ps.Serialized))
			}
		}
		rows = append(rows, row)
	}
	table(bw, head, rows)
	return bw.Flush()
}

// runPerStream runs the bytes-per-stream mode and writes its section to
// out, or to stdout when out is empty.
func runPerStream(ctx context.Context, o perStreamOptions, out string, logw io.Writer) error {
	r, err := collectPerStream(ctx, o, logw)
	if err != nil {
		return err
	}
	if out == "" {
		return writePerStream(os.Stdout, r)
	}
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("bytes per stream: %w", err)
	}
	if err := writePerStream(f, r); err != nil {
		f.Close()
		return fmt.Errorf("bytes per stream: write %s: %w", out, err)
	}
	return f.Close()
}
