package loadgen_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	pb "streamd/api/proto/streamd/v1"
	"streamd/feed"
	"streamd/ingest"
	"streamd/loadgen"
	"streamd/loadgen/daemontest"
	"streamd/synth"
)

// TestTargetsVerify sends to a real daemon over every target it serves,
// checks that it counts every value sent, and verifies its answers.
func TestTargetsVerify(t *testing.T) {
	d := daemontest.Start(t)
	csvPath := writeFile(t, "p.csv.gz", []byte(csvData+strings.Repeat("4,1/1/07,0:04:00,2.25,239.5\n", 500)))
	targets := []struct {
		name   string
		target loadgen.Target
	}{
		{"tcp", &loadgen.TCP{Addr: d.TCPAddr}},
		{"tcp-float32", &loadgen.TCP{Addr: d.TCPAddr, Float32: true}},
		{"tcp-binary", &loadgen.TCP{Addr: d.TCPAddr, Binary: true}},
		{"tcp-binary-float32", &loadgen.TCP{Addr: d.TCPAddr, Binary: true, Float32: true}},
		{"grpc", &loadgen.GRPC{Client: d.Client}},
	}
	for _, tt := range targets {
		t.Run(tt.name, func(t *testing.T) {
			src := &multiSource{
				&loadgen.Synth{
					Spec:    synth.Spec{Dist: synth.Zipf, Order: synth.Alternating, Seed: 1, Period: 5000},
					Count:   100_000,
					Streams: []string{tt.name + ".zipf", tt.name + ".normal"},
				},
				&loadgen.CSVFile{Path: csvPath, Columns: []string{"power", "voltage"}, Prefix: tt.name + "."},
			}
			r := &loadgen.Runner{Source: src, Target: tt.target, Conns: 2, Keep: true}
			res, err := r.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if want := int64(100_000 + 503 + 502); res.Sent != want || res.Skipped != 3 {
				t.Errorf("sent %d, skipped %d; want %d and 3", res.Sent, res.Skipped, want)
			}
			if _, ok := tt.target.(*loadgen.GRPC); ok {
				if !res.Ack.Known || res.Ack.Accepted != uint64(res.Sent) || res.Ack.Rejected != 0 {
					t.Errorf("push responses %+v, want %d accepted", res.Ack, res.Sent)
				}
			}
			v, err := loadgen.Verify(context.Background(), d.Client, res, loadgen.VerifyConfig{Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			v.WriteTo(&out)
			if !v.OK() || len(v.Streams) != 4 {
				t.Fatalf("verification of %d streams failed:\n%s", len(v.Streams), out.String())
			}
			for _, s := range v.Streams {
				st, err := d.Client.Stats(context.Background(), &pb.StatsRequest{Stream: s.Stream})
				if err != nil {
					t.Fatal(err)
				}
				if int64(st.Count) != res.Streams[s.Stream].Sent {
					t.Errorf("stream %s: daemon counts %d, sent %d", s.Stream, st.Count, res.Streams[s.Stream].Sent)
				}
			}
			if tt.name == "tcp" && testing.Verbose() {
				t.Log(out.String())
			}
		})
	}
}

// TestRunFloat32Overflow sends values beyond float32's range to a daemon
// over float32 and float64 targets: as float32 they are left out and
// counted as ±Inf, as a Payload leaves them out, so that the daemon counts
// every value sent and Verify passes. Sent as float64 to a stream that
// keeps float32, the daemon rejects them as inf, and Verify, which asks
// the stream's precision, expects that.
func TestRunFloat32Overflow(t *testing.T) {
	d := daemontest.Start(t)
	values := []float64{1, 3.5e38, -1e39, 2, 1e-50, math.Copysign(0, -1), math.MaxFloat32, 3}
	// float64 frames carry values beyond float32's range whole, to a stream
	// that keeps float64 (a float32 stream rejects them as inf).
	if _, err := d.Client.CreateStream(context.Background(), &pb.CreateStreamRequest{Stream: "ovf.tcp-binary", Float64: true}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		target   loadgen.Target
		wantSent int64
	}{
		{"ovf.tcp-float32", &loadgen.TCP{Addr: d.TCPAddr, Float32: true}, 6},
		{"ovf.tcp-binary-float32", &loadgen.TCP{Addr: d.TCPAddr, Binary: true, Float32: true}, 6},
		{"ovf.tcp-binary", &loadgen.TCP{Addr: d.TCPAddr, Binary: true}, 8},
		{"ovf.tcp-binary-to-float32", &loadgen.TCP{Addr: d.TCPAddr, Binary: true}, 8},
	} {
		src := sourceFunc(func(ctx context.Context, sink ingest.Sink) error {
			_, err := sink.Accept(ctx, &feed.Batch{Stream: tt.name, Values: slices.Clone(values)})
			return err
		})
		res, err := (&loadgen.Runner{Source: src, Target: tt.target, Keep: true}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		st := res.Streams[tt.name]
		if st.Sent != tt.wantSent || st.Skipped[feed.ReasonInf] != 8-tt.wantSent {
			t.Errorf("%s: sent %d, skipped %v; want %d sent, %d ±Inf", tt.name, st.Sent, st.Skipped, tt.wantSent, 8-tt.wantSent)
		}
		v, err := loadgen.Verify(context.Background(), d.Client, res, loadgen.VerifyConfig{Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if !v.OK() {
			var out bytes.Buffer
			v.WriteTo(&out)
			t.Errorf("%s: verification failed:\n%s", tt.name, out.String())
		}
	}
}

// sourceFunc is a Source that calls itself.
type sourceFunc func(ctx context.Context, sink ingest.Sink) error

func (f sourceFunc) Run(ctx context.Context, sink ingest.Sink) error { return f(ctx, sink) }

// multiSource runs sources one after the other.
type multiSource []loadgen.Source

func (m multiSource) Run(ctx context.Context, sink ingest.Sink) error {
	for _, s := range m {
		if err := s.Run(ctx, sink); err != nil {
			return err
		}
	}
	return nil
}

// TestVerifyCountMismatch checks that Verify fails a stream that holds
// values that were not sent.
func TestVerifyCountMismatch(t *testing.T) {
	d := daemontest.Start(t)
	target := &loadgen.TCP{Addr: d.TCPAddr}
	src := &loadgen.Synth{Spec: synth.Spec{Dist: synth.Uniform}, Count: 1000, Streams: []string{"twice"}}
	for range 2 {
		if _, err := (&loadgen.Runner{Source: src, Target: target}).Run(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	// TCP has no acknowledgements: wait until the daemon counts both
	// runs.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		st, err := d.Client.Stats(context.Background(), &pb.StatsRequest{Stream: "twice"})
		if err == nil && st.Count == 2000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon counts %v values, %v", st.GetCount(), err)
		}
	}
	res, err := (&loadgen.Runner{Source: src, Target: &memTarget{}, Keep: true}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	v, err := loadgen.Verify(context.Background(), d.Client, res, loadgen.VerifyConfig{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if v.OK() || !errors.Is(v.Err(), loadgen.ErrVerify) {
		t.Errorf("verify of a stream with 2000 values, 1000 sent, passed")
	}
}

// fakeClient is a StreamdClient whose answers come from function fields.
type fakeClient struct {
	pb.StreamdClient
	stats        func(*pb.StatsRequest) (*pb.StatsResponse, error)
	quantiles    func(*pb.QuantilesRequest) (*pb.QuantilesResponse, error)
	heavyHitters func(*pb.HeavyHittersRequest) (*pb.HeavyHittersResponse, error)
}

func (f *fakeClient) Stats(ctx context.Context, in *pb.StatsRequest, opts ...grpc.CallOption) (*pb.StatsResponse, error) {
	return f.stats(in)
}

func (f *fakeClient) Quantiles(ctx context.Context, in *pb.QuantilesRequest, opts ...grpc.CallOption) (*pb.QuantilesResponse, error) {
	return f.quantiles(in)
}

func (f *fakeClient) HeavyHitters(ctx context.Context, in *pb.HeavyHittersRequest, opts ...grpc.CallOption) (*pb.HeavyHittersResponse, error) {
	return f.heavyHitters(in)
}

// TestVerifyBadAnswers checks that Verify catches answers that break
// their bounds.
func TestVerifyBadAnswers(t *testing.T) {
	const n = 1000
	values := make([]float64, n)
	for i := range values {
		values[i] = float64(i % 100) // 100 values, 10 times each
	}
	values[0] = 0.1 // not a float32: the stream keeps float32 values
	res := &loadgen.Result{Sent: n, Streams: map[string]*loadgen.StreamResult{"s": {Sent: n, Values: values}}}
	good := func() *fakeClient {
		return &fakeClient{
			stats: func(*pb.StatsRequest) (*pb.StatsResponse, error) {
				return &pb.StatsResponse{Count: n, Epsilon: 0.01, Min: float64(float32(0.1)), Max: 99}, nil
			},
			quantiles: func(req *pb.QuantilesRequest) (*pb.QuantilesResponse, error) {
				resp := &pb.QuantilesResponse{Count: n, Epsilon: 0.01}
				for _, phi := range req.Phis {
					v := min(float64(int(phi*100)), 99)
					resp.Quantiles = append(resp.Quantiles, &pb.QuantilesResponse_Quantile{Phi: phi, Value: v, RankMin: uint64(v*10 + 1), RankMax: uint64(v*10 + 10)})
				}
				return resp, nil
			},
			heavyHitters: func(*pb.HeavyHittersRequest) (*pb.HeavyHittersResponse, error) {
				return &pb.HeavyHittersResponse{Count: n, Epsilon: 0.01}, nil
			},
		}
	}
	check := func(name string, c *fakeClient, cfg loadgen.VerifyConfig, wantOK bool) {
		t.Helper()
		cfg.Timeout = 200 * time.Millisecond
		cfg.Poll = 10 * time.Millisecond
		v, err := loadgen.Verify(context.Background(), c, res, cfg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if v.OK() != wantOK {
			var b bytes.Buffer
			v.WriteTo(&b)
			t.Errorf("%s: OK = %v, want %v\n%s", name, v.OK(), wantOK, b.String())
		}
	}
	check("good", good(), loadgen.VerifyConfig{Support: 0.05}, true)
	// Past the deadline of the wait for every count, as a check of many
	// streams may be, a count that is right at once passes.
	if v, err := loadgen.Verify(context.Background(), good(), res, loadgen.VerifyConfig{Support: 0.05, Timeout: time.Nanosecond}); err != nil || !v.OK() {
		t.Errorf("checked past the deadline: OK %v, %v", v != nil && v.OK(), err)
	}
	if v, _ := loadgen.Verify(context.Background(), good(), res, loadgen.VerifyConfig{Support: 0.05}); !v.Streams[0].Float32 {
		t.Error("a stream whose minimum is float32(0.1) not taken as float32")
	}

	c := good()
	c.quantiles = func(req *pb.QuantilesRequest) (*pb.QuantilesResponse, error) {
		resp := &pb.QuantilesResponse{Count: n, Epsilon: 0.01}
		for _, phi := range req.Phis {
			resp.Quantiles = append(resp.Quantiles, &pb.QuantilesResponse_Quantile{Phi: phi, Value: 50, RankMin: 501, RankMax: 510})
		}
		return resp, nil
	}
	check("quantiles off by far", c, loadgen.VerifyConfig{}, false)

	c = good()
	c.heavyHitters = func(*pb.HeavyHittersRequest) (*pb.HeavyHittersResponse, error) {
		return &pb.HeavyHittersResponse{Count: n, Epsilon: 0.01}, nil
	}
	check("heavy hitters missing", c, loadgen.VerifyConfig{Support: 0.01}, false)

	c = good()
	c.heavyHitters = func(*pb.HeavyHittersRequest) (*pb.HeavyHittersResponse, error) {
		return &pb.HeavyHittersResponse{Count: n, Epsilon: 0.01, Items: []*pb.Item{{Value: 7, CountMin: 10, CountMax: 10}}}, nil
	}
	check("heavy hitter below (s−ε)N", c, loadgen.VerifyConfig{Support: 0.05}, false)

	c = good()
	c.stats = func(*pb.StatsRequest) (*pb.StatsResponse, error) {
		return &pb.StatsResponse{Count: n - 1, Epsilon: 0.01}, nil
	}
	check("values missing", c, loadgen.VerifyConfig{}, false)
}

// TestVerifyLastN checks that Verify asks a stream whose values arrived in
// order for its quantiles over the last n values too, and catches answers
// over other values than the last n.
func TestVerifyLastN(t *testing.T) {
	const n, window = 10_000, 8192
	values := make([]float64, n)
	for i := range values {
		values[i] = float64(i) // ascending: the last n differ from all history
	}
	// answer answers exactly over the last m values of values; or, with
	// wrong "first", over the first m; or, with wrong "loose", the least
	// of the last m for every φ, with ranks 1 to m and ε = 1, which its
	// ε holds.
	answer := func(wrong string) func(*pb.QuantilesRequest) (*pb.QuantilesResponse, error) {
		return func(req *pb.QuantilesRequest) (*pb.QuantilesResponse, error) {
			over := values
			m := int(req.LastN)
			if m > 0 && m < n {
				over = values[n-m:]
				if wrong == "first" {
					over = values[:m]
				}
			}
			resp := &pb.QuantilesResponse{Count: uint64(len(over)), Epsilon: 0.001}
			for _, phi := range req.Phis {
				r := max(1, int(math.Ceil(phi*float64(len(over)))))
				q := &pb.QuantilesResponse_Quantile{Phi: phi, Value: over[r-1], RankMin: uint64(r), RankMax: uint64(r)}
				if wrong == "loose" && m > 0 {
					q.Value, q.RankMin, q.RankMax, resp.Epsilon = over[0], 1, uint64(len(over)), 1
				}
				resp.Quantiles = append(resp.Quantiles, q)
			}
			return resp, nil
		}
	}
	client := func(wrong string, asked map[uint64]bool) *fakeClient {
		quantiles := answer(wrong)
		return &fakeClient{
			stats: func(*pb.StatsRequest) (*pb.StatsResponse, error) {
				return &pb.StatsResponse{Count: n, Epsilon: 0.001, SlidingWindow: window, Float64: true}, nil
			},
			quantiles: func(req *pb.QuantilesRequest) (*pb.QuantilesResponse, error) {
				asked[req.LastN] = true
				return quantiles(req)
			},
			heavyHitters: func(*pb.HeavyHittersRequest) (*pb.HeavyHittersResponse, error) {
				return &pb.HeavyHittersResponse{Count: n, Epsilon: 0.001}, nil
			},
		}
	}
	for _, tc := range []struct {
		name    string
		ordered bool
		wrong   string
		asked   []uint64
		ok      bool
	}{
		{"in order", true, "", []uint64{0, 1, 257, 2730, 4097, window}, true},
		{"in order, answered over the first n", true, "first", []uint64{0, 1, 257, 2730, 4097, window}, false},
		{"in order, answered with ε = 1", true, "loose", []uint64{0, 1, 257, 2730, 4097, window}, false},
		{"out of order", false, "first", []uint64{0}, true},
	} {
		res := &loadgen.Result{Sent: n, Streams: map[string]*loadgen.StreamResult{"s": {Sent: n, Values: values, Ordered: tc.ordered}}}
		asked := make(map[uint64]bool)
		v, err := loadgen.Verify(context.Background(), client(tc.wrong, asked), res, loadgen.VerifyConfig{Timeout: time.Second, Poll: time.Millisecond})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var out bytes.Buffer
		v.WriteTo(&out)
		if v.OK() != tc.ok {
			t.Errorf("%s: OK = %v, want %v\n%s", tc.name, v.OK(), tc.ok, out.String())
		}
		if got := slices.Sorted(maps.Keys(asked)); !slices.Equal(got, tc.asked) {
			t.Errorf("%s: asked over the last %v values, want %v", tc.name, got, tc.asked)
		}
		if tc.ordered && !strings.Contains(out.String(), "last 4097") {
			t.Errorf("%s: the report does not show the answers over the last 4097 values:\n%s", tc.name, out.String())
		}
	}
}

// TestVerifyAllRejected: a float32 stream that rejected every value sent,
// all beyond float32's range, passes when the daemon answers over none of
// them, and fails when it answers over some.
func TestVerifyAllRejected(t *testing.T) {
	values := []float64{1e39, -1e39, math.MaxFloat64}
	res := &loadgen.Result{Sent: 3, Streams: map[string]*loadgen.StreamResult{"s": {Sent: 3, Values: values, Ordered: true}}}
	for _, count := range []uint64{0, 1} {
		c := &fakeClient{
			stats: func(*pb.StatsRequest) (*pb.StatsResponse, error) {
				return &pb.StatsResponse{Epsilon: 0.001, SlidingWindow: 1 << 20, RejectedTotal: 3}, nil
			},
			quantiles: func(*pb.QuantilesRequest) (*pb.QuantilesResponse, error) {
				return &pb.QuantilesResponse{Count: count, Epsilon: 0.001}, nil
			},
			heavyHitters: func(*pb.HeavyHittersRequest) (*pb.HeavyHittersResponse, error) {
				return &pb.HeavyHittersResponse{Epsilon: 0.001}, nil
			},
		}
		v, err := loadgen.Verify(context.Background(), c, res, loadgen.VerifyConfig{Timeout: time.Second, Poll: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		v.WriteTo(&out)
		if v.OK() != (count == 0) || v.Streams[0].N != 0 {
			t.Errorf("answers over %d values: OK = %v, N = %d\n%s", count, v.OK(), v.Streams[0].N, out.String())
		}
	}
}

// TestVerifyBadItemAnswers checks that Verify catches heavy hitters of an
// item stream that break their bounds.
func TestVerifyBadItemAnswers(t *testing.T) {
	// εN = 10, and at support 0.05 sN = 50 and (s−ε)N = 40: "hot" and
	// "mid" must be reported, "low" may be, "rare" must not be.
	const n = 1000
	var items []string
	for _, r := range []struct {
		item  string
		count int
	}{{"hot", 300}, {"mid", 60}, {"low", 40}, {"rare", 30}} {
		for range r.count {
			items = append(items, r.item)
		}
	}
	for i := len(items); i < n; i++ {
		items = append(items, fmt.Sprintf("u%d", i))
	}
	res := &loadgen.Result{Sent: n, Streams: map[string]*loadgen.StreamResult{"s": {Sent: n, Items: items}}}
	client := func(answer ...*pb.Item) *fakeClient {
		return &fakeClient{
			stats: func(*pb.StatsRequest) (*pb.StatsResponse, error) {
				return &pb.StatsResponse{Count: n, Epsilon: 0.01}, nil
			},
			heavyHitters: func(*pb.HeavyHittersRequest) (*pb.HeavyHittersResponse, error) {
				return &pb.HeavyHittersResponse{Count: n, Epsilon: 0.01, Items: answer}, nil
			},
		}
	}
	hot, mid := &pb.Item{Item: "hot", CountMin: 295, CountMax: 305}, &pb.Item{Item: "mid", CountMin: 50, CountMax: 60}
	for _, tc := range []struct {
		name   string
		answer []*pb.Item
		wantOK bool
	}{
		{"good", []*pb.Item{hot, mid}, true},
		{"good with an item at (s−ε)N", []*pb.Item{hot, mid, {Item: "low", CountMin: 40, CountMax: 40}}, true},
		{"heavy item missing", []*pb.Item{hot}, false},
		{"item never sent", []*pb.Item{hot, mid, {Item: "ghost", CountMin: 0, CountMax: 10}}, false},
		{"count min more than εN below", []*pb.Item{hot, {Item: "mid", CountMin: 49, CountMax: 60}}, false},
		{"count max below the count", []*pb.Item{hot, {Item: "mid", CountMin: 50, CountMax: 59}}, false},
		{"item below (s−ε)N", []*pb.Item{hot, mid, {Item: "rare", CountMin: 30, CountMax: 30}}, false},
	} {
		v, err := loadgen.Verify(context.Background(), client(tc.answer...), res,
			loadgen.VerifyConfig{Support: 0.05, Timeout: 200 * time.Millisecond, Poll: 10 * time.Millisecond})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if v.OK() != tc.wantOK {
			var b bytes.Buffer
			v.WriteTo(&b)
			t.Errorf("%s: OK = %v, want %v\n%s", tc.name, v.OK(), tc.wantOK, b.String())
		}
	}
}

// TestRecordRoundTrip records a TCP feed in both protocols with a Recorder
// behind ingest's TCP server, replays the recording, and checks that the
// same values come out.
func TestRecordRoundTrip(t *testing.T) {
	sent := make(map[string][]float64)
	path := recordTCP(t, 40_000, func(addr string) {
		for i, binary := range []bool{false, true} {
			src := &loadgen.Synth{Spec: synth.Spec{Dist: synth.LogNormal, Seed: uint64(i)}, Count: 20_000, Streams: []string{"a" + string(rune('0'+i)), "b" + string(rune('0'+i))}}
			r := &loadgen.Runner{Source: src, Target: &loadgen.TCP{Addr: addr, Binary: binary}, Keep: true}
			res, err := r.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for name, st := range res.Streams {
				sent[name] = st.Values
			}
		}
	})
	m := &memTarget{}
	if _, err := (&loadgen.Runner{Source: &loadgen.Recording{Path: path}, Target: m}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !mapsEqual(m.values, sent) {
		t.Errorf("replayed streams differ from those recorded")
		for name := range sent {
			t.Logf("%s: sent %d, replayed %d, equal %v", name, len(sent[name]), len(m.values[name]), slices.Equal(sent[name], m.values[name]))
		}
	}
}

// recordTCP starts ingest's TCP server with a Recorder behind it, calls
// send with the server's address, waits until the server has decoded the
// n values (or pairs) sent, and returns the path of the recording, flushed
// and closed.
func recordTCP(t *testing.T, n int64, send func(addr string)) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "feed.sdb")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec := loadgen.NewRecorder(f)
	srv := ingest.NewTCPServer("127.0.0.1:0", rec)
	srv.Logger = slog.New(slog.DiscardHandler)
	if err := srv.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	send(srv.ListenAddr().String())
	for deadline := time.Now().Add(10 * time.Second); rec.Stats().Values < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("recorded %d values of %d", rec.Stats().Values, n)
		}
	}
	if err := srv.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	return path
}

// BenchmarkSend measures loadgen's send rate into a listener that
// discards, with the values/s metric.
func BenchmarkSend(b *testing.B) {
	srv, err := loadgen.ListenDiscard(context.Background(), "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	for _, tt := range []struct {
		name   string
		target loadgen.Target
	}{
		{"tcp-binary", &loadgen.TCP{Addr: srv.Addr(), Binary: true}},
		{"tcp-binary-float32", &loadgen.TCP{Addr: srv.Addr(), Binary: true, Float32: true}},
		{"tcp", &loadgen.TCP{Addr: srv.Addr()}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			const n = 1 << 20
			src := &loadgen.Synth{Spec: synth.Spec{Dist: synth.Uniform}, Count: n, Streams: []string{"bench"}}
			b.ReportAllocs()
			var sent int64
			for b.Loop() {
				res, err := (&loadgen.Runner{Source: src, Target: tt.target}).Run(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				sent += res.Sent
			}
			b.ReportMetric(float64(sent)/b.Elapsed().Seconds(), "values/s")
		})
	}
}

// TestItemTargetsVerify sends Zipf items to a real daemon over every
// target that serves them and verifies its heavy hitters by their strings.
func TestItemTargetsVerify(t *testing.T) {
	d := daemontest.Start(t)
	for _, tt := range []struct {
		name   string
		target loadgen.Target
	}{
		{"tcp", &loadgen.TCP{Addr: d.TCPAddr}},
		{"tcp-binary", &loadgen.TCP{Addr: d.TCPAddr, Binary: true}},
		{"grpc", &loadgen.GRPC{Client: d.Client}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stream := "items." + tt.name
			// Lines name item streams only once they exist.
			if _, err := d.Client.CreateStream(context.Background(), &pb.CreateStreamRequest{Stream: stream, Kind: pb.StreamKind_STREAM_KIND_ITEMS}); err != nil {
				t.Fatal(err)
			}
			src := &loadgen.Synth{Spec: synth.Spec{Dist: synth.Zipf, S: 1.1, Distinct: 10000, Seed: 2}, Count: 50_000, Streams: []string{stream}, Items: true}
			r := &loadgen.Runner{Source: src, Target: tt.target, Conns: 2, Keep: true}
			res, err := r.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			v, err := loadgen.Verify(context.Background(), d.Client, res, loadgen.VerifyConfig{Timeout: 10 * time.Second, Support: 0.005})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			v.WriteTo(&out)
			if !v.OK() || len(v.Streams) != 1 || len(v.Streams[0].HeavyHitters) == 0 {
				t.Fatalf("verification failed:\n%s", out.String())
			}
		})
	}
}

// goneClient answers every Stats with an error, as a daemon that died
// does, and records the deadline of each call.
type goneClient struct {
	pb.StreamdClient
	mu        sync.Mutex
	deadlines map[time.Time]bool
}

func (c *goneClient) Stats(ctx context.Context, in *pb.StatsRequest, opts ...grpc.CallOption) (*pb.StatsResponse, error) {
	d, _ := ctx.Deadline()
	c.mu.Lock()
	c.deadlines[d] = true
	c.mu.Unlock()
	return nil, errors.New("connection refused")
}

// TestVerifyGoneDaemon verifies many streams against a daemon that is
// gone: Verify waits its Timeout once for them all, not once for each
// stream in turn (which for thousands of streams would not end), and
// every check fails.
func TestVerifyGoneDaemon(t *testing.T) {
	res := &loadgen.Result{Streams: map[string]*loadgen.StreamResult{}}
	for i := range 40 {
		res.Streams[fmt.Sprintf("s%d", i)] = &loadgen.StreamResult{Sent: 1, Values: []float64{1}}
	}
	c := &goneClient{deadlines: map[time.Time]bool{}}
	v, err := loadgen.Verify(context.Background(), c, res, loadgen.VerifyConfig{Timeout: 20 * time.Millisecond, Poll: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if v.OK() || len(v.Streams) != 40 {
		t.Fatalf("OK %v with %d streams checked, want false and 40", v.OK(), len(v.Streams))
	}
	if len(c.deadlines) != 1 {
		t.Fatalf("the checks waited until %d different deadlines, want one for them all", len(c.deadlines))
	}
}
