// Package lossy implements Manku and Motwani's lossy counting (VLDB 2002)
// in the batched form of Govindaraju, Raghuvanshi and Manocha (SIGMOD 2005,
// §5.1): each window's histogram — its distinct values with their counts,
// from a sorted window — is merged into a table of (value, f, Δ) entries,
// and entries with f + Δ at or below the window's threshold are pruned.
//
// # Guarantee
//
// For every value v with true count c over the N values added: if v has an
// entry, f ≤ c ≤ f + Δ; if not, c ≤ Absent(). Both Δ and Absent are at most
// ⌊εN⌋. So Estimate's lower bound f̃ satisfies c − εN ≤ f̃ ≤ c, and
// HeavyHitters(s) returns every value with c ≥ sN and none with
// c < (s − ε)N.
//
// Proof (batched): a window of n values moves N to N' = N+n. A value not in
// the table had c ≤ ⌊εN⌋ (induction); inserting it with Δ = ⌊εN⌋ keeps
// c ≤ f + Δ. A pruned entry had c ≤ f + Δ ≤ ⌊εN'⌋, and a value absent from
// the window and the table still has c ≤ ⌊εN⌋ ≤ ⌊εN'⌋.
//
// # Space
//
// At most (1/ε)·(ln(εN) + 3) entries (Manku–Motwani's O((1/ε) log(εN))
// bound, plus one window of entries not yet pruned); SpaceBound gives the
// figure the tests hold it to.
package lossy

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Entry is one counted value: its true count c satisfies
// Count ≤ c ≤ Count + Delta.
type Entry struct {
	Value float64
	Count int64
	Delta int64
}

// Run is a distinct value of a window and its count in that window.
type Run struct {
	Value float64
	Count int64
}

// ErrEpsilonMismatch is returned when merging summaries with different ε.
var ErrEpsilonMismatch = errors.New("lossy: epsilon mismatch")

// Summary is a lossy-counting summary. Its entries are kept sorted by
// value, so a sorted window's histogram merges in one linear pass.
type Summary struct {
	eps     float64
	n       int64
	absent  int64 // bound on the count of a value without an entry
	entries []Entry
	scratch []Entry
}

// New returns an empty summary with error ε in (0, 1).
func New(eps float64) (*Summary, error) {
	if !(eps > 0 && eps < 1) {
		return nil, badEpsilon(eps)
	}
	// Small enough to inline, so that an empty summary made only to be
	// encoded, as a stream's before its first window, need not be
	// allocated.
	return &Summary{eps: eps}, nil
}

func badEpsilon(eps float64) error {
	return fmt.Errorf("lossy: epsilon %v outside (0, 1)", eps)
}

// Epsilon reports ε.
func (s *Summary) Epsilon() float64 { return s.eps }

// Count reports the number of values added.
func (s *Summary) Count() int64 { return s.n }

// IsEmpty reports whether no values were added.
func (s *Summary) IsEmpty() bool { return s.n == 0 }

// Len reports the number of entries.
func (s *Summary) Len() int { return len(s.entries) }

// Bytes reports the memory held by the entries.
func (s *Summary) Bytes() int { return 24 * (cap(s.entries) + cap(s.scratch)) }

// Entries returns the entries, sorted by value. The caller must not modify
// them.
func (s *Summary) Entries() []Entry { return s.entries }

// Absent returns the bound on the count of any value without an entry.
func (s *Summary) Absent() int64 { return s.absent }

// MaxError returns the largest undercount of any estimate: the larger of
// Absent and every entry's Delta. It is at most ⌊εN⌋.
func (s *Summary) MaxError() int64 {
	e := s.absent
	for _, x := range s.entries {
		e = max(e, x.Delta)
	}
	return e
}

// Bound returns ⌊εN⌋ for the count so far.
func (s *Summary) Bound() int64 { return floorEps(s.eps, s.n) }

func floorEps(eps float64, n int64) int64 { return int64(math.Floor(eps * float64(n))) }

// Threshold returns the count a value new to the table must exceed in a
// window of n values to survive that window's pruning: ⌊ε(N+n)⌋ − ⌊εN⌋,
// which is ⌊εn⌋ or ⌊εn⌋+1. A window's histogram may leave out every value
// that has no entry and a count at most this (AddWindow).
func (s *Summary) Threshold(n int64) int64 {
	return floorEps(s.eps, s.n+n) - floorEps(s.eps, s.n)
}

// AddWindow adds a window of n values given by its histogram: runs, sorted
// by value with distinct values, must list every value of the window that
// has an entry or whose count exceeds Threshold(n); it may list others. The
// counts of listed runs must sum to at most n. It costs O(len(runs) + Len).
func (s *Summary) AddWindow(n int64, runs []Run) error {
	return s.addWindow(n, runs, nil, true)
}

// AddWindowKnown is AddWindow for a histogram made against an older table:
// runs list every value of the window in known (sorted) or counted more
// than ⌊ε·n⌋ times, but entries created since known was taken may be
// missing. Such an entry, absent from runs and from known, may have had up
// to Threshold(n) occurrences in the window: its Delta grows by that much,
// which keeps Delta ≤ ⌊εN⌋ (Delta ≤ ⌊εN_before⌋ before, and Threshold(n) =
// ⌊εN_after⌋ − ⌊εN_before⌋). The pipeline uses it when windows are digested
// (on a GPU) while earlier windows of the same stream are still in flight.
func (s *Summary) AddWindowKnown(n int64, runs []Run, known []float64) error {
	return s.addWindow(n, runs, known, false)
}

func (s *Summary) addWindow(n int64, runs []Run, known []float64, allKnown bool) error {
	var sum int64
	for i, r := range runs {
		if r.Count < 1 || math.IsNaN(r.Value) || (i > 0 && r.Value <= runs[i-1].Value) {
			return fmt.Errorf("lossy: run %d (%v×%d) out of order or empty", i, r.Value, r.Count)
		}
		sum += r.Count
	}
	if sum > n {
		return fmt.Errorf("lossy: runs count %d values of a %d-value window", sum, n)
	}
	threshold := s.Threshold(n)
	delta := s.Bound()
	s.n += n
	prune := s.Bound()
	out := s.scratch[:0]
	e := s.entries
	i, j := 0, 0
	for i < len(e) || j < len(runs) {
		var x Entry
		switch {
		case j == len(runs) || (i < len(e) && e[i].Value < runs[j].Value):
			x = e[i]
			i++
			if !allKnown {
				for len(known) > 0 && known[0] < x.Value {
					known = known[1:]
				}
				if len(known) == 0 || known[0] != x.Value {
					x.Delta += threshold
				}
			}
		case i == len(e) || runs[j].Value < e[i].Value:
			x = Entry{Value: runs[j].Value, Count: runs[j].Count, Delta: delta}
			j++
		default:
			x = e[i]
			x.Count += runs[j].Count
			i++
			j++
		}
		if x.Count+x.Delta > prune {
			out = append(out, x)
		}
	}
	s.entries, s.scratch = out, e[:0]
	s.absent = prune
	return nil
}

// Add adds single values, as a window of len(values) values (sorted and
// counted here). It is the path for tiny streams and tests; windows from
// the pipeline use AddWindow.
func (s *Summary) Add(values ...float64) error {
	x := slices.Clone(values)
	slices.Sort(x)
	return s.AddWindow(int64(len(x)), AppendRuns(nil, x))
}

// AppendRuns appends the histogram of the sorted values x to dst.
func AppendRuns[K float32 | float64](dst []Run, x []K) []Run {
	for i := 0; i < len(x); {
		j := i + 1
		for j < len(x) && x[j] == x[i] {
			j++
		}
		dst = append(dst, Run{Value: float64(x[i]), Count: int64(j - i)})
		i = j
	}
	return dst
}

// Estimate returns bounds on the count of v: lo ≤ count ≤ hi, with
// hi − lo ≤ MaxError.
func (s *Summary) Estimate(v float64) (lo, hi int64) {
	i, ok := slices.BinarySearchFunc(s.entries, v, func(x Entry, v float64) int {
		switch {
		case x.Value < v:
			return -1
		case x.Value > v:
			return 1
		}
		return 0
	})
	if !ok {
		return 0, s.absent
	}
	return s.entries[i].Count, s.entries[i].Count + s.entries[i].Delta
}

// HeavyHitters returns the entries whose count may reach support·N: every
// entry with Count ≥ support·N − MaxError (for a plain lossy summary,
// Count ≥ (s − ε)N). Every value with true count ≥ support·N is among them
// (if support·N > Absent), and none has true count below
// support·N − MaxError. They come sorted by Count, largest first.
func (s *Summary) HeavyHitters(support float64) []Entry {
	cut := support*float64(s.n) - float64(s.MaxError())
	var out []Entry
	for _, x := range s.entries {
		if float64(x.Count) >= cut && x.Count > 0 {
			out = append(out, x)
		}
	}
	slices.SortFunc(out, func(a, b Entry) int {
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

// Merge adds o's counts to s: the summary of both streams. A value with
// entries in both sums Count and Delta; a value with an entry in one only
// takes the other's Absent into its Delta. Entries with Count + Delta at or
// below ⌊εN⌋ for the total N are then pruned, so every bound of the package
// doc holds for the result. It fails if ε differs.
func (s *Summary) Merge(o *Summary) error {
	if s.eps != o.eps {
		return fmt.Errorf("%w: %v and %v", ErrEpsilonMismatch, s.eps, o.eps)
	}
	s.n += o.n
	s.absent += o.absent
	s.mergeEntries(o.entries, o.absent, s.absent-o.absent)
	s.Prune(s.Bound())
	return nil
}

// MergeCounts adds o's entries and bounds to s without pruning or checking
// ε: for summaries of consecutive blocks of a sliding window, whose error
// budget is set by the caller through Prune.
func (s *Summary) MergeCounts(o *Summary) {
	s.n += o.n
	s.absent += o.absent
	s.mergeEntries(o.entries, o.absent, s.absent-o.absent)
}

// mergeEntries merges other into s.entries; oAbsent and sAbsent are the
// absence bounds of the other side and of s before the merge.
func (s *Summary) mergeEntries(other []Entry, oAbsent, sAbsent int64) {
	out := s.scratch[:0]
	e := s.entries
	i, j := 0, 0
	for i < len(e) || j < len(other) {
		switch {
		case j == len(other) || (i < len(e) && e[i].Value < other[j].Value):
			x := e[i]
			x.Delta += oAbsent
			out = append(out, x)
			i++
		case i == len(e) || other[j].Value < e[i].Value:
			x := other[j]
			x.Delta += sAbsent
			out = append(out, x)
			j++
		default:
			x := e[i]
			x.Count += other[j].Count
			x.Delta += other[j].Delta
			out = append(out, x)
			i++
			j++
		}
	}
	s.entries, s.scratch = out, e[:0]
}

// Remap replaces the value v of every entry by f(v), for values that are
// the keys of something else: an item stream's fingerprints moved to
// another key, say. If f is one to one, every bound of the package doc
// holds for the new values. Entries that f maps to one value are merged,
// their counts and Deltas added as Merge adds those of one value (as
// colliding keys are counted together); a value without an entry that f
// maps onto another can then be undercounted by up to Absent. f must
// return no NaN. It costs O(Len·log Len).
func (s *Summary) Remap(f func(float64) float64) {
	for i := range s.entries {
		s.entries[i].Value = f(s.entries[i].Value)
	}
	slices.SortFunc(s.entries, func(a, b Entry) int { return cmp.Compare(a.Value, b.Value) })
	out := s.entries[:0]
	for _, x := range s.entries {
		if k := len(out); k > 0 && out[k-1].Value == x.Value {
			out[k-1].Count += x.Count
			out[k-1].Delta += x.Delta
			continue
		}
		out = append(out, x)
	}
	s.entries = out
}

// Prune drops the entries with Count + Delta ≤ threshold and raises Absent
// to threshold if it is lower: a dropped value's count is at most
// threshold.
func (s *Summary) Prune(threshold int64) {
	s.entries = slices.DeleteFunc(s.entries, func(x Entry) bool { return x.Count+x.Delta <= threshold })
	s.absent = max(s.absent, threshold)
}

// FromRuns returns the summary of a window given by its full histogram,
// pruned to threshold: exact counts (Delta 0) of the values counted more
// than threshold times, and Absent = threshold.
func FromRuns(eps float64, n int64, runs []Run, threshold int64) *Summary {
	s := &Summary{eps: eps, n: n}
	for _, r := range runs {
		if r.Count > threshold {
			s.entries = append(s.entries, Entry{Value: r.Value, Count: r.Count})
		}
	}
	s.absent = threshold
	return s
}

// Reset empties s.
func (s *Summary) Reset() {
	s.n, s.absent = 0, 0
	s.entries = s.entries[:0]
}

// Copy returns a deep copy of s.
func (s *Summary) Copy() *Summary {
	return &Summary{eps: s.eps, n: s.n, absent: s.absent, entries: slices.Clone(s.entries)}
}

// SpaceBound returns the most entries a summary of error eps over n values
// may hold: (1/ε)·(ln(εn) + 3), and at least 1/ε + 1 for small n.
func SpaceBound(eps float64, n int64) int {
	x := eps * float64(n)
	return int(math.Ceil((1 / eps) * (math.Log(max(x, 1)) + 3)))
}

// Valid checks the entries' order and bounds.
func (s *Summary) Valid() error {
	if s.n < 0 || s.absent < 0 || s.absent > s.n {
		return fmt.Errorf("lossy: count %d, absent %d out of range", s.n, s.absent)
	}
	var total int64
	for i, x := range s.entries {
		if x.Count < 0 || x.Delta < 0 || math.IsNaN(x.Value) || (i > 0 && x.Value <= s.entries[i-1].Value) {
			return fmt.Errorf("lossy: entry %d (%v, %d, %d) invalid", i, x.Value, x.Count, x.Delta)
		}
		total += x.Count
	}
	if total > s.n {
		return fmt.Errorf("lossy: entries count %d of %d values", total, s.n)
	}
	return nil
}

// AppendValues appends the values that have entries, ascending, to dst:
// the Known list of the next window's histogram.
func (s *Summary) AppendValues(dst []float64) []float64 {
	for _, e := range s.entries {
		dst = append(dst, e.Value)
	}
	return dst
}
