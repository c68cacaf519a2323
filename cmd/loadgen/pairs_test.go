package main

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"streamd/loadgen/daemontest"
)

// TestSynthPairs sends synthetic pairs to every target, in every pair
// order, and checks the daemon's correlated sums with --verify.
func TestSynthPairs(t *testing.T) {
	d := daemontest.Start(t)
	for _, c := range []struct{ target, order string }{
		{"tcp", "sorted"}, {"tcp-binary", "reverse"}, {"grpc", "random"},
	} {
		t.Run(c.target, func(t *testing.T) {
			out, stderr, err := run(t, "synth", "--pairs", "--order", c.order, "--count", "150000",
				"--streams", "2", "--stream", "pairs-"+c.target, "--conns", "2",
				"--target", c.target, "--addr", d.TCPAddr, "--grpc-addr", d.GRPCAddr,
				"--verify", "--progress", "off")
			if err != nil {
				t.Fatalf("%v\n%s\n%s", err, out, stderr)
			}
			for _, want := range []string{"sent 150,000 values", "(pairs of float64)", "p99", "2×mean",
				"verify: every answer within its bound (2 streams)"} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
	t.Run("kafka", func(t *testing.T) {
		kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(0), kfake.SeedTopics(2, "pairs"))
		if err != nil {
			t.Fatal(err)
		}
		defer kc.Close()
		for _, format := range []string{"text", "f64"} {
			out, stderr, err := run(t, "synth", "--pairs", "--count", "5000", "--target", "kafka",
				"--kafka-brokers", strings.Join(kc.ListenAddrs(), ","), "--topic", "pairs",
				"--kafka-format", format, "--progress", "off")
			if err != nil || !strings.Contains(out, "sent 5,000 values") {
				t.Errorf("%s: %v\n%s\n%s", format, err, out, stderr)
			}
		}
	})
	for _, args := range [][]string{
		{"synth", "--pairs", "--items", "--count", "5"},
		{"synth", "--pairs", "--order", "sawtooth", "--count", "5"},
	} {
		if _, _, err := run(t, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
