package web

import (
	"cmp"
	"context"
	"iter"
	"slices"
	"sync"
	"time"

	"streamd/api"
	pb "streamd/api/proto/streamd/v1"
)

const (
	// rateWindow is the span of counts a stream's rate is measured over.
	rateWindow = 10 * time.Second
	// sampleBudget is the share of each interval the sampler may spend
	// asking for quantiles. An all-history answer sorts the stream's
	// partial window, up to a millisecond at the default window size;
	// past the budget, the streams asked least recently go first, so
	// with many busy streams each one's samples are further apart.
	sampleBudget = 0.05
	// listBudget is the share of the intervals the sampler may spend, on
	// average, listing the first streams by name. A listing is cheap but
	// while streams are created by the thousand: it then sorts the names
	// created since the last one into the index. Past the budget, the
	// sampler keeps the streams of its last listing for a few rounds
	// (at most maxListAge) before it lists them again.
	listBudget = 0.01
	maxListAge = 30
)

// chartPhis returns the φs the history samples for the page's charts; the
// exported φs are added to them.
func chartPhis() []float64 {
	return []float64{0, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1}
}

// history samples the first streams by name every interval, through the
// gRPC service's code like any query: their counts, for rates, and their
// all-history quantiles, for the page's charts. A stream whose count did
// not change keeps its last quantiles without being asked again, so idle
// streams cost one Stats call a round.
type history struct {
	api      *api.Server
	phis     []float64 // sorted, distinct
	max      int       // streams sampled, the first by name
	size     int       // samples kept per stream
	rateSize int       // counts kept per stream, for rates
	interval time.Duration

	// names are the streams sampled: the first max by name at their
	// listing, to be listed again at round relist. Only the sampler uses
	// them.
	names         []string
	round, relist int

	mu     sync.RWMutex
	series map[string]*series
}

// sample is one stream's state at one time.
type sample struct {
	unixMilli              int64 // when it was taken
	count, rejected, bytes uint64
	// quantiles are at history.phis; nil when count is 0. Samples of an
	// unchanged stream share the slice, which is never modified.
	quantiles []float64
}

// count is a stream's count at one time.
type count struct {
	unixMilli int64
	n         uint64
}

// series is what the history keeps of one stream.
type series struct {
	counts  ring[count]  // every round
	samples ring[sample] // every round that had its quantiles
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
		h.rateSize = max(int(rateWindow/interval), 1) + 1
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

// due is a stream whose count changed since its last quantiles.
type due struct {
	name  string
	stats *pb.StatsResponse
	last  int64 // when its quantiles were last taken; 0 for never
}

// sample takes one round of samples at now: the counts of the first max
// streams, and the quantiles of those that changed, least recently asked
// first, within the round's budget. It forgets the streams that are gone
// or no longer among the first.
func (h *history) sample(ctx context.Context, now time.Time) {
	if h.size == 0 {
		return
	}
	names, err := h.streams(ctx)
	if err != nil {
		return
	}
	listed, gone, err := statsOf(ctx, h.api, names)
	if err != nil {
		return
	}
	if gone > 0 {
		h.relist = h.round // a place among the first is free
	}
	stats := make(map[string]*pb.StatsResponse, len(listed))
	for _, x := range listed {
		stats[x.name] = x.stats
	}
	ms := now.UnixMilli()
	var todo []due
	h.mu.Lock()
	for name, st := range stats {
		s := h.series[name]
		if s != nil {
			if last, ok := s.counts.last(); ok && last.n > st.Count {
				s = nil // deleted and created again: start afresh
			}
		}
		if s == nil {
			s = &series{}
			h.series[name] = s
		}
		s.counts.add(count{ms, st.Count}, h.rateSize)
		x := sample{unixMilli: ms, count: st.Count, rejected: st.RejectedTotal, bytes: st.SummaryBytes}
		prev, ok := s.samples.last()
		switch {
		case ok && prev.count == st.Count:
			x.quantiles = prev.quantiles
			s.samples.add(x, h.size)
		case st.Count == 0, st.Kind != pb.StreamKind_STREAM_KIND_VALUES:
			// An item or pair stream has no quantiles to sample.
			s.samples.add(x, h.size)
		default:
			todo = append(todo, due{name, st, prev.unixMilli})
		}
	}
	for name := range h.series {
		if stats[name] == nil {
			delete(h.series, name)
		}
	}
	h.mu.Unlock()

	slices.SortFunc(todo, func(a, b due) int { return cmp.Or(cmp.Compare(a.last, b.last), cmp.Compare(a.name, b.name)) })
	start := time.Now()
	limit := time.Duration(sampleBudget * float64(h.interval))
	var taken []sample
	var takenNames []string
	for i, d := range todo {
		if (i > 0 && time.Since(start) > limit) || ctx.Err() != nil {
			break
		}
		q, err := h.api.Quantiles(ctx, &pb.QuantilesRequest{Stream: d.name, Phis: h.phis})
		if err != nil {
			continue // deleted meanwhile
		}
		// The quantiles' own count: values may have come since Stats.
		x := sample{unixMilli: ms, count: q.Count, rejected: d.stats.RejectedTotal, bytes: d.stats.SummaryBytes}
		x.quantiles = make([]float64, len(q.Quantiles))
		for i, a := range q.Quantiles {
			x.quantiles[i] = a.Value
		}
		taken = append(taken, x)
		takenNames = append(takenNames, d.name)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, name := range takenNames {
		if s := h.series[name]; s != nil {
			s.samples.add(taken[i], h.size)
		}
	}
}

// streams returns the streams to sample this round, the first max by
// name, from the last listing or a new one. A listing that took longer
// than listBudget of an interval is kept for as many rounds as spread its
// cost within that budget, up to maxListAge, so that a daemon creating
// streams by the million does not sort their names into its index every
// round for the sampler. Meanwhile a stream created before the sampled
// ones waits for the next listing to be sampled; one deleted makes the
// next round list again.
func (h *history) streams(ctx context.Context) ([]string, error) {
	h.round++
	if h.round < h.relist {
		return h.names, nil
	}
	start := time.Now()
	names, err := firstNames(ctx, h.api, h.max)
	if err != nil {
		return nil, err
	}
	age := 1
	if budget := time.Duration(listBudget * float64(h.interval)); budget > 0 {
		age = int(min(max(time.Since(start)/budget, 1), maxListAge))
	}
	h.names, h.relist = names, h.round+age
	return names, nil
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
	for x := range s.samples.all() {
		if x.unixMilli > t {
			out = append(out, x)
		}
	}
	return out, true
}

// rate returns the stream's accepted values per second over the last
// rateWindow; false until it has been counted twice.
func (h *history) rate(name string) (float64, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	s := h.series[name]
	if s == nil {
		return 0, false
	}
	last, ok := s.counts.last()
	if !ok {
		return 0, false
	}
	for first := range s.counts.all() {
		if last.unixMilli-first.unixMilli <= rateWindow.Milliseconds() {
			if first.unixMilli == last.unixMilli {
				return 0, false
			}
			return float64(last.n-first.n) / (float64(last.unixMilli-first.unixMilli) / 1000), true
		}
	}
	return 0, false
}

// ring keeps the newest items added to it, at most the size given to add.
type ring[T any] struct {
	buf  []T // grows to size, then wraps
	next int // the oldest item once buf is full
}

// add appends x, dropping the oldest item once size are kept.
func (r *ring[T]) add(x T, size int) {
	if len(r.buf) < size {
		r.buf = append(r.buf, x)
		return
	}
	r.buf[r.next] = x
	r.next = (r.next + 1) % size
}

// last returns the newest item; false when there is none.
func (r *ring[T]) last() (T, bool) {
	if len(r.buf) == 0 {
		var zero T
		return zero, false
	}
	return r.buf[(r.next+len(r.buf)-1)%len(r.buf)], true
}

// all yields the items oldest first.
func (r *ring[T]) all() iter.Seq[T] {
	return func(yield func(T) bool) {
		for i := range r.buf {
			if !yield(r.buf[(r.next+i)%len(r.buf)]) {
				return
			}
		}
	}
}
