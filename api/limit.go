package api

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

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
