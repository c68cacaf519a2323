// Package exact computes exact quantiles, ranks and counts of a stream, and
// checks approximate answers against them with the guarantees of streamd's
// design: the tests of every summary and loadgen's --verify use it.
package exact

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"

	"streamd/internal/radix"
)

// Stream is the exact answer key of a multiset of values.
type Stream struct {
	// sorted holds the values in ascending order: each as often as it
	// occurs, or, when cum is set, each distinct value once, cum[i] being
	// the number of values ≤ sorted[i].
	sorted []float64
	cum    []int64
}

// New returns the answer key of values (copied).
func New(values []float64) *Stream {
	s := &Stream{sorted: slices.Clone(values)}
	radix.Float64s(s.sorted, nil)
	return s
}

// NewCounted returns the answer key of the multiset in which values[i]
// occurs counts[i] times, such as values sent over and over: it takes
// memory for the distinct values only, whatever the counts. It sorts each
// run of consecutive values with equal counts, then merges the runs, so it
// is fastest when equal counts come in long runs. It panics if the slices'
// lengths differ or a count is negative.
func NewCounted(values []float64, counts []int64) *Stream {
	if len(values) != len(counts) {
		panic("exact: NewCounted: values and counts differ in length")
	}
	type run struct {
		vals  []float64
		count int64
	}
	buf := make([]float64, 0, len(values))
	var runs []run
	var scratch []uint64
	for i := 0; i < len(values); {
		j := i + 1
		for j < len(values) && counts[j] == counts[i] {
			j++
		}
		switch c := counts[i]; {
		case c < 0:
			panic("exact: NewCounted: negative count")
		case c > 0:
			start := len(buf)
			buf = append(buf, values[i:j]...)
			scratch = radix.Float64s(buf[start:], scratch)
			runs = append(runs, run{buf[start:], c})
		}
		i = j
	}
	s := &Stream{sorted: make([]float64, 0, len(buf)), cum: make([]int64, 0, len(buf))}
	var total int64
	add := func(v float64, c int64) {
		total += c
		// By bits: −0 and +0 stay apart, in that order, as New keeps them.
		if n := len(s.sorted); n > 0 && math.Float64bits(s.sorted[n-1]) == math.Float64bits(v) {
			s.cum[n-1] = total
			return
		}
		s.sorted = append(s.sorted, v)
		s.cum = append(s.cum, total)
	}
	// Merge the runs through a binary heap of their heads, least on top.
	heap := make([]int, len(runs))
	for i := range heap {
		heap[i] = i
	}
	less := func(a, b int) bool {
		x, y := runs[heap[a]].vals[0], runs[heap[b]].vals[0]
		return x < y || x == y && math.Signbit(x) && !math.Signbit(y)
	}
	down := func(i int) {
		for {
			m := i
			if l := 2*i + 1; l < len(heap) && less(l, m) {
				m = l
			}
			if r := 2*i + 2; r < len(heap) && less(r, m) {
				m = r
			}
			if m == i {
				return
			}
			heap[i], heap[m] = heap[m], heap[i]
			i = m
		}
	}
	for i := len(heap)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for len(heap) > 0 {
		r := &runs[heap[0]]
		add(r.vals[0], r.count)
		if r.vals = r.vals[1:]; len(r.vals) == 0 {
			heap[0] = heap[len(heap)-1]
			heap = heap[:len(heap)-1]
		}
		down(0)
	}
	return s
}

// N reports the number of values.
func (s *Stream) N() int64 {
	if s.cum != nil {
		return s.countBelow(len(s.sorted))
	}
	return int64(len(s.sorted))
}

// countBelow returns the number of values in s.sorted[:i].
func (s *Stream) countBelow(i int) int64 {
	switch {
	case s.cum == nil:
		return int64(i)
	case i == 0:
		return 0
	}
	return s.cum[i-1]
}

// Sorted returns the values in ascending order, each as often as it
// occurs; the caller must not modify them. For a key from NewCounted it
// builds them: N values.
func (s *Stream) Sorted() []float64 {
	if s.cum == nil {
		return s.sorted
	}
	out := make([]float64, 0, s.N())
	for i, v := range s.sorted {
		for range s.countBelow(i+1) - s.countBelow(i) {
			out = append(out, v)
		}
	}
	return out
}

// RankRange returns #{x < v} and #{x ≤ v}: any rank r with
// below < r ≤ atMost is a rank of v (when v is present).
func (s *Stream) RankRange(v float64) (below, atMost int64) {
	i, _ := slices.BinarySearch(s.sorted, v)
	j := i
	for j < len(s.sorted) && s.sorted[j] == v {
		j++
	}
	return s.countBelow(i), s.countBelow(j)
}

// Count returns the number of values equal to v.
func (s *Stream) Count(v float64) int64 {
	lo, hi := s.RankRange(v)
	return hi - lo
}

// rank returns ⌈φN⌉, at least 1 and at most N.
func (s *Stream) rank(phi float64) int64 {
	n := s.N()
	return min(max(int64(math.Ceil(phi*float64(n))), 1), n)
}

// Quantile returns the exact φ-quantile: the value of rank ⌈φN⌉ (at least
// 1).
func (s *Stream) Quantile(phi float64) float64 {
	r := s.rank(phi)
	if s.cum == nil {
		return s.sorted[r-1]
	}
	i, _ := slices.BinarySearch(s.cum, r) // the first i with cum[i] ≥ r
	return s.sorted[i]
}

// RankError returns the rank error of answering v for φ: the distance from
// ⌈φN⌉ (at least 1) to the nearest rank v has, or an error if v is not in
// the stream.
func (s *Stream) RankError(phi, v float64) (int64, error) {
	below, atMost := s.RankRange(v)
	if below == atMost {
		return 0, fmt.Errorf("quantile answer %v is not a value of the stream", v)
	}
	r := s.rank(phi)
	switch {
	case r <= below:
		return below + 1 - r, nil
	case r > atMost:
		return r - atMost, nil
	}
	return 0, nil
}

// CheckQuantile returns an error unless v is a φ-quantile within eps·N:
// some rank r of v has |r − ⌈φN⌉| ≤ eps·N. It also checks the answer's
// reported rank bounds [rmin, rmax]: some rank of v must lie in them.
func (s *Stream) CheckQuantile(phi, v, eps float64, rmin, rmax int64) error {
	e, err := s.RankError(phi, v)
	if err != nil {
		return err
	}
	if n := float64(s.N()); float64(e) > eps*n {
		return fmt.Errorf("φ=%v: answer %v has rank error %d > εN = %v", phi, v, e, eps*n)
	}
	below, atMost := s.RankRange(v)
	if rmax <= below || rmin > atMost || rmin > rmax {
		return fmt.Errorf("φ=%v: answer %v has ranks (%d, %d], reported [%d, %d]", phi, v, below, atMost, rmin, rmax)
	}
	return nil
}

// CheckRank returns an error unless lo ≤ #{x ≤ v} ≤ hi and hi − lo ≤
// 2·eps·N.
func (s *Stream) CheckRank(v float64, lo, hi int64, eps float64) error {
	_, atMost := s.RankRange(v)
	if atMost < lo || atMost > hi {
		return fmt.Errorf("rank of %v is %d, reported [%d, %d]", v, atMost, lo, hi)
	}
	if float64(hi-lo) > 2*eps*float64(s.N()) {
		return fmt.Errorf("rank of %v: bounds [%d, %d] wider than 2εN", v, lo, hi)
	}
	return nil
}

// CheckFrequency returns an error unless lo ≤ count(v) ≤ hi and the lower
// bound is within eps·N of the count.
func (s *Stream) CheckFrequency(v float64, lo, hi int64, eps float64) error {
	return checkFrequency(v, s.Count(v), s.N(), lo, hi, eps)
}

// checkFrequency returns an error unless lo ≤ c ≤ hi and c − lo ≤ eps·n,
// for key k of count c among n.
func checkFrequency[K any](k K, c, n, lo, hi int64, eps float64) error {
	if c < lo || c > hi {
		return fmt.Errorf("count of %v is %d, reported [%d, %d]", k, c, lo, hi)
	}
	if float64(c-lo) > eps*float64(n) {
		return fmt.Errorf("count of %v is %d, lower bound %d more than εN below", k, c, lo)
	}
	return nil
}

// BelowHeavyCut reports whether count, among n, is below (support − eps)·n:
// too rare for a heavy hitter reported at support with error eps. The
// tolerance absorbs rounding in (s − ε)N, not real errors.
func BelowHeavyCut(count, n int64, support, eps float64) bool {
	return float64(count) < (support-eps)*float64(n)*(1-1e-12)-1e-9
}

// checkHeavyHitter returns an error if key k, of count c among n, is too
// rare to be reported as a heavy hitter at support with error eps.
func checkHeavyHitter[K any](k K, c, n int64, support, eps float64) error {
	if BelowHeavyCut(c, n, support, eps) {
		return fmt.Errorf("heavy hitter %v has count %d < (s−ε)N = %v", k, c, (support-eps)*float64(n))
	}
	return nil
}

// CheckHeavyHitter returns an error if v, reported as a heavy hitter at
// support with error eps, has a count below (support − eps)·N.
func (s *Stream) CheckHeavyHitter(v, support, eps float64) error {
	return checkHeavyHitter(v, s.Count(v), s.N(), support, eps)
}

// Run is a distinct value and its count.
type Run struct {
	Value float64
	Count int64
}

// HeavyHitters returns the values with count ≥ support·N, largest first.
func (s *Stream) HeavyHitters(support float64) []Run {
	var out []Run
	cut := support * float64(s.N())
	for i := 0; i < len(s.sorted); {
		j := i + 1
		for j < len(s.sorted) && s.sorted[j] == s.sorted[i] {
			j++
		}
		if c := s.countBelow(j) - s.countBelow(i); float64(c) >= cut {
			out = append(out, Run{s.sorted[i], c})
		}
		i = j
	}
	slices.SortFunc(out, func(a, b Run) int {
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

// CheckHeavyHitters returns an error unless got (values reported for
// support s) holds every value with count ≥ sN and none with count below
// (s − eps)N.
func (s *Stream) CheckHeavyHitters(support, eps float64, got []float64) error {
	have := make(map[float64]bool, len(got))
	n := float64(s.N())
	for _, v := range got {
		have[v] = true
		if err := s.CheckHeavyHitter(v, support, eps); err != nil {
			return err
		}
	}
	for _, r := range s.HeavyHitters(support) {
		if !have[r.Value] {
			return fmt.Errorf("missing heavy hitter %v with count %d ≥ sN = %v", r.Value, r.Count, support*n)
		}
	}
	return nil
}

// CSVColumns reads a CSV file (gzip-compressed if its name ends in .gz)
// with a header line, and returns each named column's values in file
// order. Fields that do not parse as finite numbers (such as "?") are
// skipped and counted in rejected.
func CSVColumns(path string, columns ...string) (values map[string][]float64, rejected int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	var r io.Reader = bufio.NewReader(f)
	if len(path) > 3 && path[len(path)-3:] == ".gz" {
		gz, err := gzip.NewReader(r)
		if err != nil {
			return nil, 0, fmt.Errorf("read %s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return nil, 0, fmt.Errorf("read %s header: %w", path, err)
	}
	index := make(map[string]int)
	for _, c := range columns {
		i := slices.Index(header, c)
		if i < 0 {
			return nil, 0, fmt.Errorf("read %s: no column %q", path, c)
		}
		index[c] = i
	}
	values = make(map[string][]float64)
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("read %s: %w", path, err)
		}
		for c, i := range index {
			v, err := strconv.ParseFloat(rec[i], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				rejected++
				continue
			}
			values[c] = append(values[c], v)
		}
	}
	return values, rejected, nil
}
