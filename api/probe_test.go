package api

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	pb "streamd/api/proto/streamd/v1"
	"streamd/cluster"
	"streamd/feed"
	"streamd/gpusort"
	"streamd/internal/exact"
	"streamd/pipeline"
	"streamd/summary"
)

// oneCluster answers cluster queries from the streams of one pipeline.
type oneCluster struct{ p *pipeline.Pipeline }

func (c oneCluster) Gather(ctx context.Context, stream string, quantiles, counts bool) (*cluster.Answer, error) {
	st, err := c.p.Stream(stream)
	if err != nil {
		return &cluster.Answer{}, nil
	}
	v := st.View(counts)
	return &cluster.Answer{Found: true, View: v, Epsilon: v.Epsilon(), Config: st.Config(), Stats: summary.Stats{Count: v.Count()}}, nil
}

func openServer(t *testing.T, defaults summary.Config) *Server {
	t.Helper()
	p, err := pipeline.New(pipeline.Config{Defaults: defaults, Sorter: gpusort.NewCPU(0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return &Server{Pipeline: p, Cluster: oneCluster{p}}
}

// Values float32 cannot hold, and values on either side of float32
// rounding boundaries.
var (
	half     = 1 + math.Ldexp(1, -24) // halfway between 1 and the next float32: ties to 1
	awkward  = []float64{0.1, 13.1, 9.8, 12.5, 3.4e38, -3.4e38, math.MaxFloat32, 1e-40, math.SmallestNonzeroFloat32, 5e-324, half, math.Nextafter(half, 2), math.Nextafter(half, 0), 16777217, -0.1}
	beyond32 = []float64{3.5e38, -3.5e38, 1e300, -1e300}
)

// stored returns vals as a stream of cfg keeps them, worked out here
// independently of the daemon: rounded to float32 unless it keeps float64,
// −0 as +0, and those beyond float32's range in a float32 stream left out.
func stored(vals []float64, float64s bool) []float64 {
	var out []float64
	for _, v := range vals {
		if r, ok := storedAs(v, float64s); ok {
			out = append(out, r)
		}
	}
	return out
}

// storedAs returns v as a stream keeps it, and whether it keeps it.
func storedAs(v float64, float64s bool) (float64, bool) {
	if !float64s {
		f := float32(v)
		if math.IsInf(float64(f), 0) {
			return float64(f), false
		}
		v = float64(f)
	}
	if v == 0 {
		v = 0
	}
	return v, true
}

// TestProbesRounded checks Ranks and Frequencies of values that float32
// cannot hold, asked of float32 and float64 streams in every scope,
// against the exact answers over the values the stream holds: a value
// asked about stands for the values it is stored as.
func TestProbesRounded(t *testing.T) {
	ctx := context.Background()
	const eps = 0.01
	probes := append(append(append([]float64{}, awkward...), beyond32...), 0, math.Copysign(0, -1), 1, 1.0000001, 13.100000381469727, 0.10000000149011612)
	for _, float64s := range []bool{false, true} {
		name := map[bool]string{false: "float32", true: "float64"}[float64s]
		t.Run(name, func(t *testing.T) {
			s := openServer(t, summary.Config{Epsilon: eps, WindowSize: 64, SlidingWindow: 100000, Float64: float64s})
			// Every awkward value many times over, some more than others,
			// shuffled: enough windows to reach the summaries.
			var sent []float64
			for i := range 40 {
				for j, v := range awkward {
					for range 1 + (i+j)%3 {
						sent = append(sent, v, -v)
					}
				}
				sent = append(sent, beyond32...)
			}
			rand.New(rand.NewPCG(1, 2)).Shuffle(len(sent), func(i, j int) { sent[i], sent[j] = sent[j], sent[i] })
			if _, err := s.Pipeline.Accept(ctx, &feed.Batch{Stream: "s", Values: append([]float64(nil), sent...)}); err != nil {
				t.Fatal(err)
			}
			key := exact.New(stored(sent, float64s))
			check := func(t *testing.T, count uint64, ranks []*pb.RanksResponse_Rank, freqs []*pb.Item) {
				t.Helper()
				if count != uint64(key.N()) {
					t.Fatalf("count %d, want %d", count, key.N())
				}
				if len(ranks) != len(probes) || len(freqs) != len(probes) {
					t.Fatalf("%d ranks, %d frequencies for %d values", len(ranks), len(freqs), len(probes))
				}
				for i, x := range probes {
					r, _ := storedAs(x, float64s)
					if ranks[i].Value != x || freqs[i].Value != x {
						t.Errorf("answers for %v name %v, %v", x, ranks[i].Value, freqs[i].Value)
					}
					if err := key.CheckRank(r, int64(ranks[i].RankMin), int64(ranks[i].RankMax), eps); err != nil {
						t.Errorf("rank of %v (held as %v): %v", x, r, err)
					}
					if err := key.CheckFrequency(r, int64(freqs[i].CountMin), int64(freqs[i].CountMax), eps); err != nil {
						t.Errorf("frequency of %v (held as %v): %v", x, r, err)
					}
				}
			}
			for _, sc := range []struct {
				name  string
				lastN uint64
				last  *durationpb.Duration
				scope pb.Scope
			}{
				{name: "all"},
				{name: "last-n", lastN: uint64(key.N())},
				{name: "time", last: durationpb.New(1 << 40)},
				{name: "cluster", scope: pb.Scope_SCOPE_CLUSTER},
			} {
				t.Run(sc.name, func(t *testing.T) {
					r, err := s.Ranks(ctx, &pb.RanksRequest{Stream: "s", Values: probes, LastN: sc.lastN, Last: sc.last, Scope: sc.scope})
					if err != nil {
						t.Fatal(err)
					}
					f, err := s.Frequencies(ctx, &pb.FrequenciesRequest{Stream: "s", Values: probes, LastN: sc.lastN, Last: sc.last, Scope: sc.scope})
					if err != nil {
						t.Fatal(err)
					}
					check(t, r.Count, r.Ranks, f.Items)
					check(t, f.Count, r.Ranks, f.Items)
				})
			}
		})
	}
}

// TestProbesExact checks the answers of a small float32 stream, all still
// in its partial window and so counted exactly, for values float32 cannot
// hold.
func TestProbesExact(t *testing.T) {
	ctx := context.Background()
	s := openServer(t, summary.Config{})
	if _, err := s.Pipeline.Accept(ctx, &feed.Batch{Stream: "fr", Values: []float64{0.1, 0.1, 0.1, 13.1, 13.1, 9.8, 12.5, 3.4e38}}); err != nil {
		t.Fatal(err)
	}
	probes := []float64{0.1, 13.1, 9.8, 12.5, 3.4e38, 3.5e38, -3.5e38, 0.10000000000000002}
	f, err := s.Frequencies(ctx, &pb.FrequenciesRequest{Stream: "fr", Values: probes})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Ranks(ctx, &pb.RanksRequest{Stream: "fr", Values: probes})
	if err != nil {
		t.Fatal(err)
	}
	wantCount := []uint64{3, 2, 1, 1, 1, 0, 0, 3}
	wantRank := []uint64{3, 7, 4, 5, 8, 8, 0, 3}
	for i, x := range probes {
		if c := f.Items[i]; c.CountMin != wantCount[i] || c.CountMax != wantCount[i] {
			t.Errorf("frequency of %v: [%d, %d], want %d", x, c.CountMin, c.CountMax, wantCount[i])
		}
		if k := r.Ranks[i]; k.RankMin != wantRank[i] || k.RankMax != wantRank[i] {
			t.Errorf("rank of %v: [%d, %d], want %d", x, k.RankMin, k.RankMax, wantRank[i])
		}
	}
	// NaN and ±Inf have no rank and no count: ingest rejects them, and a
	// query about them is refused.
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := s.Ranks(ctx, &pb.RanksRequest{Stream: "fr", Values: []float64{x}}); status.Code(err) != codes.InvalidArgument {
			t.Errorf("rank of %v: %v, want InvalidArgument", x, err)
		}
		if _, err := s.Frequencies(ctx, &pb.FrequenciesRequest{Stream: "fr", Values: []float64{x}}); status.Code(err) != codes.InvalidArgument {
			t.Errorf("frequency of %v: %v, want InvalidArgument", x, err)
		}
	}
}
