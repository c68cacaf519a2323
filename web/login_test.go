package web

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// clientFrom returns an HTTP client whose connections come from the local
// address ip (any of 127.0.0.0/8 on Linux).
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// TestLoginRateLimit: an address may post five wrong tokens at once; the
// next try, right or wrong, is answered 429 with Retry-After until a
// second has passed, and is counted. Another address is not affected, and
// a right token gives an address back its tries.
func TestLoginRateLimit(t *testing.T) {
	const token = "s3cret-token"
	s := openServer(t, func(s *Server) { s.Token = token })
	base := "http://" + s.ListenAddr()
	guesser, other := clientFrom("127.0.0.1"), clientFrom("127.0.0.2")

	for i := range loginBurst {
		if resp := postLogin(t, guesser, base, fmt.Sprintf("guess-%d", i)); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: %s, want 401", i, resp.Status)
		}
	}
	for _, tok := range []string{"guess-5", token} {
		resp := postLogin(t, guesser, base, tok)
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" || len(resp.Cookies()) != 0 {
			t.Fatalf("a try after %d wrong tokens: %s, Retry-After %q, cookies %v; want 429, Retry-After 1 and no cookie",
				loginBurst, resp.Status, resp.Header.Get("Retry-After"), resp.Cookies())
		}
	}
	if resp := postLogin(t, other, base, token); resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
		t.Errorf("a right token from another address: %s, cookies %v", resp.Status, resp.Cookies())
	}
	_, metrics := get(t, http.DefaultClient, base, "/metrics", http.Header{"Authorization": {"Bearer " + token}})
	if !strings.Contains(metrics, "\nstreamd_http_logins_limited_total 2\n") {
		t.Errorf("limited logins not counted:\n%s", metrics)
	}

	// A try comes back after a second; a right token gives back all five.
	deadline := time.Now().Add(10 * time.Second)
	for postLogin(t, guesser, base, token).StatusCode != http.StatusSeeOther {
		if time.Now().After(deadline) {
			t.Fatal("the right token still refused after 10 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	for i := range loginBurst {
		if resp := postLogin(t, guesser, base, "guess"); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong token %d after a login: %s, want 401", i, resp.Status)
		}
	}
}

// TestLoginLimiter checks the token bucket against a clock: five tries at
// once, then one a second; and the table of addresses stays bounded.
func TestLoginLimiter(t *testing.T) {
	var l loginLimiter
	t0 := time.Unix(1000, 0)
	for i := range loginBurst {
		if wait := l.take("a", t0); wait != 0 {
			t.Fatalf("try %d: wait %v", i, wait)
		}
	}
	for _, tc := range []struct {
		at   time.Duration
		wait time.Duration
	}{
		{0, time.Second}, {300 * time.Millisecond, 700 * time.Millisecond},
		{time.Second, 0}, {time.Second, time.Second},
		{2500 * time.Millisecond, 0}, {2500 * time.Millisecond, 500 * time.Millisecond},
		{9 * time.Second, 0}, {9 * time.Second, 0}, {9 * time.Second, 0}, {9 * time.Second, 0}, {9 * time.Second, 0},
		{9 * time.Second, time.Second},
	} {
		if got := l.take("a", t0.Add(tc.at)); got != tc.wait {
			t.Errorf("at %v: wait %v, want %v", tc.at, got, tc.wait)
		}
	}
	if got := l.take("b", t0); got != 0 {
		t.Errorf("another address waits %v", got)
	}
	l.forgive("a")
	if got := l.take("a", t0.Add(9*time.Second)); got != 0 {
		t.Errorf("after a login: wait %v", got)
	}

	// Many addresses, each with one wrong token: the table keeps at most
	// loginClients, and forgets full buckets first.
	for i := range 3 * loginClients {
		l.take(fmt.Sprint("x", i), t0.Add(time.Duration(i)*time.Millisecond))
		if n := len(l.due); n > loginClients {
			t.Fatalf("after %d addresses the table holds %d", i+1, n)
		}
	}
}
