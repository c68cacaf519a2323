package api

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "streamd/api/proto/streamd/v1"
	"streamd/corrsum"
	"streamd/feed"
	"streamd/pipeline"
)

// CorrelatedSum answers a correlated sum of a pair stream over all of its
// history: NotFound for an unknown stream, InvalidArgument for last_n or
// last, a φ outside [0, 1], an unknown aggregate or side, or a constant,
// factor or threshold that is not finite, FailedPrecondition for scope
// SCOPE_CLUSTER, a stream of another kind, or one without pairs.
func (s *Server) CorrelatedSum(ctx context.Context, req *pb.CorrelatedSumRequest) (*pb.CorrelatedSumResponse, error) {
	const op = "correlated sum"
	switch {
	case req.LastN > 0 || req.Last != nil:
		return nil, status.Errorf(codes.InvalidArgument, "%s: last_n and last are not answered: correlated sums cover all history", op)
	case req.Scope == pb.Scope_SCOPE_CLUSTER:
		return nil, status.Errorf(codes.FailedPrecondition, "%s: scope SCOPE_CLUSTER is not answered: ask each daemon", op)
	case req.Side != pb.SumSide_SUM_SIDE_BOTH && req.Side != pb.SumSide_SUM_SIDE_AT_MOST && req.Side != pb.SumSide_SUM_SIDE_AT_LEAST:
		return nil, status.Errorf(codes.InvalidArgument, "%s: unknown side %v", op, req.Side)
	}
	factor := 1.0
	if req.Factor != nil {
		factor = *req.Factor
	}
	if err := checkFinite(op, "factor", []float64{factor}); err != nil {
		return nil, err
	}
	st, err := s.stream(op, req.Stream)
	if err != nil {
		return nil, err
	}
	if !st.IsPairs() {
		return nil, status.Errorf(codes.FailedPrecondition, "%s: stream %q is not a pair stream", op, req.Stream)
	}
	var a pipeline.PairAnswer
	switch req.Aggregate {
	case pb.SumAggregate_SUM_AGGREGATE_CONSTANT:
		t := factor * req.Constant
		if err := checkFinite(op, "threshold", []float64{req.Constant, t}); err != nil {
			return nil, err
		}
		a, err = st.CorrelatedAt(t)
		a.Aggregate = req.Constant
	case pb.SumAggregate_SUM_AGGREGATE_QUANTILE:
		if !(req.Phi >= 0 && req.Phi <= 1) {
			return nil, status.Errorf(codes.InvalidArgument, "%s: phi %v outside [0, 1]", op, req.Phi)
		}
		a, err = st.Correlated(corrsum.Query{Agg: corrsum.AggQuantile, Phi: req.Phi, Factor: factor})
	case pb.SumAggregate_SUM_AGGREGATE_MIN:
		a, err = st.Correlated(corrsum.Query{Agg: corrsum.AggMin, Factor: factor})
	case pb.SumAggregate_SUM_AGGREGATE_MAX:
		a, err = st.Correlated(corrsum.Query{Agg: corrsum.AggMax, Factor: factor})
	case pb.SumAggregate_SUM_AGGREGATE_MEAN:
		a, err = st.Correlated(corrsum.Query{Agg: corrsum.AggMean, Factor: factor})
	default:
		return nil, status.Errorf(codes.InvalidArgument, "%s: unknown aggregate %v", op, req.Aggregate)
	}
	switch {
	case errors.Is(err, corrsum.ErrEmpty):
		return nil, status.Errorf(codes.FailedPrecondition, "%s: stream %q has no pairs yet", op, req.Stream)
	case errors.Is(err, pipeline.ErrWrongKind):
		return nil, status.Errorf(codes.FailedPrecondition, "%s: %v", op, err)
	case errors.Is(err, corrsum.ErrInput):
		return nil, status.Errorf(codes.Internal, "%s: %v", op, err)
	case err != nil:
		// corrsum refuses a threshold that is not finite (a factor that
		// overflows the aggregate): the caller's to change.
		return nil, status.Errorf(codes.InvalidArgument, "%s: %v", op, err)
	}
	resp := &pb.CorrelatedSumResponse{
		Threshold: a.Threshold, Aggregate: a.Aggregate,
		AggregateRankMin: uint64(a.AggRankLo), AggregateRankMax: uint64(a.AggRankHi),
		Count: uint64(a.Totals.Count), SumY: a.Totals.SumY, SumAbsY: a.Totals.SumAbsY,
		SumX: a.Totals.SumX, MinX: a.Totals.MinX, MaxX: a.Totals.MaxX,
		Epsilon: a.Epsilon, CountWidth: a.Epsilon * float64(a.Totals.Count), SumWidth: a.Epsilon * a.Totals.SumAbsY,
	}
	if req.Side != pb.SumSide_SUM_SIDE_AT_LEAST {
		resp.AtMost = sumBoundsPB(a.AtMost)
	}
	if req.Side != pb.SumSide_SUM_SIDE_AT_MOST {
		resp.AtLeast = sumBoundsPB(a.AtLeast)
	}
	return resp, nil
}

// pushPairs accepts the pairs of req: InvalidArgument when its x and y
// differ in length; a pair with a NaN or ±Inf is rejected and counted,
// after the good pairs, which create a new stream.
func (s *Server) pushPairs(ctx context.Context, req *pb.PushRequest, resp *pb.PushResponse) error {
	x, y := req.Pairs.X, req.Pairs.Y
	if len(x) != len(y) {
		return status.Errorf(codes.InvalidArgument, "push: pairs of %d x and %d y", len(x), len(y))
	}
	var rejects rejectCounter
	defer func() { rejects.report(s.Pipeline, req.Stream) }()
	x, y, nan, inf := feed.CleanPairs(x, y)
	rejects.add(feed.ReasonNaN, nan)
	rejects.add(feed.ReasonInf, inf)
	resp.Rejected += uint64(nan + inf)
	if len(x) == 0 {
		return nil
	}
	n, err := s.Pipeline.Accept(ctx, &feed.Batch{Stream: req.Stream, Pairs: feed.Pairs{X: x, Y: y}})
	if err != nil {
		if reason, ok := feed.RefusalReason(err); ok {
			s.Pipeline.Reject(req.Stream, feed.Local, reason, len(x))
		}
		return statusError("push", err)
	}
	resp.Accepted += uint64(n)
	resp.Rejected += uint64(len(x) - n)
	return nil
}

func sumBoundsPB(b corrsum.Bounds) *pb.CorrelatedSumBounds {
	return &pb.CorrelatedSumBounds{CountMin: uint64(b.CountLo), CountMax: uint64(b.CountHi), SumMin: b.SumLo, SumMax: b.SumHi}
}
