package api

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	pb "streamd/api/proto/streamd/v1"
)

// TestWindowQueriesWait: past MaxWindowQueries under way, a query of the
// last n values or a time window waits for one to end; other queries do
// not wait.
func TestWindowQueriesWait(t *testing.T) {
	s := &Server{MaxWindowQueries: 1}
	c := dial(t, serve(t, s, nil))
	accept(t, s, "w", 1, 2, 3)
	bg := context.Background()
	slots := s.windowSlots()
	slots <- struct{}{} // a window query under way
	for _, req := range []*pb.QuantilesRequest{
		{Stream: "w", Phis: []float64{0.5}, LastN: 2},
		{Stream: "w", Phis: []float64{0.5}, Last: durationpb.New(time.Hour)},
	} {
		ctx, cancel := context.WithTimeout(bg, 100*time.Millisecond)
		_, err := c.Quantiles(ctx, req)
		cancel()
		if status.Code(err) != codes.DeadlineExceeded {
			t.Errorf("%v while another is under way: %v, want DeadlineExceeded", req, err)
		}
	}
	if r, err := c.Quantiles(bg, &pb.QuantilesRequest{Stream: "w", Phis: []float64{0.5}}); err != nil || r.Count != 3 {
		t.Errorf("all history: %v, %v", r, err)
	}
	if r, err := c.Stats(bg, &pb.StatsRequest{Stream: "w"}); err != nil || r.Count != 3 {
		t.Errorf("stats: %v, %v", r, err)
	}
	<-slots
	if r, err := c.Quantiles(bg, &pb.QuantilesRequest{Stream: "w", Phis: []float64{0.5}, LastN: 2}); err != nil || r.Count != 2 {
		t.Errorf("last 2 once none is under way: %v, %v", r, err)
	}
}
