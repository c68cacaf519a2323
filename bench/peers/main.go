// Command peers compares streamd's summary pipeline with the quantile and
// heavy-hitter sketches users would otherwise reach for — DataDog's
// DDSketch, Apache DataSketches' KLL and frequent items, InfluxData's
// t-digest — and with an exact baseline, on synthetic and real streams. It
// writes markdown tables and a plot of rank error against memory. With
// -bytes-per-stream it measures instead the live heap and the serialized
// bytes per stream of each, and of a Prometheus client_golang summary,
// with many instances of each (perstream.go).
//
// It lives in its own module so that the peer libraries never enter
// streamd's go.mod.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"streamd/summary"
)

// options are the command's flags.
type options struct {
	N          int
	Reps       int
	Epsilon    float64
	Window     int
	DDAlpha    float64
	KLLK       int
	TDigest    float64
	Seed       uint64
	Data       string
	SweepN     int
	Out, Plot  string
	Synthetic  bool
	Household  bool
	SweepNames []string
}

func main() {
	var o options
	flag.IntVar(&o.N, "n", 10_000_000, "values per synthetic stream")
	flag.IntVar(&o.Reps, "reps", 3, "timed runs per sketch and stream (the median is reported)")
	flag.Float64Var(&o.Epsilon, "eps", summary.DefaultEpsilon, "streamd's ε (and the frequent items sketch's a-priori ε)")
	flag.IntVar(&o.Window, "w", summary.DefaultWindowSize, "streamd's window size W")
	flag.Float64Var(&o.DDAlpha, "dd-alpha", 0.01, "DDSketch relative accuracy")
	flag.IntVar(&o.KLLK, "kll-k", 200, "KLL k")
	flag.Float64Var(&o.TDigest, "tdigest", 100, "t-digest compression")
	flag.Uint64Var(&o.Seed, "seed", 1, "seed of the synthetic streams")
	flag.StringVar(&o.Data, "data", "../../data/household_power_consumption.csv.gz", "household power CSV (empty: skip the real streams)")
	flag.IntVar(&o.SweepN, "sweep-n", 0, "values of the synthetic sweep stream (0: same as -n)")
	flag.StringVar(&o.Out, "out", "", "markdown output file (default stdout)")
	flag.StringVar(&o.Plot, "plot", "", "PNG plot of rank error against memory (default none)")
	perStream := flag.Bool("bytes-per-stream", false, "measure only the live heap and serialized bytes per stream of every contender (see -bps-counts), and write that section")
	bpsCounts := flag.String("bps-counts", "1,100,10000,1000000", "bytes per stream: values fed to each instance, comma-separated")
	bpsStreams := flag.String("bps-streams", "20000,20000,200,4", "bytes per stream: instances made at each count, comma-separated")
	sweepNames := flag.String("sweep", "lognormal/random,household/Global_active_power", "streams of the equal-memory sweep, comma-separated")
	flag.Parse()
	o.Synthetic, o.Household = true, o.Data != ""
	o.SweepNames = strings.Split(*sweepNames, ",")
	if o.SweepN == 0 {
		o.SweepN = o.N
	}
	if *perStream {
		po := perStreamOptions{Seed: o.Seed, DDAlpha: o.DDAlpha, KLLK: o.KLLK, TDigest: o.TDigest}
		var err error
		if po.Counts, err = parseInts(*bpsCounts); err != nil {
			log.Fatalf("-bps-counts: %v", err)
		}
		if po.Streams, err = parseInts(*bpsStreams); err != nil {
			log.Fatalf("-bps-streams: %v", err)
		}
		if err := runPerStream(context.Background(), po, o.Out, os.Stderr); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := run(o, os.Stderr); err != nil {
		log.Fatal(err)
	}
}

// report is everything one run measured.
type report struct {
	opts      options
	started   time.Time
	elapsed   time.Duration
	skipped   int // "?" fields of the CSV
	results   []result
	heavy     []hhResult
	sweep     []sweepPoint
	sweepSize map[string]int
}

func defaultContenders(o options) []contender {
	return []contender{
		streamdContender(o.Epsilon, o.Window),
		ddContender(o.DDAlpha),
		kllContender(o.KLLK),
		tdigestContender(o.TDigest),
		exactContender(),
	}
}

func sweepContenders(o options) []contender {
	var cs []contender
	for _, e := range []float64{0.05, 0.02, 0.01, 0.005, 0.002, 0.001, 0.0005, 0.0002} {
		cs = append(cs, streamdContender(e, o.Window))
	}
	for _, a := range []float64{0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001} {
		cs = append(cs, ddContender(a))
	}
	for _, k := range []int{25, 50, 100, 200, 400, 800, 1600, 3200} {
		cs = append(cs, kllContender(k))
	}
	for _, c := range []float64{10, 25, 50, 100, 200, 500, 1000, 2000} {
		cs = append(cs, tdigestContender(c))
	}
	return cs
}

// collect runs the whole comparison.
func collect(o options, logw io.Writer) (*report, error) {
	r := &report{opts: o, started: time.Now(), sweepSize: map[string]int{}}
	// Streams are drawn one at a time: at the default N each holds 80 MB.
	var next []func() (stream, error)
	for _, d := range benchDists {
		for _, ord := range benchOrders {
			next = append(next, func() (stream, error) { return syntheticStream(d, ord, o.N, o.Seed) })
		}
	}
	var household []stream
	if o.Household {
		hs, skipped, err := householdStreams(o.Data)
		if err != nil {
			return nil, err
		}
		r.skipped = skipped
		household = hs
		for _, st := range hs {
			next = append(next, func() (stream, error) { return st, nil })
		}
	}
	for _, gen := range next {
		st, err := gen()
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		k := newKey(st.Values)
		res, h, err := compare(st, k, defaultContenders(o), o.Reps, o.Epsilon, true)
		if err != nil {
			return nil, err
		}
		r.results = append(r.results, res...)
		if h != nil {
			r.heavy = append(r.heavy, *h)
		}
		fmt.Fprintf(logw, "%-40s n=%d %v\n", st.Name, len(st.Values), time.Since(t0).Round(time.Millisecond))
	}
	for _, name := range o.SweepNames {
		st, err := sweepStream(name, o, household)
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		pts, err := sweep(st, newKey(st.Values), sweepContenders(o))
		if err != nil {
			return nil, err
		}
		r.sweep = append(r.sweep, pts...)
		r.sweepSize[st.Name] = len(st.Values)
		fmt.Fprintf(logw, "sweep %-34s n=%d %v\n", st.Name, len(st.Values), time.Since(t0).Round(time.Millisecond))
	}
	r.elapsed = time.Since(r.started)
	return r, nil
}

// sweepStream finds the named stream: a household column, or a synthetic
// "dist/order" drawn with -sweep-n values.
func sweepStream(name string, o options, household []stream) (stream, error) {
	for _, st := range household {
		if st.Name == name {
			return st, nil
		}
	}
	for _, d := range benchDists {
		for _, ord := range benchOrders {
			if string(d)+"/"+string(ord) == name {
				return syntheticStream(d, ord, o.SweepN, o.Seed)
			}
		}
	}
	return stream{}, fmt.Errorf("sweep: no stream %q", name)
}

func run(o options, logw io.Writer) error {
	r, err := collect(o, logw)
	if err != nil {
		return err
	}
	var w io.Writer = os.Stdout
	if o.Out != "" {
		f, err := os.Create(o.Out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	plotName := ""
	if o.Plot != "" {
		if err := writePlot(o.Plot, r); err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		plotName = o.Plot
		if o.Out != "" {
			if rel, err := filepath.Rel(filepath.Dir(o.Out), o.Plot); err == nil {
				plotName = filepath.ToSlash(rel)
			}
		}
	}
	if err := writeReport(w, r, plotName); err != nil {
		return err
	}
	if o.Out != "" {
		return w.(*os.File).Close()
	}
	return nil
}

func itoa(n int) string { return strconv.Itoa(n) }

// parseInts parses a comma-separated list of positive integers.
func parseInts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return nil, fmt.Errorf("%d is not positive", n)
		}
		out = append(out, n)
	}
	return out, nil
}
