package main

import (
	"context"
	"fmt"

	"streamd/loadgen"
)

func (m *Main) benchSink(ctx context.Context, args []string) error {
	f, err := m.parseSynth("bench-sink", "Measure loadgen's own send rate: send synthetic values as synth does,\n"+
		"as fast as possible, into a local TCP listener that discards them.", args, "tcp-binary")
	if err != nil {
		return err
	}
	if f.send.target != "tcp" && f.send.target != "tcp-binary" {
		return fmt.Errorf("bench-sink: unknown --target %q: want tcp or tcp-binary", f.send.target)
	}
	if f.send.count == 0 && f.send.duration == 0 {
		f.send.count = 20_000_000
	}
	f.send.verify = false
	srv, err := loadgen.ListenDiscard(ctx, "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer srv.Close()
	f.send.addr = srv.Addr()
	var res *loadgen.Result
	if f.send.target == "tcp-binary" {
		payloads, err := m.renderSynth(f)
		if err != nil {
			return err
		}
		res, err = (&loadgen.FrameRunner{
			Addr: srv.Addr(), Payloads: payloads, Conns: f.send.conns,
			Count: f.send.count, Duration: f.send.duration, Rate: f.send.rate,
		}).Run(ctx)
		if err != nil {
			return err
		}
	} else {
		if err := f.send.check(); err != nil {
			return err
		}
		res, err = (&loadgen.Runner{
			Source: &loadgen.Synth{Spec: f.spec, Count: f.send.count, Streams: f.names()},
			Target: &loadgen.TCP{Addr: srv.Addr(), Float32: f.send.float32},
			Conns:  f.send.conns, Count: f.send.count, Duration: f.send.duration,
			Rate: f.send.rate, Batch: f.send.batch,
		}).Run(ctx)
		if err != nil {
			return err
		}
	}
	secs := res.Elapsed.Seconds()
	fmt.Fprintf(m.Stdout, "bench-sink %s conns=%d: %d values in %.3fs: %.0f values/s, %.1f MB/s\n",
		f.send.target, f.send.conns, res.Sent, secs, res.Rate(), float64(srv.Bytes())/secs/1e6)
	return nil
}
