package web

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestHealthz: /healthz answers 200 "ok" while Health reports nothing,
// and 503 with the reason while it reports an error, without the token.
func TestHealthz(t *testing.T) {
	var (
		mu     sync.Mutex
		reason error
	)
	s := openServer(t, func(s *Server) {
		s.Token = "s3cret"
		s.Health = func() error {
			mu.Lock()
			defer mu.Unlock()
			return reason
		}
	})
	base := "http://" + s.ListenAddr()
	if resp, body := get(t, http.DefaultClient, base, "/healthz", nil); resp.StatusCode != http.StatusOK || body != "ok\n" {
		t.Errorf("healthy: %s %q", resp.Status, body)
	}
	mu.Lock()
	reason = errors.New("degraded: checkpoint failed: no space left on device")
	mu.Unlock()
	if resp, body := get(t, http.DefaultClient, base, "/healthz", nil); resp.StatusCode != http.StatusServiceUnavailable || body != "degraded: checkpoint failed: no space left on device\n" {
		t.Errorf("degraded: %s %q", resp.Status, body)
	}
	mu.Lock()
	reason = nil
	mu.Unlock()
	if resp, body := get(t, http.DefaultClient, base, "/healthz", nil); resp.StatusCode != http.StatusOK || body != "ok\n" {
		t.Errorf("healthy again: %s %q", resp.Status, body)
	}
}

// TestCheckpointMetrics: with Checkpoints set, /metrics has the failures
// counter and the time of the last success, exactly as reported; without
// it, neither.
func TestCheckpointMetrics(t *testing.T) {
	at := time.Unix(1700000000, 250_000_000)
	s := openServer(t, func(s *Server) {
		s.Checkpoints = func() CheckpointStats { return CheckpointStats{Failures: 3, LastSuccess: at} }
	})
	_, text := get(t, http.DefaultClient, "http://"+s.ListenAddr(), "/metrics", nil)
	e := parseExposition(t, text)
	if e.types["streamd_checkpoint_failures_total"] != "counter" || e.types["streamd_checkpoint_last_success_timestamp_seconds"] != "gauge" {
		t.Errorf("types: %v", e.types)
	}
	if e.value(t, "streamd_checkpoint_failures_total") != 3 || e.samples["streamd_checkpoint_last_success_timestamp_seconds"] != "1.70000000025e+09" {
		t.Errorf("checkpoint series wrong:\n%s", text)
	}

	s = openServer(t, nil)
	_, text = get(t, http.DefaultClient, "http://"+s.ListenAddr(), "/metrics", nil)
	if strings.Contains(text, "streamd_checkpoint_") {
		t.Errorf("checkpoint series without checkpoints:\n%s", text)
	}
}
