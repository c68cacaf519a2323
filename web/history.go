package web

import (
	"context"
	"slices"
	"sync"
	"time"

	"streamd/api"
	pb "streamd/api/proto/streamd/v1"
)

// rateWindow is the span of samples a stream's rate is measured over.
const rateWindow = 10 * time.Second

// chartPhis returns the φs the history samples for the page's charts; the
// exported φs are added to them.
func chartPhis() []float64 {
	return []float64{0, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1}
}

// history samples the first streams by name every interval: their count,
// rejects, summary memory and all-history quantiles, asked through the
// gRPC service's code like any query. It keeps the samples of the last
// keep, from which the page draws its charts and the rates are measured.
// A stream whose count did not change since its last sample is not asked
// again, so idle streams cost one Stats call a sample.
type history struct {
	api      *api.Server
	phis     []float64 // sorted, distinct
	max      int       // streams sampled, the first by name
	size     int       // samples kept per stream
	interval time.Duration

	mu     sync.RWMutex
	series map[string]*series
}

// sample is one stream at one time.
type sample struct {
	unixMilli              int64 // when it was taken
	count, rejected, bytes uint64
	// quantiles are at history.phis; nil when count is 0. Samples of an
	// unchanged stream share the slice, which is never modified.
	quantiles []float64
}

// series is a ring of a stream's samples.
type series struct {
	ring []sample // grows to size, then wraps
	next int      // the oldest sample once the ring is full
}

func newHistory(a *api.Server, exported []float64, maxStreams int, keep, interval time.Duration) *history {
	phis := append(chartPhis(), exported...)
	slices.Sort(phis)
	h := &history{
		api: a, phis: slices.Compact(phis), max: maxStreams, interval: interval,
		series: make(map[string]*series),
	}
	if keep > 0 && interval > 0 {
		h.size = max(int(keep/interval), 1)
	}
	return h
}

// run samples every interval until ctx ends.
func (h *history) run(ctx context.Context) {
	t := time.NewTicker(h.interval)
	defer t.Stop()
	for {
		h.sample(ctx, time.Now())
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// sample takes one sample of each of the first max streams and forgets
// the streams that are gone or no longer among them.
func (h *history) sample(ctx context.Context, now time.Time) {
	if h.size == 0 {
		return
	}
	list, err := h.api.ListStreams(ctx, &pb.ListStreamsRequest{})
	if err != nil {
		return
	}
	names := list.Streams[:min(len(list.Streams), h.max)]
	taken := make([]sample, len(names))
	ok := make([]bool, len(names))
	for i, name := range names {
		if ctx.Err() != nil {
			return
		}
		taken[i], ok[i] = h.take(ctx, name, now)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	keep := make(map[string]bool, len(names))
	for i, name := range names {
		if !ok[i] {
			continue
		}
		keep[name] = true
		s := h.series[name]
		if s == nil || (len(s.ring) > 0 && s.last().count > taken[i].count) {
			// New, or deleted and created again: start afresh.
			s = &series{}
			h.series[name] = s
		}
		s.add(taken[i], h.size)
	}
	for name := range h.series {
		if !keep[name] {
			delete(h.series, name)
		}
	}
}

// take samples one stream; false when it is gone.
func (h *history) take(ctx context.Context, name string, now time.Time) (sample, bool) {
	st, err := h.api.Stats(ctx, &pb.StatsRequest{Stream: name})
	if err != nil {
		return sample{}, false
	}
	x := sample{unixMilli: now.UnixMilli(), count: st.Count, rejected: st.RejectedTotal, bytes: st.SummaryBytes}
	h.mu.RLock()
	var prev sample
	if s := h.series[name]; s != nil && len(s.ring) > 0 {
		prev = s.last()
	}
	h.mu.RUnlock()
	if prev.count == x.count && prev.quantiles != nil {
		x.quantiles = prev.quantiles
		return x, true
	}
	if x.count == 0 {
		return x, true
	}
	q, err := h.api.Quantiles(ctx, &pb.QuantilesRequest{Stream: name, Phis: h.phis})
	if err != nil {
		return sample{}, false
	}
	// The quantiles' own count: values may have come since Stats.
	x.count = q.Count
	x.quantiles = make([]float64, len(q.Quantiles))
	for i, a := range q.Quantiles {
		x.quantiles[i] = a.Value
	}
	return x, true
}

// since returns a copy of the stream's samples taken after t (Unix
// milliseconds), oldest first, and whether the stream is sampled.
func (h *history) since(name string, t int64) ([]sample, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	s := h.series[name]
	if s == nil {
		return nil, false
	}
	var out []sample
	for i := range s.ring {
		x := s.ring[(s.next+i)%len(s.ring)]
		if x.unixMilli > t {
			out = append(out, x)
		}
	}
	return out, true
}

// rate returns the stream's accepted values per second over the last
// rateWindow of samples; false until it has two samples.
func (h *history) rate(name string) (float64, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	s := h.series[name]
	if s == nil || len(s.ring) < 2 {
		return 0, false
	}
	last := s.last()
	first := last
	for i := range s.ring {
		x := s.ring[(s.next+i)%len(s.ring)]
		if last.unixMilli-x.unixMilli <= rateWindow.Milliseconds() {
			first = x
			break
		}
	}
	dt := float64(last.unixMilli-first.unixMilli) / 1000
	if dt <= 0 {
		return 0, false
	}
	return float64(last.count-first.count) / dt, true
}

// last returns the newest sample; the ring must not be empty.
func (s *series) last() sample { return s.ring[(s.next+len(s.ring)-1)%len(s.ring)] }

// add appends x, dropping the oldest sample once size are kept.
func (s *series) add(x sample, size int) {
	if len(s.ring) < size {
		s.ring = append(s.ring, x)
		return
	}
	s.ring[s.next] = x
	s.next = (s.next + 1) % size
}
