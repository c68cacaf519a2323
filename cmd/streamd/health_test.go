package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	pb "streamd/api/proto/streamd/v1"
)

// breakDataDir makes dir refuse checkpoints and returns the func that
// mends it (also called at the end of the test). Where mount works (as
// root), a full tmpfs is mounted over dir, so writes fail as on a full
// disk (ENOSPC); elsewhere dir is moved away and a plain file takes its
// place (ENOTDIR).
func breakDataDir(t *testing.T, dir string) (mend func()) {
	t.Helper()
	var once sync.Once
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).Run(); err == nil {
		f, err := os.Create(filepath.Join(dir, "filler"))
		if err == nil {
			buf := make([]byte, 4096)
			for err == nil {
				_, err = f.Write(buf)
			}
			f.Close()
		}
		t.Logf("data dir: a full tmpfs (%v)", err)
		mend = func() {
			once.Do(func() {
				if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
					t.Errorf("umount %s: %v: %s", dir, err, out)
				}
			})
		}
	} else {
		away := dir + ".away"
		if err := os.Rename(dir, away); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dir, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("data dir: a plain file (mount: %v)", err)
		mend = func() {
			once.Do(func() {
				if err := os.Remove(dir); err != nil {
					t.Error(err)
				}
				if err := os.Rename(away, dir); err != nil {
					t.Error(err)
				}
			})
		}
	}
	t.Cleanup(mend)
	return mend
}

// TestCheckpointFailureDegradesHealth runs the real binary with frequent
// checkpoints and makes its data dir refuse them: /healthz answers 503
// with the reason, gRPC health reports DurabilityService NOT_SERVING (the
// overall and API statuses stay SERVING), /metrics counts the failures
// and keeps the time of the last success, and a durable Push fails
// instead of being acknowledged. Once the data dir is mended, a
// checkpoint succeeds and all is healthy again. Broken again, the final
// checkpoint at SIGTERM fails and the daemon exits 1, saying so.
func TestCheckpointFailureDegradesHealth(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildStreamd(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "serve", "--grpc-addr", "127.0.0.1:0", "--tcp-addr", "", "--metrics-addr", "127.0.0.1:0",
		"--data-dir", dir, "--sorter", "cpu", "--checkpoint-interval", "20ms")
	addrs, log := startBinary(t, cmd, "grpc", "metrics")
	conn := dialGRPC(t, addrs["grpc"])
	c, hc := pb.NewStreamdClient(conn), healthpb.NewHealthClient(conn)
	ctx := context.Background()

	healthz := func() (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + addrs["metrics"] + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	// waitHealthz polls /healthz until it answers code, and returns its body.
	waitHealthz := func(code int) string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			got, body := healthz()
			if got == code {
				return body
			}
			if time.Now().After(deadline) {
				t.Fatalf("/healthz: %d %q, want %d; the daemon's log:\n%s", got, body, code, log.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	checkHealth := func(durability healthpb.HealthCheckResponse_ServingStatus) {
		t.Helper()
		for service, want := range map[string]healthpb.HealthCheckResponse_ServingStatus{
			"": healthpb.HealthCheckResponse_SERVING, pb.Streamd_ServiceDesc.ServiceName: healthpb.HealthCheckResponse_SERVING,
			DurabilityService: durability,
		} {
			h, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: service})
			if err != nil || h.Status != want {
				t.Errorf("health of %q: %v, %v; want %v", service, h, err, want)
			}
		}
	}
	metrics := func() []byte {
		t.Helper()
		resp, err := http.Get("http://" + addrs["metrics"] + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		text, _ := io.ReadAll(resp.Body)
		if promtool, err := exec.LookPath("promtool"); err == nil {
			cmd := exec.Command(promtool, "check", "metrics")
			cmd.Stdin = bytes.NewReader(text)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("promtool check metrics: %v\n%s\n/metrics:\n%s", err, out, text)
			}
		}
		return text
	}
	sample := func(text []byte, name string) float64 {
		t.Helper()
		for line := range strings.SplitSeq(string(text), "\n") {
			if v, ok := strings.CutPrefix(line, name+" "); ok {
				x, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatal(err)
				}
				return x
			}
		}
		t.Fatalf("no %s in /metrics:\n%s", name, text)
		return 0
	}

	push(t, c, "v", []float64{1, 2, 3}, true)
	waitHealthz(http.StatusOK)
	checkHealth(healthpb.HealthCheckResponse_SERVING)
	text := metrics()
	lastOK := sample(text, "streamd_checkpoint_last_success_timestamp_seconds")
	if sample(text, "streamd_checkpoint_failures_total") != 0 || lastOK <= 0 {
		t.Errorf("healthy daemon's checkpoint metrics:\n%s", text)
	}

	mend := breakDataDir(t, dir)
	if body := waitHealthz(http.StatusServiceUnavailable); !strings.Contains(body, "checkpoint") {
		t.Errorf("/healthz says %q: no reason", body)
	}
	checkHealth(healthpb.HealthCheckResponse_NOT_SERVING)
	text = metrics()
	if sample(text, "streamd_checkpoint_failures_total") < 1 {
		t.Errorf("no checkpoint failure counted:\n%s", text)
	}
	p, err := c.Push(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Send(&pb.PushRequest{Stream: "v", Values: []float64{4}, Durable: true}); err != nil {
		t.Fatal(err)
	}
	if resp, err := p.CloseAndRecv(); status.Code(err) != codes.Unavailable {
		t.Errorf("durable push while checkpoints fail: %v, %v; want Unavailable", resp, err)
	}

	mend()
	waitHealthz(http.StatusOK)
	checkHealth(healthpb.HealthCheckResponse_SERVING)
	if text := metrics(); sample(text, "streamd_checkpoint_last_success_timestamp_seconds") <= lastOK {
		t.Errorf("the last success is not newer than %v:\n%s", lastOK, text)
	}

	breakDataDir(t, dir)
	waitHealthz(http.StatusServiceUnavailable)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(log.String(), "streamd: final checkpoint failed") {
		t.Errorf("exit after a failed final checkpoint: %v; want exit status 1 and a message; the log:\n%s", err, log.String())
	}
}
