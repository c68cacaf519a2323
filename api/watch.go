package api

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	pb "streamd/api/proto/streamd/v1"
	"streamd/pipeline"
)

// Limits of Watch.
const (
	// DefaultMaxWatches is the default of Server.MaxWatches.
	DefaultMaxWatches = 4096
	// DefaultMaxWatchesPerConn is the default of Server.MaxWatchesPerConn.
	DefaultMaxWatchesPerConn = 256
	// DefaultMinWatchInterval is the default of Server.MinWatchInterval.
	DefaultMinWatchInterval = 100 * time.Millisecond
	// MaxWatchInterval is the longest time between two answers of a
	// Watch: a longer interval_ms is taken as this.
	MaxWatchInterval = time.Hour
	// watchWorkers is the number of Watch answers computed at once, over
	// all streams: each may hold a sorted copy of a stream's last n
	// values, and the stream's lock while it is made.
	watchWorkers = 2
	// sharedViews is the number of views the Watch answers share (see
	// sharedView): each may hold a sorted copy of a stream's last n values.
	sharedViews = 4
)

// watchInterval returns the time between two answers of a Watch asking
// for ms milliseconds: 1s for 0, else ms clamped to [least,
// MaxWatchInterval] (and least to MaxWatchInterval).
func watchInterval(ms uint64, least time.Duration) time.Duration {
	least = min(least, MaxWatchInterval)
	switch {
	case ms == 0:
		return max(time.Second, least)
	case ms >= uint64(MaxWatchInterval/time.Millisecond):
		return MaxWatchInterval
	}
	return max(time.Duration(ms)*time.Millisecond, least)
}

// watchHub shares the answers of the Watch calls that ask the same
// question of the same stream at the same interval: one feed computes the
// answer once per tick and every call of it sends that answer. It also
// counts the calls open, in all and per connection.
type watchHub struct {
	workers chan struct{} // a token per answer being computed

	mu      sync.Mutex
	feeds   map[feedKey]*watchFeed
	open    int
	perConn map[string]int

	viewMu sync.Mutex
	views  []*sharedView // the latest computed, newest last
}

// A sharedView is a stream's answers over a scope, which the feeds asking
// different questions over the same scope share for a while: so many
// questions of a stream's last n values sort those values once, not once
// per question.
type sharedView struct {
	st     *pipeline.Stream
	sc     scope
	counts bool
	made   time.Time     // when computed, by the wall clock (zero while under way); guarded by the hub's viewMu
	ready  chan struct{} // closed once computed: the fields below are set
	now    int64         // when asked for, by the pipeline's clock, for the answers
	a      *answers
	err    error
}

// feedKey names a feed: the stream (the object, so that a stream deleted
// and created again under its name gets a new feed) and the question.
type feedKey struct {
	st    *pipeline.Stream
	shape string
}

// A watchFeed computes one question's answer every interval and hands the
// latest one to its watchers. A watcher that sends slowly skips the
// answers computed meanwhile: a feed keeps only the latest.
type watchFeed struct {
	key      feedKey
	watchers int // guarded by the hub's mu
	stop     context.CancelFunc

	mu      sync.Mutex
	resp    *pb.WatchResponse
	err     error         // the feed's end: a watcher returns it
	seq     uint64        // answers published
	changed chan struct{} // closed, and replaced, at each answer
}

func newWatchHub() *watchHub {
	return &watchHub{
		workers: make(chan struct{}, watchWorkers),
		feeds:   make(map[feedKey]*watchFeed),
		perConn: make(map[string]int),
	}
}

// join adds a watcher from conn to the feed of key, starting the feed
// with compute and interval if there is none: ResourceExhausted past the
// daemon's or the connection's limit of Watch calls.
func (h *watchHub) join(conn string, key feedKey, maxAll, maxConn int, interval time.Duration, compute func() (*pb.WatchResponse, error), gone func() error) (*watchFeed, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.admitLocked(conn, maxAll, maxConn); err != nil {
		return nil, err
	}
	f := h.feeds[key]
	if f == nil {
		ctx, stop := context.WithCancel(context.Background())
		f = &watchFeed{key: key, stop: stop, changed: make(chan struct{})}
		h.feeds[key] = f
		go h.run(ctx, f, interval, compute, gone)
	}
	f.watchers++
	return f, nil
}

// admitLocked counts one more Watch call from conn, or refuses it with
// ResourceExhausted past the daemon's or the connection's limit; h.mu is
// held.
func (h *watchHub) admitLocked(conn string, maxAll, maxConn int) error {
	if h.open >= maxAll {
		return status.Errorf(codes.ResourceExhausted, "watch: %d watch calls are open, the daemon's limit (--max-watches)", h.open)
	}
	if h.perConn[conn] >= maxConn {
		return status.Errorf(codes.ResourceExhausted, "watch: %d watch calls are open on this connection, the limit (--max-watches-per-conn)", h.perConn[conn])
	}
	h.open++
	h.perConn[conn]++
	return nil
}

// releaseLocked counts one Watch call from conn less; h.mu is held.
func (h *watchHub) releaseLocked(conn string) {
	h.open--
	if h.perConn[conn]--; h.perConn[conn] == 0 {
		delete(h.perConn, conn)
	}
}

// leave removes a watcher from conn from f, stopping f after its last.
func (h *watchHub) leave(conn string, f *watchFeed) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.releaseLocked(conn)
	if f.watchers--; f.watchers == 0 {
		f.stop()
		if h.feeds[f.key] == f {
			delete(h.feeds, f.key)
		}
	}
}

// run computes f's answer now and at every tick of interval, at most
// watchWorkers answers of all feeds at once (a tick missed meanwhile is
// skipped), until ctx is done or an answer fails: then the feed ends with
// that error, and new watchers get a new feed. Between answers it asks gone
// every goneCheck (or interval, if shorter), so that a feed of a deleted
// stream ends within that, not at its next answer up to an hour later.
func (h *watchHub) run(ctx context.Context, f *watchFeed, interval time.Duration, compute func() (*pb.WatchResponse, error), gone func() error) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	check := time.NewTicker(min(interval, goneCheck))
	defer check.Stop()
	end := func(err error) {
		f.publish(nil, err)
		h.mu.Lock()
		if h.feeds[f.key] == f {
			delete(h.feeds, f.key)
		}
		h.mu.Unlock()
	}
	for {
		select {
		case h.workers <- struct{}{}:
		case <-ctx.Done():
			return
		}
		resp, err := compute()
		<-h.workers
		if err != nil {
			end(err)
			return
		}
		f.publish(resp, nil)
	wait:
		for {
			select {
			case <-ticker.C:
				break wait
			case <-check.C:
				if err := gone(); err != nil {
					end(err)
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}
}

// goneCheck is how often a feed asks whether its stream was deleted.
const goneCheck = time.Second

// publish makes resp (or err, the feed's end) the latest answer.
func (f *watchFeed) publish(resp *pb.WatchResponse, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resp, f.err = resp, err
	f.seq++
	close(f.changed)
	f.changed = make(chan struct{})
}

// latest returns the latest answer, its number, a channel closed when
// there is a newer one, and the feed's end if it ended.
func (f *watchFeed) latest() (*pb.WatchResponse, uint64, <-chan struct{}, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.resp, f.seq, f.changed, f.err
}

// view returns st's answers over sc (counts: with frequencies), computed
// with s.localAnswers by this call, or by another feed's less than fresh ago or
// under way.
func (h *watchHub) view(s *Server, st *pipeline.Stream, sc scope, counts bool, fresh time.Duration) (*sharedView, error) {
	h.viewMu.Lock()
	for _, v := range h.views {
		if v.st == st && v.sc == sc && (v.counts || !counts) && (v.made.IsZero() || time.Since(v.made) < fresh) {
			h.viewMu.Unlock()
			<-v.ready
			return v, v.err
		}
	}
	v := &sharedView{st: st, sc: sc, counts: counts, ready: make(chan struct{})}
	if len(h.views) == sharedViews {
		h.views = append(h.views[:0], h.views[1:]...)
	}
	h.views = append(h.views, v)
	h.viewMu.Unlock()

	v.now = s.Pipeline.Now().UnixNano()
	v.a, v.err = s.localAnswers("watch", st, sc, counts)
	h.viewMu.Lock()
	v.made = time.Now()
	if v.err != nil {
		h.views = slices.DeleteFunc(h.views, func(x *sharedView) bool { return x == v })
	}
	h.viewMu.Unlock()
	close(v.ready)
	return v, v.err
}

// connOf names the connection a call came on.
func connOf(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return ""
	}
	local := ""
	if p.LocalAddr != nil {
		local = p.LocalAddr.String()
	}
	return p.Addr.Network() + " " + p.Addr.String() + " " + local
}

// watchShape encodes what a Watch asks, for feedKey.
func watchShape(req *pb.WatchRequest, sc scope, interval time.Duration) string {
	b := make([]byte, 0, 32+8*len(req.Phis))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(req.Support))
	b = binary.LittleEndian.AppendUint64(b, sc.lastN)
	b = binary.LittleEndian.AppendUint64(b, uint64(sc.last))
	b = binary.LittleEndian.AppendUint64(b, uint64(interval))
	for _, phi := range req.Phis {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(phi))
	}
	return string(b)
}

// Watch sends the stream's quantiles and heavy hitters every interval
// (interval_ms clamped to [MinWatchInterval, MaxWatchInterval]; 0: 1s)
// until the client goes away, or the stream is deleted: then the call
// ends with NotFound, also when a stream of the same name was created
// since (a new Watch follows the new stream). The calls that ask the same
// of a stream at the same interval share one answer per interval: a call
// that joins others gets their latest answer at once, and a call that
// reads slowly skips answers rather than queueing them. Calls asking
// different questions over the same scope (all history, the same last_n
// or last) share the stream's answers for MinWatchInterval, so an
// answer's time_unix_nano may be up to that much older than its sending.
// Past MaxWatches
// calls open in the daemon, or MaxWatchesPerConn on one connection, a
// call fails with ResourceExhausted; more than MaxWatchPhis φs, and heavy
// hitters of more than MaxReplyItems items, with InvalidArgument and
// ResourceExhausted.
func (s *Server) Watch(req *pb.WatchRequest, stream grpc.ServerStreamingServer[pb.WatchResponse]) error {
	const op = "watch"
	if len(req.Phis) > MaxWatchPhis {
		return status.Errorf(codes.InvalidArgument, "%s: %d φs, more than %d", op, len(req.Phis), MaxWatchPhis)
	}
	for _, phi := range req.Phis {
		if !(phi >= 0 && phi <= 1) {
			return status.Errorf(codes.InvalidArgument, "%s: φ %v outside [0, 1]", op, phi)
		}
	}
	sc, err := scopeOf(op, req.LastN, req.Last)
	if err != nil {
		return err
	}
	st, err := s.lookup(op, req.Stream, sc, len(req.Phis) > 0)
	if err != nil {
		return err
	}
	if req.Support != 0 {
		if eps := st.Config().Epsilon; !(req.Support > eps && req.Support <= 1) {
			return status.Errorf(codes.InvalidArgument, "%s: support %v outside (ε=%v, 1]", op, req.Support, eps)
		}
	}
	interval := watchInterval(req.IntervalMs, s.minWatchInterval())
	key := feedKey{st: st, shape: watchShape(req, sc, interval)}
	compute := func() (*pb.WatchResponse, error) { return s.watchAnswer(st, req, sc) }
	ctx := stream.Context()
	conn := connOf(ctx)
	hub := s.watchHub()
	gone := func() error { return s.watchedGone(st, req.Stream) }
	f, err := hub.join(conn, key, orDefault(s.MaxWatches, DefaultMaxWatches), orDefault(s.MaxWatchesPerConn, DefaultMaxWatchesPerConn), interval, compute, gone)
	if err != nil {
		return err
	}
	defer hub.leave(conn, f)
	var sent uint64
	for {
		resp, seq, changed, err := f.latest()
		if err != nil {
			return err
		}
		if seq != sent {
			sent = seq
			if err := stream.Send(resp); err != nil {
				return fmt.Errorf("watch: send: %w", err)
			}
			continue // a newer answer may have come during the send
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil
		}
	}
}

// watchHub returns the Server's hub, made at the first Watch.
func (s *Server) watchHub() *watchHub {
	s.hubOnce.Do(func() { s.hub = newWatchHub() })
	return s.hub
}

func (s *Server) minWatchInterval() time.Duration {
	return orDefault(s.MinWatchInterval, DefaultMinWatchInterval)
}

// orDefault returns x, or def when x is not positive.
func orDefault[T int | time.Duration](x, def T) T {
	if x > 0 {
		return x
	}
	return def
}
