package ingest

import (
	"crypto/tls"
	"fmt"
	"testing"
	"time"

	"streamd/feed"
	"streamd/internal/tlsconf"
)

// TestTCPSilentFlood: connections that never send the token fill no more
// than MaxUnauthenticated places; each new one displaces the oldest of
// them, so producers that authenticate are still served, however many
// silent connections came before them and however long the handshake
// timeout.
func TestTCPSilentFlood(t *testing.T) {
	const (
		maxConns  = 128
		silent    = 300
		producers = 23
		unauth    = maxConns / 8 // MaxUnauthenticated's default: 16
	)
	sink := newRecordSink()
	s := openServer(t, sink, func(s *TCPServer) {
		s.Token = "tok"
		s.MaxConnections = maxConns
		s.HandshakeTimeout = time.Minute
	})
	for range silent {
		dial(t, s)
	}
	poll(t, "every silent connection handled", func() bool {
		st := s.Stats()
		return st.Connections+st.OverLimit == silent
	})
	// The first producer displaces the oldest silent connection; the
	// next ones find a free place among the unauthenticated.
	var want result
	want.reject("", feed.ReasonUnauthenticated, silent-unauth+1)
	for i := range producers {
		c := dial(t, s)
		stream := fmt.Sprintf("p%d", i)
		write(t, c, []byte("@auth tok\n"+stream+" 1.5\n"))
		want.add(stream, 1.5)
		waitForValues(t, s, sink, stream)
	}
	sink.waitFor(t, want)
	poll(t, "the displaced connections closed", func() bool {
		return s.Stats().OpenConnections == unauth-1+producers
	})
	waitStats(t, s, fmt.Sprintf("none over the limit, %d unauthenticated, %d values", silent-unauth+1, producers), func(st Stats) bool {
		return st.OverLimit == 0 && st.Unauthenticated == uint64(silent-unauth+1) && st.Values == uint64(producers)
	})
}

// waitForValues waits until the sink has values of stream, and fails t
// with the server's counters if that takes more than 10 s.
func waitForValues(t *testing.T, s *TCPServer, sink *recordSink, stream string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for len(sink.result().values[stream]) == 0 {
		select {
		case <-sink.changed:
		case <-timeout:
			t.Fatalf("no values of %s; server stats %+v", stream, s.Stats())
		}
	}
}

// TestTCPSilentFloodTLS: without a token, connections that never finish
// their TLS handshake are displaced the same way, and counted as failed
// handshakes.
func TestTCPSilentFloodTLS(t *testing.T) {
	const (
		maxConns = 32
		silent   = 60
		unauth   = 16 // MaxUnauthenticated's least default
	)
	certFile, keyFile := writeSelfSigned(t)
	srv, err := tlsconf.Server(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	sink := newRecordSink()
	s := openServer(t, sink, func(s *TCPServer) {
		s.TLSConfig = srv
		s.MaxConnections = maxConns
		s.HandshakeTimeout = time.Minute
	})
	for range silent {
		dial(t, s)
	}
	poll(t, "every silent connection handled", func() bool {
		st := s.Stats()
		return st.Connections+st.OverLimit == silent
	})
	cli, err := tlsconf.Client(tlsconf.ClientOptions{CAFile: certFile})
	if err != nil {
		t.Fatal(err)
	}
	c, err := tls.Dial("tcp", s.ListenAddr().String(), cli)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	write(t, c, []byte("secure 2.5\n"))
	waitForValues(t, s, sink, "secure")
	poll(t, "the displaced connections closed", func() bool { return s.Stats().OpenConnections == unauth })
	if st := s.Stats(); st.OverLimit != 0 || st.TLSFailed != silent-unauth+1 || st.Unauthenticated != 0 {
		t.Errorf("stats %+v", st)
	}
}
