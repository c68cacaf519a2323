package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestPprof checks that --pprof serves the profiler on the HTTP port and
// that it needs a port to serve on.
func TestPprof(t *testing.T) {
	d, _ := startDaemon(t, func(c *Config) { c.Pprof = true })
	resp, err := http.Get("http://" + d.MetricsAddr() + "/debug/pprof/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || len(body) == 0 {
		t.Errorf("cmdline: %s %q", resp.Status, body)
	}
	bad := DefaultConfig()
	bad.Pprof, bad.MetricsAddr = true, ""
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "pprof") {
		t.Errorf("--pprof without an HTTP address: %v", err)
	}
}
