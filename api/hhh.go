package api

import (
	"context"
	"errors"
	"math"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "streamd/api/proto/streamd/v1"
	"streamd/hhh"
	"streamd/pipeline"
	"streamd/summary"
)

// DefaultMinSupport is the least support at which a hierarchy stream's
// discounted answers have the precision its creation asked for, when
// CreateStream leaves min_support out.
const DefaultMinSupport = 0.05

// hierarchyConfig returns cfg made a hierarchy stream of hierarchy whose
// discounted answers have precision ε (cfg's, or defaultEps) at every
// support ≥ minSupport (0: DefaultMinSupport): its levels count with
// error hhh.LevelEpsilon(ε, minSupport). InvalidArgument for a bad
// hierarchy, a minSupport outside (ε, 1], or a level error below
// summary.MinEpsilon.
func hierarchyConfig(cfg summary.Config, hierarchy string, minSupport, defaultEps float64) (summary.Config, error) {
	if _, err := hhh.Parse(hierarchy); err != nil {
		return cfg, status.Errorf(codes.InvalidArgument, "create stream: hierarchy: %v", err)
	}
	eps := cfg.Epsilon
	if eps == 0 {
		eps = defaultEps
	}
	if minSupport == 0 {
		minSupport = DefaultMinSupport
	}
	if !(eps > 0 && minSupport > eps && minSupport <= 1) {
		return cfg, status.Errorf(codes.InvalidArgument, "create stream: min_support %v outside (ε=%v, 1]", minSupport, eps)
	}
	cfg.Hierarchy, cfg.Items = hierarchy, true
	cfg.Epsilon = hhh.LevelEpsilon(eps, minSupport)
	if cfg.Epsilon < summary.MinEpsilon {
		return cfg, status.Errorf(codes.InvalidArgument, "create stream: ε %v at min_support %v needs levels of error %.3g, below %v", eps, minSupport, cfg.Epsilon, summary.MinEpsilon)
	}
	return cfg, nil
}

// HierarchicalHeavyHitters answers the heavy prefixes of a hierarchy
// stream, discounted unless req.Plain, over all history, the last n items
// or a time window (pipeline.Stream.HierarchicalHeavyHitters). Its codes:
// NotFound for an unknown stream; FailedPrecondition for a stream without
// a hierarchy, for SCOPE_CLUSTER (item streams are counted under each
// daemon's key), and for a prefix whose string the stream no longer keeps
// (pipeline.ErrUnnamedPrefix); InvalidArgument for a support outside
// (ε, 1] and a bad last_n or last; ResourceExhausted for more hitters than
// MaxReplyItems.
func (s *Server) HierarchicalHeavyHitters(ctx context.Context, req *pb.HierarchicalHeavyHittersRequest) (*pb.HierarchicalHeavyHittersResponse, error) {
	const op = "hierarchical heavy hitters"
	if req.Scope == pb.Scope_SCOPE_CLUSTER {
		return nil, status.Errorf(codes.FailedPrecondition, "%s: stream %q: item streams are counted under each daemon's own item key: ask each daemon with scope SCOPE_LOCAL", op, req.Stream)
	}
	sc, err := scopeOf(op, req.LastN, req.Last)
	if err != nil {
		return nil, err
	}
	st, err := s.lookup(op, req.Stream, sc, false)
	if err != nil {
		return nil, err
	}
	q := pipeline.HHHQuery{Support: req.Support, Discounted: !req.Plain, LastN: int64(sc.lastN)}
	if sc.last > 0 {
		q.Since = s.Pipeline.Now().Add(-sc.last)
	}
	if math.IsNaN(req.Support) {
		return nil, status.Errorf(codes.InvalidArgument, "%s: support is NaN", op)
	}
	a, err := st.HierarchicalHeavyHitters(q)
	switch {
	case errors.Is(err, hhh.ErrBounds):
		return nil, status.Errorf(codes.InvalidArgument, "%s: %v", op, err)
	case errors.Is(err, pipeline.ErrUnnamedPrefix):
		return nil, status.Errorf(codes.FailedPrecondition, "%s: %v", op, err)
	case err != nil:
		return nil, statusError(op, err)
	}
	if err := checkItems(op, len(a.Hitters), req.Support, MaxReplyItems); err != nil {
		return nil, err
	}
	resp := &pb.HierarchicalHeavyHittersResponse{Count: uint64(a.Count), Epsilon: a.Epsilon, Precision: a.Precision, Plain: req.Plain}
	if sc.last > 0 {
		resp.Window = timeWindow(a.Count, a.Span, q.Since)
	}
	for _, h := range a.Hitters {
		resp.Hitters = append(resp.Hitters, &pb.HierarchicalHeavyHitter{
			Prefix: h.Prefix, Level: uint32(h.Level),
			CountMin: uint64(h.Count.Lo), CountMax: uint64(h.Count.Hi),
			DiscountedMin: uint64(h.Discounted.Lo), DiscountedMax: uint64(h.Discounted.Hi),
			Discounts: uint32(h.Discounts),
		})
	}
	return resp, nil
}
