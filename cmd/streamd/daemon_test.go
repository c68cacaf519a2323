package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "streamd/api/proto/streamd/v1"
	"streamd/feed"
	"streamd/ingest"
	"streamd/internal/exact"
	"streamd/summary"
	"streamd/synth"
)

// startDaemon runs a daemon on 127.0.0.1:0 ports and returns it with a
// connected client.
func startDaemon(t *testing.T, mod func(*Config)) (*Daemon, pb.StreamdClient) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.GRPCAddr, cfg.TCPAddr, cfg.MetricsAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.Sorter = "cpu"
	cfg.Stream = summary.Config{Epsilon: 0.001, WindowSize: 4096, SlidingWindow: 100000}
	if mod != nil {
		mod(&cfg)
	}
	d := NewDaemon(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := d.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := d.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	conn := dialGRPC(t, d.GRPCAddr())
	return d, pb.NewStreamdClient(conn)
}

// dialGRPC returns a client connection to the daemon's gRPC address addr,
// without TLS, closed when the test ends.
func dialGRPC(tb testing.TB, addr string) *grpc.ClientConn {
	tb.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return conn
}

// waitCount polls Stats until the stream has want values.
func waitCount(t *testing.T, c pb.StreamdClient, stream string, want uint64) *pb.StatsResponse {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := c.Stats(context.Background(), &pb.StatsRequest{Stream: stream})
		if err == nil && st.Count == want {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("stream %s: stats %v, %v; want count %d", stream, st, err, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var phis = []float64{0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1}

// checkAnswers asks every query of the stream and checks it against the
// exact answers of values (already rounded to float32 by the caller).
func checkAnswers(t *testing.T, c pb.StreamdClient, stream string, values []float64, eps float64, lastN uint64) {
	t.Helper()
	ctx := context.Background()
	set := values
	if lastN > 0 && lastN < uint64(len(values)) {
		set = values[uint64(len(values))-lastN:]
	}
	key := exact.New(set)
	q, err := c.Quantiles(ctx, &pb.QuantilesRequest{Stream: stream, Phis: phis, LastN: lastN})
	if err != nil {
		t.Fatal(err)
	}
	if q.Count != uint64(len(set)) {
		t.Fatalf("%s last %d: count %d, want %d", stream, lastN, q.Count, len(set))
	}
	for _, a := range q.Quantiles {
		if err := key.CheckQuantile(a.Phi, a.Value, eps, int64(a.RankMin), int64(a.RankMax)); err != nil {
			t.Fatalf("%s last %d: %v", stream, lastN, err)
		}
	}
	probe := []float64{key.Quantile(0.1), key.Quantile(0.5), key.Quantile(0.9), -1e9, 1e9}
	r, err := c.Ranks(ctx, &pb.RanksRequest{Stream: stream, Values: probe, LastN: lastN})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range r.Ranks {
		if err := key.CheckRank(a.Value, int64(a.RankMin), int64(a.RankMax), eps); err != nil {
			t.Fatalf("%s last %d: %v", stream, lastN, err)
		}
	}
	f, err := c.Frequencies(ctx, &pb.FrequenciesRequest{Stream: stream, Values: probe, LastN: lastN})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range f.Items {
		if err := key.CheckFrequency(a.Value, int64(a.CountMin), int64(a.CountMax), eps); err != nil {
			t.Fatalf("%s last %d: %v", stream, lastN, err)
		}
	}
	for _, s := range []float64{0.005, 0.05, 0.3} {
		hh, err := c.HeavyHitters(ctx, &pb.HeavyHittersRequest{Stream: stream, Support: s, LastN: lastN})
		if err != nil {
			t.Fatal(err)
		}
		var got []float64
		for _, it := range hh.Items {
			got = append(got, it.Value)
			if err := key.CheckFrequency(it.Value, int64(it.CountMin), int64(it.CountMax), eps); err != nil {
				t.Fatalf("%s heavy hitter: %v", stream, err)
			}
		}
		if err := key.CheckHeavyHitters(s, eps, got); err != nil {
			t.Fatalf("%s last %d support %v: %v", stream, lastN, s, err)
		}
	}
}

func round32(x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(float32(v))
	}
	return out
}

// TestEndToEnd sends streams over the TCP line protocol (with bad input
// mixed in), the binary protocol and Push, and checks every answer against
// the exact answers, all history and last n.
func TestEndToEnd(t *testing.T) {
	d, c := startDaemon(t, nil)
	ctx := context.Background()
	n := 60000
	if testing.Short() {
		n = 20000
	}

	// Line protocol, with bad values and lines among the good ones.
	lineVals, _ := synth.Generate(synth.Spec{Dist: synth.Zipf, Order: synth.Sorted, Seed: 1}, n)
	conn, err := net.Dial("tcp", d.TCPAddr())
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(conn)
	for i := 0; i < len(lineVals); i += 100 {
		fmt.Fprint(w, "zipf.sorted")
		for _, v := range lineVals[i:min(i+100, len(lineVals))] {
			fmt.Fprintf(w, " %s", strconv.FormatFloat(v, 'g', -1, 64))
		}
		if i%1000 == 0 {
			fmt.Fprint(w, " NaN x1 +Inf") // three bad values on a good line
		}
		fmt.Fprint(w, "\n")
		if i%5000 == 0 {
			fmt.Fprint(w, "bad!name 1 2 3\n")
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	conn.Close()

	// Binary protocol: float32 and float64 frames.
	binVals, _ := synth.Generate(synth.Spec{Dist: synth.Normal, Order: synth.OrganPipe, Seed: 2}, n)
	conn, err = net.Dial("tcp", d.TCPAddr())
	if err != nil {
		t.Fatal(err)
	}
	buf := []byte(ingest.Magic)
	for i := 0; i < len(binVals); i += 999 {
		if buf, err = ingest.AppendFrame(buf, "normal.organ", binVals[i:min(i+999, len(binVals))], i%2 == 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Write(buf); err != nil {
		t.Fatal(err)
	}
	conn.Close()

	// Push: Stats counts every value as soon as Push returns.
	pushVals, _ := synth.Generate(synth.Spec{Dist: synth.Pareto, Order: synth.Alternating, Seed: 3}, n)
	push, err := c.Push(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(pushVals); i += 5000 {
		chunk := pushVals[i:min(i+5000, len(pushVals))]
		if i == 0 {
			chunk = append([]float64{math.NaN(), math.Inf(-1)}, chunk...)
		}
		if err := push.Send(&pb.PushRequest{Stream: "pareto.alt", Values: chunk}); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := push.CloseAndRecv()
	if err != nil {
		t.Fatal(err)
	}
	if resp.Accepted != uint64(n) || resp.Rejected != 2 {
		t.Fatalf("push: %v", resp)
	}
	st, err := c.Stats(ctx, &pb.StatsRequest{Stream: "pareto.alt"})
	if err != nil || st.Count != resp.Accepted {
		t.Fatalf("stats right after push: %v, %v; want count %d", st, err, resp.Accepted)
	}

	st = waitCount(t, c, "zipf.sorted", uint64(n))
	if st.Rejected["nan"] != uint64(n/1000) || st.Rejected["inf"] != uint64(n/1000) || st.Rejected["malformed"] != uint64(n/1000) {
		t.Errorf("zipf.sorted rejects %v", st.Rejected)
	}
	waitCount(t, c, "normal.organ", uint64(n))
	if got := d.Pipeline().Rejected()[feed.ReasonBadStreamName]; got != 3*uint64((n+4999)/5000) { // three values a line
		t.Errorf("bad stream names counted %d", got)
	}

	for name, vals := range map[string][]float64{"zipf.sorted": lineVals, "normal.organ": binVals, "pareto.alt": pushVals} {
		rounded := round32(vals)
		for _, lastN := range []uint64{0, 1, 10, 1000, 12345, uint64(n)} {
			checkAnswers(t, c, name, rounded, 0.001, lastN)
		}
	}
}

// TestManyStreams sends 1,000 streams over one line-protocol connection.
func TestManyStreams(t *testing.T) {
	d, c := startDaemon(t, nil)
	conn, err := net.Dial("tcp", d.TCPAddr())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for i := range 1000 {
		fmt.Fprintf(&b, "s%d", i)
		for j := range 50 {
			fmt.Fprintf(&b, " %d", (i+j)%17)
		}
		b.WriteByte('\n')
	}
	if _, err := conn.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	waitCount(t, c, "s999", 50)
	list, err := c.ListStreams(context.Background(), &pb.ListStreamsRequest{})
	if err != nil || len(list.Streams) != 1000 {
		t.Fatalf("list: %d streams, %v", len(list.GetStreams()), err)
	}
	for _, i := range []int{0, 500, 999} {
		vals := make([]float64, 50)
		for j := range vals {
			vals[j] = float64((i + j) % 17)
		}
		checkAnswers(t, c, fmt.Sprint("s", i), vals, 0.001, 0)
	}
}

func TestStatusCodes(t *testing.T) {
	_, c := startDaemon(t, func(c *Config) { c.MaxStreams = 2 })
	ctx := context.Background()
	code := func(err error) codes.Code { return status.Code(err) }
	if _, err := c.Quantiles(ctx, &pb.QuantilesRequest{Stream: "nope", Phis: []float64{0.5}}); code(err) != codes.NotFound {
		t.Errorf("unknown stream: %v", err)
	}
	if _, err := c.CreateStream(ctx, &pb.CreateStreamRequest{Stream: "a", Epsilon: 0.01, SlidingWindow: 100}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateStream(ctx, &pb.CreateStreamRequest{Stream: "a"}); code(err) != codes.AlreadyExists {
		t.Errorf("create twice: %v", err)
	}
	if _, err := c.CreateStream(ctx, &pb.CreateStreamRequest{Stream: "b", Epsilon: 2}); code(err) != codes.InvalidArgument {
		t.Errorf("bad epsilon: %v", err)
	}
	for _, phi := range []float64{-0.1, 1.5, math.NaN()} {
		if _, err := c.Quantiles(ctx, &pb.QuantilesRequest{Stream: "a", Phis: []float64{phi}}); code(err) != codes.InvalidArgument {
			t.Errorf("φ=%v: %v", phi, err)
		}
	}
	for _, s := range []float64{0, 0.01, 1.5} {
		if _, err := c.HeavyHitters(ctx, &pb.HeavyHittersRequest{Stream: "a", Support: s}); code(err) != codes.InvalidArgument {
			t.Errorf("support %v: %v", s, err)
		}
	}
	if _, err := c.Quantiles(ctx, &pb.QuantilesRequest{Stream: "a", Phis: []float64{0.5}, LastN: 101}); code(err) != codes.InvalidArgument {
		t.Errorf("last_n above the window: %v", err)
	}
	if _, err := c.Ranks(ctx, &pb.RanksRequest{Stream: "a", Values: []float64{math.Inf(1)}}); code(err) != codes.InvalidArgument {
		t.Errorf("rank of +Inf: %v", err)
	}
	// An empty stream answers count 0.
	if q, err := c.Quantiles(ctx, &pb.QuantilesRequest{Stream: "a", Phis: []float64{0.5}}); err != nil || q.Count != 0 {
		t.Errorf("empty stream: %v, %v", q, err)
	}
	push := func(stream string) error {
		p, err := c.Push(ctx)
		if err != nil {
			return err
		}
		_ = p.Send(&pb.PushRequest{Stream: stream, Values: []float64{1}})
		_, err = p.CloseAndRecv()
		return err
	}
	if err := push("b"); err != nil {
		t.Fatal(err)
	}
	if err := push("c"); code(err) != codes.ResourceExhausted {
		t.Errorf("third stream: %v", err)
	}
	if err := push("bad name"); code(err) != codes.InvalidArgument {
		t.Errorf("bad name: %v", err)
	}
	if _, err := c.DeleteStream(ctx, &pb.DeleteStreamRequest{Stream: "b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stats(ctx, &pb.StatsRequest{Stream: "b"}); code(err) != codes.NotFound {
		t.Errorf("deleted stream: %v", err)
	}
}

func TestTokenAndHealth(t *testing.T) {
	d, c := startDaemon(t, func(c *Config) { c.Token = "s3cret" })
	ctx := context.Background()
	if _, err := c.ListStreams(ctx, &pb.ListStreamsRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("no token: %v", err)
	}
	authed := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer s3cret")
	if _, err := c.ListStreams(authed, &pb.ListStreamsRequest{}); err != nil {
		t.Errorf("with token: %v", err)
	}
	wrong := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer nope")
	if _, err := c.ListStreams(wrong, &pb.ListStreamsRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("wrong token: %v", err)
	}
	conn, _ := grpc.NewClient(d.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	defer conn.Close()
	h, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || h.Status != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health: %v, %v", h, err)
	}
}

func TestWatch(t *testing.T) {
	_, c := startDaemon(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, _ := c.Push(ctx)
	_ = p.Send(&pb.PushRequest{Stream: "w", Values: []float64{1, 2, 2, 3, 3, 3}})
	if _, err := p.CloseAndRecv(); err != nil {
		t.Fatal(err)
	}
	ws, err := c.Watch(ctx, &pb.WatchRequest{Stream: "w", Phis: []float64{0.5}, Support: 0.3, IntervalMs: 100})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		r, err := ws.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if r.Quantiles.Count != 6 || r.Quantiles.Quantiles[0].Value != 2 || len(r.HeavyHitters.Items) != 2 {
			t.Fatalf("watch: %v", r)
		}
	}
}

func TestConfigEnvAndValidate(t *testing.T) {
	cfg := DefaultConfig()
	fs := newServeFlags(&cfg)
	env := map[string]string{"STREAMD_GRPC_ADDR": "127.0.0.1:9", "STREAMD_EPSILON": "0.01"}
	if err := applyEnv(fs, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--epsilon", "0.02"}); err != nil {
		t.Fatal(err)
	}
	if cfg.GRPCAddr != "127.0.0.1:9" || cfg.Stream.Epsilon != 0.02 {
		t.Errorf("config %+v", cfg)
	}
	bad := DefaultConfig()
	bad.Sorter = "quantum"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "sorter") {
		t.Errorf("bad sorter: %v", err)
	}

	// The HTTP port's flags, from the environment and the command line.
	cfg = DefaultConfig()
	fs = newServeFlags(&cfg)
	env = map[string]string{"STREAMD_METRICS_QUANTILES": "0.25, 0.75", "STREAMD_METRICS_OPEN": "true"}
	if err := applyEnv(fs, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--metrics-max-streams", "7", "--metrics-last-n", "1000", "--web-history", "1m", "--web-interval", "2s"}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.MetricsQuantiles, []float64{0.25, 0.75}) || !cfg.MetricsOpen || cfg.MetricsMaxStreams != 7 ||
		cfg.MetricsLastN != 1000 || cfg.WebHistory != time.Minute || cfg.WebInterval != 2*time.Second {
		t.Errorf("HTTP config %+v", cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Error(err)
	}
	if err := fs.Parse([]string{"--metrics-quantiles", "0.5,x"}); err == nil {
		t.Error("--metrics-quantiles 0.5,x accepted")
	}
	for field, mod := range map[string]func(*Config){
		"metrics-quantiles":   func(c *Config) { c.MetricsQuantiles = []float64{0.5, 1.5} },
		"metrics-quantiles=":  func(c *Config) { c.MetricsQuantiles = []float64{0.5, 0.5} },
		"metrics-max-streams": func(c *Config) { c.MetricsMaxStreams = -1 },
		"web-history":         func(c *Config) { c.WebHistory = -time.Second },
		"web-interval":        func(c *Config) { c.WebInterval = 0 },
	} {
		bad := DefaultConfig()
		mod(&bad)
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), strings.TrimSuffix(field, "=")) {
			t.Errorf("%s: %v", field, err)
		}
	}
}

// TestSignals runs the real binary: SIGTERM shuts it down cleanly.
func TestSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildStreamd(t)
	cmd := exec.Command(bin, "serve", "--grpc-addr", "127.0.0.1:0", "--tcp-addr", "127.0.0.1:0", "--metrics-addr", "", "--data-dir", t.TempDir(), "--sorter", "cpu")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "streamd serving") {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var rest bytes.Buffer
	_, _ = io.Copy(&rest, stderr)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\n%s", err, rest.String())
	}
	if !strings.Contains(rest.String(), "streamd stopped") {
		t.Errorf("log: %s", rest.String())
	}
}

// TestSecondSignalAborts: an open Watch stream keeps a graceful shutdown
// waiting (up to --shutdown-timeout); a second SIGTERM aborts the wait.
func TestSecondSignalAborts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildStreamd(t)
	cmd := exec.Command(bin, "serve", "--grpc-addr", "127.0.0.1:0", "--tcp-addr", "", "--metrics-addr", "",
		"--data-dir", t.TempDir(), "--sorter", "cpu", "--shutdown-timeout", "60s")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stderr)
	var addr string
	for sc.Scan() {
		if _, a, ok := strings.Cut(sc.Text(), "grpc="); ok {
			addr, _, _ = strings.Cut(a, " ")
			break
		}
	}
	shuttingDown := make(chan struct{})
	go func() {
		for sc.Scan() {
			if strings.Contains(sc.Text(), "shutting down") {
				close(shuttingDown)
				break
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	conn := dialGRPC(t, addr)
	c := pb.NewStreamdClient(conn)
	ctx := context.Background()
	p, _ := c.Push(ctx)
	_ = p.Send(&pb.PushRequest{Stream: "w", Values: []float64{1}})
	if _, err := p.CloseAndRecv(); err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(ctx, &pb.WatchRequest{Stream: "w", Phis: []float64{0.5}, IntervalMs: 100})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Recv(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	<-shuttingDown // the graceful stop now waits on the Watch stream
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("second signal took %v", d)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the second signal did not abort the shutdown")
	}
}

// TestSortWorkers: --sort-workers 0 gives a GPU sorter many workers, so
// that the batches waiting for it go in one submission, and leaves the
// CPU sorter the pipeline's default; a number given is kept.
func TestSortWorkers(t *testing.T) {
	for _, tc := range []struct {
		n    int
		gpu  bool
		want int
	}{{0, true, gpuSortWorkers}, {0, false, 0}, {8, true, 8}, {8, false, 8}} {
		if got := sortWorkers(tc.n, tc.gpu); got != tc.want {
			t.Errorf("sortWorkers(%d, gpu %v) = %d, want %d", tc.n, tc.gpu, got, tc.want)
		}
	}
}
