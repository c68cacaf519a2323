package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestPprof checks that --pprof serves the profiler on the metrics
// address, that a CPU profile can be taken while the daemon runs, and that
// without the flag there is none.
func TestPprof(t *testing.T) {
	get := func(url string) (int, []byte) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, body
	}
	d, _ := startDaemon(t, func(c *Config) { c.Pprof = true })
	base := "http://" + d.MetricsAddr()
	if code, body := get(base + "/debug/pprof/"); code != http.StatusOK || !strings.Contains(string(body), "goroutine") {
		t.Errorf("index: %d %.200s", code, body)
	}
	code, body := get(base + "/debug/pprof/profile?seconds=1")
	if code != http.StatusOK {
		t.Fatalf("profile: %d %.200s", code, body)
	}
	// A profile is a gzip-compressed protocol buffer.
	if _, err := gzip.NewReader(bytes.NewReader(body)); err != nil {
		t.Errorf("profile is not gzip: %v", err)
	}
	if code, _ := get(base + "/metrics"); code != http.StatusOK {
		t.Errorf("metrics: %d", code)
	}

	plain, _ := startDaemon(t, nil)
	if code, _ := get("http://" + plain.MetricsAddr() + "/debug/pprof/"); code != http.StatusNotFound {
		t.Errorf("profiler served without --pprof: %d", code)
	}
	bad := DefaultConfig()
	bad.Pprof, bad.MetricsAddr = true, ""
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "pprof") {
		t.Errorf("--pprof without a metrics address: %v", err)
	}
}
