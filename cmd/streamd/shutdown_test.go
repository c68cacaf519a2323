package main

import (
	"context"
	"io"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "streamd/api/proto/streamd/v1"
)

// pushClient is a producer over Push that goes on until the daemon refuses
// it, and counts what the daemon reported accepted: in PushResponses, and
// in the details of the error that ended it.
type pushClient struct {
	stream   string
	kind     string // "calls": back-to-back calls; "endless": one call that never ends; "idle": one call that sends nothing
	accepted atomic.Uint64
	started  atomic.Bool // a first value was accepted (or, idle, the call is open)
	err      error       // what ended it
}

// acceptedBefore returns the values a failed Push reports accepted in its
// status details.
func acceptedBefore(err error) uint64 {
	for _, d := range status.Convert(err).Details() {
		if r, ok := d.(*pb.PushResponse); ok {
			return r.Accepted
		}
	}
	return 0
}

// run pushes until the daemon ends it with an error.
func (p *pushClient) run(c pb.StreamdClient) {
	ctx := context.Background()
	vals := make([]float64, 5000)
	for i := range vals {
		vals[i] = float64(i)
	}
	for {
		call, err := c.Push(ctx)
		if err != nil {
			p.err = err
			return
		}
		if p.kind == "idle" {
			p.started.Store(true)
			p.err = call.RecvMsg(new(pb.PushResponse)) // waits for the daemon to end the call
			p.accepted.Add(acceptedBefore(p.err))
			return
		}
		var sendErr error
		for i := 0; sendErr == nil && (p.kind == "endless" || i < 4); i++ {
			sendErr = call.Send(&pb.PushRequest{Stream: p.stream, Values: vals})
			if p.kind == "endless" && i == 2 {
				p.started.Store(true)
			}
		}
		// After a failed Send (io.EOF: the daemon ended the call), the
		// call's status is what CloseAndRecv returns.
		resp, err := call.CloseAndRecv()
		if err != nil {
			p.err = err
			p.accepted.Add(acceptedBefore(err))
			return
		}
		p.accepted.Add(resp.Accepted)
		p.started.Store(true)
	}
}

// pushClients starts back-to-back, endless and idle Push clients on c and
// returns once each has started.
func pushClients(t *testing.T, c pb.StreamdClient) ([]*pushClient, *sync.WaitGroup) {
	t.Helper()
	clients := []*pushClient{
		{stream: "calls.a", kind: "calls"}, {stream: "calls.b", kind: "calls"}, {stream: "calls.c", kind: "calls"},
		{stream: "endless", kind: "endless"}, {stream: "idle", kind: "idle"},
	}
	var wg sync.WaitGroup
	for _, p := range clients {
		wg.Go(func() { p.run(c) })
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, p := range clients {
		for !p.started.Load() {
			if time.Now().After(deadline) {
				t.Fatalf("client %s (%s) not started: %v", p.stream, p.kind, p.err)
			}
			time.Sleep(time.Millisecond)
		}
	}
	// The endless client has sent three messages; wait for the first to
	// be counted.
	for countOf(c, "endless") == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the endless client's values never counted")
		}
		time.Sleep(time.Millisecond)
	}
	return clients, &wg
}

// checkAcknowledged checks that the ended clients were refused with
// Unavailable, and that the daemon on c counts exactly the values each
// was told were accepted.
func checkAcknowledged(t *testing.T, c pb.StreamdClient, clients []*pushClient) {
	t.Helper()
	for _, p := range clients {
		if code := status.Code(p.err); code != codes.Unavailable {
			t.Errorf("client %s (%s) ended with %v, want Unavailable", p.stream, p.kind, p.err)
		}
		var got uint64
		st, err := c.Stats(context.Background(), &pb.StatsRequest{Stream: p.stream})
		switch {
		case err == nil:
			got = st.Count
		case status.Code(err) != codes.NotFound:
			t.Fatal(err)
		}
		if got != p.accepted.Load() {
			t.Errorf("client %s (%s): restored %d values, want the %d acknowledged (%d lost)", p.stream, p.kind, got, p.accepted.Load(), int64(p.accepted.Load())-int64(got))
		} else {
			t.Logf("client %s (%s): %d values acknowledged and restored; ended by %v", p.stream, p.kind, got, p.err)
		}
	}
}

// TestCloseKeepsAcknowledgedPushes closes the daemon while Push clients
// send: three make back-to-back calls, one makes a call that never ends,
// one opens a call and sends nothing; and a TCP producer sends lines.
// Close stops them all (the endless and idle calls do not hold it up), the
// Push clients with Unavailable, and after a restart on the same data dir
// each stream counts exactly the values its Push client was told were
// accepted, and the TCP stream exactly what the daemon had counted of it.
func TestCloseKeepsAcknowledgedPushes(t *testing.T) {
	dir := t.TempDir()
	d, c := openOn(t, dir, io.Discard, func(c *Config) { c.TCPAddr = "127.0.0.1:0" })
	conn, err := net.Dial("tcp", d.TCPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var tcp sync.WaitGroup
	tcp.Go(func() {
		line := []byte("tcp" + strings.Repeat(" 1.5", 500) + "\n")
		for {
			if _, err := conn.Write(line); err != nil {
				return // the daemon closed the connection
			}
		}
	})
	clients, wg := pushClients(t, c)
	for deadline := time.Now().Add(20 * time.Second); countOf(c, "tcp") == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no TCP value counted")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := d.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	wg.Wait()
	tcp.Wait()
	st, err := d.Pipeline().Stream("tcp")
	if err != nil {
		t.Fatal(err)
	}
	tcpCount := st.Stats().Count

	d, c = openOn(t, dir, io.Discard, nil)
	defer closeDaemon(t, d)
	checkAcknowledged(t, c, clients)
	if got := countOf(c, "tcp"); got != uint64(tcpCount) {
		t.Errorf("TCP stream: restored %d values, want the %d counted at shutdown", got, tcpCount)
	}
}

// countOf returns the stream's count, 0 for no stream.
func countOf(c pb.StreamdClient, stream string) uint64 {
	st, err := c.Stats(context.Background(), &pb.StatsRequest{Stream: stream})
	if err != nil {
		return 0
	}
	return st.Count
}

// TestSIGTERMKeepsAcknowledgedPushes is TestCloseKeepsAcknowledgedPushes
// with the real binary and SIGTERM: it exits 0, and a daemon started on
// its data dir counts exactly the acknowledged values.
func TestSIGTERMKeepsAcknowledgedPushes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildStreamd(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "serve", "--grpc-addr", "127.0.0.1:0", "--tcp-addr", "", "--metrics-addr", "",
		"--data-dir", dir, "--sorter", "cpu", "--window-size", "4096", "--sliding-window", "50000",
		"--checkpoint-interval", "0", "--shutdown-timeout", "60s")
	addrs, log := startBinary(t, cmd, "grpc")
	conn := dialGRPC(t, addrs["grpc"])
	clients, wg := pushClients(t, pb.NewStreamdClient(conn))
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, log.String())
	}
	wg.Wait()

	d, c := openOn(t, dir, io.Discard, nil)
	defer closeDaemon(t, d)
	checkAcknowledged(t, c, clients)
}

// startBinary starts cmd, a streamd serve, and returns the addresses its
// "streamd serving" log line names (grpc, metrics) and its log, which
// grows until the process exits. It kills the process at the end of the
// test if it still runs.
func startBinary(t *testing.T, cmd *exec.Cmd, want ...string) (map[string]string, *syncBuffer) {
	t.Helper()
	log := new(syncBuffer)
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	serving := regexp.MustCompile(`.*streamd serving.*`)
	deadline := time.Now().Add(60 * time.Second)
	var line string
	for line == "" {
		if time.Now().After(deadline) {
			t.Fatalf("daemon not serving; its log:\n%s", log.String())
		}
		time.Sleep(5 * time.Millisecond)
		line = serving.FindString(log.String())
	}
	addrs := map[string]string{}
	for _, name := range want {
		m := regexp.MustCompile(name + `=(\S+)`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("no %s address in %q", name, line)
		}
		addrs[name] = m[1]
	}
	return addrs, log
}
