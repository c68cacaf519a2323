package ingest

import (
	"bufio"
	"container/list"
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"streamd/feed"
)

// Defaults of a TCPServer's connection limits.
const (
	// DefaultMaxConnections is the default most connections served at
	// once.
	DefaultMaxConnections = 4096

	// DefaultIdleTimeout is the default time after which a connection that
	// sends nothing is closed.
	DefaultIdleTimeout = 5 * time.Minute

	// DefaultHandshakeTimeout is the default time a connection has to
	// finish its TLS handshake and send its token: a producer does both in
	// a few round trips, and a connection that does not holds a place
	// meant for one.
	DefaultHandshakeTimeout = 3 * time.Second

	// minUnauthenticated is the least default MaxUnauthenticated, so that
	// a few producers connecting at once do not displace each other.
	minUnauthenticated = 16
)

// A TCPServer accepts producers' connections on a TCP address and decodes
// each connection, in the line or the framed protocol, into its Sink. Each
// connection is served by one goroutine; while Sink.Accept blocks, the
// connection is not read.
//
// Connections may be required to present a token (Token) and to speak TLS
// (TLSConfig); their number and idle time are limited (MaxConnections,
// IdleTimeout). The package documentation describes what a refused
// connection gets back.
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

	// Token, if not empty, is the token every connection must present in
	// its preamble (see AppendPreamble); it must be valid (ValidToken).
	// Connections without it are sent an error line, counted as
	// feed.ReasonUnauthenticated under the stream "", and closed.
	Token string

	// TLSConfig, if not nil, makes connections speak TLS: it needs a
	// certificate.
	TLSConfig *tls.Config

	// MaxConnections is the most connections served at once; one more is
	// sent an error line and closed. Zero means no limit.
	MaxConnections int

	// IdleTimeout closes a connection that sends nothing for this long
	// while the server waits for it (not while the sink applies
	// back-pressure). Zero means no timeout.
	IdleTimeout time.Duration

	// HandshakeTimeout is how long a connection has, from its start, to
	// finish its TLS handshake and send its token preamble, when either is
	// required. Zero means DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration

	// MaxUnauthenticated is the most connections at once that have not yet
	// finished their TLS handshake or sent their token, when either is
	// required. A new connection that finds MaxUnauthenticated of them, or
	// MaxConnections connections of which some are unauthenticated,
	// displaces the oldest unauthenticated one: it is closed and counted
	// (as Unauthenticated when a token is required, else as TLSFailed).
	// So connections that never authenticate hold at most this many
	// places, for at most HandshakeTimeout each, and cannot keep out a
	// producer that authenticates. Zero means an eighth of MaxConnections,
	// at least 16, or no limit when MaxConnections is zero.
	MaxUnauthenticated int

	// Logger receives connection errors. Nil means slog.Default().
	Logger *slog.Logger

	ln     net.Listener
	ctx    context.Context // ends when a Close gives up waiting
	cancel context.CancelFunc
	wg     sync.WaitGroup // the accept loop and the connections

	mu        sync.Mutex
	conns     map[net.Conn]struct{}
	pending   list.List // *pendingConns not yet authenticated, oldest first
	displaced int       // displaced connections still in conns
	closing   bool
	stopping  atomic.Bool // closing, for the readers: see connReader

	stats struct {
		conns, open, bytes, values, rejected        atomic.Uint64
		unauthenticated, overLimit, tlsFailed, idle atomic.Uint64
	}
}

// Stats are counters of a TCPServer since it was opened.
type Stats struct {
	Connections     uint64 // connections accepted
	OpenConnections uint64 // connections being served now
	Bytes           uint64 // bytes read from connections
	Values          uint64 // values accepted by the sink
	Rejected        uint64 // values, lines and frames rejected (the sum of Reject's n)

	// Connections refused or closed by the server.
	Unauthenticated uint64 // without the token, or displaced before it (also counted in Rejected)
	OverLimit       uint64 // over MaxConnections
	TLSFailed       uint64 // whose TLS handshake failed (or was displaced, without a token)
	IdleClosed      uint64 // closed after IdleTimeout without input
}

// NewTCPServer returns a TCPServer for addr and sink with the default
// limits.
func NewTCPServer(addr string, sink Sink) *TCPServer {
	return &TCPServer{
		Addr:             addr,
		Sink:             sink,
		MaxLineBytes:     DefaultMaxLineBytes,
		MaxFrameBytes:    MaxFrameLen,
		MaxConnections:   DefaultMaxConnections,
		IdleTimeout:      DefaultIdleTimeout,
		HandshakeTimeout: DefaultHandshakeTimeout,
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
	if s.Token != "" {
		if err := ValidToken(s.Token); err != nil {
			return fmt.Errorf("open tcp ingest: %w", err)
		}
	}
	if s.TLSConfig != nil && len(s.TLSConfig.Certificates) == 0 && s.TLSConfig.GetCertificate == nil {
		return errors.New("open tcp ingest: tls config without a certificate")
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
	s.Logger.Info("tcp ingest listening", "addr", ln.Addr().String(), "tls", s.TLSConfig != nil, "token", s.Token != "")
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
		Unauthenticated: s.stats.unauthenticated.Load(),
		OverLimit:       s.stats.overLimit.Load(),
		TLSFailed:       s.stats.tlsFailed.Load(),
		IdleClosed:      s.stats.idle.Load(),
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
	s.stopping.Store(true)
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
		var victim *pendingConn
		if n := s.pending.Len(); n > 0 && (n >= s.maxUnauthenticated() || s.full()) {
			victim = s.displaceOldest()
		}
		if s.full() {
			s.mu.Unlock()
			if victim != nil {
				s.countDisplaced(victim)
			}
			s.stats.overLimit.Add(1)
			if s.TLSConfig == nil {
				// A new connection's send buffer is empty: this does
				// not block.
				conn.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
				fmt.Fprintf(conn, "error: too many connections (the limit is %d)\n", s.MaxConnections)
			}
			conn.Close()
			s.Logger.Debug("tcp ingest connection refused: too many", "remote", conn.RemoteAddr().String(), "limit", s.MaxConnections)
			continue
		}
		var pc *pendingConn
		if s.TLSConfig != nil || s.Token != "" {
			pc = &pendingConn{conn: conn}
			pc.elem = s.pending.PushBack(pc)
		}
		s.conns[conn] = struct{}{}
		s.mu.Unlock()
		if victim != nil {
			s.countDisplaced(victim)
		}
		s.stats.conns.Add(1)
		s.wg.Go(func() { s.serve(conn, pc) })
	}
}

// A pendingConn is a connection that has not yet authenticated: finished
// its TLS handshake and sent its token, when either is required. Its
// fields are guarded by the server's mu.
type pendingConn struct {
	conn      net.Conn
	elem      *list.Element // in the server's pending list; nil once out of it
	displaced bool          // closed to make room: already counted
	refused   bool          // being refused: already counted
}

// full reports whether MaxConnections connections are served, not counting
// the displaced ones on their way out. s.mu must be held.
func (s *TCPServer) full() bool {
	return s.MaxConnections > 0 && len(s.conns)-s.displaced >= s.MaxConnections
}

// maxUnauthenticated returns the effective MaxUnauthenticated, or
// math.MaxInt for no limit.
func (s *TCPServer) maxUnauthenticated() int {
	switch {
	case s.MaxUnauthenticated > 0:
		return s.MaxUnauthenticated
	case s.MaxConnections > 0:
		return max(s.MaxConnections/8, minUnauthenticated)
	}
	return math.MaxInt
}

// displaceOldest closes the oldest connection that has not yet
// authenticated, and returns it if it is still to be counted (see
// countDisplaced), or nil. Its goroutine ends on its own. s.mu must be
// held, and the pending list not empty.
func (s *TCPServer) displaceOldest() *pendingConn {
	pc := s.pending.Remove(s.pending.Front()).(*pendingConn)
	pc.elem = nil
	pc.displaced = true
	s.displaced++
	pc.conn.Close()
	s.Logger.Debug("tcp ingest connection displaced before it authenticated", "remote", pc.conn.RemoteAddr().String())
	if pc.refused {
		return nil
	}
	return pc
}

// countDisplaced counts a displaced connection.
func (s *TCPServer) countDisplaced(pc *pendingConn) {
	if s.Token == "" {
		s.stats.tlsFailed.Add(1)
		return
	}
	s.stats.unauthenticated.Add(1)
	s.Sink.Reject("", feed.Local, feed.ReasonUnauthenticated, 1)
	s.stats.rejected.Add(1)
}

// authenticated takes pc out of the pending list, and reports false if it
// was displaced meanwhile (closed and counted). A nil pc was never
// pending.
func (s *TCPServer) authenticated(pc *pendingConn) bool {
	if pc == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if pc.elem != nil {
		s.pending.Remove(pc.elem)
		pc.elem = nil
	}
	return !pc.displaced
}

// wasDisplaced reports whether pc was displaced. A nil pc never is.
func (s *TCPServer) wasDisplaced(pc *pendingConn) bool {
	if pc == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return pc.displaced
}

// serve decodes conn into s.Sink until it ends, and closes it: after the
// TLS handshake and the token preamble, if the server requires them.
//
// pc, if not nil, is conn's place in the list of connections that have
// not yet authenticated.
func (s *TCPServer) serve(conn net.Conn, pc *pendingConn) {
	s.stats.open.Add(1)
	defer func() {
		conn.Close()
		s.mu.Lock()
		delete(s.conns, conn)
		if pc != nil && pc.displaced {
			s.displaced--
		} else if pc != nil && pc.elem != nil {
			s.pending.Remove(pc.elem)
			pc.elem = nil
		}
		s.mu.Unlock()
		s.stats.open.Add(^uint64(0))
	}()
	log := s.Logger.With("remote", conn.RemoteAddr().String())
	sink := &connCounts{Sink: s.Sink, s: s}
	defer sink.publish()
	r := &connReader{s: s, conn: conn, counts: sink}
	if s.TLSConfig != nil || s.Token != "" {
		r.until = time.Now().Add(s.handshakeTimeout())
	}
	if s.TLSConfig != nil {
		tc := tls.Server(conn, s.TLSConfig)
		ctx, cancel := context.WithDeadline(s.ctx, r.until)
		err := tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			if !s.wasDisplaced(pc) {
				s.stats.tlsFailed.Add(1)
			}
			log.Debug("tcp ingest tls handshake failed", "err", err)
			return
		}
		r.conn = tc
		if s.Token == "" {
			r.until = time.Time{}
			if !s.authenticated(pc) {
				return
			}
		}
	}
	in := bufio.NewReaderSize(r, preambleBufferSize)
	pre, err := readPreamble(in)
	switch {
	case err == io.EOF:
		log.Debug("tcp ingest connection ended before any input")
		return
	case s.stopping.Load():
		log.Debug("tcp ingest connection closed by shutdown")
		return
	case s.wasDisplaced(pc):
		return
	case errors.Is(err, os.ErrDeadlineExceeded) && r.until.IsZero():
		s.stats.idle.Add(1)
		log.Debug("tcp ingest connection closed: idle", "timeout", s.IdleTimeout)
		return
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = fmt.Errorf("no token within %v", s.handshakeTimeout())
	}
	switch {
	case errors.Is(err, errBadPreamble) && s.Token == "":
		sink.Reject("", feed.Local, feed.ReasonUnknownFormat, 1)
		log.Warn("tcp ingest connection dropped", "err", err)
		return
	case err != nil && s.Token == "":
		log.Warn("tcp ingest connection failed", "err", err)
		return
	case err != nil:
		s.refuse(r.conn, pc, sink, log, fmt.Sprintf("%v: %v", ErrUnauthenticated, err))
		return
	case s.Token != "" && pre.token == nil:
		s.refuse(r.conn, pc, sink, log, fmt.Sprintf("%v: the connection must start with the line %q or the framed preamble %q", ErrUnauthenticated, AuthLinePrefix+" <token>", MagicToken))
		return
	case s.Token != "" && subtle.ConstantTimeCompare(pre.token, []byte(s.Token)) != 1:
		s.refuse(r.conn, pc, sink, log, fmt.Sprintf("%v: wrong token", ErrUnauthenticated))
		return
	}
	if !s.authenticated(pc) {
		return
	}
	r.until = time.Time{}
	var src io.Reader = in
	if pre.framed {
		// Decode sees the framed protocol's plain magic.
		src = io.MultiReader(strings.NewReader(Magic), in)
	}
	d := Decoder{Sink: sink, MaxLineBytes: s.MaxLineBytes, MaxFrameBytes: s.MaxFrameBytes}
	err = d.Decode(s.ctx, src)
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	switch {
	case err == nil:
		log.Debug("tcp ingest connection ended")
	case closing && errors.Is(err, os.ErrDeadlineExceeded):
		log.Debug("tcp ingest connection closed by shutdown")
	case errors.Is(err, os.ErrDeadlineExceeded):
		s.stats.idle.Add(1)
		log.Debug("tcp ingest connection closed: idle", "timeout", s.IdleTimeout)
	case errors.Is(err, ErrUnknownFormat), errors.Is(err, ErrFrameTooLarge):
		log.Warn("tcp ingest connection dropped", "err", err)
	default:
		log.Warn("tcp ingest connection failed", "err", err)
	}
}

func (s *TCPServer) handshakeTimeout() time.Duration {
	if s.HandshakeTimeout > 0 {
		return s.HandshakeTimeout
	}
	return DefaultHandshakeTimeout
}

// refuse counts a connection without the token, sends it an error line,
// and lets the client read it: it stops writing, and reads and discards
// what the client sends for up to a second, so that closing does not
// reset the connection before the error arrives. Until it ends, it keeps
// its place among the unauthenticated connections (pc), and may be
// displaced.
func (s *TCPServer) refuse(conn net.Conn, pc *pendingConn, sink Sink, log *slog.Logger, msg string) {
	if pc != nil {
		s.mu.Lock()
		displaced := pc.displaced
		pc.refused = true
		s.mu.Unlock()
		if displaced {
			return
		}
	}
	s.stats.unauthenticated.Add(1)
	sink.Reject("", feed.Local, feed.ReasonUnauthenticated, 1)
	// Debug: a flood of refused connections must not flood the log; the
	// metrics count them.
	log.Debug("tcp ingest connection refused", "err", msg)
	conn.SetWriteDeadline(time.Now().Add(time.Second))
	if _, err := io.WriteString(conn, "error: "+msg+"\n"); err != nil {
		return
	}
	if cw, ok := conn.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	conn.SetReadDeadline(time.Now().Add(time.Second))
	if !s.stopping.Load() {
		io.CopyN(io.Discard, conn, 64<<10)
	}
}

// connReader reads a connection for a TCPServer: it counts the bytes,
// bounds each read by the idle timeout and, until the preamble is read, by
// the handshake's deadline, and fails once the server closes.
//
// Close sets stopping and then an expired deadline on every connection. A
// read sets its own deadline and then checks stopping: either it sees
// stopping, or Close's deadline comes after its own and ends the read.
type connReader struct {
	s      *TCPServer
	conn   net.Conn
	counts *connCounts // published before each read
	until  time.Time   // the handshake's deadline; zero once it is done
	set    time.Time   // the deadline set last
}

func (r *connReader) Read(p []byte) (int, error) {
	var dl time.Time
	if t := r.s.IdleTimeout; t > 0 {
		dl = time.Now().Add(t)
	}
	if !r.until.IsZero() && (dl.IsZero() || r.until.Before(dl)) {
		dl = r.until
	}
	if !dl.Equal(r.set) {
		r.conn.SetReadDeadline(dl)
		r.set = dl
	}
	if r.s.stopping.Load() {
		return 0, os.ErrDeadlineExceeded
	}
	r.counts.publish()
	n, err := r.conn.Read(p)
	r.s.stats.bytes.Add(uint64(n))
	return n, err
}

// connCounts is the Sink of one connection: it counts the values and
// items its Sink accepts and the rejects, and adds them to the server's
// Stats when published. The connection's reader publishes them before
// each read, so the Stats lag by no more than the input of one read, and
// a connection that waits for input has none left unpublished. Counting
// apart spares the connections a shared counter's cache line on every
// frame, which many thin streams' small frames would contend for.
//
// Only the connection's goroutine uses a connCounts.
type connCounts struct {
	Sink
	s                *TCPServer
	values, rejected uint64 // not yet published
}

// publish adds the counts to the server's Stats.
func (c *connCounts) publish() {
	if c.values != 0 {
		c.s.stats.values.Add(c.values)
		c.values = 0
	}
	if c.rejected != 0 {
		c.s.stats.rejected.Add(c.rejected)
		c.rejected = 0
	}
}

func (c *connCounts) Accept(ctx context.Context, b *feed.Batch) (int, error) {
	n := b.Len()
	accepted, err := c.Sink.Accept(ctx, b)
	c.values += uint64(accepted)
	if err == nil {
		c.rejected += uint64(n - accepted) // rejected by the sink
	}
	return accepted, err
}

// Prefetch passes the hint on to the Sink, if it takes hints.
func (c *connCounts) Prefetch(names [][]byte) int {
	if pf, ok := c.Sink.(Prefetcher); ok {
		return pf.Prefetch(names)
	}
	return 0
}

func (c *connCounts) Reject(stream string, src feed.Source, reason feed.Reason, n int) {
	c.Sink.Reject(stream, src, reason, n)
	c.rejected += uint64(n)
}
