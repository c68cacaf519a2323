package api

import (
	"context"
	"math"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	pb "streamd/api/proto/streamd/v1"
	"streamd/feed"
	"streamd/gpusort"
	"streamd/pipeline"
	"streamd/summary"
)

// serve runs s over a new pipeline on a 127.0.0.1:0 gRPC listener, with
// now as the pipeline's clock (time.Now if nil), and returns its address.
func serve(t *testing.T, s *Server, now func() time.Time) string {
	t.Helper()
	p, err := pipeline.New(pipeline.Config{
		Defaults: summary.Config{Epsilon: 0.01, WindowSize: 1000, SlidingWindow: 10000},
		Sorter:   gpusort.NewCPU(0), Now: now,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Pipeline = p
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer(grpc.ChainUnaryInterceptor(s.UnaryInterceptor), grpc.ChainStreamInterceptor(s.StreamInterceptor))
	pb.RegisterStreamdServer(g, s)
	healthpb.RegisterHealthServer(g, health.NewServer())
	go g.Serve(ln)
	t.Cleanup(func() {
		g.Stop()
		if err := p.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return ln.Addr().String()
}

// dial returns a client on a new connection to addr.
func dial(t *testing.T, addr string) pb.StreamdClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pb.NewStreamdClient(conn)
}

func accept(t *testing.T, s *Server, stream string, values ...float64) {
	t.Helper()
	if _, err := s.Pipeline.Accept(context.Background(), &feed.Batch{Stream: stream, Values: values}); err != nil {
		t.Fatal(err)
	}
}

func TestWatchInterval(t *testing.T) {
	least := 100 * time.Millisecond
	for _, c := range []struct {
		ms   uint64
		want time.Duration
	}{
		{0, time.Second},
		{1, least},
		{100, least},
		{250, 250 * time.Millisecond},
		{3_600_000, time.Hour},
		{3_600_001, time.Hour},
		{math.MaxInt64 / 1_000_000, time.Hour}, // overflows int64 nanoseconds
		{math.MaxUint64, time.Hour},            // wraps to −1 as an int64
	} {
		if got := watchInterval(c.ms, least); got != c.want {
			t.Errorf("interval_ms %d: %v, want %v", c.ms, got, c.want)
		}
	}
}

// TestWatchStreamDeleted: a Watch ends with NotFound when its stream is
// deleted, also when a stream of the same name is created at once.
func TestWatchStreamDeleted(t *testing.T) {
	for _, recreate := range []bool{false, true} {
		s := &Server{MinWatchInterval: time.Millisecond}
		c := dial(t, serve(t, s, nil))
		accept(t, s, "w", 1, 2, 3)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		w, err := c.Watch(ctx, &pb.WatchRequest{Stream: "w", Phis: []float64{0.5}, IntervalMs: 1})
		if err != nil {
			t.Fatal(err)
		}
		if r, err := w.Recv(); err != nil || r.Quantiles.Count != 3 {
			t.Fatalf("first answer: %v, %v", r, err)
		}
		if err := s.Pipeline.Delete("w"); err != nil {
			t.Fatal(err)
		}
		if recreate {
			accept(t, s, "w", 4, 5)
		}
		for i := 0; ; i++ {
			r, err := w.Recv()
			if err != nil {
				if status.Code(err) != codes.NotFound {
					t.Fatalf("recreate %v: %v, want NotFound", recreate, err)
				}
				break
			}
			if i == 1000 {
				t.Fatalf("recreate %v: still answering after the stream's deletion: %v", recreate, r)
			}
		}
	}
}

// TestWatchDeletedLongInterval: a Watch of an hour's interval ends with
// NotFound within about a second of its stream's deletion, not at its next
// answer an hour later.
func TestWatchDeletedLongInterval(t *testing.T) {
	s := &Server{}
	c := dial(t, serve(t, s, nil))
	accept(t, s, "w", 1, 2, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w, err := c.Watch(ctx, &pb.WatchRequest{Stream: "w", Phis: []float64{0.5}, IntervalMs: 3600_000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Recv(); err != nil {
		t.Fatal(err)
	}
	if err := s.Pipeline.Delete("w"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Recv(); status.Code(err) != codes.NotFound {
		t.Fatalf("after the deletion: %v, want NotFound", err)
	}
}

// TestHealthWatchLimits: the health service's Watch calls count with the
// Watch calls against the limits, so that no client holds more of them.
func TestHealthWatchLimits(t *testing.T) {
	s := &Server{MaxWatches: 100, MaxWatchesPerConn: 2}
	addr := serve(t, s, nil)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	h := healthpb.NewHealthClient(conn)
	watch := func() error {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		w, err := h.Watch(ctx, &healthpb.HealthCheckRequest{})
		if err == nil {
			_, err = w.Recv()
		}
		return err
	}
	for i := range 2 {
		if err := watch(); err != nil {
			t.Fatalf("health watch %d: %v", i, err)
		}
	}
	if err := watch(); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("third health watch on a connection: %v, want ResourceExhausted", err)
	}
	// The Watch calls of the service share the connection's limit.
	accept(t, s, "w", 1)
	w, err := pb.NewStreamdClient(conn).Watch(context.Background(), &pb.WatchRequest{Stream: "w", Phis: []float64{0.5}})
	if err == nil {
		_, err = w.Recv()
	}
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a Watch after two health watches: %v, want ResourceExhausted", err)
	}
}

// TestWatchSharesAnswers: the Watch calls asking the same of a stream get
// one answer, computed once (the clock ticks at every reading, so two
// computations differ in time_unix_nano); a call asking something else
// gets its own answer.
func TestWatchSharesAnswers(t *testing.T) {
	var ticks atomic.Int64
	now := func() time.Time { return time.Unix(0, ticks.Add(1)) }
	s := &Server{}
	c := dial(t, serve(t, s, now))
	accept(t, s, "w", 1, 2, 3, 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const n = 50
	times := make(map[int64]int)
	for range n {
		w, err := c.Watch(ctx, &pb.WatchRequest{Stream: "w", Phis: []float64{0.25, 0.75}, IntervalMs: 3_600_000})
		if err != nil {
			t.Fatal(err)
		}
		r, err := w.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if r.Quantiles.Count != 4 || len(r.Quantiles.Quantiles) != 2 {
			t.Fatalf("answer %v", r)
		}
		times[r.TimeUnixNano]++
	}
	if len(times) != 1 {
		t.Errorf("%d calls got %d different answers (by time): %v, want 1", n, len(times), times)
	}
	other, err := c.Watch(ctx, &pb.WatchRequest{Stream: "w", Phis: []float64{0.5}, IntervalMs: 3_600_000})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := other.Recv(); err != nil || len(r.Quantiles.GetQuantiles()) != 1 || r.Quantiles.Quantiles[0].Value != 2 {
		t.Errorf("another question: %v, %v; want the median 2", r, err)
	}
}

// TestWatchLimits: past the limit of Watch calls per connection, and then
// per daemon, a call fails with ResourceExhausted; a call that ends makes
// room.
func TestWatchLimits(t *testing.T) {
	s := &Server{MaxWatches: 3, MaxWatchesPerConn: 2}
	addr := serve(t, s, nil)
	accept(t, s, "w", 1)
	a, b := dial(t, addr), dial(t, addr)
	watch := func(c pb.StreamdClient) (context.CancelFunc, error) {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		w, err := c.Watch(ctx, &pb.WatchRequest{Stream: "w", Phis: []float64{0.5}})
		if err == nil {
			_, err = w.Recv()
		}
		return cancel, err
	}
	stop, err := watch(a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := watch(a); err != nil {
		t.Fatal(err)
	}
	if _, err := watch(a); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--max-watches-per-conn") {
		t.Fatalf("third call on a connection: %v, want ResourceExhausted (per connection)", err)
	}
	if _, err := watch(b); err != nil {
		t.Fatal(err)
	}
	if _, err := watch(b); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--max-watches)") {
		t.Fatalf("fourth call: %v, want ResourceExhausted (the daemon's limit)", err)
	}
	stop()
	// The daemon sees the call end a little later.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := watch(b)
		if err == nil {
			break
		}
		if status.Code(err) != codes.ResourceExhausted || time.Now().After(deadline) {
			t.Fatalf("after a call ended: %v", err)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestReplyBounds: the calls whose replies a client sizes refuse to answer
// past the bounds.
func TestReplyBounds(t *testing.T) {
	s := &Server{}
	c := dial(t, serve(t, s, nil))
	ctx := context.Background()
	accept(t, s, "v", 1, 2, 3)
	many := make([]float64, MaxQueryValues+1)
	if r, err := c.Quantiles(ctx, &pb.QuantilesRequest{Stream: "v", Phis: many[:MaxQueryValues]}); err != nil || len(r.Quantiles) != MaxQueryValues {
		t.Errorf("quantiles of %d φs: %d, %v", MaxQueryValues, len(r.GetQuantiles()), err)
	}
	if _, err := c.Quantiles(ctx, &pb.QuantilesRequest{Stream: "v", Phis: many}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("quantiles of %d φs: %v, want InvalidArgument", len(many), err)
	}
	if _, err := c.Ranks(ctx, &pb.RanksRequest{Stream: "v", Values: many}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("ranks of %d values: %v, want InvalidArgument", len(many), err)
	}
	if _, err := c.Frequencies(ctx, &pb.FrequenciesRequest{Stream: "v", Values: many}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("frequencies of %d values: %v, want InvalidArgument", len(many), err)
	}
	if _, err := c.Frequencies(ctx, &pb.FrequenciesRequest{Stream: "v", Items: make([]string, MaxQueryValues+1)}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("frequencies of %d items: %v, want InvalidArgument", MaxQueryValues+1, err)
	}
	w, err := c.Watch(ctx, &pb.WatchRequest{Stream: "v", Phis: many[:MaxWatchPhis+1]})
	if err == nil {
		_, err = w.Recv()
	}
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("watch of %d φs: %v, want InvalidArgument", MaxWatchPhis+1, err)
	}

	// Heavy hitters of a tiny support over many distinct values: with
	// εN < 1 every value is counted exactly and reaches it.
	eps := 1e-6
	if _, err := s.Pipeline.Create("h", summary.Config{Epsilon: eps, WindowSize: 1000}); err != nil {
		t.Fatal(err)
	}
	values := make([]float64, MaxReplyItems+1)
	for i := range values {
		values[i] = float64(i)
	}
	accept(t, s, "h", values...)
	support := eps * 1.001
	if _, err := c.HeavyHitters(ctx, &pb.HeavyHittersRequest{Stream: "h", Support: support}); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("heavy hitters of %d values: %v, want ResourceExhausted", len(values), err)
	}
	w, err = c.Watch(ctx, &pb.WatchRequest{Stream: "h", Support: support})
	if err == nil {
		_, err = w.Recv()
	}
	if status.Code(err) != codes.ResourceExhausted {
		t.Errorf("watch of heavy hitters of %d values: %v, want ResourceExhausted", len(values), err)
	}
	if r, err := c.HeavyHitters(ctx, &pb.HeavyHittersRequest{Stream: "h", Support: 0.5}); err != nil || len(r.Items) != 0 {
		t.Errorf("heavy hitters of support 0.5: %v, %v; want none", r, err)
	}
}

// TestWatchSlowWatcher: a call that does not read holds up no other call
// of its feed.
func TestWatchSlowWatcher(t *testing.T) {
	s := &Server{MinWatchInterval: time.Millisecond}
	c := dial(t, serve(t, s, nil))
	accept(t, s, "w", 1, 2, 3)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	phis := make([]float64, MaxWatchPhis) // answers of a few KiB: the slow call's window fills up at once
	req := &pb.WatchRequest{Stream: "w", Phis: phis, IntervalMs: 1}
	slow, err := c.Watch(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := slow.Recv(); err != nil { // it joined; it reads no more
		t.Fatal(err)
	}
	fast, err := c.Watch(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for range 500 {
		if r, err := fast.Recv(); err != nil || r.Quantiles.Count != 3 {
			t.Fatalf("fast call: %v, %v", r, err)
		}
	}
}
