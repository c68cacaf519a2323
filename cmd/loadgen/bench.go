package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"streamd/loadgen"
)

func (m *Main) benchSink(ctx context.Context, args []string) error {
	f, err := m.parseSynth("bench-sink", "Measure loadgen's own send rate: send synthetic values as synth does,\n"+
		"as fast as possible, into a local TCP listener that discards them.", args, "tcp-binary")
	if err != nil {
		return err
	}
	if f.send.target != "tcp" && f.send.target != "tcp-binary" {
		return usageErrorf("bench-sink: unknown --target %q: want tcp or tcp-binary", f.send.target)
	}
	if f.send.count == 0 && f.send.duration == 0 && f.sizes == nil {
		f.send.count = 20_000_000
	}
	if err := f.send.check(); err != nil {
		return err
	}
	f.send.verify = false
	srv, err := loadgen.ListenDiscard(ctx, "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer srv.Close()
	// The sink takes no token and no TLS, and the rate is measured
	// without progress reports.
	f.send.addr = srv.Addr()
	target := &loadgen.TCP{Addr: srv.Addr(), Binary: f.send.target == "tcp-binary", Float32: f.send.float32}
	res, err := m.runSynth(ctx, f, destination{target: target})
	if err != nil {
		return err
	}
	secs := res.Elapsed.Seconds()
	fmt.Fprintf(m.Stdout, "bench-sink %s conns=%d: %d values in %.3fs: %.0f values/s, %.1f MB/s\n",
		f.send.target, f.send.conns, res.Sent, secs, res.Rate(), float64(srv.Bytes())/secs/1e6)
	return nil
}

func (m *Main) sink(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("loadgen sink", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	listen := fs.String("listen", "127.0.0.1:7071", "address to listen on")
	duration := fs.Duration("duration", 0, "stop after this long; 0 waits for an interrupt")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: loadgen sink [flags]\n\nListen on a TCP address, read and discard everything sent to it until an\ninterrupt, and print the bytes read: a receiver that costs next to nothing,\nto measure a sender alone in the place of a daemon.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := m.parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return usageErrorf("sink: takes no arguments")
	}
	srv, err := loadgen.ListenDiscard(ctx, *listen)
	if err != nil {
		return err
	}
	m.logger().Info("loadgen sink", "listen", srv.Addr())
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	<-ctx.Done()
	// Read what the clients have sent before they closed, for a while.
	grace, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(grace); err != nil {
		m.logger().Warn("loadgen sink: connections still open", "err", err)
	}
	fmt.Fprintf(m.Stdout, "sink %s: read %d bytes\n", srv.Addr(), srv.Bytes())
	return nil
}
