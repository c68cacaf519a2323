package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	pb "streamd/api/proto/streamd/v1"
	"streamd/feed"
	"streamd/synth"
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
		if _, err := d.Pipeline().Accept(ctx, &feed.Batch{Stream: "big", Values: chunk}); err != nil {
			b.Fatal(err)
		}
	}
	// Let the sorter drain, so that queries do not compete with it.
	s, _ := d.Pipeline().Stream("big")
	for s.Stats().Summarised != n {
		time.Sleep(time.Millisecond)
	}
	conn := dialGRPC(b, d.GRPCAddr())
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

// BenchmarkClusterQuantilesLatency runs three daemons in one Kafka group
// (an in-process broker, or KAFKA_BROKERS) on a topic of six partitions
// holding 10^7 lognormal values (ε 0.001, W 65536), and measures Quantiles
// calls of nine φ over gRPC on loopback with scope CLUSTER — each asks the
// two other daemons for their summaries and merges them — and, for
// comparison, LOCAL. It reports the median and the 99th percentile.
func BenchmarkClusterQuantilesLatency(b *testing.B) {
	brokers, topic := kafkaTopic(b, 6)
	const n = 10_000_000
	x, _ := synth.Generate(synth.Spec{Dist: synth.LogNormal, Seed: 1}, n)
	msgs, _ := valueMessages("big", x, 1000, false)
	writeMessages(b, brokers, topic, msgs)
	var ds []*Daemon
	for range 3 {
		cfg := DefaultConfig()
		cfg.GRPCAddr, cfg.TCPAddr, cfg.MetricsAddr, cfg.Sorter = "127.0.0.1:0", "", "", "cpu"
		cfg.DataDir = b.TempDir()
		cfg.KafkaBrokers, cfg.KafkaTopics, cfg.KafkaGroup = brokers, []string{topic}, "bench"
		cfg.KafkaSessionTimeout = 6 * time.Second
		cfg.ClusterTimeout = 10 * time.Second // measure slow answers, not partial ones
		d := NewDaemon(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err := d.Open(context.Background()); err != nil {
			b.Fatal(err)
		}
		defer d.Close(context.Background())
		ds = append(ds, d)
	}
	conn := dialGRPC(b, ds[0].GRPCAddr())
	c := pb.NewStreamdClient(conn)
	ctx := context.Background()
	// Wait until the three share the partitions and have summarised every
	// value, so that queries do not compete with ingest.
	deadline := time.Now().Add(5 * time.Minute)
	for {
		q, err := c.Quantiles(ctx, &pb.QuantilesRequest{Stream: "big", Phis: []float64{0.5}, Scope: pb.Scope_SCOPE_CLUSTER})
		done := err == nil && !q.Partial && q.Count == n && len(q.Members) == 3
		for _, d := range ds {
			if s, err := d.Pipeline().Stream("big"); err != nil || s.Stats().Pending >= 6*65536 {
				done = false
			}
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("cluster not ready: %v %v", q, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	phis := []float64{0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999}
	for _, scope := range []pb.Scope{pb.Scope_SCOPE_CLUSTER, pb.Scope_SCOPE_LOCAL} {
		b.Run(strings.ToLower(strings.TrimPrefix(scope.String(), "SCOPE_")), func(b *testing.B) {
			var lat []time.Duration
			cpu0 := cpuTime()
			for b.Loop() {
				start := time.Now()
				q, err := c.Quantiles(ctx, &pb.QuantilesRequest{Stream: "big", Phis: phis, Scope: scope})
				if err != nil || q.Partial || (scope == pb.Scope_SCOPE_CLUSTER && q.Count != n) {
					b.Fatalf("%v %v", q, err)
				}
				lat = append(lat, time.Since(start))
			}
			// CPU time of the whole process (client and three daemons) per
			// call: the work, whatever the machine's other load.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(len(lat)), "cpu-µs/op")
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// cpuTime returns the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
