package loadgen_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	pb "streamd/api/proto/streamd/v1"
	"streamd/feed"
	"streamd/ingest"
	"streamd/items"
	"streamd/loadgen"
	"streamd/loadgen/daemontest"
	"streamd/synth"
)

// TestVerifyHierarchy sends synthetic addresses with a flood to two
// hierarchy streams, over TCP frames and gRPC, and verifies the daemon's
// heavy hitters and hierarchical heavy hitters against the exact ones;
// items not in a stream's hierarchy are rejected by the daemon and left
// out by Verify.
func TestVerifyHierarchy(t *testing.T) {
	d := daemontest.Start(t)
	ctx := context.Background()
	for _, req := range []*pb.CreateStreamRequest{
		{Stream: "addrs.0", Hierarchy: "ipv4", Epsilon: 0.01},
		{Stream: "addrs.1", Hierarchy: "ipv4/4", Epsilon: 0.01},
	} {
		if _, err := d.Client.CreateStream(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	src := &loadgen.Synth{
		Count: 40_000, Streams: []string{"addrs.0", "addrs.1"}, Items: true,
		Addresses: &synth.AddrSpec{Seed: 4, FloodShare: 0.3, FloodAfter: 15_000},
	}
	// Items no IPv4 address, and addresses not in canonical form.
	odd := sourceFunc(func(ctx context.Context, sink ingest.Sink) error {
		var b items.Batch
		for _, x := range []string{"::1", "10.0.0", "x", "203.0.113.7"} {
			b.AppendString(x)
		}
		_, err := sink.Accept(ctx, &feed.Batch{Stream: "addrs.0", Items: &b})
		return err
	})
	for _, target := range []loadgen.Target{&loadgen.TCP{Addr: d.TCPAddr, Binary: true}, &loadgen.GRPC{Client: d.Client}} {
		res, err := (&loadgen.Runner{Source: &multiSource{src, odd}, Target: target, Keep: true}).Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		v, err := loadgen.Verify(ctx, d.Client, res, loadgen.VerifyConfig{Support: 0.05, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		v.WriteTo(&out)
		if !v.OK() || len(v.Streams) != 2 {
			t.Fatalf("verification failed:\n%s", out.String())
		}
		for _, s := range v.Streams {
			if s.Stream == "addrs.0" && (s.N != 20_001 || s.Rejected != 3) {
				t.Errorf("stream %s: N %d, rejected %d; want 20001 and 3", s.Stream, s.N, s.Rejected)
			}
			if len(s.HHH) != 2 || s.Hierarchy == "" {
				t.Fatalf("stream %s: %d checks of hierarchical heavy hitters, hierarchy %q", s.Stream, len(s.HHH), s.Hierarchy)
			}
		}
		if !strings.Contains(out.String(), "discounted hierarchical heavy hitters (ipv4/8) at support 0.05") {
			t.Errorf("the report does not name the check of hierarchical heavy hitters:\n%s", out.String())
		}
		// The second round goes to the same streams: delete them, to
		// verify them afresh.
		for _, name := range src.Streams {
			if _, err := d.Client.DeleteStream(ctx, &pb.DeleteStreamRequest{Stream: name}); err != nil {
				t.Fatal(err)
			}
		}
		for i, req := range []*pb.CreateStreamRequest{
			{Stream: "addrs.0", Hierarchy: "ipv4", Epsilon: 0.01},
			{Stream: "addrs.1", Hierarchy: "ipv4/4", Epsilon: 0.01},
		} {
			if _, err := d.Client.CreateStream(ctx, req); err != nil {
				t.Fatal(i, err)
			}
		}
	}
}
