package loadgen_test

import (
	"context"
	"fmt"
	"testing"

	"streamd/loadgen"
	"streamd/synth"
)

// BenchmarkSendSized measures loadgen's send rate over 16 connections
// into a listener that discards, with the values of 10^6 streams of
// Zipf-distributed sizes (as loadgen synth --stream-sizes zipf:5:1000000
// sends them) and with as many values in 16 streams: the sender's own
// limit, which a daemon's figure with many streams must stay below to
// measure the daemon.
func BenchmarkSendSized(b *testing.B) {
	srv, err := loadgen.ListenDiscard(context.Background(), "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	const streams = 1_000_000
	dist, err := synth.ParseSizes("zipf:5:1000000")
	if err != nil {
		b.Fatal(err)
	}
	sizes := dist.Draw(1, streams)
	var total int64
	for _, n := range sizes {
		total += n
	}
	for _, tt := range []struct {
		name  string
		sizes []int64
	}{
		{"streams=1000000", sizes},
		{"streams=16", evenSizes(16, total)},
	} {
		b.Run(tt.name, func(b *testing.B) {
			names := make([]string, len(tt.sizes))
			for i := range names {
				names[i] = fmt.Sprintf("s%07d", i)
			}
			src := &loadgen.Synth{Spec: synth.Spec{Dist: synth.LogNormal, Seed: 1}, Streams: names, Sizes: tt.sizes}
			tracked := make(map[string]bool)
			for i := 0; i < len(names); i += max(len(names)/1000, 1) {
				tracked[names[i]] = true
			}
			var sent int64
			for b.Loop() {
				r := &loadgen.Runner{Source: src, Target: &loadgen.TCP{Addr: srv.Addr(), Binary: true}, Conns: 16, SplitStreams: true,
					Track: func(s string) bool { return tracked[s] }}
				res, err := r.Run(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				sent += res.Sent
			}
			b.ReportMetric(float64(sent)/b.Elapsed().Seconds(), "values/s")
		})
	}
}

// evenSizes splits total values into n streams of about equal size.
func evenSizes(n int, total int64) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = total / int64(n)
	}
	s[0] += total % int64(n)
	return s
}
