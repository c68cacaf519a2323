package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"streamd/loadgen"
	"streamd/loadgen/synth"
)

func (m *Main) benchSink(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("loadgen bench-sink", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	var (
		target, dist, file string
		count              int64
		conns, batch       int
		f32, items         bool
		distinct           uint64
	)
	fs.StringVar(&target, "target", "tcp-binary", "protocol to send: tcp-binary or tcp")
	fs.StringVar(&dist, "dist", "uniform", fmt.Sprintf("value distribution: one of %v", synth.Dists))
	fs.Int64Var(&count, "count", 20_000_000, "values to send")
	fs.IntVar(&conns, "conns", 1, "parallel connections")
	fs.IntVar(&batch, "batch", loadgen.DefaultBatch, "values per write")
	fs.BoolVar(&f32, "float32", false, "send float32 values")
	fs.BoolVar(&items, "items", false, "send items (Zipf-distributed strings over --zipf-distinct values) instead of values")
	fs.Uint64Var(&distinct, "zipf-distinct", 1_000_000, "distinct items, with --items")
	fs.StringVar(&file, "file", "", "replay this recording (values or items), in a loop, instead of synthetic values")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: loadgen bench-sink [flags]\n\nMeasure loadgen's own send rate: send synthetic values in random order,\nas fast as possible, into a local TCP listener that discards them.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if target != "tcp" && target != "tcp-binary" {
		return fmt.Errorf("bench-sink: unknown --target %q: want tcp or tcp-binary", target)
	}
	if count <= 0 || conns < 1 {
		return errors.New("bench-sink: --count and --conns must be positive")
	}
	srv, err := loadgen.ListenDiscard(ctx, "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer srv.Close()
	src := &loadgen.Synth{Spec: synth.Spec{Dist: synth.Dist(dist), Seed: 1}, Count: count, Streams: []string{"bench"}}
	what := "values"
	if items {
		src.Spec = synth.Spec{Dist: synth.Zipf, S: 1.1, Distinct: distinct, Seed: 1}
		src.Items, what = true, "items"
	}
	var source loadgen.Source = src
	if file != "" {
		source, what = &loadgen.Loop{Source: &loadgen.Recording{Path: file}}, "values or items"
	}
	r := &loadgen.Runner{
		Source: source,
		Target: &loadgen.TCP{Addr: srv.Addr(), Binary: target == "tcp-binary", Float32: f32},
		Conns:  conns,
		Batch:  batch,
		Count:  count,
	}
	res, err := r.Run(ctx)
	if err != nil {
		return err
	}
	secs := res.Elapsed.Seconds()
	fmt.Fprintf(m.Stdout, "bench-sink %s conns=%d: %d %s in %.3fs: %.0f %s/s, %.1f MB/s\n",
		target, conns, res.Sent, what, secs, res.Rate(), what, float64(srv.Bytes())/secs/1e6)
	return nil
}
