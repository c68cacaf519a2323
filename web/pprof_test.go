package web

import (
	"compress/gzip"
	"net/http"
	"strings"
	"testing"
)

// TestPprof checks that Pprof serves the profiler behind the token, that
// a CPU profile can be taken while the server runs, and that without Pprof
// there is none.
func TestPprof(t *testing.T) {
	s := openServer(t, func(s *Server) { s.Pprof, s.Token = true, "s3cret" })
	base := "http://" + s.ListenAddr()
	auth := http.Header{"Authorization": {"Bearer s3cret"}}
	if resp, _ := get(t, http.DefaultClient, base, "/debug/pprof/", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("profiler without the token: %s", resp.Status)
	}
	if resp, body := get(t, http.DefaultClient, base, "/debug/pprof/", auth); resp.StatusCode != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Errorf("index: %s %.200s", resp.Status, body)
	}
	resp, body := get(t, http.DefaultClient, base, "/debug/pprof/profile?seconds=1", auth)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("profile: %s %.200s", resp.Status, body)
	}
	// A profile is a gzip-compressed protocol buffer.
	if _, err := gzip.NewReader(strings.NewReader(body)); err != nil {
		t.Errorf("profile is not gzip: %v", err)
	}

	plain := openServer(t, nil)
	if resp, _ := get(t, http.DefaultClient, "http://"+plain.ListenAddr(), "/debug/pprof/", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("profiler served without Pprof: %s", resp.Status)
	}
}
