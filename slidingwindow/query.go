package slidingwindow

import (
	"fmt"
	"slices"
	"sort"

	"streamd/gksketch"
	"streamd/internal/radix"
	"streamd/lossy"
)

// Snapshot summarises the last n values of a Window at one moment; build
// it once (Window.Last) and ask it several questions. Its answers carry
// bounds that hold for the last n values exactly.
type Snapshot struct {
	n      int64
	eps    float64 // the window's
	exact  bool
	sorted []float64 // the last n values, sorted, when exact
	q      gksketch.Summary
	f      *lossy.Summary
	// extra is the covered count minus n: −(the values of the block cut by
	// the range's start that lie inside the range), so ≤ 0.
	extra int64
}

// Last returns a snapshot of the last n values: exact when n ≤ the raw ring
// (always in Exact mode), otherwise built from the blocks. n is clamped to
// the number of values held; n < 1 is an error wrapping ErrRange, as is
// n > Capacity.
func (w *Window) Last(n int64) (*Snapshot, error) {
	if n < 1 || n > w.capacity {
		return nil, fmt.Errorf("%w: last %d of a %d-value window", ErrRange, n, w.capacity)
	}
	n = min(n, w.Count())
	if n <= w.ring.len() && (w.mode == Exact || n <= w.ring.capacity) {
		s := &Snapshot{n: n, eps: w.eps, exact: true, sorted: w.last(nil, n)}
		radix.Float64s(s.sorted, nil)
		return s, nil
	}
	return w.blockSnapshot(n), nil
}

// blockSnapshot merges the open values and the blocks covering the last n.
func (w *Window) blockSnapshot(n int64) *Snapshot {
	open := w.pos % w.s0
	sorted := w.last(nil, open)
	radix.Float64s(sorted, nil)
	qs := []gksketch.Summary{gksketch.FromSorted(sorted, 1)}
	fs := []*lossy.Summary{lossy.FromRuns(w.eps, open, lossy.AppendRuns(nil, sorted), 0)}
	lo := w.pos - n
	s := &Snapshot{n: n, eps: w.eps}
	for i := len(w.blocks) - 1; i >= 0; i-- {
		b := &w.blocks[i]
		if b.start < lo {
			// The block cut by the range's start is left out: its older
			// values are not among the last n, and an answer must be.
			s.extra = -max(b.end()-lo, 0)
			break
		}
		qs = append(qs, b.q)
		fs = append(fs, b.f)
	}
	s.q = mergeQuantiles(qs)
	s.f = mergeCounts(fs)
	return s
}

// mergeQuantiles merges summaries pairwise, in O(total·log k).
func mergeQuantiles(qs []gksketch.Summary) gksketch.Summary {
	for len(qs) > 1 {
		next := qs[:0:0]
		for i := 0; i+1 < len(qs); i += 2 {
			next = append(next, gksketch.Merge(&qs[i], &qs[i+1]))
		}
		if len(qs)%2 == 1 {
			next = append(next, qs[len(qs)-1])
		}
		qs = next
	}
	return qs[0]
}

// mergeCounts merges count summaries pairwise without pruning.
func mergeCounts(fs []*lossy.Summary) *lossy.Summary {
	fs = slices.Clone(fs)
	fs[0] = fs[0].Copy()
	for len(fs) > 1 {
		next := fs[:0:0]
		for i := 0; i+1 < len(fs); i += 2 {
			a := fs[i]
			if i > 0 {
				a = a.Copy()
			}
			a.MergeCounts(fs[i+1])
			next = append(next, a)
		}
		if len(fs)%2 == 1 {
			next = append(next, fs[len(fs)-1].Copy())
		}
		fs = next
	}
	return fs[0]
}

// Count reports the number of values the snapshot is about.
func (s *Snapshot) Count() int64 { return s.n }

// Epsilon reports the ε of the window the snapshot was taken of: the
// relative rank and count error its answers are designed to (see the
// package doc for the exact bound). MaxRankError and MaxCountError bound
// this snapshot's own errors, 0 when it is exact.
func (s *Snapshot) Epsilon() float64 { return s.eps }

// Exact reports whether the snapshot's answers are exact.
func (s *Snapshot) Exact() bool { return s.exact }

// shift turns bounds on the covered set into bounds on the last n values.
func (s *Snapshot) shift(lo, hi, floor, ceil int64) (int64, int64) {
	if s.extra > 0 {
		lo -= s.extra
	} else {
		hi -= s.extra
	}
	return max(lo, floor), min(hi, ceil)
}

// MaxRankError bounds the rank error of Quantile and half the width of
// Rank's bounds.
func (s *Snapshot) MaxRankError() int64 {
	if s.Exact() {
		return 0
	}
	a := s.extra
	if a < 0 {
		a = -a
	}
	return s.q.MaxError() + (a+1)/2
}

// Quantile returns a value whose rank among the last n values is within
// MaxRankError of ⌈φn⌉, with bounds on that rank.
func (s *Snapshot) Quantile(phi float64) (v float64, rankMin, rankMax int64) {
	if s.n == 0 {
		return 0, 0, 0
	}
	r := gksketch.TargetRank(phi, s.n)
	if s.Exact() {
		return s.sorted[r-1], r, r
	}
	// Aim at the covered set's rank that the shift centres on r: extra
	// older values push ranks up, missing ones pull them down.
	var half int64
	if s.extra > 0 {
		half = (s.extra + 1) / 2
	} else {
		half = -((-s.extra + 1) / 2)
	}
	t := s.q.Query(r + half)
	lo, hi := s.shift(t.RMin, t.RMax, 1, s.n)
	return t.Value, lo, hi
}

// Rank returns bounds on the number of the last n values that are ≤ v.
func (s *Snapshot) Rank(v float64) (lo, hi int64) {
	if s.Exact() {
		k := int64(upperBound(s.sorted, v))
		return k, k
	}
	lo, hi = s.q.Rank(v)
	return s.shift(lo, hi, 0, s.n)
}

// Frequency returns bounds on the count of v among the last n values.
func (s *Snapshot) Frequency(v float64) (lo, hi int64) {
	if s.Exact() {
		i, _ := slices.BinarySearch(s.sorted, v)
		k := int64(upperBound(s.sorted, v) - i)
		return k, k
	}
	lo, hi = s.f.Estimate(v)
	return s.shift(lo, hi, 0, s.n)
}

// MaxCountError bounds the width of Frequency's bounds.
func (s *Snapshot) MaxCountError() int64 {
	if s.Exact() {
		return 0
	}
	a := s.extra
	if a < 0 {
		a = -a
	}
	return s.f.MaxError() + a
}

// HeavyHitters returns the values whose count among the last n may reach
// support·n: every value with count ≥ support·n (no false negatives, when
// support·n exceeds MaxCountError), none with count below
// support·n − MaxCountError. Each carries its count bounds as
// Count (lower) and Count+Delta (upper), largest first.
func (s *Snapshot) HeavyHitters(support float64) []lossy.Entry {
	var out []lossy.Entry
	cut := support * float64(s.n)
	if s.Exact() {
		for i := 0; i < len(s.sorted); {
			j := upperBound(s.sorted, s.sorted[i])
			if c := int64(j - i); float64(c) >= cut {
				out = append(out, lossy.Entry{Value: s.sorted[i], Count: c})
			}
			i = j
		}
	} else {
		cut -= float64(s.MaxCountError())
		for _, e := range s.f.Entries() {
			lo, hi := s.shift(e.Count, e.Count+e.Delta, 0, s.n)
			if float64(e.Count) >= cut && hi > 0 {
				out = append(out, lossy.Entry{Value: e.Value, Count: lo, Delta: hi - lo})
			}
		}
	}
	slices.SortFunc(out, func(a, b lossy.Entry) int {
		if a.Count != b.Count {
			return int(b.Count - a.Count)
		}
		if a.Value < b.Value {
			return -1
		}
		return 1
	})
	return out
}

// upperBound returns the number of values in sorted x that are ≤ v.
func upperBound(x []float64, v float64) int {
	i, j := 0, len(x)
	for i < j {
		h := int(uint(i+j) >> 1)
		if x[h] <= v {
			i = h + 1
		} else {
			j = h
		}
	}
	return i
}

// Span describes what a time-window snapshot (Since) covers.
type Span struct {
	// First and Last are the arrival times, in Unix nanoseconds, of the
	// first and the last covered value; both 0 when nothing is covered.
	// First is exact unless Truncated, when it may be earlier.
	First, Last int64
	// OlderMax bounds how many covered values arrived before the cutoff:
	// the slack of the mark or block the covered range starts with.
	OlderMax int64
	// Truncated is set when values that arrived at or after the cutoff may
	// have left the window already (it holds the last N values only): the
	// answer then covers every value the window holds from the cutoff on.
	Truncated bool
}

// Since returns a snapshot of every value that arrived at or after cutoff
// (Unix nanoseconds), and possibly some older ones (Span.OlderMax at most,
// the slack of the mark or block the range starts with). Its Count is the
// exact number of values covered, and its answers' bounds hold for those
// values. A range of no more than the raw ring's values is answered
// exactly; a longer one from the blocks, which it starts at a block
// boundary, so that no block is cut.
func (w *Window) Since(cutoff int64) (*Snapshot, Span) {
	if w.pos == 0 || w.lastT < cutoff || len(w.marks) == 0 {
		return &Snapshot{eps: w.eps, exact: true}, Span{}
	}
	oldest := w.pos - w.Count() // the oldest value held
	// The newest mark ends with the newest value, which arrived at or
	// after cutoff, so k < len(marks).
	k := sort.Search(len(w.marks), func(i int) bool { return w.markLast(i) >= cutoff })
	m := w.marks[k]
	start, first := m.start, m.first
	unit := w.pos - m.start
	if k+1 < len(w.marks) {
		unit = w.marks[k+1].start - m.start
	}
	truncated := false
	if k == 0 && w.mode == Blocks && len(w.blocks) > 0 {
		// Every value of the ring may be in range: the blocks go further
		// back.
		j := sort.Search(len(w.blocks), func(i int) bool { return w.blocks[i].last >= cutoff })
		if j < len(w.blocks) {
			b := &w.blocks[j]
			start, first, unit = b.start, b.first, b.size
			truncated = j == 0 && b.first >= cutoff && b.start > 0
		} else {
			// Only the open values, which the ring holds, are in range.
			end := w.blocks[len(w.blocks)-1].end()
			start, first, unit = end, w.firstT, w.pos-end
		}
	} else if k == 0 && start <= oldest && oldest > 0 {
		// The oldest mark lost values to expiry: some may have been in
		// range, and its first time is that of a value gone.
		truncated = start < oldest || first >= cutoff
		start = oldest
	}
	span := Span{First: first, Last: w.lastT, Truncated: truncated}
	if first < cutoff {
		span.OlderMax = unit - 1
	}
	n := w.pos - start
	if n <= w.ring.len() {
		s := &Snapshot{n: n, eps: w.eps, exact: true, sorted: w.last(nil, n)}
		radix.Float64s(s.sorted, nil)
		return s, span
	}
	return w.blockSnapshot(n), span
}
