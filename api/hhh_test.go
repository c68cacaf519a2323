package api

import (
	"context"
	"net/netip"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	pb "streamd/api/proto/streamd/v1"
	"streamd/feed"
	"streamd/hhh"
	"streamd/items"
	"streamd/loadgen/hhhexact"
	"streamd/summary"
	"streamd/synth"
)

// acceptAll pushes list to the item stream name.
func acceptAll(t *testing.T, s *Server, name string, list []string) {
	t.Helper()
	var b items.Batch
	for _, x := range list {
		b.AppendString(x)
	}
	if _, err := s.Pipeline.Accept(context.Background(), &feed.Batch{Stream: name, Items: &b}); err != nil {
		t.Fatal(err)
	}
}

// TestHierarchicalHeavyHitters creates a hierarchy stream over the API,
// with the precision it asks for at min_support, and checks its answers
// over all history, the last n items and a time window against exact
// counts, and the precision they state.
func TestHierarchicalHeavyHitters(t *testing.T) {
	ctx := context.Background()
	s := openServer(t, summary.Config{WindowSize: 500, SlidingWindow: 1 << 15})
	const precision, minSupport = 0.01, 0.1
	if _, err := s.CreateStream(ctx, &pb.CreateStreamRequest{Stream: "a", Epsilon: precision, MinSupport: minSupport, Hierarchy: "ipv4"}); err != nil {
		t.Fatal(err)
	}
	st, err := s.Stats(ctx, &pb.StatsRequest{Stream: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if want := hhh.LevelEpsilon(precision, minSupport); st.Epsilon != want || st.Kind != pb.StreamKind_STREAM_KIND_ITEMS {
		t.Fatalf("stats: ε %v, kind %v; want %v, items", st.Epsilon, st.Kind, want)
	}
	list, err := synth.Addresses(synth.AddrSpec{Seed: 2, FloodShare: 0.4, FloodAfter: 15000}, 20000)
	if err != nil {
		t.Fatal(err)
	}
	acceptAll(t, s, "a", list)
	h, _ := hhh.Parse("ipv4")
	for _, sc := range []struct {
		name  string
		lastN uint64
		last  *durationpb.Duration
		list  []string
	}{
		{name: "all", list: list},
		{name: "last-n", lastN: 5000, list: list[15000:]},
		{name: "time", last: durationpb.New(1 << 40), list: list},
	} {
		t.Run(sc.name, func(t *testing.T) {
			exact := hhhexact.New(h)
			for _, x := range sc.list {
				if err := exact.Add(x); err != nil {
					t.Fatal(err)
				}
			}
			for _, support := range []float64{0.1, 0.3} {
				for _, plain := range []bool{true, false} {
					resp, err := s.HierarchicalHeavyHitters(ctx, &pb.HierarchicalHeavyHittersRequest{Stream: "a", Support: support, Plain: plain, LastN: sc.lastN, Last: sc.last})
					if err != nil {
						t.Fatal(err)
					}
					if resp.Count != uint64(exact.N()) || (resp.Window != nil) != (sc.last != nil) {
						t.Fatalf("s=%v: count %d, window %v; want %d", support, resp.Count, resp.Window, exact.N())
					}
					if plain {
						err = exact.CheckHeavy(hhhexact.Hitters(resp), support, resp.Epsilon)
					} else {
						err = exact.CheckDiscounted(hhhexact.Hitters(resp), support, resp.Epsilon, resp.Precision)
						if resp.Precision > precision*(1+1e-12) {
							t.Errorf("s=%v: precision %v, more than the %v asked for", support, resp.Precision, precision)
						}
					}
					if err != nil {
						t.Fatal(err)
					}
					if len(resp.Hitters) == 0 {
						t.Fatalf("s=%v: no hitters", support)
					}
				}
			}
		})
	}
}

// TestHierarchicalHeavyHittersErrors: the status codes of bad creations
// and questions, and the bound on a reply.
func TestHierarchicalHeavyHittersErrors(t *testing.T) {
	ctx := context.Background()
	s := openServer(t, summary.Config{WindowSize: 256, SlidingWindow: 4096})
	for _, req := range []*pb.CreateStreamRequest{
		{Stream: "x", Hierarchy: "ipv4/7"},
		{Stream: "x", Hierarchy: "ipv4", Epsilon: 0.1, MinSupport: 0.1},
		{Stream: "x", Hierarchy: "ipv4", MinSupport: 1.5},
		{Stream: "x", Hierarchy: "ipv4", Epsilon: 1e-5, MinSupport: 0.01},
	} {
		if _, err := s.CreateStream(ctx, req); status.Code(err) != codes.InvalidArgument {
			t.Errorf("create %v: %v, want InvalidArgument", req, err)
		}
	}
	if _, err := s.CreateStream(ctx, &pb.CreateStreamRequest{Stream: "items", Kind: pb.StreamKind_STREAM_KIND_ITEMS}); err != nil {
		t.Fatal(err)
	}
	// Eight bits a level, each counted with error 0.001/(1 + ⌊1/0.999⌋).
	if _, err := s.CreateStream(ctx, &pb.CreateStreamRequest{Stream: "v6", Hierarchy: "ipv6/8", Epsilon: 0.001, MinSupport: 1}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		req  *pb.HierarchicalHeavyHittersRequest
		code codes.Code
	}{
		{&pb.HierarchicalHeavyHittersRequest{Stream: "none", Support: 0.1}, codes.NotFound},
		{&pb.HierarchicalHeavyHittersRequest{Stream: "items", Support: 0.1}, codes.FailedPrecondition},
		{&pb.HierarchicalHeavyHittersRequest{Stream: "v6", Support: 0.1, Scope: pb.Scope_SCOPE_CLUSTER}, codes.FailedPrecondition},
		{&pb.HierarchicalHeavyHittersRequest{Stream: "v6", Support: 1.1}, codes.InvalidArgument},
		{&pb.HierarchicalHeavyHittersRequest{Stream: "v6", Support: 1e-9}, codes.InvalidArgument},
		{&pb.HierarchicalHeavyHittersRequest{Stream: "v6", Support: 0.1, LastN: 5000}, codes.InvalidArgument},
		{&pb.HierarchicalHeavyHittersRequest{Stream: "v6", Support: 0.1, LastN: 5, Last: durationpb.New(1)}, codes.InvalidArgument},
	} {
		if _, err := s.HierarchicalHeavyHitters(ctx, tc.req); status.Code(err) != tc.code {
			t.Errorf("%v: %v, want %v", tc.req, err, tc.code)
		}
	}
	// 1500 addresses, twice each, that differ in their first 16 bits:
	// every one of their prefixes of 16 bits or more is heavy at support
	// 1/1500·(1 − ε), 15 levels of 1500, more than a reply holds. The
	// discounted answer is the 1500 addresses.
	var list []string
	for i := range 1500 {
		a := netip.AddrFrom16([16]byte{byte(i >> 8), byte(i), 15: 1})
		list = append(list, a.String(), a.String())
	}
	acceptAll(t, s, "v6", list)
	const support = 0.00066
	if _, err := s.HierarchicalHeavyHitters(ctx, &pb.HierarchicalHeavyHittersRequest{Stream: "v6", Support: support, Plain: true}); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("plain answer of %d prefixes: %v, want ResourceExhausted", 15*1500, err)
	}
	resp, err := s.HierarchicalHeavyHitters(ctx, &pb.HierarchicalHeavyHittersRequest{Stream: "v6", Support: support})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Hitters) != 1500 {
		t.Errorf("discounted answer of %d hitters, want the 1500 addresses", len(resp.Hitters))
	}
}
