package loadgen

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"streamd/feed"
	"streamd/ingest"
	"streamd/items"
)

// DefaultBatch is the default number of values a Runner hands to a
// connection at once.
const DefaultBatch = 8192

// A Runner sends the values of a Source to a Target. Set the fields, then
// call Run. It leaves out the values the daemon would refuse, NaN and ±Inf
// (for a target that sends float32, also values beyond float32's range),
// counting them in StreamResult.Skipped, and sends −0 as +0.
type Runner struct {
	// Source and Target are required.
	Source Source
	Target Target

	// Conns is the number of connections (default 1). The batches of the
	// source are dealt to the connections in turn, so with more than one,
	// the values of a stream may arrive in another order than the
	// source's; with SplitStreams, the streams are dealt instead: every
	// batch of a stream goes over the one connection that a hash of its
	// name picks, in order.
	Conns        int
	SplitStreams bool

	// Lanes is how many goroutines hand the batches of a LaneSource to
	// the connections, with SplitStreams, no Rate and no Count: each
	// sends the streams of its share of the connections (default half
	// the cores, at most Conns). One goroutine cuts, cleans and queues
	// about 40 M values/s of small batches, less than the connections
	// send: a run over many small streams needs more.
	Lanes int

	// Rate is the most values sent per second over all connections; 0
	// sends as fast as the target takes them.
	Rate float64

	// Count stops the run after this many values (0: no limit), and
	// Duration after this long (0: no limit). Either ends the run
	// normally.
	Count    int64
	Duration time.Duration

	// Batch is the most values handed to a connection at once (default
	// DefaultBatch). At low rates batches are smaller, about a hundredth
	// of a second of values, so that the pace is smooth.
	Batch int

	// Keep keeps the values sent, in Result.Streams, for Verify: 8 bytes
	// per value.
	Keep bool

	// Track, if set, says which streams Result.Streams holds, with their
	// counts and, with Keep, their values: the values of the others count
	// only in the totals of the Result. For runs over many streams, which
	// would cost a few hundred bytes each. With more than one lane (see
	// Lanes) it is called from several goroutines at once.
	Track func(stream string) bool

	// Progress, if set, is called every ProgressInterval (default 1s)
	// from another goroutine while the run goes on.
	Progress         func(Progress)
	ProgressInterval time.Duration
}

// Progress is the state of a run in progress.
type Progress struct {
	Sent    int64         // values sent so far
	Total   int64         // Runner.Count, or 0 when unknown
	Elapsed time.Duration // since the run started
	Limit   time.Duration // Runner.Duration, or 0
}

// Rate returns the values sent per second so far.
func (p Progress) Rate() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Sent) / p.Elapsed.Seconds()
}

// ETA returns the time left at the rate so far, and false when the end is
// not known.
func (p Progress) ETA() (time.Duration, bool) {
	var left time.Duration
	known := false
	if p.Total > 0 && p.Sent > 0 {
		left = time.Duration(float64(p.Total-p.Sent) / float64(p.Sent) * float64(p.Elapsed))
		known = true
	}
	if p.Limit > 0 {
		if l := p.Limit - p.Elapsed; !known || l < left {
			left, known = max(l, 0), true
		}
	}
	return left, known
}

// Result is the outcome of a run.
type Result struct {
	Sent    int64         // values sent
	Skipped int64         // values skipped at the source: missing, malformed or not finite
	Elapsed time.Duration // from the start to the last connection closed
	Ack     Ack           // the receivers' counts, summed over the connections

	// Streams holds each stream's counts, by name.
	Streams map[string]*StreamResult
}

// Rate returns the values sent per second.
func (r *Result) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Sent) / r.Elapsed.Seconds()
}

// Names returns the names of the streams, sorted.
func (r *Result) Names() []string {
	return slices.Sorted(maps.Keys(r.Streams))
}

// StreamResult is what a run sent to one stream.
type StreamResult struct {
	Sent    int64
	Skipped map[feed.Reason]int64 // values skipped at the source, by reason

	// Values holds the values sent, with Runner.Keep or FrameRunner.Keep.
	// When Counts is set, as a FrameRunner sets it, Values[i] was sent
	// Counts[i] times (so Sent is the sum of Counts), in an order that
	// is not kept; otherwise each value of Values was sent once, in that
	// order.
	Values []float64
	Counts []int64
	// Ordered says that Values arrived at the daemon in their order: the
	// stream went over one connection, so Verify can check answers over
	// its last n values too.
	Ordered bool
	// Items holds the items sent, with Runner.Keep, for an item stream.
	Items []string
	// PairX and PairY hold the pairs sent, with Runner.Keep, for a pair
	// stream: (PairX[i], PairY[i]), in order.
	PairX, PairY []float64
}

// errLimit ends a source when the run's count or duration is reached.
var errLimit = errors.New("limit reached")

// Run sends the source's values until the source is exhausted, the count
// or the duration is reached, a connection fails or ctx ends, then closes
// the connections. It returns the result so far with the error, if any.
func (r *Runner) Run(ctx context.Context) (*Result, error) {
	if r.Source == nil || r.Target == nil {
		return nil, errors.New("run: source and target are required")
	}
	conns := max(r.Conns, 1)
	batch := r.Batch
	if batch <= 0 {
		batch = DefaultBatch
	}
	if r.Rate > 0 {
		batch = max(1, min(batch, int(r.Rate/100)))
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	res := &Result{Streams: make(map[string]*StreamResult)}
	s := &runSink{
		r:       r,
		ctx:     ctx,
		batch:   batch,
		res:     res,
		work:    make([]chan *work, 1),
		pool:    new(sync.Pool),
		sent:    new(atomic.Int64),
		start:   time.Now(),
		streams: res.Streams,
		f32:     sendsFloat32(r.Target),
	}
	if r.SplitStreams {
		s.work = make([]chan *work, conns)
	}
	for i := range s.work {
		s.work[i] = make(chan *work, conns)
	}
	s.pool.New = func() any { return new(work) }
	if r.Duration > 0 {
		s.deadline = s.start.Add(r.Duration)
	}
	lanes := s.lanes()

	// Open the connections, then start a sender on each.
	var cs []Conn
	for range conns {
		c, err := r.Target.Dial(ctx)
		if err != nil {
			for _, c := range cs {
				c.Close()
			}
			return res, err
		}
		cs = append(cs, c)
	}
	var wg sync.WaitGroup
	acks := make([]Ack, conns)
	for i, c := range cs {
		wg.Go(func() {
			for w := range s.work[i%len(s.work)] {
				if ctx.Err() == nil {
					if err := w.send(c); err != nil {
						cancel(err)
					} else {
						s.sent.Add(int64(w.len()))
					}
				}
				w.vals, w.px, w.py = w.vals[:0], w.px[:0], w.py[:0]
				w.items.Reset()
				s.pool.Put(w)
			}
			ack, err := c.Close()
			if err != nil {
				cancel(err)
			}
			acks[i] = ack
		})
	}
	stopProgress := startProgress(r.Progress, r.ProgressInterval, func() Progress {
		return Progress{Sent: s.sent.Load(), Total: r.Count, Elapsed: time.Since(s.start), Limit: r.Duration}
	})

	var err error
	if len(lanes) > 1 {
		sinks := make([]ingest.Sink, len(lanes))
		for i, l := range lanes {
			sinks[i] = l
		}
		err = r.Source.(LaneSource).RunLanes(ctx, sinks, func(stream string) int { return s.conn(stream) % len(lanes) })
	} else {
		err = r.Source.Run(ctx, s)
	}
	for _, c := range s.work {
		close(c)
	}
	wg.Wait()
	stopProgress()
	for _, l := range lanes[min(len(lanes), 1):] {
		maps.Copy(res.Streams, l.streams) // a stream goes by one lane alone
		res.Skipped += l.res.Skipped
	}
	res.Elapsed = time.Since(s.start)
	res.Sent = s.sent.Load()
	res.Ack.Known = true
	for _, a := range acks {
		res.Ack.Known = res.Ack.Known && a.Known
		res.Ack.Accepted += a.Accepted
		res.Ack.Rejected += a.Rejected
	}
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) || err == nil {
		// A connection's error says more than the source's.
		err = cause
	}
	if errors.Is(err, errLimit) {
		err = nil
	}
	return res, err
}

// startProgress calls progress with what state returns, every interval
// (default 1s), until the returned function is called; it calls it a last
// time then. A nil progress does nothing.
func startProgress(progress func(Progress), every time.Duration, state func() Progress) (stop func()) {
	if progress == nil {
		return func() {}
	}
	if every <= 0 {
		every = time.Second
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				progress(state())
			case <-done:
				return
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		progress(state())
	}
}

// work is a batch of values, items or pairs for one connection.
type work struct {
	stream string
	vals   []float64
	items  items.Batch
	px, py []float64
}

func (w *work) len() int { return len(w.vals) + w.items.Len() + len(w.px) }

// send sends w on c.
func (w *work) send(c Conn) error {
	if len(w.px) > 0 {
		pc, ok := c.(PairConn)
		if !ok {
			return fmt.Errorf("send: pairs for stream %q: the target takes no pairs", w.stream)
		}
		return pc.SendPairs(w.stream, w.px, w.py)
	}
	if w.items.Len() == 0 {
		return c.Send(w.stream, w.vals)
	}
	ic, ok := c.(ItemConn)
	if !ok {
		return fmt.Errorf("send: items for stream %q: the target takes no items", w.stream)
	}
	return ic.SendItems(w.stream, &w.items)
}

// runSink is the ingest.Sink that a Runner hands to its source. Its
// methods are called from the source's goroutine, or from one lane's
// (see lanes).
type runSink struct {
	r        *Runner
	ctx      context.Context
	batch    int
	res      *Result
	streams  map[string]*StreamResult
	work     []chan *work // to the connections: one for all, or one each with SplitStreams
	pool     *sync.Pool
	start    time.Time
	deadline time.Time
	queued   int64         // values handed to the connections
	sent     *atomic.Int64 // values the connections sent
	last     *StreamResult
	lastName string
	f32      bool      // the target sends values as float32
	wide     []float64 // float32 values of a batch, widened
}

// lanes returns the sinks a LaneSource hands its batches to: s and copies
// of it, each with a result of its own for the streams of its share of the
// connections, or s alone when one goroutine must see every batch: the
// source is no LaneSource, streams are not split, or the run paces or
// counts its values as a whole.
func (s *runSink) lanes() []*runSink {
	_, ok := s.r.Source.(LaneSource)
	if !ok || len(s.work) == 1 || s.r.Rate > 0 || s.r.Count > 0 {
		return []*runSink{s}
	}
	n := s.r.Lanes
	if n <= 0 {
		n = runtime.GOMAXPROCS(0) / 2
	}
	n = max(min(n, len(s.work), math.MaxUint16), 1)
	lanes := []*runSink{s}
	for range n - 1 {
		l := *s
		l.res = &Result{}
		l.streams = make(map[string]*StreamResult)
		l.last, l.lastName, l.wide = nil, "", nil
		lanes = append(lanes, &l)
	}
	return lanes
}

// stream returns the result of the stream name, nil for a stream that
// Runner.Track leaves out.
func (s *runSink) stream(name string) *StreamResult {
	if name == s.lastName && s.last != nil {
		return s.last
	}
	st := s.streams[name]
	if st == nil {
		if s.r.Track != nil && !s.r.Track(name) {
			return nil
		}
		st = &StreamResult{Skipped: make(map[feed.Reason]int64), Ordered: (s.r.Conns <= 1 || s.r.SplitStreams) && keepsOrder(s.r.Target)}
		s.streams[name] = st
	}
	s.last, s.lastName = st, name
	return st
}

// keepsOrder reports whether t delivers what one connection sends to a
// stream in the order sent: all but a Kafka target without keys, which
// spreads a stream over the topic's partitions, consumed side by side.
func keepsOrder(t Target) bool {
	k, ok := t.(*Kafka)
	return !ok || !k.NoKey
}

// Accept implements ingest.Sink: it cuts the values or items of b into
// batches, paces them, and queues them for the connections. The values it
// leaves out (cleanValues) are counted as skipped. b.Source and b.At are
// not used: the receiver stamps arrival times.
func (s *runSink) Accept(ctx context.Context, b *feed.Batch) (int, error) {
	switch {
	case b.Items != nil:
		return s.acceptItems(b.Stream, b.Items)
	case len(b.Pairs.X) > 0:
		return s.acceptPairs(b.Stream, b.Pairs.X, b.Pairs.Y)
	}
	values := batchValues(b, &s.wide)
	if len(values) == 0 {
		return 0, nil
	}
	stream := b.Stream
	if err := feed.ValidName(stream); err != nil {
		return 0, fmt.Errorf("run: %w", err)
	}
	st := s.stream(stream)
	accepted := 0
	reject := func(reason feed.Reason, n int) { s.Reject(stream, feed.Local, reason, n) }
	for len(values) > 0 {
		n, err := s.admit(len(values))
		if err != nil {
			return accepted, err
		}
		w := s.pool.Get().(*work)
		w.stream = stream
		w.vals = cleanValues(append(w.vals[:0], values[:n]...), s.f32, reject)
		values = values[n:]
		if len(w.vals) == 0 {
			s.pool.Put(w)
			continue
		}
		accepted += len(w.vals)
		if s.r.Keep && st != nil {
			st.Values = append(st.Values, w.vals...)
		}
		if err := s.queue(st, w); err != nil {
			return accepted, err
		}
	}
	return accepted, nil
}

// acceptItems is Accept for items: it cuts them into batches, paces them,
// and queues them for the connections, as Accept does values.
func (s *runSink) acceptItems(stream string, b *items.Batch) (int, error) {
	if err := feed.ValidName(stream); err != nil {
		return 0, fmt.Errorf("run: %w", err)
	}
	st := s.stream(stream)
	for i := 0; i < b.Len(); {
		n, err := s.admit(b.Len() - i)
		if err != nil {
			return i, err
		}
		w := s.pool.Get().(*work)
		w.stream = stream
		w.vals = w.vals[:0]
		w.items.AppendBatch(b, i, i+n)
		if s.r.Keep && st != nil {
			for j := i; j < i+n; j++ {
				st.Items = append(st.Items, string(b.Item(j)))
			}
		}
		i += n
		if err := s.queue(st, w); err != nil {
			return i, err
		}
	}
	return b.Len(), nil
}

// acceptPairs is Accept for pairs: it cuts them into batches, leaves out
// those with a NaN or ±Inf (feed.CleanPairs, counted as skipped), paces
// the rest, and queues them for the connections.
func (s *runSink) acceptPairs(stream string, x, y []float64) (int, error) {
	if err := feed.ValidName(stream); err != nil {
		return 0, fmt.Errorf("run: %w", err)
	}
	if len(x) != len(y) {
		return 0, fmt.Errorf("run: pairs of %d x and %d y", len(x), len(y))
	}
	st := s.stream(stream)
	accepted := 0
	for len(x) > 0 {
		n, err := s.admit(len(x))
		if err != nil {
			return accepted, err
		}
		w := s.pool.Get().(*work)
		w.stream = stream
		var nan, inf int
		w.px, w.py, nan, inf = feed.CleanPairs(append(w.px[:0], x[:n]...), append(w.py[:0], y[:n]...))
		if nan > 0 {
			s.Reject(stream, feed.Local, feed.ReasonNaN, nan)
		}
		if inf > 0 {
			s.Reject(stream, feed.Local, feed.ReasonInf, inf)
		}
		x, y = x[n:], y[n:]
		if len(w.px) == 0 {
			s.pool.Put(w)
			continue
		}
		accepted += len(w.px)
		if s.r.Keep && st != nil {
			st.PairX = append(st.PairX, w.px...)
			st.PairY = append(st.PairY, w.py...)
		}
		if err := s.queue(st, w); err != nil {
			return accepted, err
		}
	}
	return accepted, nil
}

// IsItemStream implements ingest.Sink: recordings in the line protocol
// replay as values.
func (s *runSink) IsItemStream(string) bool { return false }

// admit returns how many of the next n values or items may go into one
// batch, or errLimit (or the run's error) when the run must end.
func (s *runSink) admit(n int) (int, error) {
	if err := s.ctx.Err(); err != nil {
		return 0, context.Cause(s.ctx)
	}
	if !s.deadline.IsZero() && !time.Now().Before(s.deadline) {
		return 0, errLimit
	}
	if s.r.Count > 0 && s.queued >= s.r.Count {
		return 0, errLimit
	}
	n = min(n, s.batch)
	if s.r.Count > 0 {
		n = int(min(int64(n), s.r.Count-s.queued))
	}
	return n, nil
}

// queue paces the batch w of stream st (nil for a stream not tracked) and
// hands it to a connection.
func (s *runSink) queue(st *StreamResult, w *work) error {
	n := w.len()
	if err := s.pace(n); err != nil {
		w.vals, w.px, w.py = w.vals[:0], w.px[:0], w.py[:0]
		w.items.Reset()
		s.pool.Put(w)
		return err
	}
	s.queued += int64(n)
	if st != nil {
		st.Sent += int64(n)
	}
	select {
	case s.work[s.conn(w.stream)] <- w:
		return nil
	case <-s.ctx.Done():
		return context.Cause(s.ctx)
	}
}

// conn returns the index in s.work of the connection of stream:
// streamConn's with SplitStreams.
func (s *runSink) conn(stream string) int {
	return streamConn(stream, len(s.work))
}

// streamConn returns which of conns connections carries stream when the
// streams are dealt to them: an FNV-1a hash of its name, modulo conns.
func streamConn(stream string, conns int) int {
	if conns <= 1 {
		return 0
	}
	h := uint32(2166136261)
	for i := range len(stream) {
		h = (h ^ uint32(stream[i])) * 16777619
	}
	return int(h % uint32(conns))
}

// pace waits until n more values may be sent at the run's rate.
func (s *runSink) pace(n int) error {
	if s.r.Rate <= 0 {
		return nil
	}
	due := s.start.Add(time.Duration(float64(s.queued+int64(n)) / s.r.Rate * float64(time.Second)))
	var end error
	if !s.deadline.IsZero() && due.After(s.deadline) {
		// The values are due after the end of the run.
		due, end = s.deadline, errLimit
	}
	wait := time.Until(due)
	if wait <= 0 {
		return end
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return end
	case <-s.ctx.Done():
		return context.Cause(s.ctx)
	}
}

// Reject implements ingest.Sink: it counts values skipped at the source.
func (s *runSink) Reject(stream string, _ feed.Source, reason feed.Reason, n int) {
	if st := s.stream(stream); st != nil {
		st.Skipped[reason] += int64(n)
	}
	s.res.Skipped += int64(n)
}
