package api

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	pb "streamd/api/proto/streamd/v1"
	"streamd/feed"
	"streamd/internal/exact"
	"streamd/summary"
)

// TestScopes asks every query of a value stream in every scope and checks
// what their responses share — the count of the values in scope, ε, and
// what a time window covers, for a time window only — and the answers
// against the exact ones over those values.
func TestScopes(t *testing.T) {
	ctx := context.Background()
	const eps, n, lastN = 0.01, 5000, 1200
	s := openServer(t, summary.Config{Epsilon: eps, WindowSize: 100, SlidingWindow: 10000})
	r := rand.New(rand.NewPCG(7, 8))
	sent := make([]float64, n)
	for i := range sent {
		// Skewed, so that some values are heavy hitters.
		sent[i] = math.Floor(50 * math.Pow(r.Float64(), 3))
	}
	if _, err := s.Pipeline.Accept(ctx, &feed.Batch{Stream: "s", Values: append([]float64(nil), sent...)}); err != nil {
		t.Fatal(err)
	}
	phis := []float64{0, 0.1, 0.5, 0.9, 0.99, 1}
	probes := []float64{-1, 0, 1, 2, 7, 49, 50}
	const support = 0.05
	for _, sc := range []struct {
		name  string
		lastN uint64
		last  *durationpb.Duration
		scope pb.Scope
		key   *exact.Stream
	}{
		{name: "all", key: exact.New(sent)},
		{name: "last-n", lastN: lastN, key: exact.New(sent[n-lastN:])},
		{name: "time", last: durationpb.New(1 << 40), key: exact.New(sent)},
		{name: "cluster", scope: pb.Scope_SCOPE_CLUSTER, key: exact.New(sent)},
	} {
		t.Run(sc.name, func(t *testing.T) {
			key := sc.key
			// header checks the fields every response shares.
			header := func(t *testing.T, what string, count uint64, e float64, window *pb.TimeWindow) {
				t.Helper()
				if count != uint64(key.N()) || e != eps {
					t.Errorf("%s: count %d, ε %v; want %d, %v", what, count, e, key.N(), eps)
				}
				if (window != nil) != (sc.last != nil) {
					t.Errorf("%s: time window %v", what, window)
				} else if window != nil && window.Count != count {
					t.Errorf("%s: time window of %d values, count %d", what, window.Count, count)
				}
			}

			q, err := s.Quantiles(ctx, &pb.QuantilesRequest{Stream: "s", Phis: phis, LastN: sc.lastN, Last: sc.last, Scope: sc.scope})
			if err != nil {
				t.Fatal(err)
			}
			header(t, "quantiles", q.Count, q.Epsilon, q.Window)
			if len(q.Quantiles) != len(phis) {
				t.Fatalf("%d quantiles for %d φs", len(q.Quantiles), len(phis))
			}
			for i, x := range q.Quantiles {
				if err := key.CheckQuantile(phis[i], x.Value, eps, int64(x.RankMin), int64(x.RankMax)); err != nil || x.Phi != phis[i] {
					t.Errorf("quantile %v (%v): %v", phis[i], x.Phi, err)
				}
			}

			rk, err := s.Ranks(ctx, &pb.RanksRequest{Stream: "s", Values: probes, LastN: sc.lastN, Last: sc.last, Scope: sc.scope})
			if err != nil {
				t.Fatal(err)
			}
			header(t, "ranks", rk.Count, rk.Epsilon, rk.Window)
			fr, err := s.Frequencies(ctx, &pb.FrequenciesRequest{Stream: "s", Values: probes, LastN: sc.lastN, Last: sc.last, Scope: sc.scope})
			if err != nil {
				t.Fatal(err)
			}
			header(t, "frequencies", fr.Count, fr.Epsilon, fr.Window)
			if len(rk.Ranks) != len(probes) || len(fr.Items) != len(probes) {
				t.Fatalf("%d ranks, %d frequencies for %d values", len(rk.Ranks), len(fr.Items), len(probes))
			}
			for i, x := range probes {
				if err := key.CheckRank(x, int64(rk.Ranks[i].RankMin), int64(rk.Ranks[i].RankMax), eps); err != nil {
					t.Errorf("rank of %v: %v", x, err)
				}
				if err := key.CheckFrequency(x, int64(fr.Items[i].CountMin), int64(fr.Items[i].CountMax), eps); err != nil {
					t.Errorf("frequency of %v: %v", x, err)
				}
			}

			hh, err := s.HeavyHitters(ctx, &pb.HeavyHittersRequest{Stream: "s", Support: support, LastN: sc.lastN, Last: sc.last, Scope: sc.scope})
			if err != nil {
				t.Fatal(err)
			}
			header(t, "heavy hitters", hh.Count, hh.Epsilon, hh.Window)
			var got []float64
			for _, it := range hh.Items {
				got = append(got, it.Value)
			}
			if err := key.CheckHeavyHitters(support, eps, got); err != nil {
				t.Error(err)
			}
			if len(got) == 0 {
				t.Error("no heavy hitters")
			}

			// A question of the other kind of stream is refused in every
			// scope: items of a value stream, a support not above ε.
			if _, err := s.Frequencies(ctx, &pb.FrequenciesRequest{Stream: "s", Items: []string{"a"}, LastN: sc.lastN, Last: sc.last, Scope: sc.scope}); status.Code(err) != codes.FailedPrecondition {
				t.Errorf("items of a value stream: %v, want FailedPrecondition", err)
			}
			if _, err := s.HeavyHitters(ctx, &pb.HeavyHittersRequest{Stream: "s", Support: eps, LastN: sc.lastN, Last: sc.last, Scope: sc.scope}); status.Code(err) != codes.InvalidArgument {
				t.Errorf("support ε: %v, want InvalidArgument", err)
			}
		})
	}
}
