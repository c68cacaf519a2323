package main

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "streamd/api/proto/streamd/v1"
)

// A floodSpec is a flood of Watch calls on one stream.
type floodSpec struct {
	watchers, conns int
	shapes          int  // different questions among the watchers
	varyLastN       bool // the questions differ in last_n, not in φs
	epsilon         float64
	window, lastN   uint64 // the stream's W, and N (also each Watch's last_n)
	interval        time.Duration
	duration        time.Duration
}

// A floodReport is what a flood measured.
type floodReport struct {
	answers, minAnswers int64 // over all watchers, and the fewest one got
	watchErr            error // the first Watch that failed
	statsCalls          int
	maxStats            time.Duration // the slowest Stats call
	statsErr            error
	maxRSS, peakRSS     int64 // bytes: the largest sample during the flood, and VmHWM
}

func (r floodReport) String() string {
	return fmt.Sprintf("answers %d (fewest per watcher %d), %d Stats calls, slowest %v, RSS max %.1f MiB, peak (VmHWM) %.1f MiB, watch error %v, stats error %v",
		r.answers, r.minAnswers, r.statsCalls, r.maxStats.Round(time.Millisecond), float64(r.maxRSS)/(1<<20), float64(r.peakRSS)/(1<<20), r.watchErr, r.statsErr)
}

// rss returns VmRSS and VmHWM of process pid, in bytes.
func rss(pid int) (cur, peak int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1, -1
	}
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			cur = kb << 10
		case "VmHWM:":
			peak = kb << 10
		}
	}
	return cur, peak
}

// flood fills a stream of the daemon at addr (process pid) with spec.lastN
// values, opens spec.watchers Watch calls of its last n values over
// spec.conns connections, and for spec.duration calls Stats (on a
// connection of its own) and samples the daemon's memory every 100ms.
func flood(t *testing.T, addr string, pid int, spec floodSpec) floodReport {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clients := make([]pb.StreamdClient, spec.conns+1) // the last one asks Stats
	for i := range clients {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		clients[i] = pb.NewStreamdClient(conn)
	}
	c := clients[0]
	const stream = "flood"
	if _, err := c.CreateStream(ctx, &pb.CreateStreamRequest{Stream: stream, Epsilon: spec.epsilon, WindowSize: spec.window, SlidingWindow: spec.lastN}); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	values := make([]float64, 1<<16)
	for sent := uint64(0); sent < spec.lastN; sent += uint64(len(values)) {
		for i := range values {
			values[i] = rng.NormFloat64()
		}
		p, err := c.Push(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Send(&pb.PushRequest{Stream: stream, Values: values[:min(uint64(len(values)), spec.lastN-sent)]}); err != nil {
			t.Fatal(err)
		}
		if _, err := p.CloseAndRecv(); err != nil {
			t.Fatal(err)
		}
	}
	waitCount(t, c, stream, spec.lastN)

	var r floodReport
	var mu sync.Mutex // guards r.watchErr
	counts := make([]atomic.Int64, spec.watchers)
	var watching sync.WaitGroup
	for i := range spec.watchers {
		req := &pb.WatchRequest{Stream: stream, Phis: []float64{0.5, 0.9, 0.99}, LastN: spec.lastN, IntervalMs: uint64(spec.interval.Milliseconds())}
		switch {
		case spec.shapes > 1 && spec.varyLastN:
			req.LastN -= uint64(i % spec.shapes)
		case spec.shapes > 1:
			req.Phis = append(req.Phis, float64(i%spec.shapes)/float64(spec.shapes))
		}
		watching.Go(func() {
			w, err := clients[i%spec.conns].Watch(ctx, req)
			for err == nil {
				var resp *pb.WatchResponse
				if resp, err = w.Recv(); err == nil {
					if resp.Quantiles.GetCount() != req.LastN {
						err = fmt.Errorf("an answer counts %d values, want %d", resp.Quantiles.GetCount(), req.LastN)
						break
					}
					counts[i].Add(1)
				}
			}
			if ctx.Err() == nil {
				mu.Lock()
				r.watchErr = cmpOr(r.watchErr, err)
				mu.Unlock()
			}
		})
	}
	end := time.Now().Add(spec.duration)
	for time.Now().Before(end) {
		start := time.Now()
		sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := clients[spec.conns].Stats(sctx, &pb.StatsRequest{Stream: stream})
		scancel()
		r.statsCalls++
		r.maxStats = max(r.maxStats, time.Since(start))
		r.statsErr = cmpOr(r.statsErr, err)
		cur, _ := rss(pid)
		r.maxRSS = max(r.maxRSS, cur)
		time.Sleep(100 * time.Millisecond)
	}
	_, r.peakRSS = rss(pid)
	cancel()
	watching.Wait()
	r.minAnswers = -1
	for i := range counts {
		n := counts[i].Load()
		r.answers += n
		if r.minAnswers < 0 || n < r.minAnswers {
			r.minAnswers = n
		}
	}
	return r
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// TestWatchFlood floods a daemon with Watch calls of one stream's last n
// values: every call keeps getting answers and Stats keeps answering. The
// short version runs in the test's process on a small stream. With
// STREAMD_WATCH_FLOOD=1 it runs the real binary with --max-memory 256MiB
// under 3000 calls of a stream of ε 1e-4, W 2^20 and N 2^22 for 25s, and
// checks its resident memory (at most 1.5 × (256 + 64) MiB) and that every
// Stats call answers within 1s (STREAMD_WATCH_FLOOD_SHAPES: how many
// different questions the calls ask, 1 by default, differing in their φs,
// or in last_n with STREAMD_WATCH_FLOOD_VARY=last_n).
func TestWatchFlood(t *testing.T) {
	if os.Getenv("STREAMD_WATCH_FLOOD") == "" {
		spec := floodSpec{watchers: 300, conns: 4, shapes: 1, epsilon: 0.01, window: 4096, lastN: 1 << 16, interval: 100 * time.Millisecond, duration: time.Second}
		d, _ := startDaemon(t, nil)
		r := flood(t, d.GRPCAddr(), os.Getpid(), spec)
		t.Log(r)
		if r.watchErr != nil || r.statsErr != nil || r.minAnswers < 1 {
			t.Errorf("flood: %v", r)
		}
		return
	}
	if testing.Short() {
		t.Skip("a long flood of the real binary")
	}
	spec := floodSpec{watchers: 3000, conns: 16, shapes: 1, epsilon: 1e-4, window: 1 << 20, lastN: 1 << 22, interval: 100 * time.Millisecond, duration: 25 * time.Second}
	if s := os.Getenv("STREAMD_WATCH_FLOOD_SHAPES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		spec.shapes = n
	}
	spec.varyLastN = os.Getenv("STREAMD_WATCH_FLOOD_VARY") == "last_n"
	const budget = 256 << 20
	cmd := exec.Command(buildStreamd(t), "serve", "--grpc-addr", "127.0.0.1:0", "--tcp-addr", "", "--metrics-addr", "",
		"--data-dir", t.TempDir(), "--sorter", "cpu", "--max-memory", "256MiB")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logged := make(chan struct{})
	defer func() {
		_ = cmd.Process.Kill()
		<-logged
		_ = cmd.Wait()
	}()
	sc := bufio.NewScanner(stderr)
	addr := ""
	for addr == "" && sc.Scan() {
		if m := regexp.MustCompile(`grpc=(\S+)`).FindStringSubmatch(sc.Text()); m != nil && strings.Contains(sc.Text(), "streamd serving") {
			addr = m[1]
		}
	}
	if addr == "" {
		close(logged)
		t.Fatalf("the daemon did not start: %v", sc.Err())
	}
	go func() {
		defer close(logged)
		for sc.Scan() {
			t.Log(sc.Text())
		}
	}()
	start := time.Now()
	r := flood(t, addr, cmd.Process.Pid, spec)
	t.Logf("%+v in %v: %v", spec, time.Since(start).Round(time.Second), r)
	if limit := int64(1.5 * (budget + 64<<20)); r.maxRSS > limit || r.peakRSS > limit {
		t.Errorf("resident memory %d (peak %d) bytes, more than %d", r.maxRSS, r.peakRSS, limit)
	}
	if r.maxStats > time.Second || r.statsErr != nil {
		t.Errorf("the slowest Stats call took %v (%v), want at most 1s", r.maxStats, r.statsErr)
	}
	if r.watchErr != nil || r.minAnswers < 1 {
		t.Errorf("watch: %v, fewest answers %d", r.watchErr, r.minAnswers)
	}
}
