package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"

	"streamd/loadgen"
	"streamd/loadgen/synth"
)

func (m *Main) synth(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("loadgen synth", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	var (
		dist, order, stream string
		spec                synth.Spec
		streams             int
		itemsFlag           bool
		sf                  sendFlags
	)
	fs.StringVar(&dist, "dist", "uniform", fmt.Sprintf("value distribution: one of %v", synth.Dists))
	fs.StringVar(&order, "order", "random", fmt.Sprintf("arrival order: one of %v", synth.Orders))
	fs.Uint64Var(&spec.Seed, "seed", 1, "random seed; stream i gets seed+i")
	fs.Float64Var(&spec.S, "zipf-s", 1.2, "Zipf exponent, above 1")
	fs.Uint64Var(&spec.Distinct, "zipf-distinct", 1000, "number of Zipf values (0 to n-1)")
	fs.Float64Var(&spec.Alpha, "pareto-alpha", 1.5, "Pareto shape")
	fs.IntVar(&spec.Period, "period", 1000, "block length of the sawtooth and alternating orders")
	fs.IntVar(&streams, "streams", 1, "number of streams, named <stream>.0, <stream>.1, ... when more than one")
	fs.StringVar(&stream, "stream", "synth", "stream name, or prefix of the stream names")
	fs.BoolVar(&itemsFlag, "items", false, `send items (strings "item-<n in base 36>" for the values n drawn; Zipf-distributed with --dist zipf) to item streams`)
	sf.register(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: loadgen synth [flags]\n\nSend synthetic values into streamd.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return errors.New("synth: takes no arguments")
	}
	spec.Dist, spec.Order = synth.Dist(dist), synth.Order(order)
	if _, err := synth.NewSource(spec); err != nil {
		return err
	}
	if err := synth.Arrange(nil, spec.Order, 0); err != nil {
		return err
	}
	if sf.count == 0 && (sf.duration == 0 || spec.Order != synth.Random) {
		return errors.New("synth: --count is required (the random order may instead run for a --duration)")
	}
	if streams < 1 {
		return fmt.Errorf("synth: --streams %d: must be at least 1", streams)
	}
	src := &loadgen.Synth{Spec: spec, Count: sf.count, Items: itemsFlag}
	if streams == 1 {
		src.Streams = []string{stream}
	} else {
		for i := range streams {
			src.Streams = append(src.Streams, stream+"."+strconv.Itoa(i))
		}
	}
	return m.send(ctx, &sf, src)
}
