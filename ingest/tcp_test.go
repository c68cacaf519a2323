package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"streamd/feed"
)

// openServer opens a TCPServer on a free local port and closes it at the
// end of the test.
func openServer(t *testing.T, sink Sink, configure func(*TCPServer)) *TCPServer {
	t.Helper()
	s := NewTCPServer("127.0.0.1:0", sink)
	s.Logger = slog.New(slog.DiscardHandler)
	if configure != nil {
		configure(s)
	}
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return s
}

func dial(t *testing.T, s *TCPServer) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", s.ListenAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func write(t *testing.T, c net.Conn, b []byte) {
	t.Helper()
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
}

// waitClosed waits until the server closes c.
func waitClosed(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read %d bytes, %v, want the connection closed", n, err)
	}
}

// TestTCPServer serves mixed input into a recordSink.
func TestTCPServer(t *testing.T) {
	sink := newRecordSink()
	s := openServer(t, sink, func(s *TCPServer) { s.MaxFrameBytes = 1 << 10 })

	lines := []byte("latency 12.5 13.1\r\nbad! 1\nlatency x\n")
	frameIn := frames(t, true, "f32", []float64{1, 2, 3})
	frameIn = append(frameIn, frames(t, false, "f64", []float64{0.1, math.Copysign(0, -1)})[len(Magic):]...)

	lc := dial(t, s)
	fc := dial(t, s)
	write(t, lc, lines)
	write(t, fc, frameIn)
	want := vals("latency", []float64{12.5, 13.1}, "f32", []float64{1, 2, 3}, "f64", []float64{0.1, 0}).
		with("", feed.ReasonBadStreamName, 1).with("latency", feed.ReasonMalformed, 1)
	sink.waitFor(t, want)

	// Connections in an unknown format, or that send a frame too large,
	// are closed; the others go on.
	uc := dial(t, s)
	write(t, uc, []byte("\x16\x03\x01\x00\x05hello"))
	waitClosed(t, uc)
	want.reject("", feed.ReasonUnknownFormat, 1)
	big, err := AppendFrame(nil, "big", make([]float64, 200), false)
	if err != nil {
		t.Fatal(err)
	}
	write(t, fc, big)
	waitClosed(t, fc)
	want.reject("", feed.ReasonFrameTooLarge, 1)

	write(t, lc, []byte("latency 14\n"))
	want.add("latency", 14)
	sink.waitFor(t, want)

	sent := len(lines) + len(frameIn) + len("\x16\x03\x01\x00\x05hello") + len("latency 14\n")
	waitStats(t, s, fmt.Sprintf("3 connections, 8 values, 4 rejected, %d to %d bytes", sent, sent+len(big)), func(st Stats) bool {
		return st.Connections == 3 && st.Values == 8 && st.Rejected == 4 && st.Bytes >= uint64(sent) && st.Bytes <= uint64(sent+len(big))
	})
	poll(t, "one open connection", func() bool { return s.Stats().OpenConnections == 1 })
}

// TestTCPServerClose closes the server while clients are connected: what
// they sent is delivered, a half line is counted, and the connections and
// the listener are closed.
func TestTCPServerClose(t *testing.T) {
	sink := newRecordSink()
	s := NewTCPServer("127.0.0.1:0", sink)
	s.Logger = slog.New(slog.DiscardHandler)
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	addr := s.ListenAddr().String()
	lc := dial(t, s)
	fc := dial(t, s)
	idle := dial(t, s)
	write(t, lc, []byte("a 1\na 2"))
	in := frames(t, false, "b", []float64{3, 4})
	write(t, fc, in[:len(in)-1])
	sink.waitFor(t, vals("a", []float64{1}, "b", []float64{3}))
	sent := uint64(len("a 1\na 2") + len(in) - 1)
	poll(t, "the bytes sent", func() bool { return s.Stats().Bytes == sent })

	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := vals("a", []float64{1}, "b", []float64{3}).with("", feed.ReasonMalformed, 1).with("b", feed.ReasonMalformed, 1)
	if d := diff(sink.result(), want); d != "" {
		t.Error(d)
	}
	for _, c := range []net.Conn{lc, fc, idle} {
		waitClosed(t, c)
	}
	if st := s.Stats(); st.OpenConnections != 0 {
		t.Errorf("%d connections open after Close", st.OpenConnections)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Error("Dial after Close succeeded")
	}
	if err := s.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestTCPServerCloseWaits checks that Close waits for a blocked Accept to
// deliver its values.
func TestTCPServerCloseWaits(t *testing.T) {
	sink := newRecordSink()
	sink.gate = make(chan struct{})
	sink.entered = make(chan struct{}, 1)
	s := NewTCPServer("127.0.0.1:0", sink)
	s.Logger = slog.New(slog.DiscardHandler)
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := dial(t, s)
	write(t, c, []byte("a 1 2\n"))
	<-sink.entered
	closed := make(chan error, 1)
	go func() { closed <- s.Close(context.Background()) }()
	sink.gate <- struct{}{}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if d := diff(sink.result(), vals("a", []float64{1, 2})); d != "" {
		t.Error(d)
	}
}

// TestTCPServerCloseTimeout checks that Close gives up waiting for a
// blocked Accept when its context ends, cancelling Accept's context.
func TestTCPServerCloseTimeout(t *testing.T) {
	sink := newRecordSink()
	sink.gate = make(chan struct{}) // never opened
	sink.entered = make(chan struct{}, 1)
	s := NewTCPServer("127.0.0.1:0", sink)
	s.Logger = slog.New(slog.DiscardHandler)
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := dial(t, s)
	write(t, c, []byte("a 1 2\n"))
	<-sink.entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close returned %v, want %v", err, context.Canceled)
	}
	if st := s.Stats(); st.OpenConnections != 0 {
		t.Errorf("%d connections open after Close", st.OpenConnections)
	}
}

// TestTCPServerBackPressure checks that a connection is not read while
// Accept blocks.
func TestTCPServerBackPressure(t *testing.T) {
	sink := newRecordSink()
	sink.gate = make(chan struct{})
	sink.entered = make(chan struct{}, 1)
	s := openServer(t, sink, nil)
	c := dial(t, s)
	write(t, c, []byte("a 1\n"))
	<-sink.entered
	before := s.Stats().Bytes
	// Write until the socket buffers are full: the writes must then
	// block, since the server does not read.
	line := []byte("a" + strings.Repeat(" 1", 2000) + "\n")
	c.SetWriteDeadline(time.Now().Add(200 * time.Millisecond))
	total := 0
	for {
		n, err := c.Write(line)
		total += n
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if total > 64<<20 {
			t.Fatalf("wrote %d bytes while Accept blocked", total)
		}
	}
	if got := s.Stats().Bytes - before; got > readBufferSize {
		t.Errorf("read %d bytes while Accept blocked", got)
	}
	c.SetWriteDeadline(time.Time{})
	close(sink.gate)
	if rest := total % len(line); rest > 0 {
		write(t, c, line[rest:])
		total += len(line) - rest
	}
	sink.waitFor(t, vals("a", make1s(1+total/len(line)*2000)))
}

func make1s(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 1
	}
	return v
}

func TestTCPServerOpen(t *testing.T) {
	s := openServer(t, newRecordSink(), nil)
	if err := s.Open(context.Background()); err == nil {
		t.Error("second Open succeeded")
	}
	for _, s := range []*TCPServer{
		{Addr: "127.0.0.1:0"},
		{Addr: "127.0.0.1:0", Sink: newRecordSink(), MaxFrameBytes: MaxFrameLen + 1},
		{Addr: "127.0.0.1:0", Sink: newRecordSink(), MaxLineBytes: -1},
		{Addr: s.ListenAddr().String(), Sink: newRecordSink()},
	} {
		s.Logger = slog.New(slog.DiscardHandler)
		if err := s.Open(context.Background()); err == nil {
			s.Close(context.Background())
			t.Errorf("Open of %+v succeeded", s)
		}
	}
	var closed TCPServer
	if err := closed.Close(context.Background()); err != nil {
		t.Errorf("Close of an unopened server: %v", err)
	}
	if closed.ListenAddr() != nil {
		t.Error("ListenAddr of an unopened server is not nil")
	}
}
