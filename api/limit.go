package api

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Bounds of the questions and answers of one call, so that a reply stays
// small whatever a client asks.
const (
	// MaxQueryValues is the most φs, values or items one Quantiles, Ranks
	// or Frequencies call may ask for.
	MaxQueryValues = 10000
	// MaxReplyItems is the most heavy hitters one HeavyHitters call
	// answers: when more items reach the support, the call fails with
	// ResourceExhausted (ask with a larger support).
	MaxReplyItems = 10000
	// MaxWatchPhis is the most φs of one Watch, and MaxWatchItems the most
	// heavy hitters one of its answers holds: past it, the call ends with
	// ResourceExhausted. Answers are kept per question asked.
	MaxWatchPhis, MaxWatchItems = 100, 100
)

// checkLen fails with InvalidArgument when a call asks about n things,
// more than MaxQueryValues.
func checkLen(op, what string, n int) error {
	if n > MaxQueryValues {
		return status.Errorf(codes.InvalidArgument, "%s: %d %s, more than %d", op, n, what, MaxQueryValues)
	}
	return nil
}

// DefaultMaxWindowQueries is the default of Server.MaxWindowQueries.
const DefaultMaxWindowQueries = 4

// windowed is a request that may ask about the last n values or a time
// window.
type windowed interface {
	GetLastN() uint64
	GetLast() *durationpb.Duration
}

// UnaryInterceptor makes the queries of the last n values or a time window
// (last_n or last set) wait while MaxWindowQueries of them are being
// answered: each sorts a copy of the values it covers (up to 16 bytes a
// value, with the stream's lock held while the copy is made), so this
// bounds the memory they take and how long the stream's other callers
// (Stats, ingest) wait for its lock. A query whose context ends while it
// waits fails with the context's code. Other calls pass straight through.
func (s *Server) UnaryInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	w, ok := req.(windowed)
	if !ok || (w.GetLastN() == 0 && w.GetLast() == nil) {
		return handler(ctx, req)
	}
	slots := s.windowSlots()
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	defer func() { <-slots }()
	return handler(ctx, req)
}

// windowSlots returns the Server's tokens of window queries, made at the
// first use.
func (s *Server) windowSlots() chan struct{} {
	s.slotsOnce.Do(func() { s.slots = make(chan struct{}, orDefault(s.MaxWindowQueries, DefaultMaxWindowQueries)) })
	return s.slots
}

// healthWatch is the method of the health service's Watch.
const healthWatch = "/grpc.health.v1.Health/Watch"

// StreamInterceptor counts the health service's Watch calls with the
// Watch calls of this service, against MaxWatches and MaxWatchesPerConn:
// each holds a stream and its goroutines as long as its client likes, so
// without a limit many connections of them would take the daemon's memory.
// Other calls pass straight through.
func (s *Server) StreamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if info.FullMethod != healthWatch {
		return handler(srv, ss)
	}
	h := s.watchHub()
	conn := connOf(ss.Context())
	h.mu.Lock()
	err := h.admitLocked(conn, orDefault(s.MaxWatches, DefaultMaxWatches), orDefault(s.MaxWatchesPerConn, DefaultMaxWatchesPerConn))
	h.mu.Unlock()
	if err != nil {
		return err
	}
	defer func() {
		h.mu.Lock()
		h.releaseLocked(conn)
		h.mu.Unlock()
	}()
	return handler(srv, ss)
}
