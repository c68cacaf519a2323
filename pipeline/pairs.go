package pipeline

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"streamd/corrsum"
	"streamd/feed"
	"streamd/gpusort"
	"streamd/internal/codec"
	"streamd/internal/membudget"
	"streamd/internal/radix"
	"streamd/summary"
)

// pairStream is the pair half of a pair stream: the all-history summary of
// the pairs (x, y) it accepted, from every source, and its partial window
// of pairs not yet summarised. A pair stream has no time windows and no
// last-n answers; its values half (the sliding window and the parts' value
// summaries) stays empty, and its parts keep only their reject counts.
//
// Pair windows are sorted by the accepting goroutine, by x with each y
// moving with its x: by the pipeline's sorter when it sorts pairs
// (gpusort.PairSorter: the CPU's radix sort, or the GPU's when auto finds
// it faster), else on the CPU (corrsum.Summary.AddWindow). All of it is
// guarded by the stream's lock, so a query waits for a window being
// sorted, and sees every pair accepted.
type pairStream struct {
	sum  *corrsum.Summary
	x, y []float64 // the partial window, fewer than the window size

	// view caches sum with the partial window added, which queries
	// answer from; nil once a pair has been accepted since.
	view *corrsum.Summary

	// seen is the stream's count of pairs as the sweeps of idle streams
	// see it (see flushIdle).
	seen quietWatch
}

// newPairs returns the empty pair half of a stream of cfg.
func newPairs(cfg summary.Config) (*pairStream, error) {
	sum, err := corrsum.New(cfg.Epsilon)
	if err != nil {
		return nil, fmt.Errorf("new pair summary: %w", err)
	}
	return &pairStream{sum: sum}, nil
}

// add appends clean pairs to the partial window, summarising each window
// of w pairs it fills, sorted by sortPairs when it reports that it sorted
// them, else on the CPU. Clean pairs (feed.CleanPairs, whose bound
// feed.MaxPair keeps every sum finite) are never refused by the summary;
// should it refuse a window anyway, the window is dropped and add returns
// how many pairs it dropped so, to be counted.
func (ps *pairStream) add(x, y []float64, w int, sortPairs func(x, y []float64) bool) (dropped int) {
	for len(x) > 0 {
		n := min(len(x), w-len(ps.x))
		if c := pairCap(len(ps.x)+n, w); c > cap(ps.x) {
			ps.x = slices.Grow(ps.x, c-len(ps.x))
			ps.y = slices.Grow(ps.y, c-len(ps.y))
		}
		ps.x = append(ps.x, x[:n]...)
		ps.y = append(ps.y, y[:n]...)
		x, y = x[n:], y[n:]
		if len(ps.x) == w {
			var err error
			if sortPairs(ps.x, ps.y) {
				err = ps.sum.AddSorted(ps.x, ps.y)
			} else {
				err = ps.sum.AddWindow(ps.x, ps.y)
			}
			if err != nil {
				dropped += w
			}
			ps.x, ps.y = ps.x[:0], ps.y[:0]
		}
	}
	ps.view = nil
	return dropped
}

// current returns the summary of every pair accepted, the partial window
// included (a copy of the summary with a sorted copy of the window added),
// cached until the next pair.
func (ps *pairStream) current() (*corrsum.Summary, error) {
	if ps.view != nil {
		return ps.view, nil
	}
	if len(ps.x) == 0 {
		ps.view = ps.sum
		return ps.view, nil
	}
	v := ps.sum.Copy()
	x := append([]float64(nil), ps.x...)
	y := append([]float64(nil), ps.y...)
	if err := v.AddWindow(x, y); err != nil {
		return nil, fmt.Errorf("summarise the partial window: %w", err)
	}
	ps.view = v
	return v, nil
}

// flushIdle flushes the partial window of a pair stream that has had no
// pair for sw.after, as Stream.flushIdle does a value stream's: it sorts
// it in the sweeper's buffer and adds it to the summary as a short window
// when the summary keeps it in less memory (pairDigestPays), else moves it
// to buffers of exactly its pairs and drops the copy of the summary that
// queries answer from (current). A short window keeps every bound: a
// window's sample is within ε of its own pairs whatever their number, and
// the exponential histogram combines buckets whatever their sizes (see
// corrsum). It reports whether it digested the window, and whether it
// shrank it.
func (ps *pairStream) flushIdle(eps float64, sw *sweeper, st *IdleStats) (digested, shrunk bool) {
	n := len(ps.x)
	if !ps.seen.quiet(ps.sum.Count()+int64(n), sw.now, sw.after) || n == 0 {
		return false, false
	}
	if pairDigestPays(eps, n) {
		sw.pairScratch = radix.Pairs64(ps.x, ps.y, sw.pairScratch)
		if err := ps.sum.AddSorted(ps.x, ps.y); err != nil {
			// Clean pairs are never refused (see add); should they be,
			// they stay in the partial window, accepted.
			return false, false
		}
		ps.x, ps.y, ps.view = nil, nil, nil
		st.Digested++
		return true, false
	}
	roomy := cap(ps.x) != n || cap(ps.y) != n
	copied := ps.view != nil && ps.view != ps.sum
	if !roomy && !copied {
		return false, false
	}
	before := ps.bytes()
	if roomy {
		x, y := make([]float64, n), make([]float64, n)
		copy(x, ps.x)
		copy(y, ps.y)
		ps.x, ps.y = x, y
	}
	// The copy of the summary that the last query made goes too: the
	// next query makes it again.
	ps.view = nil
	st.Shrunk++
	st.Freed += before - ps.bytes()
	return false, true
}

// pairDigestPays reports whether a partial window of n pairs takes more
// memory raw, 16 bytes a pair, than its sample would add to a summary of
// ε: fewer than 4/ε + 2 tuples of 64 bytes (see corrsum). At ε = 0.001
// that is above about 16,000 pairs.
func pairDigestPays(eps float64, n int) bool {
	return n > 4*(int(math.Ceil(4/eps))+2)
}

// bytes reports what the pair half holds: the summary, the cached view
// when it is a copy, and the partial window.
func (ps *pairStream) bytes() int64 {
	b := ps.sum.Bytes() + 8*(cap(ps.x)+cap(ps.y))
	if ps.view != nil && ps.view != ps.sum {
		b += ps.view.Bytes()
	}
	return int64(b)
}

// IsPairs reports whether s is a pair stream.
func (s *Stream) IsPairs() bool { return s.pairs != nil }

// IsPairStream reports whether the named stream exists and is a pair
// stream.
func (p *Pipeline) IsPairStream(name string) bool {
	s := p.lookup(name)
	return s != nil && s.pairs != nil
}

// acceptPairs adds the pairs of b, clean pairs (feed.CleanPairs), to
// their pair stream, creating it with the default config (as a pair
// stream) if b holds any; no pairs create no stream. Each window of pairs
// filled is sorted and summarised before it returns: every later query
// counts the pairs. It fails with ErrWrongKind for a value or item stream.
func (p *Pipeline) acceptPairs(ctx context.Context, b *feed.Batch) (int, error) {
	x, y := b.Pairs.X, b.Pairs.Y
	if len(x) != len(y) {
		return 0, fmt.Errorf("%w: %d x, %d y", ErrPairLengths, len(x), len(y))
	}
	s := p.lookup(b.Stream)
	if s == nil {
		if err := feed.ValidName(b.Stream); err != nil {
			return 0, fmt.Errorf("%w: %v", ErrBadName, err)
		}
		if len(x) == 0 {
			return 0, nil
		}
		cfg := p.cfg.Defaults
		cfg.Items, cfg.Pairs = false, true
		var err error
		if s, _, err = p.getOrCreate(b.Stream, cfg, b.Source); err != nil {
			return 0, err
		}
	}
	if s.pairs == nil {
		if len(x) == 0 {
			return 0, nil
		}
		return 0, fmt.Errorf("%w: pairs for %s stream %q", ErrWrongKind, s.kind(), s.name)
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("accept pairs: %w", err)
	}
	if len(x) == 0 {
		return 0, nil
	}
	if err := p.chargePairs(ctx, s, len(x)); err != nil {
		return 0, err
	}
	open, err := p.lockOpen()
	if err != nil {
		return 0, err
	}
	defer open.RUnlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(x)
	sortPairs := func(x, y []float64) bool { return p.sortPairs(ctx, x, y) }
	if dropped := s.pairs.add(x, y, s.cfg.WindowSize, sortPairs); dropped > 0 {
		s.partLocked(b.Source).addRejects(feed.ReasonInf, dropped)
		n -= min(dropped, n)
	}
	s.version++
	s.account.Summaries(s.summaryBytes())
	return n, nil
}

// chargePairs charges the memory budget for the growth that n pairs need
// before the pair stream s keeps them: the next buffers of its partial
// window and the windows they fill (pairFootprint). It waits while windows
// in flight would make room, and fails with an error wrapping
// ErrMemoryBudget when nothing would: then the pairs are refused, all of
// them.
func (p *Pipeline) chargePairs(ctx context.Context, s *Stream, n int) error {
	if !s.account.Opened() {
		return nil
	}
	s.mu.Lock()
	grow, windows := s.pairs.growth(n, s.cfg.WindowSize)
	s.mu.Unlock()
	if err := s.account.Grow(ctx, grow, windows); err != nil {
		return fmt.Errorf("pairs for stream %q: %w", s.name, err)
	}
	return nil
}

// kind names the kind of s, for errors.
func (s *Stream) kind() string {
	switch {
	case s.items != nil:
		return "item"
	case s.pairs != nil:
		return "pair"
	}
	return "value"
}

// PairAnswer is a correlated-sum answer of a pair stream over every pair
// it accepted.
type PairAnswer struct {
	corrsum.Answer
	// Totals are the exact count and running sums of the pairs.
	Totals corrsum.Totals
	// Epsilon is the stream's ε: CountHi − CountLo ≤ ε·Totals.Count and
	// SumHi − SumLo ≤ ε·Totals.SumAbsY plus rounding (package corrsum).
	Epsilon float64
}

// Correlated answers q over every pair the pair stream s accepted, its
// partial window included. It fails with ErrWrongKind if s is not a pair
// stream, with corrsum.ErrEmpty if it has no pairs, and with corrsum's
// errors for a bad query.
func (s *Stream) Correlated(q corrsum.Query) (PairAnswer, error) {
	return s.correlated(func(v *corrsum.Summary) (corrsum.Answer, error) { return v.Correlated(q) })
}

// CorrelatedAt answers for the constant threshold t as Correlated does for
// an aggregate: the answer's Query is zero, and its Aggregate and Threshold
// are t. It fails as Correlated does, and for a t that is not finite.
func (s *Stream) CorrelatedAt(t float64) (PairAnswer, error) {
	if math.IsNaN(t) || math.IsInf(t, 0) {
		return PairAnswer{}, fmt.Errorf("correlated sum: threshold %v is not finite", t)
	}
	return s.correlated(func(v *corrsum.Summary) (corrsum.Answer, error) {
		if v.IsEmpty() {
			return corrsum.Answer{}, corrsum.ErrEmpty
		}
		return corrsum.Answer{Aggregate: t, Threshold: t, AtMost: v.AtMost(t), AtLeast: v.AtLeast(t)}, nil
	})
}

// correlated answers with answer, called on the summary of every pair of
// s under its lock.
func (s *Stream) correlated(answer func(*corrsum.Summary) (corrsum.Answer, error)) (PairAnswer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pairs == nil {
		return PairAnswer{}, fmt.Errorf("%w: %s stream %q has no pairs", ErrWrongKind, s.kind(), s.name)
	}
	v, err := s.pairViewLocked()
	if err != nil {
		return PairAnswer{}, err
	}
	// The summary merges its parts into a cache for the first answer
	// after a change: measured again, so that the budget charges it.
	held := v.Bytes()
	a, err := answer(v)
	if v.Bytes() != held {
		s.account.Summaries(s.summaryBytes())
	}
	if err != nil {
		return PairAnswer{}, err
	}
	return PairAnswer{Answer: a, Totals: v.Totals(), Epsilon: s.cfg.Epsilon}, nil
}

// pairViewLocked returns the summary of every pair of the pair stream s
// (pairStream.current), and measures what s holds when it makes a new
// one: the view is a copy. The caller holds s.mu.
func (s *Stream) pairViewLocked() (*corrsum.Summary, error) {
	cached := s.pairs.view != nil
	v, err := s.pairs.current()
	if err == nil && !cached {
		s.account.Summaries(s.summaryBytes())
	}
	return v, err
}

// PairTotals returns the totals of the pairs the pair stream s accepted,
// its partial window included; all zero for another kind of stream.
func (s *Stream) PairTotals() corrsum.Totals {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pairs == nil {
		return corrsum.Totals{}
	}
	v, err := s.pairViewLocked()
	if err != nil {
		return s.pairs.sum.Totals()
	}
	return v.Totals()
}

// pairStatsLocked sets the count, sum, min and max of st to those of the
// pairs' x, and its entries and bytes to those the pairs hold. The caller
// holds s.mu.
func (s *Stream) pairStatsLocked(st *Stats) {
	sum := s.pairs.sum
	t := sum.Totals()
	pending := int64(len(s.pairs.x))
	st.Count = t.Count + pending
	st.Summarised = t.Count
	st.Sum, st.Min, st.Max = t.SumX, t.MinX, t.MaxX
	for i, x := range s.pairs.x {
		st.Sum += x
		if i == 0 && t.Count == 0 {
			st.Min, st.Max = x, x
			continue
		}
		st.Min, st.Max = min(st.Min, x), max(st.Max, x)
	}
	st.Entries = sum.Entries()
	st.Bytes = int(s.pairs.bytes())
}

// pairFootprint is StreamFootprint for a pair stream of cfg (defaults
// set). A pair stream, like a value stream, costs what it holds. With W the
// window size, N the sliding window and T = corrsum.SpaceBound(ε, W, N)
// tuples of 64 bytes:
//
//	partial window  16 bytes a pair, in buffers that start at 64 pairs
//	                and double up to W (pairCap)
//	sort buffers    32W (AddWindow's, kept by the summary once it has
//	                sorted a window), and 16W to spare for the summary's
//	                growth: the Window charge, paid before a batch that
//	                fills a window (pair windows are sorted before Accept
//	                returns, so it is returned then)
//	view            a copy of the summary and of the partial window, made
//	                by the first query after new pairs and measured then
//	summaries       s = 4·64·T at the stream's bounds (the summary and
//	                its view, each with the cached merge of its buckets)
//
// Reserve is the fixed part (pairStreamOverhead) and the buffers of the
// first 64 pairs; the growth of the partial
// window and the windows a batch fills are charged before the batch is
// kept (chargePairs), and refused, the batch whole, when the budget cannot
// hold them; what the stream holds is measured after each batch and
// query. Worst is all of it at the stream's bounds: 32W for the partial
// window and its view's copy, 64W for the sort buffers of the summary and
// of its view, 16W for a window, s, and the fixed part.
func pairFootprint(cfg summary.Config) membudget.Footprint {
	w := int64(cfg.WindowSize)
	sums := 4 * 64 * corrsum.SpaceBound(cfg.Epsilon, w, cfg.SlidingWindow)
	first := int64(16 * firstValues)
	return membudget.Footprint{
		Reserve:   pairStreamOverhead + first,
		Window:    48 * w,
		Summaries: first,
		Worst:     32*w + 64*w + 16*w + sums + pairStreamOverhead,
	}
}

// pairCap is the capacity, in pairs, of a partial pair window of window
// size w that holds n pairs: 64 at first, doubling up to w.
func pairCap(n, w int) int {
	c := 64
	for c < n {
		c *= 2
	}
	return min(c, w)
}

// growth returns the bytes that adding n pairs to the partial window of a
// stream of window size w needs beyond what it holds, and the number of
// windows they fill.
func (ps *pairStream) growth(n, w int) (grow int64, windows int) {
	windows = (len(ps.x) + n) / w
	if c := pairCap(min(len(ps.x)+n, w), w); c > cap(ps.x) {
		grow = 16 * int64(c-cap(ps.x))
	}
	return grow, windows
}

// appendPairs appends the pair state of a pair stream: its summary
// (length-prefixed corrsum encoding), then the uvarint count of the pairs
// of its partial window and each pair as x and y float64 LE. The caller
// holds s.mu.
func (ps *pairStream) appendState(dst []byte) ([]byte, error) {
	dst, err := appendPrefixed(dst, ps.sum.AppendBinary)
	if err != nil {
		return nil, err
	}
	dst = binary.AppendUvarint(dst, uint64(len(ps.x)))
	for i, x := range ps.x {
		dst = codec.AppendFloat64(dst, x)
		dst = codec.AppendFloat64(dst, ps.y[i])
	}
	return dst, nil
}

// readPairs decodes what appendState appends, for a stream of cfg: the
// summary must have cfg's ε, and the partial window fewer than its window
// size of finite pairs. Bad input gives an error wrapping codec.ErrCorrupt.
func readPairs(r *codec.Reader, cfg summary.Config) (*pairStream, error) {
	b := r.Bytes("pair summary", r.Remaining())
	n := r.Int("pending pairs", int64(r.Remaining()/16))
	if err := r.Err(); err != nil {
		return nil, err
	}
	ps := &pairStream{sum: new(corrsum.Summary)}
	if err := ps.sum.UnmarshalBinary(b); err != nil {
		return nil, fmt.Errorf("%w: %w", codec.ErrCorrupt, err)
	}
	if ps.sum.Epsilon() != cfg.Epsilon {
		return nil, fmt.Errorf("%w: pair summary of epsilon %v in a stream of %v", codec.ErrCorrupt, ps.sum.Epsilon(), cfg.Epsilon)
	}
	if n >= int64(cfg.WindowSize) {
		return nil, fmt.Errorf("%w: %d pending pairs in windows of %d", codec.ErrCorrupt, n, cfg.WindowSize)
	}
	ps.x, ps.y = make([]float64, 0, n), make([]float64, 0, n)
	for range n {
		x, y := r.Float64(), r.Float64()
		if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) {
			return nil, fmt.Errorf("%w: a pending pair that is not finite", codec.ErrCorrupt)
		}
		ps.x, ps.y = append(ps.x, x), append(ps.y, y)
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return ps, nil
}

// sortPairs sorts a full window of pairs by x, moving each y with its x,
// with the pipeline's sorter if it sorts pairs, and reports whether it did.
// A sorter that fails (its GPU lost, ctx ended) leaves the window to the
// CPU: the pairs are accepted, so the window must be summarised.
func (p *Pipeline) sortPairs(ctx context.Context, x, y []float64) bool {
	ps, ok := p.cfg.Sorter.(gpusort.PairSorter)
	if !ok {
		return false
	}
	if err := ps.SortPairs(ctx, x, y); err != nil {
		p.cfg.Logger.Warn("sort pairs failed; sorting the window on the CPU", "sorter", p.cfg.Sorter.Name(), "err", err)
		return false
	}
	return true
}
