package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "streamd/api/proto/streamd/v1"
	"streamd/loadgen/synth"
)

// BenchmarkQuantilesLatency fills one stream with 10^8 values (default
// ε 0.001, W 65536) and measures Quantiles calls over gRPC on loopback, for
// nine φ at once: all history, and the last 10,000 values. It reports the
// median and the 99th percentile.
func BenchmarkQuantilesLatency(b *testing.B) {
	cfg := DefaultConfig()
	cfg.GRPCAddr, cfg.TCPAddr, cfg.MetricsAddr, cfg.DataDir, cfg.Sorter = "127.0.0.1:0", "", "", "", "cpu"
	d := NewDaemon(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := d.Open(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer d.Close(context.Background())
	const n = 1526 << 16 // 100,007,936 values: whole windows of 65536
	src, _ := synth.NewSource(synth.Spec{Dist: synth.LogNormal, Seed: 1})
	chunk := make([]float64, 1<<16)
	ctx := context.Background()
	for sent := 0; sent < n; sent += len(chunk) {
		for i := range chunk {
			chunk[i] = src.Next()
		}
		if err := d.Pipeline().Accept(ctx, "big", chunk); err != nil {
			b.Fatal(err)
		}
	}
	// Let the sorter drain, so that queries do not compete with it.
	s, _ := d.Pipeline().Stream("big")
	for s.Stats().Summarised != n {
		time.Sleep(time.Millisecond)
	}
	conn, err := grpc.NewClient(d.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	c := pb.NewStreamdClient(conn)
	phis := []float64{0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999}
	for _, lastN := range []uint64{0, 10000} {
		b.Run(fmt.Sprintf("last_n=%d", lastN), func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				q, err := c.Quantiles(ctx, &pb.QuantilesRequest{Stream: "big", Phis: phis, LastN: lastN})
				if err != nil || (lastN == 0 && q.Count != n) {
					b.Fatalf("%v %v", q.GetCount(), err)
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
