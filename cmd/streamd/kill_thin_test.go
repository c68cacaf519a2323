package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "streamd/api/proto/streamd/v1"
	"streamd/internal/exact"
)

// TestKillKeepsThinStreams kills the real daemon with SIGKILL while it
// writes a checkpoint, ten times over, after durable pushes to streams
// below a window (whose checkpoints write their values once, in their
// sliding windows), float32 and float64, and to one past a window, then
// more values not durable. After each restart every stream holds every
// acknowledged value and a prefix of those sent: its count is at least
// the acknowledged and at most the sent, and its answers, all history and
// last n, are exact over that prefix (within ε for the stream past a
// window's all-history answers).
func TestKillKeepsThinStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildStreamd(t)
	dir := t.TempDir()
	const k = 201
	fat := func(i int) bool { return i == k-1 } // past a window
	f64 := func(i int) bool { return i%4 == 3 }
	sent := make([][]float64, k)
	acked := make([]int, k)
	val := 0
	next := func() float64 { val++; return float64(val*7919%100003) / 7 }
	start := func() (*exec.Cmd, pb.StreamdClient, func()) {
		cmd := exec.Command(bin, "serve", "--grpc-addr", "127.0.0.1:0", "--tcp-addr", "", "--metrics-addr", "",
			"--data-dir", dir, "--sorter", "cpu", "--window-size", "4096", "--sliding-window", "50000",
			"--checkpoint-interval", "5ms", "--epsilon", "0.01")
		addrs, _ := startBinary(t, cmd, "grpc")
		conn, err := grpc.NewClient(addrs["grpc"], grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		return cmd, pb.NewStreamdClient(conn), func() { conn.Close() }
	}
	// check checks every stream against what was acknowledged and sent,
	// and keeps of what was sent the prefix the daemon holds.
	check := func(c pb.StreamdClient) {
		for i := range k {
			name := fmt.Sprint("thin.", i)
			st, err := c.Stats(context.Background(), &pb.StatsRequest{Stream: name})
			if err != nil {
				if acked[i] == 0 {
					continue
				}
				t.Fatal(err)
			}
			n := int(st.Count)
			if n < acked[i] || n > len(sent[i]) {
				t.Fatalf("%s: count %d, acked %d, sent %d", name, n, acked[i], len(sent[i]))
			}
			sent[i] = sent[i][:n]
			prefix := sent[i]
			if !f64(i) {
				prefix = round32(prefix)
			}
			eps := 0.0
			if fat(i) {
				eps = 0.01
			}
			for _, last := range []int{0, n, max(1, n/2)} {
				q, err := c.Quantiles(context.Background(), &pb.QuantilesRequest{Stream: name, Phis: phis, LastN: uint64(last)})
				if err != nil {
					t.Fatal(err)
				}
				key := exact.New(prefix)
				e := eps
				if last != 0 {
					key, e = exact.New(prefix[n-last:]), 0
				}
				for _, a := range q.Quantiles {
					if err := key.CheckQuantile(a.Phi, a.Value, e, int64(a.RankMin), int64(a.RankMax)); err != nil {
						t.Fatalf("%s last %d: %v", name, last, err)
					}
				}
			}
		}
	}
	mid := 0
	for round := range 10 {
		cmd, c, done := start()
		check(c)
		if round == 0 {
			for i := range k {
				if f64(i) {
					if _, err := c.CreateStream(context.Background(), &pb.CreateStreamRequest{Stream: fmt.Sprint("thin.", i), Float64: true, WindowSize: 4096, SlidingWindow: 50000}); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		p, err := c.Push(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for i := range k {
			n := 1 + (i+round)%5
			if fat(i) {
				n = 1500
			}
			vals := make([]float64, n)
			for j := range vals {
				vals[j] = next() + 1e-7*float64(j%3)
			}
			if err := p.Send(&pb.PushRequest{Stream: fmt.Sprint("thin.", i), Values: vals, Durable: true}); err != nil {
				t.Fatal(err)
			}
			sent[i] = append(sent[i], vals...)
		}
		if _, err := p.CloseAndRecv(); err != nil {
			t.Fatal(err)
		}
		for i := range k {
			acked[i] = len(sent[i])
		}
		// More values, not durable, until a checkpoint is being written:
		// then the kill.
		stop := make(chan struct{})
		killed := make(chan struct{})
		go func() {
			defer close(killed)
			for {
				select {
				case <-stop:
					return
				default:
				}
				time.Sleep(100 * time.Microsecond)
				if tmp, _ := filepath.Glob(filepath.Join(dir, ".checkpoint-*.tmp")); len(tmp) > 0 {
					mid++
					_ = cmd.Process.Signal(syscall.SIGKILL)
					return
				}
			}
		}()
		for i := range k {
			vals := []float64{next(), next()}
			sent[i] = append(sent[i], vals...) // maybe received
			p, err := c.Push(context.Background())
			if err != nil {
				break
			}
			if err := p.Send(&pb.PushRequest{Stream: fmt.Sprint("thin.", i), Values: vals}); err != nil {
				break
			}
			if _, err := p.CloseAndRecv(); err != nil {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		close(stop)
		<-killed
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		done()
	}
	if mid == 0 {
		t.Error("no kill landed in the middle of a checkpoint")
	}
	cmd, c, done := start()
	defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait(); done() }()
	check(c)
}
