package loadgen

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"streamd/feed"
	"streamd/ingest"
)

// DefaultWriteBytes is the most bytes a FrameRunner's connection writes
// at once by default (it writes at least one frame).
const DefaultWriteBytes = 1 << 20

// A FrameRunner sends pre-rendered Payloads to streamd's TCP ingest in the
// framed protocol, as fast as the connections take them or at a rate.
// Each connection is one goroutine that writes slices of the rendered
// frames straight to its socket: there is no lock, channel or copy per
// frame, so the senders scale with the cores. Set the fields, then call
// Run.
type FrameRunner struct {
	// Addr is the TCP ingest address, and Payloads the streams to send
	// (at least one). Both are required.
	Addr     string
	Payloads []*Payload

	// Sized, in the place of Payloads, is a run of many streams rendered
	// by RenderSized, for as many connections as Conns: connection i
	// sends the frames rendered for it, once. Count must be 0.
	Sized *SizedFrames

	// Token, if set, is sent in each connection's preamble; TLS, if set,
	// makes the connections speak TLS.
	Token string
	TLS   *tls.Config

	// Conns is the number of connections (default 1). With at least as
	// many connections as payloads, connection i sends payload i mod
	// len(Payloads), so that with as many of each, connection i feeds
	// stream i alone, and with one payload every connection feeds the
	// same stream. With fewer, connection i sends payloads i, i+Conns,
	// i+2·Conns… in turns, a write of each at a time. The connections of
	// one payload start at frames spread evenly over it.
	Conns int

	// Count stops the run after this many values over all streams, split
	// evenly between the streams (the first ones get one more when it
	// does not divide) and each stream's share between its connections;
	// 0 means no limit. Duration stops it after this long; 0 means no
	// limit. A connection that reaches the end of its payload starts it
	// again: a stream sent longer than its payload repeats its values.
	Count    int64
	Duration time.Duration

	// Rate is the most values per second over all connections, each
	// connection keeping to its share (an equal one; with Sized, its part
	// of the values, so that the connections keep to the run's pace
	// together to its end); 0 sends as fast as the connections take them.
	// The pace is kept by writes of about a hundredth of a second of
	// values, but at least a frame: at low rates, render the payloads
	// with small frames.
	Rate float64

	// WriteBytes is the most bytes written at once (default
	// DefaultWriteBytes); a write holds whole frames, at least one.
	WriteBytes int

	// Keep fills in the values sent, as each payload's values with their
	// counts, in Result.Streams, for Verify: 8 bytes per value of the
	// payloads, whatever the count.
	Keep bool

	// Progress, if set, is called every ProgressInterval (default 1s)
	// from another goroutine while the run goes on.
	Progress         func(Progress)
	ProgressInterval time.Duration
}

// lane is what one connection sends of one payload.
type lane struct {
	p     *Payload
	start int   // the frame it starts at
	next  int   // the frame it writes next
	left  int64 // values it has still to send; < 0 for no limit
	sent  int64 // values it has sent
}

// chunk returns the next write of l, at most most bytes (but at least one
// frame), the number of frames it takes and the values it carries: whole
// frames from l.next up to the end of the payload, or, for the last values
// of l.left, the first values of a frame.
func (l *lane) chunk(most int) (b []byte, frames int, values int64) {
	p := l.p
	k := max(min(most/p.stride, p.frameCount()-l.next), 1)
	v := int64(min((l.next+k)*p.per, p.n) - l.next*p.per)
	if l.left >= 0 && v > l.left {
		// The frames before the last one in range are full.
		if k = int(l.left / int64(p.per)); k == 0 {
			return p.cut(l.next, int(l.left)), 1, l.left
		}
		v = int64(k * p.per)
	}
	return p.frames[p.offset(l.next):p.offset(l.next+k)], k, v
}

// done records that the chunk of frames and values was sent.
func (l *lane) done(frames int, values int64) {
	if l.next += frames; l.next >= l.p.frameCount() {
		l.next = 0
	}
	l.sent += values
	if l.left >= 0 {
		l.left -= values
	}
}

// A frameLane is what a connection of a FrameRunner sends of one payload
// or of a SizedFrames.
type frameLane interface {
	// chunk returns the next write, at most most bytes (but at least
	// one frame), the number of frames it takes and the values it
	// carries.
	chunk(most int) (b []byte, frames int, values int64)
	// done records that the last chunk was sent.
	done(frames int, values int64)
	// finished reports whether the lane has sent all it has to.
	finished() bool
}

func (l *lane) finished() bool { return l.left == 0 }

// sender is one connection of a FrameRunner.
type sender struct {
	lanes []frameLane
	share float64 // its share of the rate
	sent  atomic.Int64
	_     [56]byte // keeps the counters of two senders off one cache line
}

// Run dials the connections, sends until the count or the duration is
// reached, a connection fails or ctx ends, then closes the connections. It
// returns the result so far with the error, if any. Result.Elapsed runs
// from when every connection is open until the last is closed.
func (r *FrameRunner) Run(ctx context.Context) (*Result, error) {
	switch {
	case r.Addr == "" || len(r.Payloads) == 0 && r.Sized == nil:
		return nil, errors.New("frame run: address and payloads are required")
	case r.Sized != nil && len(r.Payloads) > 0:
		return nil, errors.New("frame run: payloads and sized frames, not both")
	case r.Sized != nil && r.Count != 0:
		return nil, errors.New("frame run: a count with sized frames, which are sent once")
	case r.Sized != nil && max(r.Conns, 1) != r.Sized.Conns():
		return nil, fmt.Errorf("frame run: %d connections for sized frames rendered for %d", max(r.Conns, 1), r.Sized.Conns())
	}
	for _, p := range r.Payloads {
		if p.Len() == 0 {
			return nil, fmt.Errorf("frame run: the payload of stream %q holds no values", p.Stream())
		}
	}
	var (
		senders []*sender
		results func(*Result)
	)
	total := r.Count
	if r.Sized != nil {
		var lanes []*sizedLane
		senders, lanes = r.Sized.plan()
		results = func(res *Result) { r.Sized.results(res, lanes) }
		total = r.Sized.Len()
	} else {
		var lanes []*lane
		senders, lanes = r.plan()
		results = func(res *Result) { r.results(res, lanes) }
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	pre, err := ingest.AppendPreamble(nil, true, r.Token)
	if err != nil {
		return nil, fmt.Errorf("frame run: %w", err)
	}
	conns := make([]net.Conn, len(senders))
	for i := range conns {
		c, err := dialTCP(ctx, r.Addr, r.TLS)
		if err != nil {
			for _, c := range conns[:i] {
				c.Close()
			}
			return nil, err
		}
		conns[i] = c
	}

	start := time.Now()
	var deadline time.Time
	if r.Duration > 0 {
		deadline = start.Add(r.Duration)
	}
	sent := func() int64 {
		var n int64
		for _, s := range senders {
			n += s.sent.Load()
		}
		return n
	}
	stopProgress := startProgress(r.Progress, r.ProgressInterval, func() Progress {
		return Progress{Sent: sent(), Total: total, Elapsed: time.Since(start), Limit: r.Duration}
	})
	var wg sync.WaitGroup
	for i, s := range senders {
		wg.Go(func() {
			if err := r.send(ctx, conns[i], pre, s, start, deadline); err != nil {
				cancel(err)
			}
		})
	}
	wg.Wait()
	stopProgress()

	res := &Result{Elapsed: time.Since(start), Sent: sent(), Streams: make(map[string]*StreamResult)}
	results(res)
	// Nil when every connection finished; else the first connection's
	// error, or why ctx ended.
	return res, context.Cause(ctx)
}

// plan deals the payloads to the connections and splits the count. It
// returns the connections' senders and all their lanes.
func (r *FrameRunner) plan() ([]*sender, []*lane) {
	conns := max(r.Conns, 1)
	k := len(r.Payloads)
	senders := make([]*sender, conns)
	for i := range senders {
		senders[i] = &sender{share: 1 / float64(conns)}
	}
	var all []*lane
	for j, p := range r.Payloads {
		// The connections of payload j.
		var mine []int
		if conns >= k {
			for i := j; i < conns; i += k {
				mine = append(mine, i)
			}
		} else {
			mine = []int{j % conns}
		}
		share := int64(-1)
		if r.Count > 0 {
			share = r.Count / int64(k)
			if int64(j) < r.Count%int64(k) {
				share++
			}
		}
		c := int64(len(mine))
		for rank, i := range mine {
			l := &lane{p: p, left: -1}
			l.start = rank * p.frameCount() / len(mine)
			l.next = l.start
			if share >= 0 {
				l.left = share / c
				if int64(rank) < share%c {
					l.left++
				}
			}
			senders[i].lanes = append(senders[i].lanes, l)
			all = append(all, l)
		}
	}
	return senders, all
}

// send writes the preamble pre and then the lanes of s to c in turns, a
// chunk of each at a time, until every lane is done, the deadline passes
// or ctx ends, then closes c: once the daemon has closed it, after taking
// every value or refusing the connection, as finishTCP says.
func (r *FrameRunner) send(ctx context.Context, c net.Conn, pre []byte, s *sender, start, deadline time.Time) error {
	// A write blocked by back-pressure ends with ctx.
	stop := context.AfterFunc(ctx, func() { c.SetWriteDeadline(time.Unix(1, 0)) })
	defer stop()
	err := r.writeLanes(ctx, c, pre, s, start, deadline, r.Rate*s.share)
	switch {
	case err != nil:
		err = refusal(c, err)
	case ctx.Err() == nil:
		err = finishTCP(c)
	}
	if cerr := c.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close tcp: %w", cerr)
	}
	return err
}

func (r *FrameRunner) writeLanes(ctx context.Context, c net.Conn, pre []byte, s *sender, start, deadline time.Time, rate float64) error {
	if _, err := c.Write(pre); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	most := r.WriteBytes
	if most <= 0 {
		most = DefaultWriteBytes
	}
	if rate > 0 {
		// About a hundredth of a second of values at a time, so that
		// the pace is smooth (but at least a frame: see Payload).
		most = min(most, int(rate/100)*8)
	}
	// Without a rate, the chunks of many lanes go in one write of up to
	// most bytes: a thin stream's chunk is a frame of a few hundred
	// bytes, and a write of each would cost the sender more than the
	// daemon's work on it.
	var w gatheredWrite
	for busy := true; busy; {
		busy = false
		for _, l := range s.lanes {
			if l.finished() {
				continue
			}
			busy = true
			b, frames, n := l.chunk(most)
			if !deadline.IsZero() && !time.Now().Before(deadline) {
				return ended(ctx, w.flush(c, s))
			}
			if rate > 0 {
				due := start.Add(time.Duration(float64(s.sent.Load()+n) / rate * float64(time.Second)))
				if !deadline.IsZero() && due.After(deadline) {
					return nil
				}
				if err := sleepUntil(ctx, due); err != nil {
					return nil // the run ends; its cause says why
				}
			}
			w.add(l, b, frames, n)
			if rate > 0 || w.bytes >= most {
				if err := w.flush(c, s); err != nil {
					return ended(ctx, err)
				}
			}
		}
		// Each lane's next chunk follows its last one's done.
		if err := w.flush(c, s); err != nil {
			return ended(ctx, err)
		}
	}
	return nil
}

// ended returns err, or nil once ctx has ended: a write fails then because
// the run ends, and the run's cause says why.
func ended(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// gatheredWrite is the chunks of a connection's lanes not yet written.
type gatheredWrite struct {
	bufs   net.Buffers
	bytes  int
	sent   []sentChunk
	joined []byte // the chunks copied together, for a connection without writev
}

// sentChunk is a chunk of a lane in a gatheredWrite: what its lane's done
// takes once it is written.
type sentChunk struct {
	l      frameLane
	frames int
	values int64
}

// add appends lane l's chunk b, of frames frames and values values.
func (w *gatheredWrite) add(l frameLane, b []byte, frames int, values int64) {
	w.bufs = append(w.bufs, b)
	w.bytes += len(b)
	w.sent = append(w.sent, sentChunk{l, frames, values})
}

// flush writes the chunks to c in one call, and records them as sent by
// their lanes and by s.
func (w *gatheredWrite) flush(c net.Conn, s *sender) error {
	if len(w.sent) == 0 {
		return nil
	}
	var err error
	if _, vectored := c.(*net.TCPConn); vectored || len(w.bufs) == 1 {
		bufs := w.bufs // WriteTo consumes its receiver
		_, err = bufs.WriteTo(c)
	} else {
		// A TLS connection would write each chunk as a record of its
		// own, in a system call of its own.
		w.joined = w.joined[:0]
		for _, b := range w.bufs {
			w.joined = append(w.joined, b...)
		}
		_, err = c.Write(w.joined)
	}
	if err != nil {
		return fmt.Errorf("send: %w", err)
	}
	var n int64
	for _, x := range w.sent {
		x.l.done(x.frames, x.values)
		n += x.values
	}
	s.sent.Add(n)
	clear(w.bufs)
	w.bufs, w.bytes, w.sent = w.bufs[:0], 0, w.sent[:0]
	return nil
}

// sleepUntil waits until t or until ctx ends, and returns ctx's error
// then.
func sleepUntil(ctx context.Context, t time.Time) error {
	wait := time.Until(t)
	if wait <= 0 {
		return nil
	}
	tm := time.NewTimer(wait)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// results fills in res.Streams from the lanes: each stream's count and
// skipped values and, with Keep, its payload's values with the number of
// times each was sent.
func (r *FrameRunner) results(res *Result, all []*lane) {
	lanes := make(map[*Payload][]*lane)
	for _, l := range all {
		lanes[l.p] = append(lanes[l.p], l)
	}
	for _, p := range r.Payloads {
		st := res.Streams[p.Stream()]
		if st == nil {
			st = &StreamResult{Skipped: make(map[feed.Reason]int64)}
			res.Streams[p.Stream()] = st
		}
		for reason, n := range p.Skipped() {
			st.Skipped[reason] += n
			res.Skipped += n
		}
		for _, l := range lanes[p] {
			st.Sent += l.sent
		}
		if r.Keep {
			st.Values = append(st.Values, p.Values()...)
			st.Counts = append(st.Counts, sentCounts(p, lanes[p])...)
		}
	}
}

// sentCounts returns how many times each value of p was sent by lanes:
// a lane that sent m values from value s sent every value m / n times (n
// values in p) and the m mod n values from s on, wrapping at the end, once
// more.
func sentCounts(p *Payload, lanes []*lane) []int64 {
	n := int64(p.Len())
	counts := make([]int64, n+1) // differences, then counts
	for _, l := range lanes {
		full, rest := l.sent/n, l.sent%n
		counts[0] += full
		s := int64(l.start * p.per)
		if end := s + rest; end <= n {
			counts[s]++
			counts[end]--
		} else {
			counts[s]++
			counts[0]++
			counts[end-n]--
		}
	}
	for i := int64(1); i <= n; i++ {
		counts[i] += counts[i-1]
	}
	return counts[:n]
}
