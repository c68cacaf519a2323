package loadgen_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"streamd/api"
	pb "streamd/api/proto/streamd/v1"
	"streamd/feed"
	"streamd/gpusort"
	"streamd/loadgen"
	"streamd/pipeline"
	"streamd/summary"
	"streamd/synth"
)

// pairClient answers Stats and CorrelatedSum with a real api.Server, and
// lets a test spoil the correlated sums.
type pairClient struct {
	pb.StreamdClient
	srv   *api.Server
	spoil func(*pb.CorrelatedSumRequest, *pb.CorrelatedSumResponse)
}

func (c *pairClient) Stats(ctx context.Context, in *pb.StatsRequest, _ ...grpc.CallOption) (*pb.StatsResponse, error) {
	return c.srv.Stats(ctx, in)
}

func (c *pairClient) CorrelatedSum(ctx context.Context, in *pb.CorrelatedSumRequest, _ ...grpc.CallOption) (*pb.CorrelatedSumResponse, error) {
	r, err := c.srv.CorrelatedSum(ctx, in)
	if err == nil && c.spoil != nil {
		c.spoil(in, r)
	}
	return r, err
}

// TestVerifyPairs checks the correlated sums of a pair stream: every
// answer of the daemon's code passes, and answers that break their bounds
// fail.
func TestVerifyPairs(t *testing.T) {
	ctx := context.Background()
	p, err := pipeline.New(pipeline.Config{Sorter: gpusort.NewCPU(0), Defaults: summary.Config{Epsilon: 0.01, WindowSize: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	const n = 20500
	x, y, err := synth.GeneratePairs(3, n, synth.Random)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Accept(ctx, &feed.Batch{Stream: "lat", Pairs: feed.Pairs{X: slices.Clone(x), Y: slices.Clone(y)}}); err != nil {
		t.Fatal(err)
	}
	res := &loadgen.Result{Sent: n, Streams: map[string]*loadgen.StreamResult{"lat": {Sent: n, PairX: x, PairY: y}}}
	cfg := loadgen.VerifyConfig{Timeout: 200 * time.Millisecond, Poll: 10 * time.Millisecond, SumAt: 30}
	for _, tc := range []struct {
		name  string
		spoil func(*pb.CorrelatedSumRequest, *pb.CorrelatedSumResponse)
		ok    bool
	}{
		{"good", nil, true},
		{"count max too low", func(_ *pb.CorrelatedSumRequest, r *pb.CorrelatedSumResponse) {
			r.AtMost.CountMin, r.AtMost.CountMax = 0, 0
		}, false},
		{"count bounds too wide", func(_ *pb.CorrelatedSumRequest, r *pb.CorrelatedSumResponse) {
			r.AtLeast.CountMin, r.AtLeast.CountMax = 0, n
		}, false},
		{"sum off", func(_ *pb.CorrelatedSumRequest, r *pb.CorrelatedSumResponse) {
			r.AtLeast.SumMin, r.AtLeast.SumMax = r.AtLeast.SumMax+1, r.AtLeast.SumMax+2
		}, false},
		{"sum bounds too wide", func(_ *pb.CorrelatedSumRequest, r *pb.CorrelatedSumResponse) {
			r.AtMost.SumMin -= r.SumAbsY
		}, false},
		{"wrong maximum", func(q *pb.CorrelatedSumRequest, r *pb.CorrelatedSumResponse) {
			if q.Aggregate == pb.SumAggregate_SUM_AGGREGATE_MAX {
				r.Threshold /= 2
			}
		}, false},
		{"quantile far off", func(q *pb.CorrelatedSumRequest, r *pb.CorrelatedSumResponse) {
			if q.Aggregate == pb.SumAggregate_SUM_AGGREGATE_QUANTILE {
				r.Aggregate = r.MinX
			}
		}, false},
		{"a side missing", func(_ *pb.CorrelatedSumRequest, r *pb.CorrelatedSumResponse) { r.AtLeast = nil }, false},
	} {
		v, err := loadgen.Verify(ctx, &pairClient{srv: &api.Server{Pipeline: p}, spoil: tc.spoil}, res, cfg)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var b bytes.Buffer
		v.WriteTo(&b)
		if v.OK() != tc.ok || len(v.Streams) != 1 || len(v.Streams[0].Sums) != 6 {
			t.Errorf("%s: OK = %v, want %v\n%s", tc.name, v.OK(), tc.ok, b.String())
		}
		if tc.ok && (!strings.Contains(b.String(), "at 30 ") || !strings.Contains(b.String(), "2×mean")) {
			t.Errorf("%s: report\n%s", tc.name, b.String())
		}
	}
}

// TestRecordPairs records pairs sent over both TCP protocols with a
// Recorder behind ingest's TCP server, replays the recording, and checks
// that the same pairs come out, and that verification of the replay
// keeps them.
func TestRecordPairs(t *testing.T) {
	sent := make(map[string][]float64)
	path := recordTCP(t, 10_000, func(addr string) {
		for i, binary := range []bool{false, true} {
			stream := fmt.Sprintf("p%d", i)
			src := &loadgen.Synth{Spec: synth.Spec{Seed: uint64(i)}, Count: 5000, Streams: []string{stream}, Pairs: true}
			res, err := (&loadgen.Runner{Source: src, Target: &loadgen.TCP{Addr: addr, Binary: binary}, Keep: true}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			st := res.Streams[stream]
			for j := range st.PairX {
				sent[stream] = append(sent[stream], st.PairX[j], st.PairY[j])
			}
		}
	})
	m := &memTarget{}
	if _, err := (&loadgen.Runner{Source: &loadgen.Recording{Path: path}, Target: m}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for stream, want := range sent {
		if got := m.pairs[stream]; !slices.Equal(got, want) {
			t.Errorf("%s: replayed %d numbers, sent %d", stream, len(got), len(want))
		}
	}
}
