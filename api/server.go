// Package api implements the streamd.v1.Streamd gRPC service over a
// pipeline's streams: pushes, quantile, rank, heavy-hitter and frequency
// queries over all history or the last n values, stream management, and
// continuous (Watch) queries.
//
// Errors carry gRPC status codes: NotFound for an unknown stream,
// InvalidArgument for bad arguments (φ outside [0, 1], support outside
// (ε, 1], NaN or ±Inf, last_n above the sliding window), AlreadyExists,
// ResourceExhausted for the stream limit and when the memory budget cannot
// hold a new stream's worst case, Unavailable after shutdown.
package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "streamd/api/proto/streamd/v1"
	"streamd/ingest"
	"streamd/lossy"
	"streamd/pipeline"
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
	// MinWatchInterval bounds how often Watch answers (default 100ms).
	MinWatchInterval time.Duration
}

var _ pb.StreamdServer = (*Server)(nil)

// Push accepts the values of every message of the call. NaN and ±Inf are
// rejected and counted, like bad input on other sources; the call fails
// only for a bad stream name, or when a new stream is refused (the stream
// limit, the memory budget), and then the values of earlier messages stay
// accepted.
func (s *Server) Push(stream grpc.ClientStreamingServer[pb.PushRequest, pb.PushResponse]) error {
	ctx := stream.Context()
	var resp pb.PushResponse
	durable := false
	for {
		req, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		durable = durable || req.Durable
		if err := ingest.ValidStreamName(req.Stream); err != nil {
			return status.Errorf(codes.InvalidArgument, "push: %v", err)
		}
		clean := ingest.CleanValues(req.Stream, req.Values, s.Pipeline)
		resp.Rejected += uint64(len(req.Values) - len(clean))
		if err := s.Pipeline.Accept(ctx, req.Stream, clean); err != nil {
			if reason, ok := ingest.RefusalReason(err); ok {
				s.Pipeline.Reject(req.Stream, reason, len(clean))
			}
			return statusError("push", err)
		}
		resp.Accepted += uint64(len(clean))
	}
	if durable && s.Durable != nil {
		if err := s.Durable(ctx); err != nil {
			return status.Errorf(codes.Unavailable, "push: wait for checkpoint: %v", err)
		}
	}
	return stream.SendAndClose(&resp)
}

// statusError maps pipeline errors to gRPC status codes.
func statusError(op string, err error) error {
	code := codes.Internal
	switch {
	case errors.Is(err, pipeline.ErrNotFound):
		code = codes.NotFound
	case errors.Is(err, pipeline.ErrExists):
		code = codes.AlreadyExists
	case errors.Is(err, ingest.ErrStreamLimit), errors.Is(err, ingest.ErrMemoryBudget):
		code = codes.ResourceExhausted
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

// checkLastN validates last_n against the stream's sliding window.
func checkLastN(op string, st *pipeline.Stream, n uint64) error {
	if c := st.Config().SlidingWindow; n > uint64(c) {
		return status.Errorf(codes.InvalidArgument, "%s: last_n %d exceeds the sliding window of %d values", op, n, c)
	}
	return nil
}

func checkFinite(op, what string, xs []float64) error {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return status.Errorf(codes.InvalidArgument, "%s: %s %v is not finite", op, what, x)
		}
	}
	return nil
}

// answers is what the all-history view and a last-n snapshot both answer.
type answers interface {
	Count() int64
	Rank(v float64) (lo, hi int64)
	Frequency(v float64) (lo, hi int64)
	HeavyHitters(support float64) []lossy.Entry
}

// lookup returns the named stream, checking lastN against its sliding
// window: NotFound for an unknown stream, InvalidArgument for a lastN above
// the window.
func (s *Server) lookup(op, name string, lastN uint64) (*pipeline.Stream, error) {
	st, err := s.stream(op, name)
	if err != nil {
		return nil, err
	}
	if err := checkLastN(op, st, lastN); err != nil {
		return nil, err
	}
	return st, nil
}

// view returns st's answers over the last lastN values, or over all
// history when lastN is 0; counts says whether frequencies are needed.
func view(op string, st *pipeline.Stream, lastN uint64, counts bool) (answers, error) {
	if lastN == 0 {
		return st.View(counts), nil
	}
	snap, err := st.Last(int64(lastN))
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%s: %v", op, err)
	}
	return snap, nil
}

// answersFor looks a stream up and returns its answers (see lookup, view).
func (s *Server) answersFor(op, name string, lastN uint64, counts bool) (answers, error) {
	st, err := s.lookup(op, name, lastN)
	if err != nil {
		return nil, err
	}
	return view(op, st, lastN, counts)
}

// Quantiles answers φ-quantiles over all history or the last n values.
func (s *Server) Quantiles(ctx context.Context, req *pb.QuantilesRequest) (*pb.QuantilesResponse, error) {
	const op = "quantiles"
	for _, phi := range req.Phis {
		if !(phi >= 0 && phi <= 1) {
			return nil, status.Errorf(codes.InvalidArgument, "%s: φ %v outside [0, 1]", op, phi)
		}
	}
	st, err := s.lookup(op, req.Stream, req.LastN)
	if err != nil {
		return nil, err
	}
	return quantiles(st, req.Phis, req.LastN)
}

func quantiles(st *pipeline.Stream, phis []float64, lastN uint64) (*pb.QuantilesResponse, error) {
	resp := &pb.QuantilesResponse{Epsilon: st.Config().Epsilon}
	if lastN > 0 {
		snap, err := st.Last(int64(lastN))
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "quantiles: %v", err)
		}
		resp.Count = uint64(snap.Count())
		if snap.Count() == 0 {
			return resp, nil
		}
		for _, phi := range phis {
			v, lo, hi := snap.Quantile(phi)
			resp.Quantiles = append(resp.Quantiles, &pb.QuantilesResponse_Quantile{Phi: phi, Value: v, RankMin: uint64(lo), RankMax: uint64(hi)})
		}
		return resp, nil
	}
	v := st.View(false)
	resp.Count = uint64(v.Count())
	if v.Count() == 0 {
		return resp, nil
	}
	for _, phi := range phis {
		q := v.Quantile(phi)
		resp.Quantiles = append(resp.Quantiles, &pb.QuantilesResponse_Quantile{Phi: phi, Value: q.Value, RankMin: uint64(q.RMin), RankMax: uint64(q.RMax)})
	}
	return resp, nil
}

// Ranks answers, for each value, bounds on the number of values ≤ it.
func (s *Server) Ranks(ctx context.Context, req *pb.RanksRequest) (*pb.RanksResponse, error) {
	const op = "ranks"
	if err := checkFinite(op, "value", req.Values); err != nil {
		return nil, err
	}
	a, err := s.answersFor(op, req.Stream, req.LastN, false)
	if err != nil {
		return nil, err
	}
	resp := &pb.RanksResponse{Count: uint64(a.Count())}
	for _, x := range req.Values {
		lo, hi := a.Rank(x)
		resp.Ranks = append(resp.Ranks, &pb.RanksResponse_Rank{Value: x, RankMin: uint64(lo), RankMax: uint64(hi)})
	}
	return resp, nil
}

// HeavyHitters answers the values whose count may reach support·count.
func (s *Server) HeavyHitters(ctx context.Context, req *pb.HeavyHittersRequest) (*pb.HeavyHittersResponse, error) {
	const op = "heavy hitters"
	st, err := s.lookup(op, req.Stream, req.LastN)
	if err != nil {
		return nil, err
	}
	return heavyHitters(st, req.Support, req.LastN)
}

func heavyHitters(st *pipeline.Stream, support float64, lastN uint64) (*pb.HeavyHittersResponse, error) {
	eps := st.Config().Epsilon
	if !(support > eps && support <= 1) {
		return nil, status.Errorf(codes.InvalidArgument, "heavy hitters: support %v outside (ε=%v, 1]", support, eps)
	}
	a, err := view("heavy hitters", st, lastN, true)
	if err != nil {
		return nil, err
	}
	resp := &pb.HeavyHittersResponse{Epsilon: eps, Count: uint64(a.Count())}
	for _, e := range a.HeavyHitters(support) {
		resp.Items = append(resp.Items, &pb.Item{Value: e.Value, CountMin: uint64(e.Count), CountMax: uint64(e.Count + e.Delta)})
	}
	return resp, nil
}

// Frequencies answers bounds on the count of each value.
func (s *Server) Frequencies(ctx context.Context, req *pb.FrequenciesRequest) (*pb.FrequenciesResponse, error) {
	const op = "frequencies"
	if err := checkFinite(op, "value", req.Values); err != nil {
		return nil, err
	}
	a, err := s.answersFor(op, req.Stream, req.LastN, true)
	if err != nil {
		return nil, err
	}
	resp := &pb.FrequenciesResponse{}
	for _, x := range req.Values {
		lo, hi := a.Frequency(x)
		resp.Items = append(resp.Items, &pb.Item{Value: x, CountMin: uint64(lo), CountMax: uint64(hi)})
	}
	return resp, nil
}

// Stats answers a stream's statistics.
func (s *Server) Stats(ctx context.Context, req *pb.StatsRequest) (*pb.StatsResponse, error) {
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
	}
	m := s.Pipeline.Memory()
	resp.DaemonMemoryLimitBytes, resp.DaemonMemoryUsedBytes = uint64(m.Limit), uint64(max(m.Used, 0))
	for r, n := range x.Rejected {
		resp.Rejected[string(r)] = n
		resp.RejectedTotal += n
	}
	return resp, nil
}

// CreateStream creates a stream with its own configuration.
func (s *Server) CreateStream(ctx context.Context, req *pb.CreateStreamRequest) (*pb.CreateStreamResponse, error) {
	if req.WindowSize > summary.MaxWindowSize || req.SlidingWindow > summary.MaxSlidingWindow {
		return nil, status.Errorf(codes.InvalidArgument, "create stream: window_size %d or sliding_window %d out of range", req.WindowSize, req.SlidingWindow)
	}
	cfg := summary.Config{Epsilon: req.Epsilon, WindowSize: int(req.WindowSize), SlidingWindow: int64(req.SlidingWindow), Float64: req.Float64}
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

// ListStreams lists the streams' names in ascending order.
func (s *Server) ListStreams(ctx context.Context, req *pb.ListStreamsRequest) (*pb.ListStreamsResponse, error) {
	return &pb.ListStreamsResponse{Streams: s.Pipeline.List()}, nil
}

// Watch sends the stream's quantiles and heavy hitters every interval
// until the client goes away, or the stream is deleted (NotFound).
func (s *Server) Watch(req *pb.WatchRequest, stream grpc.ServerStreamingServer[pb.WatchResponse]) error {
	const op = "watch"
	for _, phi := range req.Phis {
		if !(phi >= 0 && phi <= 1) {
			return status.Errorf(codes.InvalidArgument, "%s: φ %v outside [0, 1]", op, phi)
		}
	}
	st, err := s.stream(op, req.Stream)
	if err != nil {
		return err
	}
	if req.Support != 0 {
		if eps := st.Config().Epsilon; !(req.Support > eps && req.Support <= 1) {
			return status.Errorf(codes.InvalidArgument, "%s: support %v outside (ε=%v, 1]", op, req.Support, eps)
		}
	}
	interval := time.Duration(req.IntervalMs) * time.Millisecond
	if interval == 0 {
		interval = time.Second
	}
	interval = max(interval, s.minWatchInterval())
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	ctx := stream.Context()
	for {
		if _, err := s.Pipeline.Stream(req.Stream); err != nil {
			return statusError(op, err)
		}
		resp := &pb.WatchResponse{TimeUnixNano: time.Now().UnixNano()}
		if len(req.Phis) > 0 {
			if resp.Quantiles, err = quantiles(st, req.Phis, 0); err != nil {
				return err
			}
		}
		if req.Support != 0 {
			if resp.HeavyHitters, err = heavyHitters(st, req.Support, 0); err != nil {
				return err
			}
		}
		if err := stream.Send(resp); err != nil {
			return fmt.Errorf("watch: send: %w", err)
		}
		select {
		case <-ticker.C:
		case <-ctx.Done():
			return nil
		}
	}
}

func (s *Server) minWatchInterval() time.Duration {
	if s.MinWatchInterval > 0 {
		return s.MinWatchInterval
	}
	return 100 * time.Millisecond
}
