package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// A TCPServer accepts producers' connections on a TCP address and decodes
// each connection, in the line or the framed protocol, into its Sink. Each
// connection is served by one goroutine; while Sink.Accept blocks, the
// connection is not read.
//
// Set the exported fields, then call Open; they must not change afterwards.
type TCPServer struct {
	// Addr is the address to listen on, such as ":7070" or "127.0.0.1:0".
	Addr string

	// Sink receives the values and the rejects of every connection. Its
	// methods are called concurrently from the connections' goroutines. It
	// must be set.
	Sink Sink

	// MaxLineBytes is the length limit of a line. Zero means
	// DefaultMaxLineBytes.
	MaxLineBytes int

	// MaxFrameBytes is the length limit of a frame body, at most
	// MaxFrameLen. Zero means MaxFrameLen.
	MaxFrameBytes int

	// Logger receives connection errors. Nil means slog.Default().
	Logger *slog.Logger

	ln     net.Listener
	ctx    context.Context // ends when a Close gives up waiting
	cancel context.CancelFunc
	wg     sync.WaitGroup // the accept loop and the connections

	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	closing bool

	stats struct {
		conns, open, bytes, values, rejected atomic.Uint64
	}
}

// Stats are counters of a TCPServer since it was opened.
type Stats struct {
	Connections     uint64 // connections accepted
	OpenConnections uint64 // connections being served now
	Bytes           uint64 // bytes read from connections
	Values          uint64 // values accepted by the sink
	Rejected        uint64 // values, lines and frames rejected (the sum of Reject's n)
}

// NewTCPServer returns a TCPServer for addr and sink with the default
// limits.
func NewTCPServer(addr string, sink Sink) *TCPServer {
	return &TCPServer{
		Addr:          addr,
		Sink:          sink,
		MaxLineBytes:  DefaultMaxLineBytes,
		MaxFrameBytes: MaxFrameLen,
	}
}

// Open listens on s.Addr and starts accepting connections in the
// background. ctx bounds the listen call only; Close stops the server.
func (s *TCPServer) Open(ctx context.Context) error {
	if s.Sink == nil {
		return errors.New("open tcp ingest: no sink")
	}
	d := Decoder{MaxLineBytes: s.MaxLineBytes, MaxFrameBytes: s.MaxFrameBytes}
	if _, _, err := d.limits(); err != nil {
		return fmt.Errorf("open tcp ingest: %w", err)
	}
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln != nil {
		return errors.New("open tcp ingest: already open")
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("open tcp ingest: %w", err)
	}
	s.ln = ln
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.conns = make(map[net.Conn]struct{})
	s.wg.Go(s.acceptLoop)
	s.Logger.Info("tcp ingest listening", "addr", ln.Addr().String())
	return nil
}

// ListenAddr returns the address s listens on, or nil before Open.
func (s *TCPServer) ListenAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Stats returns the counters of s. They are read one by one, not as one
// snapshot.
func (s *TCPServer) Stats() Stats {
	return Stats{
		Connections:     s.stats.conns.Load(),
		OpenConnections: s.stats.open.Load(),
		Bytes:           s.stats.bytes.Load(),
		Values:          s.stats.values.Load(),
		Rejected:        s.stats.rejected.Load(),
	}
}

// Close stops accepting connections, stops reading the open ones, and waits
// until each has handed the values it has decoded to the sink and is
// closed. A line or frame half received is counted as malformed. If ctx ends
// first, Close cancels the context passed to Sink.Accept, waits for the
// connections to end, and returns ctx's error. Close returns nil if s is not
// open; a closed TCPServer cannot be opened again.
func (s *TCPServer) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.ln == nil || s.closing {
		s.mu.Unlock()
		return nil
	}
	s.closing = true
	lerr := s.ln.Close()
	// An expired deadline ends the pending and future reads of each
	// connection at once, with an error that Decode reports after handing
	// over what it decoded.
	now := time.Now()
	for c := range s.conns {
		c.SetReadDeadline(now)
	}
	s.mu.Unlock()

	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		s.cancel()
		<-done
		err = fmt.Errorf("close tcp ingest: %w", ctx.Err())
	}
	s.cancel()
	if err == nil && lerr != nil && !errors.Is(lerr, net.ErrClosed) {
		err = fmt.Errorf("close tcp ingest: %w", lerr)
	}
	s.Logger.Info("tcp ingest closed", "addr", s.ln.Addr().String())
	return err
}

// acceptLoop accepts connections until the listener is closed.
func (s *TCPServer) acceptLoop() {
	var delay time.Duration
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors, or the like: back off as
			// net/http does.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			s.Logger.Warn("accept tcp ingest connection", "err", err, "retry_in", delay)
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-s.ctx.Done():
				t.Stop()
				return
			}
			continue
		}
		delay = 0
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			conn.Close()
			return
		}
		s.conns[conn] = struct{}{}
		s.mu.Unlock()
		s.stats.conns.Add(1)
		s.wg.Go(func() { s.serve(conn) })
	}
}

// serve decodes conn into s.Sink until it ends, and closes it.
func (s *TCPServer) serve(conn net.Conn) {
	s.stats.open.Add(1)
	defer func() {
		conn.Close()
		s.mu.Lock()
		delete(s.conns, conn)
		s.mu.Unlock()
		s.stats.open.Add(^uint64(0))
	}()
	log := s.Logger.With("remote", conn.RemoteAddr().String())
	d := Decoder{
		Sink:          counting(s.Sink, &s.stats.values, &s.stats.rejected),
		MaxLineBytes:  s.MaxLineBytes,
		MaxFrameBytes: s.MaxFrameBytes,
	}
	err := d.Decode(s.ctx, countingReader{conn, &s.stats.bytes})
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	switch {
	case err == nil:
		log.Debug("tcp ingest connection ended")
	case closing && errors.Is(err, os.ErrDeadlineExceeded):
		log.Debug("tcp ingest connection closed by shutdown")
	case errors.Is(err, ErrUnknownFormat), errors.Is(err, ErrFrameTooLarge):
		log.Warn("tcp ingest connection dropped", "err", err)
	default:
		log.Warn("tcp ingest connection failed", "err", err)
	}
}

// countingReader counts the bytes read from r into n.
type countingReader struct {
	r io.Reader
	n *atomic.Uint64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(uint64(n))
	return n, err
}

// countingSink counts the values its Sink accepts and the rejects.
type countingSink struct {
	Sink
	values, rejected *atomic.Uint64
}

// countingEncodedSink is a countingSink of an EncodedSink.
type countingEncodedSink struct {
	countingSink
	es EncodedSink
}

func (c countingEncodedSink) AcceptEncoded(ctx context.Context, stream string, size int, data []byte) (int, error) {
	n, err := c.es.AcceptEncoded(ctx, stream, size, data)
	c.values.Add(uint64(n))
	if err == nil {
		c.rejected.Add(uint64(len(data)/size - n)) // NaN and ±Inf
	}
	return n, err
}

func (c countingSink) Accept(ctx context.Context, stream string, values []float64) error {
	err := c.Sink.Accept(ctx, stream, values)
	if err == nil {
		c.values.Add(uint64(len(values)))
	}
	return err
}

func (c countingSink) Reject(stream string, reason Reason, n int) {
	c.Sink.Reject(stream, reason, n)
	c.rejected.Add(uint64(n))
}
