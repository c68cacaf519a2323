package ingest

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"streamd/feed"
	"streamd/internal/tlsconf"
)

// readError reads what the server sends a refused connection: one error
// line, then the end of the connection.
func readError(t *testing.T, c net.Conn) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read the error line: %q, %v", b, err)
	}
	return string(b)
}

func preambleOf(t *testing.T, framed bool, token string) []byte {
	t.Helper()
	b, err := AppendPreamble(nil, framed, token)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTCPToken: with a token set, a connection without it, or with a wrong
// one, in either protocol, gets an error line and is closed and counted;
// with it, its values are accepted.
func TestTCPToken(t *testing.T) {
	sink := newRecordSink()
	s := openServer(t, sink, func(s *TCPServer) {
		s.Token = "s3cret-token"
		s.HandshakeTimeout = 300 * time.Millisecond
	})
	var want result
	for _, tc := range []struct {
		name, send, err string
	}{
		{"a stream line", "tok 1 2 3\n", `must start with the line "@auth <token>"`},
		{"a wrong token", "@auth guess\ntok 1\n", "wrong token"},
		{"a malformed auth line", "@auth\ntok 1\n", "malformed preamble"},
		{"a token with blanks", "@auth s3cret token\n", "malformed preamble"},
		{"the plain framed magic", string(frames(t, false, "tok", []float64{1})), "must start with"},
		{"a wrong framed token", string(preambleOf(t, true, "s3cret-tokeN")), "wrong token"},
		{"nothing", "", "no token within"},
	} {
		c := dial(t, s)
		write(t, c, []byte(tc.send))
		got := readError(t, c)
		if !strings.HasPrefix(got, "error: unauthenticated: ") || !strings.Contains(got, tc.err) || !strings.HasSuffix(got, "\n") {
			t.Errorf("%s: the server said %q, want an error line about %q", tc.name, got, tc.err)
		}
		want.reject("", feed.ReasonUnauthenticated, 1)
	}
	sink.waitFor(t, want)

	lc := dial(t, s)
	write(t, lc, []byte("@auth s3cret-token\r\ntok 1 2 3\n"))
	fc := dial(t, s)
	write(t, fc, append(preambleOf(t, true, "s3cret-token"), frames(t, true, "bin", []float64{4, 5})[len(Magic):]...))
	want.add("tok", 1, 2, 3)
	want.add("bin", 4, 5)
	sink.waitFor(t, want)
	waitStats(t, s, "7 unauthenticated, 5 values", func(st Stats) bool { return st.Unauthenticated == 7 && st.Values == 5 })
	// An authenticated connection is not held to the handshake timeout.
	time.Sleep(400 * time.Millisecond)
	write(t, lc, []byte("tok 4\n"))
	want.add("tok", 4)
	sink.waitFor(t, want)
}

// TestTCPPreambleWithoutToken: a server without a token takes the token
// preambles and ignores the token, so that clients may always send one.
func TestTCPPreambleWithoutToken(t *testing.T) {
	sink := newRecordSink()
	s := openServer(t, sink, nil)
	lc := dial(t, s)
	write(t, lc, []byte("@auth anything\ntok 1\n"))
	fc := dial(t, s)
	write(t, fc, append(preambleOf(t, true, "x"), frames(t, false, "bin", []float64{2})[len(Magic):]...))
	bad := dial(t, s)
	write(t, bad, []byte("@home 1\n"))
	waitClosed(t, bad)
	want := vals("tok", []float64{1}, "bin", []float64{2}).with("", feed.ReasonUnknownFormat, 1)
	sink.waitFor(t, want)
}

// writeSelfSigned writes a certificate for 127.0.0.1 and its key.
func writeSelfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile, err := tlsconf.WriteSelfSigned(t.TempDir(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestTCPTLS serves ingest over TLS with a self-signed certificate and a
// token: a client that trusts the certificate sends values in both
// protocols; a plaintext client is dropped and counted.
func TestTCPTLS(t *testing.T) {
	certFile, keyFile := writeSelfSigned(t)
	srv, err := tlsconf.Server(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	sink := newRecordSink()
	s := openServer(t, sink, func(s *TCPServer) {
		s.TLSConfig = srv
		s.Token = "tok"
		s.HandshakeTimeout = time.Second
	})
	cli, err := tlsconf.Client(tlsconf.ClientOptions{CAFile: certFile})
	if err != nil {
		t.Fatal(err)
	}
	dialTLS := func() *tls.Conn {
		c, err := tls.Dial("tcp", s.ListenAddr().String(), cli)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	lc := dialTLS()
	write(t, lc, []byte("@auth tok\nsecure 1.5 2.5\n"))
	// Two connections' values arrive in either order: the sink records
	// them in order, so wait for the first before sending the second.
	sink.waitFor(t, vals("secure", []float64{1.5, 2.5}))
	fc := dialTLS()
	write(t, fc, append(preambleOf(t, true, "tok"), frames(t, false, "secure", []float64{3.5})[len(Magic):]...))
	want := vals("secure", []float64{1.5, 2.5, 3.5})
	sink.waitFor(t, want)

	// Without the token, the error line comes back over TLS.
	nc := dialTLS()
	write(t, nc, []byte("secure 9\n"))
	if got := readError(t, nc); !strings.Contains(got, "unauthenticated") {
		t.Errorf("over TLS without the token: %q", got)
	}
	want.reject("", feed.ReasonUnauthenticated, 1)

	plain := dial(t, s)
	write(t, plain, []byte("@auth tok\nsecure 9\n"))
	waitClosed(t, plain)
	poll(t, "a failed handshake", func() bool { return s.Stats().TLSFailed == 1 })
	sink.waitFor(t, want)
}

// TestTCPConnectionLimits: 2,000 idle connections and one sending a line
// that never ends do not stop another client; over MaxConnections a
// connection gets an error line; an idle connection is closed after
// IdleTimeout.
func TestTCPConnectionLimits(t *testing.T) {
	const idle = 2000
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	// Both ends of every connection are in this process.
	if need := uint64(2*idle + 200); lim.Cur < need {
		lim.Cur = min(need, lim.Max)
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
		if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); lim.Cur < need {
			t.Skipf("the open files limit is %d (hard %d); %d connections need %d", lim.Cur, lim.Max, idle, need)
		}
	}
	sink := newRecordSink()
	s := openServer(t, sink, func(s *TCPServer) {
		s.MaxConnections = idle + 2
		s.IdleTimeout = time.Minute
		s.MaxLineBytes = 1 << 16
	})
	conns := make([]net.Conn, 0, idle)
	for range idle {
		conns = append(conns, dial(t, s))
	}
	// A line that never ends: it is skipped as too long, and the
	// connection keeps the server reading.
	endless := dial(t, s)
	stop := make(chan struct{})
	wrote := make(chan int64)
	go func() {
		chunk := bytes.Repeat([]byte("x"), 1<<14)
		var n int64
		defer func() { wrote <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			endless.SetWriteDeadline(time.Now().Add(5 * time.Second))
			k, err := endless.Write(chunk)
			n += int64(k)
			if err != nil {
				return
			}
		}
	}()
	poll(t, "every connection served", func() bool { return s.Stats().OpenConnections == idle+1 })
	// Another client is served at once.
	c := dial(t, s)
	start := time.Now()
	write(t, c, []byte("other 1 2 3\n"))
	poll(t, "the other client's values", func() bool { return len(sink.result().values["other"]) == 3 })
	t.Logf("with %d idle connections and an endless line, a new client's values arrived in %v", idle, time.Since(start))
	// One more is refused with an error line.
	over := dial(t, s)
	if got := readError(t, over); !strings.Contains(got, "too many connections") {
		t.Errorf("over the limit: %q", got)
	}
	close(stop)
	if n := <-wrote; n < 1<<16 {
		t.Errorf("the endless line got only %d bytes through", n)
	}
	if st := s.Stats(); st.OverLimit != 1 {
		t.Errorf("stats %+v", st)
	}
	want := vals("other", []float64{1, 2, 3}).with("", feed.ReasonLineTooLong, 1)
	endless.Close()
	for _, c := range conns {
		c.Close()
	}
	sink.waitFor(t, want)
}

// TestTCPIdleTimeout: a connection that sends nothing for IdleTimeout is
// closed and counted, before and after its first line; one that blocks in
// back-pressure is not.
func TestTCPIdleTimeout(t *testing.T) {
	sink := newRecordSink()
	s := openServer(t, sink, func(s *TCPServer) { s.IdleTimeout = 100 * time.Millisecond })
	silent := dial(t, s)
	talker := dial(t, s)
	write(t, talker, []byte("a 1\n"))
	sink.waitFor(t, vals("a", []float64{1}))
	waitClosed(t, silent)
	waitClosed(t, talker)
	poll(t, "two idle closes", func() bool { return s.Stats().IdleClosed == 2 })

	// A connection blocked in Accept is not idle.
	sink.gate = make(chan struct{})
	sink.entered = make(chan struct{}, 1)
	blocked := dial(t, s)
	write(t, blocked, []byte("b 1\n"))
	<-sink.entered
	time.Sleep(300 * time.Millisecond)
	sink.gate <- struct{}{}
	r := bufio.NewReader(blocked)
	blocked.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := r.ReadByte(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the connection blocked in Accept was closed: %v", err)
	}
	close(sink.gate)
	sink.waitFor(t, vals("a", []float64{1}, "b", []float64{1}))
}

// FuzzPreamble reads arbitrary connection starts: no panic, tokens within
// their limits, and what AppendPreamble writes reads back.
func FuzzPreamble(f *testing.F) {
	for _, s := range []string{"", "@auth tok\n", "@auth tok", "@auth\n", "@x", "\x00SDT\x03\x00abc", "\x00SDT\x00\x00", "\x00SDB", "a 1\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReaderSize(bytes.NewReader(data), preambleBufferSize)
		p, err := readPreamble(br)
		if err != nil {
			return
		}
		if p.token != nil {
			if ValidToken(string(p.token)) != nil && !p.framed {
				t.Fatalf("auth line token %q", p.token)
			}
			if len(p.token) == 0 || len(p.token) > MaxTokenLen {
				t.Fatalf("token of %d bytes", len(p.token))
			}
			if ValidToken(string(p.token)) == nil {
				for _, framed := range []bool{false, true} {
					pre, err := AppendPreamble(nil, framed, string(p.token))
					if err != nil {
						t.Fatal(err)
					}
					q, err := readPreamble(bufio.NewReaderSize(bytes.NewReader(pre), preambleBufferSize))
					if err != nil || string(q.token) != string(p.token) || q.framed != framed {
						t.Fatalf("round trip of %q: %+v, %v", p.token, q, err)
					}
				}
			}
		}
	})
}
