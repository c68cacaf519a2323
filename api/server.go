// Package api implements the streamd.v1.Streamd gRPC service over a
// pipeline's streams: pushes of values and items, quantile, rank,
// heavy-hitter and frequency queries over all history, the last n values
// or a time window, correlated sums of pair streams over all history,
// stream management, and continuous (Watch) queries.
//
// Queries with scope SCOPE_CLUSTER are answered by the Server's Cluster
// (package cluster) for the whole Kafka consumer group.
//
// What one call may ask and answer is bounded, so that no client makes a
// reply, or the work behind it, as large as it likes: see MaxQueryValues
// and MaxReplyItems (InvalidArgument and ResourceExhausted past them),
// Watch's limits, and UnaryInterceptor.
//
// Errors carry gRPC status codes: NotFound for an unknown stream,
// InvalidArgument for bad arguments (φ outside [0, 1], support outside
// (ε, 1], NaN or ±Inf, last_n above the sliding window, a negative last,
// last_n or last with scope SCOPE_CLUSTER), AlreadyExists,
// FailedPrecondition for values, items and pairs sent to or asked of a
// stream of another kind, for SCOPE_CLUSTER without a Cluster and for
// SCOPE_CLUSTER asked of an item stream, ResourceExhausted for the stream limit and when
// the memory budget cannot hold a new stream's worst case, Unavailable
// after shutdown (see StopPush) and for a durable Push whose checkpoint
// failed.
package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	pb "streamd/api/proto/streamd/v1"
	"streamd/cluster"
	"streamd/feed"
	"streamd/items"
	"streamd/pipeline"
	"streamd/slidingwindow"
	"streamd/summary"
)

// Server implements pb.StreamdServer.
type Server struct {
	pb.UnimplementedStreamdServer

	// Pipeline holds the streams; required.
	Pipeline *pipeline.Pipeline
	// Durable, if set, is called by a Push with durable set after its
	// values are accepted, and must return once a checkpoint covers them.
	Durable func(ctx context.Context) error
	// MinWatchInterval bounds how often Watch answers (default
	// DefaultMinWatchInterval).
	MinWatchInterval time.Duration
	// MaxWatches bounds the Watch calls open at once (default
	// DefaultMaxWatches), MaxWatchesPerConn those of one connection
	// (default DefaultMaxWatchesPerConn).
	MaxWatches, MaxWatchesPerConn int
	// MaxWindowQueries bounds the queries of the last n values or a time
	// window answered at once (default DefaultMaxWindowQueries), when
	// UnaryInterceptor is installed.
	MaxWindowQueries int

	hubOnce   sync.Once
	hub       *watchHub // shares Watch answers; see watchHub
	slotsOnce sync.Once
	slots     chan struct{} // a token per window query answered; see UnaryInterceptor

	// Cluster, if set, answers queries with scope SCOPE_CLUSTER.
	Cluster Cluster

	pushMu      sync.Mutex
	pushStopped bool
	pushStop    chan struct{}  // closed by StopPush; made on first use
	pushes      sync.WaitGroup // Push calls in progress
}

// A Cluster answers for a stream over every daemon of a group.
type Cluster interface {
	// Gather returns the stream's summaries over the cluster, with the
	// quantile summaries and the count summaries if asked for.
	Gather(ctx context.Context, stream string, quantiles, counts bool) (*cluster.Answer, error)
}

var _ pb.StreamdServer = (*Server)(nil)

// Push accepts the values, items and pairs of every message of the call.
// NaN and ±Inf values, pairs with a NaN or ±Inf, and empty or over-long
// items, are rejected and counted, like bad input on other sources; the
// call fails only for a bad stream name, when a new stream is refused (the
// stream limit, the memory budget), for values, items or pairs sent to a
// stream of another kind, for pairs whose x and y differ in length, after
// StopPush, or when a durable call's checkpoint fails. The values of earlier messages
// then stay accepted: the error's status details carry a PushResponse that
// counts them, and the message says how many.
func (s *Server) Push(stream grpc.ClientStreamingServer[pb.PushRequest, pb.PushResponse]) error {
	stop, err := s.startPush()
	if err != nil {
		return err
	}
	defer s.pushes.Done()
	ctx := stream.Context()
	type received struct {
		req *pb.PushRequest
		err error
	}
	// Messages are received on their own goroutine, so that StopPush ends
	// a call that waits for its client's next message. It ends with the
	// call, whose context is cancelled then.
	msgs := make(chan received)
	go func() {
		for {
			req, err := stream.Recv()
			select {
			case msgs <- received{req, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	var (
		resp    pb.PushResponse
		batch   items.Batch
		durable bool
	)
	for {
		var m received
		select {
		case <-stop:
			return pushError(&resp, status.New(codes.Unavailable, "push: the daemon is shutting down"))
		default:
		}
		select {
		case <-stop:
			return pushError(&resp, status.New(codes.Unavailable, "push: the daemon is shutting down"))
		case m = <-msgs:
		}
		if m.err == io.EOF {
			break
		}
		if m.err != nil {
			return m.err
		}
		req := m.req
		durable = durable || req.Durable
		if err := feed.ValidName(req.Stream); err != nil {
			return pushError(&resp, status.Newf(codes.InvalidArgument, "push: %v", err))
		}
		if req.Pairs != nil {
			if len(req.Values) > 0 || len(req.Items) > 0 {
				return pushError(&resp, status.New(codes.InvalidArgument, "push: a message carries values, items or pairs, only one of them"))
			}
			if err := s.pushPairs(ctx, req, &resp); err != nil {
				return pushError(&resp, status.Convert(err))
			}
			continue
		}
		if len(req.Items) > 0 {
			if len(req.Values) > 0 {
				return pushError(&resp, status.New(codes.InvalidArgument, "push: a message carries values or items, not both"))
			}
			if err := s.pushItems(ctx, req, &batch, &resp); err != nil {
				return pushError(&resp, status.Convert(err))
			}
			continue
		}
		if err := s.pushValues(ctx, req, &resp); err != nil {
			return pushError(&resp, status.Convert(err))
		}
	}
	if durable && s.Durable != nil {
		if err := s.Durable(ctx); err != nil {
			return pushError(&resp, status.Newf(codes.Unavailable, "push: wait for checkpoint: %v", err))
		}
	}
	return stream.SendAndClose(&resp)
}

// startPush counts a Push call in, or fails with Unavailable after
// StopPush. It returns the channel that StopPush closes.
func (s *Server) startPush() (<-chan struct{}, error) {
	s.pushMu.Lock()
	defer s.pushMu.Unlock()
	if s.pushStopped {
		return nil, status.Error(codes.Unavailable, "push: the daemon is shutting down")
	}
	if s.pushStop == nil {
		s.pushStop = make(chan struct{})
	}
	s.pushes.Add(1)
	return s.pushStop, nil
}

// StopPush stops ingest over Push, as a shutdown does before it writes its
// final checkpoint: new calls fail with Unavailable, and calls in progress
// stop receiving and fail with Unavailable (see Push: what they accepted
// before stays accepted, and the error says how much), except a durable
// call past its last message, which still waits for its checkpoint.
// StopPush returns once every call has returned, or with ctx's error when
// ctx ends first.
func (s *Server) StopPush(ctx context.Context) error {
	s.pushMu.Lock()
	if !s.pushStopped {
		s.pushStopped = true
		if s.pushStop == nil {
			s.pushStop = make(chan struct{})
		}
		close(s.pushStop)
	}
	s.pushMu.Unlock()
	done := make(chan struct{})
	go func() {
		s.pushes.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop push: %w", ctx.Err())
	}
}

// pushError is st, a failed Push's status, with what the call accepted
// before it failed: in the message and as a PushResponse in the details.
func pushError(resp *pb.PushResponse, st *status.Status) error {
	if resp.Accepted == 0 && resp.Rejected == 0 {
		return st.Err()
	}
	msg := fmt.Sprintf("%s (%d values of this call accepted and %d rejected before; the rest not accepted)", st.Message(), resp.Accepted, resp.Rejected)
	with, err := status.New(st.Code(), msg).WithDetails(resp)
	if err != nil {
		return status.Error(st.Code(), msg)
	}
	return with.Err()
}

// pushValues accepts the values of req. The stream rounds them as it
// keeps them (float32 unless it keeps float64), so that a value beyond
// float32's range is counted as rejected (inf), not as accepted; the
// rejects of the values are counted after the good values, which create a
// new stream.
func (s *Server) pushValues(ctx context.Context, req *pb.PushRequest, resp *pb.PushResponse) error {
	var rejects rejectCounter
	defer func() { rejects.report(s.Pipeline, req.Stream) }()
	clean, nan, inf := feed.CleanValues(req.Values)
	rejects.add(feed.ReasonNaN, nan)
	rejects.add(feed.ReasonInf, inf)
	resp.Rejected += uint64(nan + inf)
	n, err := s.Pipeline.Accept(ctx, &feed.Batch{Stream: req.Stream, Values: clean})
	if err != nil {
		if reason, ok := feed.RefusalReason(err); ok {
			s.Pipeline.Reject(req.Stream, feed.Local, reason, len(clean))
		}
		return statusError("push", err)
	}
	resp.Accepted += uint64(n)
	resp.Rejected += uint64(len(clean) - n)
	return nil
}

// rejectCounter holds the rejects of one message, to be counted after its
// good values or items: they create a new stream, which then counts them.
type rejectCounter map[feed.Reason]int

// add adds n rejects for reason.
func (r *rejectCounter) add(reason feed.Reason, n int) {
	if n == 0 {
		return
	}
	if *r == nil {
		*r = make(rejectCounter)
	}
	(*r)[reason] += n
}

// report counts the rejects on p, for stream.
func (r rejectCounter) report(p *pipeline.Pipeline, stream string) {
	for reason, n := range r {
		p.Reject(stream, feed.Local, reason, n)
	}
}

// pushItems accepts the items of req, counting the invalid ones.
func (s *Server) pushItems(ctx context.Context, req *pb.PushRequest, batch *items.Batch, resp *pb.PushResponse) error {
	batch.Reset()
	var rejects rejectCounter
	defer func() { rejects.report(s.Pipeline, req.Stream) }() // after the items, which create a new stream
	for _, x := range req.Items {
		if reason := feed.ItemReason([]byte(x)); reason != "" {
			rejects.add(reason, 1)
			resp.Rejected++
			continue
		}
		batch.AppendString(x)
	}
	if batch.Len() == 0 {
		return nil
	}
	n, err := s.Pipeline.Accept(ctx, &feed.Batch{Stream: req.Stream, Items: batch})
	if err != nil {
		if reason, ok := feed.RefusalReason(err); ok {
			s.Pipeline.Reject(req.Stream, feed.Local, reason, batch.Len())
		}
		return statusError("push", err)
	}
	resp.Accepted += uint64(n)
	resp.Rejected += uint64(batch.Len() - n) // those a hierarchy stream rejects
	return nil
}

// statusError maps pipeline errors to gRPC status codes.
func statusError(op string, err error) error {
	code := codes.Internal
	switch {
	case errors.Is(err, pipeline.ErrNotFound):
		code = codes.NotFound
	case errors.Is(err, pipeline.ErrExists):
		code = codes.AlreadyExists
	case errors.Is(err, feed.ErrStreamLimit), errors.Is(err, feed.ErrMemoryBudget):
		code = codes.ResourceExhausted
	case errors.Is(err, pipeline.ErrWrongKind):
		code = codes.FailedPrecondition
	case errors.Is(err, pipeline.ErrClosed):
		code = codes.Unavailable
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	case errors.Is(err, summary.ErrOutOfRange), errors.Is(err, pipeline.ErrBadName):
		code = codes.InvalidArgument
	}
	return status.Errorf(code, "%s: %v", op, err)
}

// stream looks a stream up, with NotFound for an unknown one.
func (s *Server) stream(op, name string) (*pipeline.Stream, error) {
	st, err := s.Pipeline.Stream(name)
	if err != nil {
		return nil, statusError(op, err)
	}
	return st, nil
}

func checkFinite(op, what string, xs []float64) error {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return status.Errorf(codes.InvalidArgument, "%s: %s %v is not finite", op, what, x)
		}
	}
	return nil
}

// scope is what a query covers: all history, the last n values (lastN),
// or the values that arrived in the last d (last).
type scope struct {
	lastN uint64
	last  time.Duration
}

// scopeOf checks a request's last_n and last: InvalidArgument for a
// negative or invalid duration, or for both set.
func scopeOf(op string, lastN uint64, last *durationpb.Duration) (scope, error) {
	sc := scope{lastN: lastN}
	if last == nil {
		return sc, nil
	}
	if err := last.CheckValid(); err != nil {
		return sc, status.Errorf(codes.InvalidArgument, "%s: last: %v", op, err)
	}
	sc.last = last.AsDuration()
	switch {
	case sc.last < 0:
		return sc, status.Errorf(codes.InvalidArgument, "%s: last %v is negative", op, sc.last)
	case sc.last > 0 && lastN > 0:
		return sc, status.Errorf(codes.InvalidArgument, "%s: last_n and last both set", op)
	}
	return sc, nil
}

// answers are a query's answers over what it asks about — all history,
// the last n values or a time window, of this daemon or of the cluster —
// with what its response says of them besides.
type answers struct {
	summary.Answers
	cfg     summary.Config   // the stream's; a cluster's first counted part's
	st      *pipeline.Stream // the local stream; nil for SCOPE_CLUSTER
	window  *pb.TimeWindow   // what a time window covers; nil otherwise
	cluster *cluster.Answer  // the cluster's answer; nil for SCOPE_LOCAL
}

// isItems reports whether the answers are of an item stream.
func (a *answers) isItems() bool { return a.st != nil && a.st.IsItems() }

// header returns the fields every query response shares: the count, ε,
// what a time window covers and, for a cluster answer, whether it is
// partial, the partitions it misses and the members asked.
func (a *answers) header() (count uint64, eps float64, window *pb.TimeWindow, partial bool, missing []*pb.KafkaPartition, members []*pb.ClusterMember) {
	if a.cluster != nil {
		count, eps, partial, missing, members = clusterHeader(a.cluster)
		return count, eps, nil, partial, missing, members
	}
	return uint64(a.Count()), a.Epsilon(), a.window, false, nil, nil
}

// query is what a query asks of a stream, for Server.resolve.
type query struct {
	op, stream string
	scope      pb.Scope
	lastN      uint64
	last       *durationpb.Duration
	ranked     bool // quantiles or ranks: refused for an item stream
	counts     bool // frequencies or heavy hitters
	// check, if set, checks the request against the stream's
	// configuration and ε (for SCOPE_CLUSTER, the cluster answer's) before
	// a local answer is made.
	check func(cfg summary.Config, eps float64) error
}

// resolve returns the answers to q over its scope: the stream's over the
// cluster for SCOPE_CLUSTER (see gather), or this daemon's over all
// history, the last n values or a time window (see lookup and
// localAnswers), with q.check applied in between.
func (s *Server) resolve(ctx context.Context, q query) (*answers, error) {
	sc, err := scopeOf(q.op, q.lastN, q.last)
	if err != nil {
		return nil, err
	}
	if q.scope == pb.Scope_SCOPE_CLUSTER {
		ca, err := s.gather(ctx, q.op, q.stream, sc, q.ranked, q.counts)
		if err != nil {
			return nil, err
		}
		if q.check != nil {
			if err := q.check(ca.Config, ca.Epsilon); err != nil {
				return nil, err
			}
		}
		return &answers{Answers: ca.View, cfg: ca.Config, cluster: ca}, nil
	}
	st, err := s.lookup(q.op, q.stream, sc, q.ranked)
	if err != nil {
		return nil, err
	}
	if q.check != nil {
		if err := q.check(st.Config(), st.Config().Epsilon); err != nil {
			return nil, err
		}
	}
	return s.localAnswers(q.op, st, sc, q.counts)
}

// lookup returns the named stream, checking sc against its sliding window:
// NotFound for an unknown stream, InvalidArgument for a lastN above the
// window, FailedPrecondition for ranks (ranked) asked of an item stream
// and for any of these questions asked of a pair stream, which answers
// CorrelatedSum and Stats only.
func (s *Server) lookup(op, name string, sc scope, ranked bool) (*pipeline.Stream, error) {
	st, err := s.stream(op, name)
	if err != nil {
		return nil, err
	}
	if st.IsPairs() {
		return nil, status.Errorf(codes.FailedPrecondition, "%s: stream %q is a pair stream: it answers correlated sums only", op, name)
	}
	if c := st.Config().SlidingWindow; sc.lastN > uint64(c) {
		return nil, status.Errorf(codes.InvalidArgument, "%s: last_n %d exceeds the sliding window of %d values", op, sc.lastN, c)
	}
	if ranked && st.IsItems() {
		return nil, status.Errorf(codes.FailedPrecondition, "%s: stream %q is an item stream: it answers frequencies and heavy hitters only", op, name)
	}
	return st, nil
}

// localAnswers returns st's answers over sc: its all-history view (with
// frequencies if counts is set), or a snapshot of its last n values or of
// a time window, with what the time window covers.
func (s *Server) localAnswers(op string, st *pipeline.Stream, sc scope, counts bool) (*answers, error) {
	a := &answers{cfg: st.Config(), st: st}
	switch {
	case sc.last > 0:
		cutoff := s.Pipeline.Now().Add(-sc.last)
		snap, span := st.Since(cutoff)
		a.Answers, a.window = snap, timeWindow(snap.Count(), span, cutoff)
	case sc.lastN > 0:
		snap, err := st.Last(int64(sc.lastN))
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "%s: %v", op, err)
		}
		a.Answers = snap
	default:
		a.Answers = st.View(counts)
	}
	return a, nil
}

func timeWindow(n int64, span slidingwindow.Span, cutoff time.Time) *pb.TimeWindow {
	return &pb.TimeWindow{
		Count: uint64(n), FirstUnixNano: span.First, LastUnixNano: span.Last,
		OlderMax: uint64(span.OlderMax), Truncated: span.Truncated, CutoffUnixNano: cutoff.UnixNano(),
	}
}

// Quantiles answers φ-quantiles over all history, the last n values or a
// time window.
func (s *Server) Quantiles(ctx context.Context, req *pb.QuantilesRequest) (*pb.QuantilesResponse, error) {
	const op = "quantiles"
	if err := checkLen(op, "φs", len(req.Phis)); err != nil {
		return nil, err
	}
	for _, phi := range req.Phis {
		if !(phi >= 0 && phi <= 1) {
			return nil, status.Errorf(codes.InvalidArgument, "%s: φ %v outside [0, 1]", op, phi)
		}
	}
	a, err := s.resolve(ctx, query{op: op, stream: req.Stream, scope: req.Scope, lastN: req.LastN, last: req.Last, ranked: true})
	if err != nil {
		return nil, err
	}
	resp := &pb.QuantilesResponse{Quantiles: quantilesOf(a, req.Phis)}
	resp.Count, resp.Epsilon, resp.Window, resp.Partial, resp.MissingPartitions, resp.Members = a.header()
	return resp, nil
}

// gather answers for a stream over the cluster: last_n and last are
// refused, since the partitions of a topic share no order of arrival (and
// the daemons no clock), and so are item streams, which each daemon counts
// under its own item key; a stream that no member has is NotFound unless
// members are missing.
func (s *Server) gather(ctx context.Context, op, stream string, sc scope, quantiles, counts bool) (*cluster.Answer, error) {
	switch {
	case sc.lastN != 0:
		return nil, status.Errorf(codes.InvalidArgument, "%s: last_n is not defined over a cluster (partitions share no order of arrival): ask each daemon with scope SCOPE_LOCAL", op)
	case sc.last != 0:
		return nil, status.Errorf(codes.InvalidArgument, "%s: last is not defined over a cluster (partitions share no order of arrival, daemons no clock): ask each daemon with scope SCOPE_LOCAL", op)
	case s.Cluster == nil:
		return nil, status.Errorf(codes.FailedPrecondition, "%s: this daemon is not part of a cluster", op)
	}
	a, err := s.Cluster.Gather(ctx, stream, quantiles, counts)
	switch {
	case errors.Is(err, cluster.ErrItemStream):
		return nil, status.Errorf(codes.FailedPrecondition, "%s: %v: ask each daemon with scope SCOPE_LOCAL", op, err)
	case err != nil:
		return nil, status.Errorf(codes.Unavailable, "%s: %v", op, err)
	case !a.Found && !a.Partial:
		return nil, status.Errorf(codes.NotFound, "%s: %v: %q in no member of the cluster", op, pipeline.ErrNotFound, stream)
	}
	return a, nil
}

// clusterHeader returns the fields every response to a cluster query
// shares: the count, ε, whether the answer is partial, the partitions it
// misses (as the API names them) and the members asked.
func clusterHeader(a *cluster.Answer) (count uint64, eps float64, partial bool, missing []*pb.KafkaPartition, members []*pb.ClusterMember) {
	missing = make([]*pb.KafkaPartition, 0, len(a.Missing))
	for _, tp := range a.Missing {
		missing = append(missing, cluster.ToPB(tp))
	}
	return uint64(a.Stats.Count), a.Epsilon, a.Partial, missing, a.Members
}

// quantilesOf answers the φ-quantiles of phis from a: none when a is
// about no values.
func quantilesOf(a summary.Answers, phis []float64) []*pb.QuantilesResponse_Quantile {
	if a.Count() == 0 {
		return nil
	}
	out := make([]*pb.QuantilesResponse_Quantile, 0, len(phis))
	for _, phi := range phis {
		v, lo, hi := a.Quantile(phi)
		out = append(out, &pb.QuantilesResponse_Quantile{Phi: phi, Value: v, RankMin: uint64(lo), RankMax: uint64(hi)})
	}
	return out
}

// ranksOf answers bounds on the rank of each of xs from a, an answer of a
// stream of cfg. Each x is first rounded as the stream stores its values
// (summary.Config.Round), so that it ranks the values it stands for: 0.1
// asked of a float32 stream is float32(0.1), as 0.1 sent to it is. A finite
// x beyond the range of float32 asked of a float32 stream, which holds no
// such value, has the exact rank of ±Inf: every value is below +3.5e38 and
// none below −3.5e38.
func ranksOf(a summary.Answers, cfg summary.Config, xs []float64) []*pb.RanksResponse_Rank {
	out := make([]*pb.RanksResponse_Rank, 0, len(xs))
	for _, x := range xs {
		var lo, hi int64
		switch r := cfg.Round(x); {
		case math.IsInf(r, 1):
			lo, hi = a.Count(), a.Count()
		case math.IsInf(r, -1):
		default:
			lo, hi = a.Rank(r)
		}
		out = append(out, &pb.RanksResponse_Rank{Value: x, RankMin: uint64(lo), RankMax: uint64(hi)})
	}
	return out
}

// heavyHittersOf answers the values of a whose count may reach
// support·count.
func heavyHittersOf(a summary.Answers, support float64) []*pb.Item {
	var out []*pb.Item
	for _, e := range a.HeavyHitters(support) {
		out = append(out, &pb.Item{Value: e.Value, CountMin: uint64(e.Count), CountMax: uint64(e.Count + e.Delta)})
	}
	return out
}

// frequenciesOf answers bounds on the count of each of xs from a, an
// answer of a stream of cfg. Each x is first rounded as the stream stores
// its values (summary.Config.Round), so that it counts the values it
// stands for; a finite x beyond the range of float32 asked of a float32
// stream, which holds no such value, has the exact count 0.
func frequenciesOf(a summary.Answers, cfg summary.Config, xs []float64) []*pb.Item {
	out := make([]*pb.Item, 0, len(xs))
	for _, x := range xs {
		var lo, hi int64
		if r := cfg.Round(x); !math.IsInf(r, 0) {
			lo, hi = a.Frequency(r)
		}
		out = append(out, &pb.Item{Value: x, CountMin: uint64(lo), CountMax: uint64(hi)})
	}
	return out
}

// Ranks answers, for each value, bounds on the number of values ≤ it.
func (s *Server) Ranks(ctx context.Context, req *pb.RanksRequest) (*pb.RanksResponse, error) {
	const op = "ranks"
	if err := checkLen(op, "values", len(req.Values)); err != nil {
		return nil, err
	}
	if err := checkFinite(op, "value", req.Values); err != nil {
		return nil, err
	}
	a, err := s.resolve(ctx, query{op: op, stream: req.Stream, scope: req.Scope, lastN: req.LastN, last: req.Last, ranked: true})
	if err != nil {
		return nil, err
	}
	resp := &pb.RanksResponse{Ranks: ranksOf(a, a.cfg, req.Values)}
	resp.Count, resp.Epsilon, resp.Window, resp.Partial, resp.MissingPartitions, resp.Members = a.header()
	return resp, nil
}

// HeavyHitters answers the values (or items) whose count may reach
// support·count.
func (s *Server) HeavyHitters(ctx context.Context, req *pb.HeavyHittersRequest) (*pb.HeavyHittersResponse, error) {
	const op = "heavy hitters"
	check := func(_ summary.Config, eps float64) error {
		if !(req.Support > eps && req.Support <= 1) {
			return status.Errorf(codes.InvalidArgument, "%s: support %v outside (ε=%v, 1]", op, req.Support, eps)
		}
		return nil
	}
	a, err := s.resolve(ctx, query{op: op, stream: req.Stream, scope: req.Scope, lastN: req.LastN, last: req.Last, counts: true, check: check})
	if err != nil {
		return nil, err
	}
	resp := &pb.HeavyHittersResponse{}
	if resp.Items, err = heavyItems(op, a, req.Support, MaxReplyItems); err != nil {
		return nil, err
	}
	resp.Count, resp.Epsilon, resp.Window, resp.Partial, resp.MissingPartitions, resp.Members = a.header()
	return resp, nil
}

// heavyItems answers the heavy hitters of a for support, with their
// strings for an item stream: ResourceExhausted when more than limit items
// reach it.
func heavyItems(op string, a *answers, support float64, limit int) ([]*pb.Item, error) {
	if err := checkItems(op, len(a.HeavyHitters(support)), support, limit); err != nil {
		return nil, err
	}
	if !a.isItems() {
		return heavyHittersOf(a, support), nil
	}
	var out []*pb.Item
	for _, h := range a.st.HeavyItems(a, support) {
		out = append(out, itemPB(h))
	}
	return out, nil
}

// checkItems fails with ResourceExhausted when n heavy hitters, more than
// limit, reach support.
func checkItems(op string, n int, support float64, limit int) error {
	if n > limit {
		return status.Errorf(codes.ResourceExhausted, "%s: %d items reach support %v, more than the %d an answer holds: ask with a larger support", op, n, support, limit)
	}
	return nil
}

func itemPB(c pipeline.ItemCount) *pb.Item {
	return &pb.Item{Item: c.Item, Fingerprint: c.Fingerprint, CountMin: uint64(c.Min), CountMax: uint64(c.Max), Shared: c.Shared}
}

// Frequencies answers bounds on the count of each value or item.
func (s *Server) Frequencies(ctx context.Context, req *pb.FrequenciesRequest) (*pb.FrequenciesResponse, error) {
	const op = "frequencies"
	if err := checkLen(op, "values and items", len(req.Values)+len(req.Items)); err != nil {
		return nil, err
	}
	if err := checkFinite(op, "value", req.Values); err != nil {
		return nil, err
	}
	check := func(cfg summary.Config, _ float64) error {
		switch {
		case cfg.Items && len(req.Values) > 0:
			return status.Errorf(codes.FailedPrecondition, "%s: stream %q is an item stream: ask for items, not values", op, req.Stream)
		case !cfg.Items && len(req.Items) > 0:
			return status.Errorf(codes.FailedPrecondition, "%s: stream %q is a value stream: ask for values, not items", op, req.Stream)
		}
		return nil
	}
	a, err := s.resolve(ctx, query{op: op, stream: req.Stream, scope: req.Scope, lastN: req.LastN, last: req.Last, counts: true, check: check})
	if err != nil {
		return nil, err
	}
	resp := &pb.FrequenciesResponse{}
	resp.Count, resp.Epsilon, resp.Window, resp.Partial, resp.MissingPartitions, resp.Members = a.header()
	if a.isItems() {
		for _, c := range a.st.ItemFrequencies(a, req.Items) {
			resp.Items = append(resp.Items, itemPB(c))
		}
		return resp, nil
	}
	resp.Items = frequenciesOf(a, a.cfg, req.Values)
	return resp, nil
}

// Stats answers a stream's statistics.
func (s *Server) Stats(ctx context.Context, req *pb.StatsRequest) (*pb.StatsResponse, error) {
	if req.Scope == pb.Scope_SCOPE_CLUSTER {
		a, err := s.gather(ctx, "stats", req.Stream, scope{}, false, false)
		if err != nil {
			return nil, err
		}
		resp := &pb.StatsResponse{
			Min: a.Stats.Min, Max: a.Stats.Max, Sum: a.Stats.Sum,
			WindowSize: uint64(a.Config.WindowSize), SlidingWindow: uint64(a.Config.SlidingWindow),
			SummaryEntries: uint64(a.Stats.Entries), SummaryBytes: uint64(a.Stats.Bytes), Rejected: a.Rejected,
		}
		resp.Count, resp.Epsilon, resp.Partial, resp.MissingPartitions, resp.Members = clusterHeader(a)
		for _, n := range a.Rejected {
			resp.RejectedTotal += n
		}
		return resp, nil
	}
	st, err := s.stream("stats", req.Stream)
	if err != nil {
		return nil, err
	}
	x := st.Stats()
	resp := &pb.StatsResponse{
		Count: uint64(x.Count), Min: x.Min, Max: x.Max, Sum: x.Sum,
		Epsilon: x.Config.Epsilon, WindowSize: uint64(x.Config.WindowSize), SlidingWindow: uint64(x.Config.SlidingWindow),
		SummaryEntries: uint64(x.Entries), SummaryBytes: uint64(x.Bytes), Float64: x.Config.Float64,
		Rejected:    make(map[string]uint64, len(x.Rejected)),
		MemoryBytes: uint64(x.Memory), MemoryReservedBytes: uint64(x.Reserved),
		Hierarchy: x.Config.Hierarchy,
	}
	m := s.Pipeline.Memory()
	resp.DaemonMemoryLimitBytes, resp.DaemonMemoryUsedBytes = uint64(m.Limit), uint64(max(m.Used, 0))
	for r, n := range x.Rejected {
		resp.Rejected[string(r)] = n
		resp.RejectedTotal += n
	}
	if x.Config.Items {
		resp.Kind = pb.StreamKind_STREAM_KIND_ITEMS
		resp.Min, resp.Max, resp.Sum = 0, 0, 0
	}
	if x.Config.Pairs {
		resp.Kind = pb.StreamKind_STREAM_KIND_PAIRS
	}
	return resp, nil
}

// CreateStream creates a stream with its own configuration.
func (s *Server) CreateStream(ctx context.Context, req *pb.CreateStreamRequest) (*pb.CreateStreamResponse, error) {
	if req.WindowSize > summary.MaxWindowSize || req.SlidingWindow > summary.MaxSlidingWindow {
		return nil, status.Errorf(codes.InvalidArgument, "create stream: window_size %d or sliding_window %d out of range", req.WindowSize, req.SlidingWindow)
	}
	cfg := summary.Config{Epsilon: req.Epsilon, WindowSize: int(req.WindowSize), SlidingWindow: int64(req.SlidingWindow), Float64: req.Float64}
	switch req.Kind {
	case pb.StreamKind_STREAM_KIND_VALUES:
	case pb.StreamKind_STREAM_KIND_ITEMS:
		cfg.Items = true
	case pb.StreamKind_STREAM_KIND_PAIRS:
		cfg.Pairs = true
	default:
		return nil, status.Errorf(codes.InvalidArgument, "create stream: unknown kind %v", req.Kind)
	}
	if req.Hierarchy != "" {
		var err error
		if cfg, err = hierarchyConfig(cfg, req.Hierarchy, req.MinSupport, s.Pipeline.Defaults().Epsilon); err != nil {
			return nil, err
		}
	}
	if _, err := s.Pipeline.Create(req.Stream, cfg); err != nil {
		var ce *summary.ConfigError
		if errors.As(err, &ce) {
			return nil, status.Errorf(codes.InvalidArgument, "create stream: %v", err)
		}
		return nil, statusError("create stream", err)
	}
	return &pb.CreateStreamResponse{}, nil
}

// DeleteStream deletes a stream.
func (s *Server) DeleteStream(ctx context.Context, req *pb.DeleteStreamRequest) (*pb.DeleteStreamResponse, error) {
	if err := s.Pipeline.Delete(req.Stream); err != nil {
		return nil, statusError("delete stream", err)
	}
	return &pb.DeleteStreamResponse{}, nil
}

// watchedGone returns NotFound once st is no longer the stream named name:
// it was deleted, and maybe created again.
func (s *Server) watchedGone(st *pipeline.Stream, name string) error {
	if cur, err := s.Pipeline.Stream(name); err != nil || cur != st {
		return statusError("watch", fmt.Errorf("%w: %q was deleted", pipeline.ErrNotFound, name))
	}
	return nil
}

// watchAnswer computes one answer of a Watch of st: NotFound once st is
// no longer the stream of its name.
func (s *Server) watchAnswer(st *pipeline.Stream, req *pb.WatchRequest, sc scope) (*pb.WatchResponse, error) {
	const op = "watch"
	if err := s.watchedGone(st, req.Stream); err != nil {
		return nil, err
	}
	v, err := s.watchHub().view(s, st, sc, req.Support != 0, s.minWatchInterval())
	if err != nil {
		return nil, err
	}
	a := v.a
	resp := &pb.WatchResponse{TimeUnixNano: v.now}
	if len(req.Phis) > 0 {
		resp.Quantiles = &pb.QuantilesResponse{Count: uint64(a.Count()), Epsilon: a.Epsilon(), Window: a.window, Quantiles: quantilesOf(a, req.Phis)}
	}
	if req.Support != 0 {
		h := &pb.HeavyHittersResponse{Count: uint64(a.Count()), Epsilon: a.Epsilon(), Window: a.window}
		if h.Items, err = heavyItems(op, a, req.Support, MaxWatchItems); err != nil {
			return nil, err
		}
		resp.HeavyHitters = h
	}
	return resp, nil
}
