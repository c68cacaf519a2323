package gksketch

import (
	"fmt"
	"math"
	"slices"
)

// Sketch is the exponential histogram of GK summaries that answers
// all-history quantiles over an unbounded stream (SIGMOD 2005, §5.2). Each
// window enters as a bucket of id 1 holding the window's ε/2 sample; two
// buckets of the same id b combine — merge, then Compress — into one of id
// b+1, so a stream of k windows has at most ⌊log2 k⌋+1 buckets, like the
// bits of a binary counter. A query merges the buckets.
//
// # Per-bucket error, for every stream length
//
// The paper gives bucket b the error ε/2 + εb/(⌈log n⌉+1), which needs the
// stream length n in advance. A Sketch instead gives bucket b the relative
// error
//
//	ε_b = ε·(1 − 1/(2b)),   so ε_1 = ε/2 and ε_b < ε for every b.
//
// A window's sample has relative error at most ε/2 (FromSorted with h =
// εW/2 has MaxError ≤ ⌊⌈εW/2⌉/2⌋ ≤ εW/2, and is exact when εW < 2).
// Combining two buckets of id b, each within ε_b of its own count, gives by
// Merge a summary within ε_b of their total count n; Compress(⌊ε_{b+1}·n⌋)
// keeps it within ε_{b+1}. A query merges buckets whose absolute errors
// add: Σ ε_b·n_b ≤ ε·N. The series converges, so no bound on N is needed.
//
// # Space
//
// Compress from error ε_b to ε_{b+1} leaves at most 1/(2(ε_{b+1} − ε_b)) + 2
// = b(b+1)/ε + 2 tuples (see Compress), and a bucket of id b also holds at
// most 2^(b−1) windows' samples. With at most ⌊log2(N/W)⌋+1 buckets a
// Sketch holds O(log³(N/W)/ε) tuples at worst; SpaceBound gives the exact
// figure that the tests hold it to. (Buckets compress far below the bound
// in practice: merged samples' gaps are much smaller than the target.)
type Sketch struct {
	eps     float64
	n       int64
	buckets []bucket  // ascending id
	merged  *Summary  // cache of the merged buckets; nil when stale
	spare   [][]Tuple // tuple buffers of merged-away buckets, for reuse
}

// maxSpare is the most spare tuple buffers a Sketch keeps: a carry in the
// exponential histogram frees two buffers and takes one.
const maxSpare = 4

type bucket struct {
	id int
	s  Summary
}

// NewSketch returns an empty Sketch with error ε in (0, 1).
func NewSketch(eps float64) (*Sketch, error) {
	if !(eps > 0 && eps < 1) {
		return nil, badEpsilon(eps)
	}
	// Small enough to inline, so that an empty sketch made only to be
	// encoded, as a stream's history before its first window is, need not
	// be allocated.
	return &Sketch{eps: eps}, nil
}

func badEpsilon(eps float64) error {
	return fmt.Errorf("gksketch: epsilon %v outside (0, 1)", eps)
}

// Epsilon reports the sketch's ε.
func (k *Sketch) Epsilon() float64 { return k.eps }

// Count reports the number of values added.
func (k *Sketch) Count() int64 { return k.n }

// IsEmpty reports whether no values were added.
func (k *Sketch) IsEmpty() bool { return k.n == 0 }

// Buckets reports the number of buckets.
func (k *Sketch) Buckets() int { return len(k.buckets) }

// Entries reports the number of tuples held.
func (k *Sketch) Entries() int {
	e := 0
	for _, b := range k.buckets {
		e += b.s.Len()
	}
	return e
}

// Bytes reports the memory held by the buckets' tuples and the spare
// tuple buffers kept for reuse.
func (k *Sketch) Bytes() int {
	e := 0
	for _, b := range k.buckets {
		e += b.s.Bytes()
	}
	for _, b := range k.spare {
		e += 24 * cap(b)
	}
	return e
}

// BucketError returns ε_b, the relative error bucket id b is held to.
func BucketError(eps float64, b int) float64 {
	return eps * (1 - 1/(2*float64(b)))
}

// SpaceBound returns the most tuples a Sketch of error eps may hold after
// ⌈n/w⌉ windows of at most w values, n values in all: per bucket id b, the
// smaller of 2^(b−1)·(tuples per window sample) and b(b−1)/ε + 2.
func SpaceBound(eps float64, w, n int64) int64 {
	w = max(w, 1)
	perWindow := min(w, int64(math.Ceil(2/eps))+2)
	windows := (n + w - 1) / w
	var total int64
	for b := 1; windows > 0; b++ {
		grown := perWindow << min(b-1, 40)
		if b > 1 {
			grown = min(grown, int64(float64(b*(b-1))/eps)+2)
		}
		if windows&1 == 1 {
			total += grown
		}
		windows >>= 1
	}
	return total
}

// AddWindow adds the summary of one window of values — normally
// FromSorted(window, ε·len(window)/2) — as a bucket of id 1, then combines
// buckets of equal id. It returns an error, adding nothing, if s is invalid
// or its MaxError exceeds ε/2 of its count. It takes ownership of s: the
// sketch may reuse s's tuples for later buckets.
func (k *Sketch) AddWindow(s Summary) error {
	if s.IsEmpty() {
		return nil
	}
	if err := s.Valid(); err != nil {
		return err
	}
	if e := s.MaxError(); float64(e) > BucketError(k.eps, 1)*float64(s.n) {
		return fmt.Errorf("gksketch: window summary error %d exceeds ε/2 of %d values", e, s.n)
	}
	k.insert(bucket{id: 1, s: s})
	return nil
}

// AddSample adds the summary of one window of n values given by its
// tuples, as AddWindow does, copying the tuples (into a buffer the sketch
// recycles) so that the caller may reuse them.
func (k *Sketch) AddSample(n int64, tuples []Tuple) error {
	s := Summary{n: n, tuples: append(k.takeSpare(len(tuples)), tuples...)}
	if err := k.AddWindow(s); err != nil {
		k.putSpare(s.tuples)
		return err
	}
	return nil
}

// insert adds b and restores the invariant of one bucket per id.
func (k *Sketch) insert(b bucket) {
	k.n += b.s.n
	k.merged = nil
	for {
		i, found := slices.BinarySearchFunc(k.buckets, b.id, func(x bucket, id int) int { return x.id - id })
		if !found {
			k.buckets = slices.Insert(k.buckets, i, b)
			return
		}
		other := k.buckets[i]
		k.buckets = slices.Delete(k.buckets, i, i+1)
		b = k.combine(other, b)
	}
}

// combine merges two buckets of id b into one of id b+1 within ε_{b+1},
// keeping their tuple buffers for reuse.
func (k *Sketch) combine(x, y bucket) bucket {
	dst := k.takeSpare(x.s.Len() + y.s.Len())
	s := Summary{n: x.s.n + y.s.n, tuples: AppendMerge(dst, &x.s, &y.s)}
	id := max(x.id, y.id) + 1
	s.Compress(int64(BucketError(k.eps, id) * float64(s.n)))
	k.putSpare(x.s.tuples)
	k.putSpare(y.s.tuples)
	return bucket{id: id, s: s}
}

// takeSpare returns an empty tuple buffer with room for n tuples: a spare
// one if one is large enough.
func (k *Sketch) takeSpare(n int) []Tuple {
	for i, b := range k.spare {
		if cap(b) >= n {
			k.spare = slices.Delete(k.spare, i, i+1)
			return b[:0]
		}
	}
	return make([]Tuple, 0, n)
}

// putSpare keeps b for reuse, in place of the smallest spare buffer when
// there are maxSpare already.
func (k *Sketch) putSpare(b []Tuple) {
	if cap(b) == 0 {
		return
	}
	if len(k.spare) < maxSpare {
		k.spare = append(k.spare, b)
		return
	}
	small := 0
	for i, s := range k.spare {
		if cap(s) < cap(k.spare[small]) {
			small = i
		}
	}
	if cap(b) > cap(k.spare[small]) {
		k.spare[small] = b
	}
}

// Merge adds o's buckets to k, combining buckets of equal id as AddWindow
// does. Every bound above holds for the result. It fails if ε differs.
func (k *Sketch) Merge(o *Sketch) error {
	if k.eps != o.eps {
		return fmt.Errorf("%w: %v and %v", ErrEpsilonMismatch, k.eps, o.eps)
	}
	for _, b := range o.buckets {
		k.insert(bucket{id: b.id, s: b.s.Copy()})
	}
	return nil
}

// Summary returns the merge of all buckets: a summary of every value added,
// with MaxError ≤ ε·Count. The result is cached until the next change, when
// a new one is built: a returned summary never changes, so callers may
// keep it. The caller must not modify it.
func (k *Sketch) Summary() *Summary {
	if k.merged != nil {
		return k.merged
	}
	ss := make([]*Summary, len(k.buckets))
	for i := range k.buckets {
		ss[i] = &k.buckets[i].s
	}
	m := MergeAll(ss)
	k.merged = &m
	return k.merged
}

// Quantile returns the φ-quantile tuple of everything added; see
// Summary.Quantile.
func (k *Sketch) Quantile(phi float64) Tuple { return k.Summary().Quantile(phi) }

// Rank returns bounds on the number of values ≤ v; see Summary.Rank.
func (k *Sketch) Rank(v float64) (lo, hi int64) { return k.Summary().Rank(v) }

// Reset empties k.
func (k *Sketch) Reset() {
	k.n = 0
	k.buckets = nil
	k.merged = nil
}

// Copy returns a deep copy of k.
func (k *Sketch) Copy() *Sketch {
	c := &Sketch{eps: k.eps, n: k.n, buckets: make([]bucket, len(k.buckets))}
	for i, b := range k.buckets {
		c.buckets[i] = bucket{id: b.id, s: b.s.Copy()}
	}
	return c
}

// Valid checks every bucket's invariants and error bound.
func (k *Sketch) Valid() error {
	var n int64
	for i, b := range k.buckets {
		if err := b.s.Valid(); err != nil {
			return fmt.Errorf("bucket %d: %w", b.id, err)
		}
		if b.id < 1 || (i > 0 && b.id <= k.buckets[i-1].id) {
			return fmt.Errorf("%w: bucket ids out of order", ErrInvalid)
		}
		if float64(b.s.MaxError()) > BucketError(k.eps, b.id)*float64(b.s.n) {
			return fmt.Errorf("%w: bucket %d error %d above ε_b·%d", ErrInvalid, b.id, b.s.MaxError(), b.s.n)
		}
		n += b.s.n
	}
	if n != k.n {
		return fmt.Errorf("%w: buckets hold %d values, count says %d", ErrInvalid, n, k.n)
	}
	return nil
}
