// Package gksketch implements Greenwald–Khanna quantile summaries and the
// exponential histogram of them that streamd keeps for all-history
// quantiles.
//
// A Summary is a sorted list of tuples (v, rmin, rmax): v is an element of
// the summarised multiset and rmin ≤ rank(v) ≤ rmax, ranks counted from 1
// with ties broken by a fixed total order. Summaries are built from sorted
// windows (FromSorted), merged with the rules of Greenwald and Khanna's
// "Power-conserving computation of order-statistics over sensor networks"
// (PODS 2004), and compressed (Compress, by an error target; Prune, to B+1
// entries). The exponential histogram (Sketch) follows §5.2 of Govindaraju,
// Raghuvanshi and Manocha (SIGMOD 2005) with per-bucket errors that stay
// below ε for every stream length.
//
// # Error
//
// A Summary's error is measured, not assumed: with g the largest
// rmax(t[i+1]) − rmin(t[i]) over consecutive tuples, every rank r in [1, n]
// has a tuple within ⌊g/2⌋ of it (MaxError). Queries never mutate a
// summary.
package gksketch

import (
	"cmp"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
)

// Tuple is one entry of a Summary: an element's value and bounds on its
// rank, counted from 1.
type Tuple struct {
	Value      float64
	RMin, RMax int64
}

// Summary is a Greenwald–Khanna quantile summary of n values. The zero
// Summary is empty and ready to use.
//
// Invariants (checked by Valid): tuples are sorted by Value; RMin and RMax
// are non-decreasing; 1 ≤ RMin ≤ RMax ≤ n; the first tuple is the minimum
// with rank exactly 1 and the last the maximum with rank exactly n.
type Summary struct {
	n      int64
	tuples []Tuple
}

// Errors returned by this package.
var (
	// ErrInvalid is wrapped by errors about summaries that break their
	// invariants, such as decoded ones.
	ErrInvalid = errors.New("gksketch: invalid summary")
	// ErrEpsilonMismatch is returned when merging sketches with different ε.
	ErrEpsilonMismatch = errors.New("gksketch: epsilon mismatch")
)

// FromSorted returns the summary of the sorted values x made of the values
// at ranks 1, ⌈h⌉, ⌈2h⌉, …, len(x), each with its exact rank: the sample of
// Greenwald and Khanna's sensor-network construction. Its MaxError is at
// most ⌊⌈h⌉/2⌋; h = εW/2 gives the paper's ε/2 sample (error ≤ εW/4,
// rounded up to an integer). It panics if h < 1 or x is unsorted (checked
// only at the sampled points).
func FromSorted[K float32 | float64](x []K, h float64) Summary {
	return Summary{n: int64(len(x)), tuples: AppendSample(nil, x, h)}
}

// AppendSample appends the tuples of FromSorted(x, h) to dst.
func AppendSample[K float32 | float64](dst []Tuple, x []K, h float64) []Tuple {
	if h < 1 || math.IsNaN(h) {
		panic("gksketch: sample spacing below 1")
	}
	for r := range SampleRanks(int64(len(x)), h) {
		dst = append(dst, Tuple{float64(x[r-1]), r, r})
	}
	return dst
}

// SampleRanks yields the 1-based ranks that FromSorted keeps of w sorted
// values with spacing h ≥ 1, ascending, each once: 1, ⌈h⌉, ⌈2h⌉, …, w.
func SampleRanks(w int64, h float64) iter.Seq[int64] {
	return func(yield func(int64) bool) {
		if w == 0 || !yield(1) {
			return
		}
		last := int64(1)
		for i := 1.0; ; i++ {
			r := int64(math.Ceil(i * h))
			if r >= w {
				break
			}
			if r > last {
				if !yield(r) {
					return
				}
				last = r
			}
		}
		if w > 1 {
			yield(w)
		}
	}
}

// New returns a summary of n values with the given tuples (which it keeps),
// or an error if they break a Summary's invariants.
func New(n int64, tuples []Tuple) (Summary, error) {
	s := Summary{n: n, tuples: tuples}
	if err := s.Valid(); err != nil {
		return Summary{}, err
	}
	return s, nil
}

// Count reports the number of values summarised.
func (s *Summary) Count() int64 { return s.n }

// IsEmpty reports whether s summarises no values.
func (s *Summary) IsEmpty() bool { return s.n == 0 }

// Len reports the number of tuples.
func (s *Summary) Len() int { return len(s.tuples) }

// Tuples returns s's tuples. The caller must not modify them.
func (s *Summary) Tuples() []Tuple { return s.tuples }

// Bytes reports the memory held by s's tuples.
func (s *Summary) Bytes() int { return 24 * cap(s.tuples) }

// Copy returns a deep copy of s.
func (s *Summary) Copy() Summary {
	return Summary{n: s.n, tuples: slices.Clone(s.tuples)}
}

// Reset empties s, keeping its storage.
func (s *Summary) Reset() {
	s.n = 0
	s.tuples = s.tuples[:0]
}

// Min and Max return the smallest and largest value; both are 0 for an
// empty summary.
func (s *Summary) Min() float64 {
	if len(s.tuples) == 0 {
		return 0
	}
	return s.tuples[0].Value
}

// Max returns the largest value summarised.
func (s *Summary) Max() float64 {
	if len(s.tuples) == 0 {
		return 0
	}
	return s.tuples[len(s.tuples)-1].Value
}

// MaxGap returns the largest rmax(t[i+1]) − rmin(t[i]) over consecutive
// tuples: 0 for fewer than two tuples, 1 for an exact summary.
func (s *Summary) MaxGap() int64 {
	var g int64
	for i := 1; i < len(s.tuples); i++ {
		g = max(g, s.tuples[i].RMax-s.tuples[i-1].RMin)
	}
	return g
}

// MaxError returns the largest rank error of a quantile answer: for every
// rank r in [1, n], Query(r) returns a tuple whose rank bounds lie within
// MaxError of r. It is ⌊MaxGap/2⌋.
//
// Proof: let e = ⌊g/2⌋, so g ≤ 2e+1. Take the first tuple j with
// RMax > r+e. If there is none, the last tuple (rank exactly n ≥ r) has
// RMax ≤ r+e and RMin = n ≥ r. Otherwise j > 0, since the first tuple has
// RMax = 1 ≤ r+e, and tuple i = j−1 has RMax ≤ r+e by the choice of j and
// RMin ≥ RMax(j) − g ≥ r+e+1 − (2e+1) = r−e.
func (s *Summary) MaxError() int64 { return s.MaxGap() / 2 }

// Valid reports whether s keeps a Summary's invariants.
func (s *Summary) Valid() error {
	if s.n < 0 {
		return fmt.Errorf("%w: count %d", ErrInvalid, s.n)
	}
	if s.n == 0 {
		if len(s.tuples) != 0 {
			return fmt.Errorf("%w: %d tuples for no values", ErrInvalid, len(s.tuples))
		}
		return nil
	}
	if int64(len(s.tuples)) > s.n || len(s.tuples) == 0 {
		return fmt.Errorf("%w: %d tuples for %d values", ErrInvalid, len(s.tuples), s.n)
	}
	first, last := s.tuples[0], s.tuples[len(s.tuples)-1]
	if first.RMin != 1 || first.RMax != 1 {
		return fmt.Errorf("%w: first tuple ranks [%d, %d], want [1, 1]", ErrInvalid, first.RMin, first.RMax)
	}
	if last.RMin != s.n || last.RMax != s.n {
		return fmt.Errorf("%w: last tuple ranks [%d, %d], want [%d, %d]", ErrInvalid, last.RMin, last.RMax, s.n, s.n)
	}
	for i, t := range s.tuples {
		if math.IsNaN(t.Value) {
			return fmt.Errorf("%w: tuple %d is NaN", ErrInvalid, i)
		}
		if t.RMin < 1 || t.RMin > t.RMax || t.RMax > s.n {
			return fmt.Errorf("%w: tuple %d ranks [%d, %d] of %d", ErrInvalid, i, t.RMin, t.RMax, s.n)
		}
		if i > 0 {
			p := s.tuples[i-1]
			if t.Value < p.Value || t.RMin < p.RMin || t.RMax < p.RMax {
				return fmt.Errorf("%w: tuple %d out of order", ErrInvalid, i)
			}
		}
	}
	return nil
}

// Query returns the tuple whose rank bounds are closest to rank r (clamped
// to [1, n]): the one minimising max(r − RMin, RMax − r). Its bounds lie
// within MaxError of r. It costs O(log Len). Query on an empty summary
// returns the zero Tuple.
func (s *Summary) Query(r int64) Tuple {
	if len(s.tuples) == 0 {
		return Tuple{}
	}
	return s.tuples[s.queryIndex(r)]
}

// queryIndex returns the index of Query(r)'s tuple; s must not be empty.
func (s *Summary) queryIndex(r int64) int {
	t := s.tuples
	r = min(max(r, 1), s.n)
	// RMin+RMax is non-decreasing, so max(r−RMin, RMax−r) falls then rises
	// around the first tuple with RMin+RMax ≥ 2r.
	i, _ := slices.BinarySearchFunc(t, 2*r, func(x Tuple, target int64) int {
		return cmp.Compare(x.RMin+x.RMax, target)
	})
	dev := func(x Tuple) int64 { return max(r-x.RMin, x.RMax-r) }
	if i == len(t) || (i > 0 && dev(t[i-1]) <= dev(t[i])) {
		i--
	}
	return i
}

// Quantile returns the tuple answering the φ-quantile: Query(⌈φn⌉), φ
// clamped to [0, 1].
func (s *Summary) Quantile(phi float64) Tuple {
	return s.Query(TargetRank(phi, s.n))
}

// TargetRank returns ⌈φn⌉ clamped to [1, n], the rank of the φ-quantile of
// n values.
func TargetRank(phi float64, n int64) int64 {
	r := int64(math.Ceil(phi * float64(n)))
	return min(max(r, 1), n)
}

// Rank returns bounds on the number of summarised values ≤ v:
// lo ≤ #{x ≤ v} ≤ hi, with hi − lo ≤ MaxGap − 1, so the midpoint is within
// MaxError of the true count.
func (s *Summary) Rank(v float64) (lo, hi int64) {
	t := s.tuples
	// j is the first tuple with Value > v.
	j, _ := slices.BinarySearchFunc(t, v, func(x Tuple, v float64) int {
		if x.Value <= v {
			return -1
		}
		return 1
	})
	if j > 0 {
		lo = t[j-1].RMin
	}
	hi = s.n
	if j < len(t) {
		hi = t[j].RMax - 1
	}
	return lo, hi
}

// Merge returns the summary of the union of a's and b's values, by the
// rules of Greenwald and Khanna (PODS 2004): a tuple x of a takes
// rmin = rmin_a(x) + rmin_b(y) and rmax = rmax_a(x) + rmax_b(z) − 1, where y
// is the largest tuple of b before x and z the smallest after it (rmin_b = 0
// without y, rmax_b − 1 = |b| without z), and likewise for b's tuples. Ties
// put a's values before b's. Its MaxGap is at most
// a.MaxGap + b.MaxGap − 1: absolute errors add, so relative errors do not
// grow. Merge costs O(a.Len + b.Len) and does not modify a or b.
//
// Proof of the gap bound: take consecutive merged tuples p, q. If both come
// from a, no tuple of b falls between them, so y of p and z of q are
// consecutive in b and rmax(q) − rmin(p) = [rmax_a(q) − rmin_a(p)] +
// [rmax_b(z) − rmin_b(y)] − 1. If p comes from a and q from b, z of q is the
// successor of p in a and y of p the predecessor of q in b, giving the same
// sum. Without y, rmin_b is 0 and z is b's first tuple, of rmax 1; without
// z, rmax_b − 1 counts as |b| and y is b's last tuple, of rmin |b|: either
// way b's term is 0.
func Merge(a, b *Summary) Summary {
	return Summary{n: a.n + b.n, tuples: AppendMerge(nil, a, b)}
}

// MergeAll returns the merge of every summary of ss, the same as repeated
// Merges in order: a tuple x of one summary takes rmin(x) plus, for each
// other summary, the rmin of its largest tuple before x (0 if none), and
// rmax(x) plus the rmax − 1 of its smallest tuple after x (its count if
// none); ties go to the earlier summary. Absolute errors add, so its
// MaxError is at most the sum of theirs. It makes one k-way pass, writing
// each tuple once: O(k·Σ Len) comparisons for k summaries. It does not
// modify ss.
func MergeAll(ss []*Summary) Summary {
	var in []*Summary
	var m Summary
	total := 0
	for _, s := range ss {
		if len(s.tuples) > 0 {
			in = append(in, s)
			total += len(s.tuples)
			m.n += s.n
		}
	}
	m.tuples = make([]Tuple, 0, total)
	// For each summary: its next tuple, that tuple's value (+Inf past the
	// end), and its terms for a tuple of another summary — pred, the rmin
	// of its tuple before (0 if none), and succ, the rmax − 1 of its next
	// tuple (its count past the end); sumMin and sumMax add them up.
	next := make([]int, len(in))
	head := make([]float64, len(in))
	pred := make([]int64, len(in))
	succ := make([]int64, len(in))
	var sumMin, sumMax int64
	for j, s := range in {
		head[j] = s.tuples[0].Value
		succ[j] = s.tuples[0].RMax - 1
		sumMax += succ[j]
	}
	for range total {
		i := -1
		for j, h := range head {
			if next[j] < len(in[j].tuples) && (i < 0 || h < head[i]) {
				i = j
			}
		}
		t := in[i].tuples
		x := t[next[i]]
		x.RMin += sumMin - pred[i]
		x.RMax += sumMax - succ[i]
		m.tuples = append(m.tuples, x)
		sumMin -= pred[i]
		sumMax -= succ[i]
		pred[i] = t[next[i]].RMin
		next[i]++
		if next[i] < len(t) {
			head[i], succ[i] = t[next[i]].Value, t[next[i]].RMax-1
		} else {
			head[i], succ[i] = math.Inf(1), in[i].n
		}
		sumMin += pred[i]
		sumMax += succ[i]
	}
	return m
}

// AppendMerge appends the tuples of Merge(a, b) to dst.
func AppendMerge(dst []Tuple, a, b *Summary) []Tuple {
	ta, tb := a.tuples, b.tuples
	dst = slices.Grow(dst, len(ta)+len(tb))
	i, j := 0, 0
	for i < len(ta) || j < len(tb) {
		if j == len(tb) || (i < len(ta) && ta[i].Value <= tb[j].Value) {
			x := ta[i]
			if j > 0 {
				x.RMin += tb[j-1].RMin
			}
			if j < len(tb) {
				x.RMax += tb[j].RMax - 1
			} else {
				x.RMax += b.n
			}
			dst = append(dst, x)
			i++
		} else {
			x := tb[j]
			if i > 0 {
				x.RMin += ta[i-1].RMin
			}
			if i < len(ta) {
				x.RMax += ta[i].RMax - 1
			} else {
				x.RMax += a.n
			}
			dst = append(dst, x)
			j++
		}
	}
	return dst
}

// Compress drops tuples, in place, keeping the fewest that hold MaxError
// at or below maxErr: greedily, each kept tuple is followed by the farthest
// one whose RMax − the kept RMin ≤ 2·maxErr+1. The first and last tuples
// stay. If s's MaxError already exceeds maxErr, the gaps that were too wide
// stay as they are and no others grow past the target.
//
// Size: if s.MaxGap ≤ 2e and maxErr = e + d, every kept tuple but the last
// two advances RMin by more than 2d, so at most n/(2d) + 2 tuples remain —
// the bound that sizes the exponential histogram's buckets.
func (s *Summary) Compress(maxErr int64) {
	t := s.tuples
	if len(t) <= 2 {
		return
	}
	limit := 2*maxErr + 1
	kept := 1
	prev := t[0]
	for k := 1; k < len(t)-1; k++ {
		if t[k+1].RMax-prev.RMin > limit {
			prev = t[k]
			t[kept] = prev
			kept++
		}
	}
	t[kept] = t[len(t)-1]
	s.tuples = t[:kept+1]
}

// Prune returns a summary of at most b+1 tuples: the answers to the ranks
// 1, ⌈n/b⌉, ⌈2n/b⌉, …, n. Its MaxError is at most s.MaxError + ⌈n/(2b)⌉, as
// in Greenwald and Khanna's PRUNE. It panics if b < 1.
func (s *Summary) Prune(b int) Summary {
	if b < 1 {
		panic("gksketch: Prune with b < 1")
	}
	if len(s.tuples) <= b+1 {
		return s.Copy()
	}
	out := make([]Tuple, 0, b+1)
	last := -1
	for i := range b + 1 {
		r := int64(math.Ceil(float64(i) * float64(s.n) / float64(b)))
		if k := s.queryIndex(r); k > last {
			out = append(out, s.tuples[k])
			last = k
		}
	}
	// Ranks 1 and n are answered by the exact minimum and maximum: Query(1)
	// picks the first tuple (deviation 0) and Query(n) the last.
	return Summary{n: s.n, tuples: out}
}
