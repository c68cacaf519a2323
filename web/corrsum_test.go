package web

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "streamd/api/proto/streamd/v1"
	"streamd/feed"
)

// TestAPICorrelatedSum asks /api/correlated-sum of a pair stream and
// checks that it answers as the gRPC service does, parameters named as
// documented, and that it refuses bad ones.
func TestAPICorrelatedSum(t *testing.T) {
	s := openServer(t, nil)
	ctx := context.Background()
	x := []float64{3, 1, 2, 5, 4, 8, 6, 7, 10, 9}
	y := []float64{300, 100, 200, 500, 400, 800, 600, 700, -50, 900}
	if _, err := s.Pipeline.Accept(ctx, &feed.Batch{Stream: "lat", Pairs: feed.Pairs{X: x, Y: y}}); err != nil {
		t.Fatal(err)
	}
	accept(t, s, "v", []float64{1, 2, 3})
	two := 2.0
	for _, c := range []struct {
		query string
		req   *pb.CorrelatedSumRequest
	}{
		{"constant=5", &pb.CorrelatedSumRequest{Constant: 5}},
		{"aggregate=quantile&phi=0.99&side=at_least", &pb.CorrelatedSumRequest{Aggregate: pb.SumAggregate_SUM_AGGREGATE_QUANTILE, Phi: 0.99, Side: pb.SumSide_SUM_SIDE_AT_LEAST}},
		{"aggregate=SUM_AGGREGATE_MEAN&factor=2&side=SUM_SIDE_AT_MOST", &pb.CorrelatedSumRequest{Aggregate: pb.SumAggregate_SUM_AGGREGATE_MEAN, Factor: &two, Side: pb.SumSide_SUM_SIDE_AT_MOST}},
		{"aggregate=max", &pb.CorrelatedSumRequest{Aggregate: pb.SumAggregate_SUM_AGGREGATE_MAX}},
	} {
		var got pb.CorrelatedSumResponse
		getMessage(t, s, "/api/correlated-sum?stream=lat&"+c.query, &got)
		c.req.Stream = "lat"
		want, err := s.api.CorrelatedSum(ctx, c.req)
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(want, &got) {
			t.Errorf("%s: JSON answer %v, gRPC %v", c.query, &got, want)
		}
	}
	var q99 pb.CorrelatedSumResponse
	getMessage(t, s, "/api/correlated-sum?stream=lat&aggregate=quantile&phi=0.9&side=at_least", &q99)
	if q99.Threshold != 9 || q99.AtLeast.CountMin != 2 || q99.AtLeast.SumMax != 850 || q99.AtMost != nil {
		t.Errorf("x ≥ p90: %v", &q99)
	}
	// /metrics counts the pairs and sums their x, and has no quantiles of
	// them.
	_, text := get(t, http.DefaultClient, "http://"+s.ListenAddr(), "/metrics", nil)
	e := parseExposition(t, text)
	if e.value(t, `streamd_stream_value_count{stream="lat"}`) != 10 || e.value(t, `streamd_stream_value_sum{stream="lat"}`) != 55 ||
		strings.Contains(text, `streamd_stream_value{stream="lat",quantile=`) {
		t.Errorf("/metrics of a pair stream:\n%s", text)
	}
	for _, c := range []struct {
		query  string
		status int
		code   string
	}{
		{"stream=lat&aggregate=median", http.StatusBadRequest, "InvalidArgument"},
		{"stream=lat&side=left", http.StatusBadRequest, "InvalidArgument"},
		{"stream=lat&phi=x", http.StatusBadRequest, "InvalidArgument"},
		{"stream=lat&factor=x", http.StatusBadRequest, "InvalidArgument"},
		{"stream=lat&last_n=5", http.StatusBadRequest, "InvalidArgument"},
		{"aggregate=max", http.StatusBadRequest, "InvalidArgument"},
		{"stream=v&aggregate=max", http.StatusBadRequest, "FailedPrecondition"},
		{"stream=nosuch&aggregate=max", http.StatusNotFound, "NotFound"},
	} {
		resp, body := get(t, http.DefaultClient, "http://"+s.ListenAddr(), "/api/correlated-sum?"+c.query, nil)
		if resp.StatusCode != c.status || !strings.Contains(body, `"code":"`+c.code+`"`) {
			t.Errorf("%s: %s %s, want %d %s", c.query, resp.Status, body, c.status, c.code)
		}
	}
}
