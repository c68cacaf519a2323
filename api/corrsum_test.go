package api

import (
	"context"
	"math"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	pb "streamd/api/proto/streamd/v1"
	"streamd/feed"
)

// TestCorrelatedSum checks every bound of CorrelatedSum answers against
// the exact answers, over pairs with negative y and duplicates at the
// thresholds, and its refusals.
func TestCorrelatedSum(t *testing.T) {
	s := &Server{}
	c := dial(t, serve(t, s, nil))
	ctx := context.Background()
	if _, err := c.CreateStream(ctx, &pb.CreateStreamRequest{Stream: "lat", Kind: pb.StreamKind_STREAM_KIND_PAIRS}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CorrelatedSum(ctx, &pb.CorrelatedSumRequest{Stream: "lat"}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("correlated sum of no pairs: %v", err)
	}
	const n = 2500 // two windows of 1000 and a partial one
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = float64(i*7919%100) / 4 // 0 … 24.75, 25 pairs of each
		y[i] = float64(i%13) - 6
	}
	if _, err := s.Pipeline.Accept(ctx, &feed.Batch{Stream: "lat", Pairs: feed.Pairs{X: append([]float64(nil), x...), Y: append([]float64(nil), y...)}}); err != nil {
		t.Fatal(err)
	}
	var absY, sumY float64
	for _, v := range y {
		absY += math.Abs(v)
		sumY += v
	}
	exact := func(t0 float64, atLeast bool) (cnt uint64, sum float64) {
		for i, v := range x {
			if (!atLeast && v <= t0) || (atLeast && v >= t0) {
				cnt++
				sum += y[i]
			}
		}
		return cnt, sum
	}
	check := func(req *pb.CorrelatedSumRequest, wantT float64) {
		t.Helper()
		r, err := c.CorrelatedSum(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if !math.IsNaN(wantT) && r.Threshold != wantT {
			t.Fatalf("%v: threshold %v, want %v", req, r.Threshold, wantT)
		}
		if r.Count != n || r.SumY != sumY || r.SumAbsY != absY || r.MinX != 0 || r.MaxX != 24.75 || r.Epsilon != 0.01 ||
			r.CountWidth != 0.01*n || r.SumWidth != 0.01*absY {
			t.Fatalf("%v: totals %v", req, r)
		}
		sides := []*pb.CorrelatedSumBounds{r.AtMost, r.AtLeast}
		for i, b := range sides {
			asked := req.Side == pb.SumSide_SUM_SIDE_BOTH || int(req.Side) == i+1
			if (b != nil) != asked {
				t.Fatalf("%v: side %d answered %v", req, i, b)
			}
			if b == nil {
				continue
			}
			cnt, sum := exact(r.Threshold, i == 1)
			if cnt < b.CountMin || cnt > b.CountMax || float64(b.CountMax-b.CountMin) > r.CountWidth {
				t.Fatalf("%v: side %d count %d outside [%d, %d] or wider than %v", req, i, cnt, b.CountMin, b.CountMax, r.CountWidth)
			}
			if sum < b.SumMin || sum > b.SumMax || b.SumMax-b.SumMin > r.SumWidth {
				t.Fatalf("%v: side %d sum %v outside [%v, %v] or wider than %v", req, i, sum, b.SumMin, b.SumMax, r.SumWidth)
			}
		}
		if req.Aggregate == pb.SumAggregate_SUM_AGGREGATE_QUANTILE {
			below, _ := exact(math.Nextafter(r.Aggregate, math.Inf(-1)), false)
			upTo, _ := exact(r.Aggregate, false)
			want := uint64(math.Ceil(req.Phi * n))
			slack := uint64((0.01*n + 1) / 2)
			if upTo+slack < want || below+1 > want+slack || r.AggregateRankMin > upTo || r.AggregateRankMax < below {
				t.Fatalf("%v: quantile %v of ranks (%d, %d], reported [%d, %d], want %d ± %d", req, r.Aggregate, below, upTo, r.AggregateRankMin, r.AggregateRankMax, want, slack)
			}
		}
	}
	two := 2.0
	check(&pb.CorrelatedSumRequest{Stream: "lat", Constant: 10}, 10)
	check(&pb.CorrelatedSumRequest{Stream: "lat", Constant: 10.1, Side: pb.SumSide_SUM_SIDE_AT_LEAST}, 10.1)
	check(&pb.CorrelatedSumRequest{Stream: "lat", Constant: 5, Factor: &two, Side: pb.SumSide_SUM_SIDE_AT_MOST}, 10)
	check(&pb.CorrelatedSumRequest{Stream: "lat", Aggregate: pb.SumAggregate_SUM_AGGREGATE_QUANTILE, Phi: 0.5}, math.NaN())
	check(&pb.CorrelatedSumRequest{Stream: "lat", Aggregate: pb.SumAggregate_SUM_AGGREGATE_QUANTILE, Phi: 0.99, Side: pb.SumSide_SUM_SIDE_AT_LEAST}, math.NaN())
	check(&pb.CorrelatedSumRequest{Stream: "lat", Aggregate: pb.SumAggregate_SUM_AGGREGATE_MIN}, 0)
	check(&pb.CorrelatedSumRequest{Stream: "lat", Aggregate: pb.SumAggregate_SUM_AGGREGATE_MAX}, 24.75)
	check(&pb.CorrelatedSumRequest{Stream: "lat", Aggregate: pb.SumAggregate_SUM_AGGREGATE_MEAN, Factor: &two}, 2*12.375)

	st, err := c.Stats(ctx, &pb.StatsRequest{Stream: "lat"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Kind != pb.StreamKind_STREAM_KIND_PAIRS || st.Count != n || !st.Float64 || st.Min != 0 || st.Max != 24.75 {
		t.Fatalf("stats %v", st)
	}

	if _, err := c.CreateStream(ctx, &pb.CreateStreamRequest{Stream: "v"}); err != nil {
		t.Fatal(err)
	}
	inf := math.Inf(1)
	for _, bad := range []struct {
		req  *pb.CorrelatedSumRequest
		code codes.Code
	}{
		{&pb.CorrelatedSumRequest{Stream: "nope"}, codes.NotFound},
		{&pb.CorrelatedSumRequest{Stream: "v"}, codes.FailedPrecondition},
		{&pb.CorrelatedSumRequest{Stream: "lat", LastN: 10}, codes.InvalidArgument},
		{&pb.CorrelatedSumRequest{Stream: "lat", Last: durationpb.New(1e9)}, codes.InvalidArgument},
		{&pb.CorrelatedSumRequest{Stream: "lat", Scope: pb.Scope_SCOPE_CLUSTER}, codes.FailedPrecondition},
		{&pb.CorrelatedSumRequest{Stream: "lat", Aggregate: pb.SumAggregate_SUM_AGGREGATE_QUANTILE, Phi: 1.5}, codes.InvalidArgument},
		{&pb.CorrelatedSumRequest{Stream: "lat", Constant: math.NaN()}, codes.InvalidArgument},
		{&pb.CorrelatedSumRequest{Stream: "lat", Factor: &inf}, codes.InvalidArgument},
		{&pb.CorrelatedSumRequest{Stream: "lat", Aggregate: pb.SumAggregate_SUM_AGGREGATE_MAX, Factor: proto.Float64(1e308)}, codes.InvalidArgument},
		{&pb.CorrelatedSumRequest{Stream: "lat", Aggregate: 99}, codes.InvalidArgument},
		{&pb.CorrelatedSumRequest{Stream: "lat", Side: 7}, codes.InvalidArgument},
	} {
		if _, err := c.CorrelatedSum(ctx, bad.req); status.Code(err) != bad.code {
			t.Errorf("%v: %v, want %v", bad.req, err, bad.code)
		}
	}
}

// TestPushPairs pushes pairs, bad ones among them, and checks what is
// accepted and rejected, and the refusals: pairs to a value stream,
// values to a pair stream, x and y of different lengths, two payloads.
func TestPushPairs(t *testing.T) {
	s := &Server{}
	c := dial(t, serve(t, s, nil))
	ctx := context.Background()
	nan, inf := math.NaN(), math.Inf(-1)
	push := func(reqs ...*pb.PushRequest) (*pb.PushResponse, error) {
		p, err := c.Push(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range reqs {
			if err := p.Send(r); err != nil {
				t.Fatal(err)
			}
		}
		return p.CloseAndRecv()
	}
	resp, err := push(
		&pb.PushRequest{Stream: "lat", Pairs: &pb.Pairs{X: []float64{1, nan, 2, 3, math.Copysign(0, -1)}, Y: []float64{10, 1, inf, 30, -5}}},
		&pb.PushRequest{Stream: "lat", Pairs: &pb.Pairs{X: []float64{4}, Y: []float64{nan}}},
	)
	if err != nil || resp.Accepted != 3 || resp.Rejected != 3 {
		t.Fatalf("push: %v, %v", resp, err)
	}
	st, err := c.Stats(ctx, &pb.StatsRequest{Stream: "lat"})
	if err != nil || st.Kind != pb.StreamKind_STREAM_KIND_PAIRS || st.Count != 3 || st.Rejected["nan"] != 2 || st.Rejected["inf"] != 1 || st.Min != 0 {
		t.Fatalf("stats %v, %v", st, err)
	}
	r, err := c.CorrelatedSum(ctx, &pb.CorrelatedSumRequest{Stream: "lat", Constant: 1})
	if err != nil || r.AtMost.CountMin != 2 || r.AtMost.SumMin != 5 || r.AtMost.SumMax != 5 || r.SumAbsY != 45 {
		t.Fatalf("x ≤ 1: %v, %v", r, err)
	}
	// Bad pairs alone to a new name create no stream.
	if resp, err := push(&pb.PushRequest{Stream: "none", Pairs: &pb.Pairs{X: []float64{nan}, Y: []float64{1}}}); err != nil || resp.Rejected != 1 {
		t.Fatalf("bad pairs alone: %v, %v", resp, err)
	}
	if _, err := c.Stats(ctx, &pb.StatsRequest{Stream: "none"}); status.Code(err) != codes.NotFound {
		t.Fatalf("bad pairs created a stream: %v", err)
	}
	if _, err := push(&pb.PushRequest{Stream: "v", Values: []float64{1}}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		req  *pb.PushRequest
		code codes.Code
	}{
		{&pb.PushRequest{Stream: "v", Pairs: &pb.Pairs{X: []float64{1}, Y: []float64{2}}}, codes.FailedPrecondition},
		{&pb.PushRequest{Stream: "lat", Values: []float64{1}}, codes.FailedPrecondition},
		{&pb.PushRequest{Stream: "lat", Items: []string{"a"}}, codes.FailedPrecondition},
		{&pb.PushRequest{Stream: "lat", Pairs: &pb.Pairs{X: []float64{1, 2}, Y: []float64{2}}}, codes.InvalidArgument},
		{&pb.PushRequest{Stream: "lat", Values: []float64{1}, Pairs: &pb.Pairs{X: []float64{1}, Y: []float64{2}}}, codes.InvalidArgument},
	} {
		if _, err := push(bad.req); status.Code(err) != bad.code {
			t.Errorf("push %v: %v, want %v", bad.req, err, bad.code)
		}
	}
	// A pair stream answers no value or item questions.
	if _, err := c.Quantiles(ctx, &pb.QuantilesRequest{Stream: "lat", Phis: []float64{0.5}}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("quantiles of a pair stream: %v", err)
	}
	if _, err := c.Ranks(ctx, &pb.RanksRequest{Stream: "lat", Values: []float64{1}}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("ranks of a pair stream: %v", err)
	}
	if _, err := c.HeavyHitters(ctx, &pb.HeavyHittersRequest{Stream: "lat", Support: 0.5}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("heavy hitters of a pair stream: %v", err)
	}
	if _, err := c.Frequencies(ctx, &pb.FrequenciesRequest{Stream: "lat", Values: []float64{1}}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("frequencies of a pair stream: %v", err)
	}
	if st, _ := c.Stats(ctx, &pb.StatsRequest{Stream: "v"}); st.Rejected["wrong_kind"] != 1 {
		t.Errorf("pairs to a value stream not counted as wrong_kind: %v", st)
	}
	if st, _ := c.Stats(ctx, &pb.StatsRequest{Stream: "lat"}); st.Rejected["wrong_kind"] != 2 || st.Count != 3 {
		t.Errorf("values and items to a pair stream not counted as wrong_kind: %v", st)
	}
}
