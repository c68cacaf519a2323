// Package corrsum summarises an unbounded stream of pairs (x, y) to answer
// correlated sums — the count and the sum of y over the pairs with x ≤ t
// or x ≥ t, for a constant t or a t given by an aggregate of x (a
// quantile, the minimum, maximum or mean, times a factor) — with bounds
// that always bracket the exact answer.
//
// Correlated sums, SUM(g(y) : x ≤ f(AGG(x))), are Ananthakrishna, Das,
// Gehrke, Korn, Muthukrishnan and Srivastava's "Efficient approximation of
// correlated sums on data streams" (TKDE 2003), who answer them with
// variants of Greenwald and Khanna's quantile summary; Govindaraju,
// Raghuvanshi and Manocha (SIGMOD 2005, §5.4) build such summaries from
// sorted windows. A Summary is streamd/gksketch's exponential histogram
// with tuples that carry, besides bounds on their rank, bounds on the
// prefix sums of y⁺ = max(y, 0) and y⁻ = max(−y, 0) at their rank: both
// prefix sums are non-decreasing in rank, like the rank itself, so
// Greenwald and Khanna's merge rules and error analysis hold for each.
//
// # Guarantee
//
// For N pairs added, A = Σ|y|, and every threshold t, AtMost(t) and
// AtLeast(t) return bounds [CountLo, CountHi] on the number of pairs with
// x ≤ t (x ≥ t) and [SumLo, SumHi] on the sum of their y such that
//
//	CountLo ≤ count ≤ CountHi,  CountHi − CountLo ≤ ε·N,
//	SumLo ≤ sum ≤ SumHi,        SumHi − SumLo ≤ ε·A + ρ,
//
// where ρ is the floating-point rounding the bounds absorb: none while
// every running sum of y⁺ and y⁻ within a window is exact (integer y, for
// instance, whose sums stay below 2^53), at most about W·2^-53·A for
// windows of W pairs otherwise, plus a few ulps of A. A quantile
// answer's rank is within ⌊(ε·N + 1)/2⌋ of ⌈φN⌉. The bounds hold for
// every arrival order and any signs of y; the widths follow from the
// invariant that in every bucket of id b, holding n pairs whose Σ|y| is
// A_b, the gaps between consecutive tuples (see mergeParts) are at most
// ε_b·n pairs and ε_b·A_b + ρ in Σ|y|, with ε_b = ε·(1 − 1/(2b)) < ε; a
// query merges the buckets, whose gaps add to at most ε·N and ε·A.
//
// # Space
//
// A window's sample holds fewer than 4/ε + 2 tuples; a bucket of id b ≥ 2
// at most 4b(b−1)/ε + 4 (compress from ε_{b−1} to ε_b) and at most
// 2^(b−1) windows' samples. With at most ⌊log2(N/W)⌋ + 1 buckets a
// Summary holds O(log³(N/W)/ε) tuples of 64 bytes at worst, twice the
// bound of a gksketch.Sketch; SpaceBound gives the exact figure.
//
// # Precision
//
// x and y are float64: the summary keeps the x of pairs it samples, and
// sums in float64. A daemon that stores values as float32 widens them
// before adding; there is no float32 variant.
package corrsum

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"streamd/internal/radix"
)

// Errors returned by this package.
var (
	// ErrInput is wrapped by errors about a window that cannot be added:
	// lengths that differ, x not ascending, a NaN or infinite x or y, or
	// sums of |y| that overflow.
	ErrInput = errors.New("corrsum: bad window")
	// ErrInvalid is wrapped by errors about summaries that break their
	// invariants, such as decoded ones.
	ErrInvalid = errors.New("corrsum: invalid summary")
	// ErrEpsilonMismatch is returned when merging summaries of different ε.
	ErrEpsilonMismatch = errors.New("corrsum: epsilon mismatch")
	// ErrEmpty is returned by Correlated on a summary of no pairs.
	ErrEmpty = errors.New("corrsum: no pairs")
)

// Summary is an all-history summary of pairs (x, y) for correlated sums;
// see the package documentation for its guarantee. Create it with New.
// A Summary is not safe for concurrent use, queries included: they cache
// the merge of the buckets.
type Summary struct {
	eps        float64
	n          int64
	sumX, sumY float64
	sumAbs     float64
	minX, maxX float64
	parts      []part    // ascending id
	merged     *part     // cache of the merged parts; nil when stale
	spare      [][]tuple // tuple buffers of merged-away buckets, for reuse
	scratch    []uint64  // AddWindow's sort buffer
}

// New returns an empty Summary with error ε in (0, 1).
func New(eps float64) (*Summary, error) {
	if !(eps > 0 && eps < 1) {
		return nil, fmt.Errorf("corrsum: epsilon %v outside (0, 1)", eps)
	}
	return &Summary{eps: eps}, nil
}

// bucketError returns ε_b = ε·(1 − 1/(2b)), the relative error of bucket
// id b: ε/2 for a window, below ε for every b.
func bucketError(eps float64, b int) float64 {
	return eps * (1 - 1/(2*float64(b)))
}

// Epsilon reports the summary's ε.
func (s *Summary) Epsilon() float64 { return s.eps }

// Count reports the number of pairs added.
func (s *Summary) Count() int64 { return s.n }

// IsEmpty reports whether no pairs were added.
func (s *Summary) IsEmpty() bool { return s.n == 0 }

// Buckets reports the number of buckets of the exponential histogram.
func (s *Summary) Buckets() int { return len(s.parts) }

// Entries reports the number of tuples held in the buckets.
func (s *Summary) Entries() int {
	e := 0
	for _, p := range s.parts {
		e += len(p.t)
	}
	return e
}

// Bytes reports the memory held by the buckets' tuples, the cached merge,
// the spare tuple buffers kept for reuse and the sort buffer of
// AddWindow.
func (s *Summary) Bytes() int {
	const size = 64
	e := 8 * cap(s.scratch)
	for _, p := range s.parts {
		e += size * cap(p.t)
	}
	if s.merged != nil {
		e += size * cap(s.merged.t)
	}
	for _, b := range s.spare {
		e += size * cap(b)
	}
	return e
}

// windowBound returns the most tuples of a window's sample for error eps.
func windowBound(eps float64) int64 { return 2*int64(math.Ceil(2/eps)) + 3 }

// SpaceBound returns the most tuples a Summary of error eps may hold after
// ⌈n/w⌉ windows of at most w pairs, n pairs in all: per bucket id b, the
// smaller of 2^(b−1)·(tuples per window) and 4b(b−1)/ε + 4, with
// 2⌈2/ε⌉ + 3 tuples per window at most (and at most w).
func SpaceBound(eps float64, w, n int64) int64 {
	w = max(w, 1)
	perWindow := min(w, windowBound(eps))
	windows := (n + w - 1) / w
	var total int64
	for b := 1; windows > 0; b++ {
		grown := perWindow << min(b-1, 40)
		if b > 1 {
			grown = min(grown, int64(math.Ceil(float64(4*b*(b-1))/eps))+4)
		}
		if windows&1 == 1 {
			total += grown
		}
		windows >>= 1
	}
	return total
}

// AddSorted adds one window of pairs (x[i], y[i]) whose x are ascending.
// It returns an error wrapping ErrInput, adding nothing, if the lengths
// differ, x is not ascending, any x or y is NaN or infinite, the window
// holds more than 2^30 pairs, or the sum of |y| would overflow. It reads
// every pair once to check it and once to sample it, and keeps fewer than
// 4/ε + 2 of them; then it combines buckets of equal id (merge and
// compress, O(size) each). It does not keep x or y.
func (s *Summary) AddSorted(x, y []float64) error {
	abs, sx, sy, err := checkWindow(x, y)
	if err != nil {
		return err
	}
	if len(x) == 0 {
		return nil
	}
	if math.IsInf(s.sumAbs+abs, 0) || math.IsInf(s.sumX+sx, 0) {
		return fmt.Errorf("%w: sum of |y| or of x overflows", ErrInput)
	}
	dst := s.takeSpare(int(min(int64(len(x)), windowBound(s.eps))))
	p := part{id: 1, n: int64(len(x)), t: appendSample(dst, x, y, abs, s.eps)}
	if s.n == 0 {
		s.minX, s.maxX = x[0], x[len(x)-1]
	} else {
		s.minX, s.maxX = min(s.minX, x[0]), max(s.maxX, x[len(x)-1])
	}
	s.sumX += sx
	s.sumY += sy
	s.sumAbs += abs
	s.insert(p)
	return nil
}

// AddWindow sorts the pairs (x[i], y[i]) by x in place, moving each y with
// its x (radix sort, O(len(x)), keeping a buffer of 4·len(x) words for
// the next call), then adds them as AddSorted does. On an error (lengths
// that differ, a NaN or infinite value) nothing is added, and x and y may
// have been permuted.
func (s *Summary) AddWindow(x, y []float64) error {
	if len(x) != len(y) {
		return fmt.Errorf("%w: %d x and %d y", ErrInput, len(x), len(y))
	}
	for i, v := range x {
		if v-v != 0 {
			return fmt.Errorf("%w: pair %d (%v, %v) not finite", ErrInput, i, v, y[i])
		}
	}
	s.scratch = radix.Pairs64(x, y, s.scratch)
	return s.AddSorted(x, y)
}

// insert adds p, counted in s.n, and combines buckets of equal id: two
// buckets of id b merge (mergeParts: gaps ≤ ε_b·n and ε_b·A_b, as their
// absolute errors add) and compress to the gaps of ε_{b+1}, making one of
// id b+1.
func (s *Summary) insert(p part) {
	s.n += p.n
	s.merged = nil
	for {
		i, found := slices.BinarySearchFunc(s.parts, p.id, func(x part, id int) int { return x.id - id })
		if !found {
			s.parts = slices.Insert(s.parts, i, p)
			return
		}
		o := s.parts[i]
		s.parts = slices.Delete(s.parts, i, i+1)
		m := part{id: p.id + 1, n: o.n + p.n}
		m.t = mergeParts(s.takeSpare(len(o.t)+len(p.t)), &o, &p)
		eb := bucketError(s.eps, m.id)
		m.t = compress(m.t, eb*float64(m.n), eb*m.absLo())
		s.putSpare(o.t)
		s.putSpare(p.t)
		p = m
	}
}

// maxSpare is the most spare tuple buffers a Summary keeps: a carry in
// the exponential histogram frees two buffers and takes one.
const maxSpare = 4

// takeSpare returns an empty tuple buffer with room for n tuples: a spare
// one if one is large enough.
func (s *Summary) takeSpare(n int) []tuple {
	for i, b := range s.spare {
		if cap(b) >= n {
			s.spare = slices.Delete(s.spare, i, i+1)
			return b[:0]
		}
	}
	return make([]tuple, 0, n)
}

// putSpare keeps b for reuse, in place of the smallest spare buffer when
// there are maxSpare already.
func (s *Summary) putSpare(b []tuple) {
	if cap(b) == 0 {
		return
	}
	if len(s.spare) < maxSpare {
		s.spare = append(s.spare, b)
		return
	}
	small := 0
	for i, t := range s.spare {
		if cap(t) < cap(s.spare[small]) {
			small = i
		}
	}
	if cap(b) > cap(s.spare[small]) {
		s.spare[small] = b
	}
}

// Merge adds o's pairs to s, as buckets of the ids they have in o, then
// combines buckets of equal id; o may be s. The guarantee holds for the
// result. It fails if ε differs, or if the sum of |y| or of x would
// overflow.
func (s *Summary) Merge(o *Summary) error {
	if s.eps != o.eps {
		return fmt.Errorf("%w: %v and %v", ErrEpsilonMismatch, s.eps, o.eps)
	}
	if o.n == 0 {
		return nil
	}
	if o == s {
		o = s.Copy()
	}
	if math.IsInf(s.sumAbs+o.sumAbs, 0) || math.IsInf(s.sumX+o.sumX, 0) {
		return fmt.Errorf("%w: sum of |y| overflows", ErrInput)
	}
	if s.n == 0 {
		s.minX, s.maxX = o.minX, o.maxX
	} else {
		s.minX, s.maxX = min(s.minX, o.minX), max(s.maxX, o.maxX)
	}
	s.sumX += o.sumX
	s.sumY += o.sumY
	s.sumAbs += o.sumAbs
	for _, p := range o.parts {
		s.insert(part{id: p.id, n: p.n, t: slices.Clone(p.t)})
	}
	return nil
}

// all returns the merge of the buckets, cached until the next change;
// s must not be empty.
func (s *Summary) all() *part {
	if s.merged != nil {
		return s.merged
	}
	m := s.parts[0]
	m.t = slices.Clone(m.t)
	for i := 1; i < len(s.parts); i++ {
		p := &s.parts[i]
		m = part{n: m.n + p.n, t: mergeParts(make([]tuple, 0, len(m.t)+len(p.t)), &m, p)}
	}
	s.merged = &m
	return s.merged
}

// Totals holds the exact count and the running sums of every pair added.
// The sums are float64 sums in arrival order, rounded as such; AtMost(MaxX)
// bounds the exact Σy.
type Totals struct {
	Count      int64
	SumX       float64
	SumY       float64
	SumAbsY    float64
	MinX, MaxX float64
}

// Totals returns the totals of the pairs added; all zero when empty.
func (s *Summary) Totals() Totals {
	return Totals{Count: s.n, SumX: s.sumX, SumY: s.sumY, SumAbsY: s.sumAbs, MinX: s.minX, MaxX: s.maxX}
}

// Bounds holds the answer for one threshold: the number of pairs on its
// side is within [CountLo, CountHi] and the sum of their y within
// [SumLo, SumHi].
type Bounds struct {
	Threshold        float64
	CountLo, CountHi int64
	SumLo, SumHi     float64
}

// below returns bounds on the count and the sums of y⁺ and y⁻ of the
// pairs whose x is below t — x ≤ t, or x < t when strict — from the last
// tuple i below and the first one j not below: rank(i) ≤ count < rank(j).
func (s *Summary) below(t float64, strict bool) (cLo, cHi int64, pLo, pHi, qLo, qHi float64) {
	m := s.all()
	ts := m.t
	j, _ := slices.BinarySearchFunc(ts, t, func(u tuple, t float64) int {
		if u.x < t || (!strict && u.x == t) {
			return -1
		}
		return 1
	})
	if j > 0 {
		i := ts[j-1]
		cLo, pLo, qLo = i.rmin, i.pmin, i.qmin
	}
	if j < len(ts) {
		u := ts[j]
		cHi, pHi, qHi = u.rmax-1, addUp(u.pmax, -pos(u.y)), addUp(u.qmax, -neg(u.y))
	} else {
		l := m.lastT()
		cHi, pHi, qHi = m.n, l.pmax, l.qmax
	}
	return cLo, cHi, pLo, pHi, qLo, qHi
}

// AtMost returns bounds on the number of pairs with x ≤ t and the sum of
// their y, within the widths of the package's guarantee. It costs
// O(log Entries) once the buckets' merge is cached (O(Entries·Buckets)
// after a change). On an empty summary, or for a NaN t, which no x is
// below or above, every bound is 0.
func (s *Summary) AtMost(t float64) Bounds {
	b := Bounds{Threshold: t}
	if s.n == 0 || math.IsNaN(t) {
		return b
	}
	var pLo, pHi, qLo, qHi float64
	b.CountLo, b.CountHi, pLo, pHi, qLo, qHi = s.below(t, false)
	b.SumLo, b.SumHi = addDown(pLo, -qHi), addUp(pHi, -qLo)
	return b
}

// AtLeast returns bounds on the number of pairs with x ≥ t and the sum of
// their y: the totals less the bounds for x < t, found as AtMost's, with
// the same widths and costs.
func (s *Summary) AtLeast(t float64) Bounds {
	b := Bounds{Threshold: t}
	if s.n == 0 || math.IsNaN(t) {
		return b
	}
	cLo, cHi, pLo, pHi, qLo, qHi := s.below(t, true)
	l := s.all().lastT()
	b.CountLo, b.CountHi = s.n-cHi, s.n-cLo
	pgLo, pgHi := addDown(l.pmin, -pHi), addUp(l.pmax, -pLo)
	qgLo, qgHi := addDown(l.qmin, -qHi), addUp(l.qmax, -qLo)
	b.SumLo, b.SumHi = addDown(pgLo, -qgHi), addUp(pgHi, -qgLo)
	return b
}

// Agg names the aggregate of x that a Query's threshold is made of.
type Agg uint8

// The aggregates.
const (
	AggQuantile Agg = iota + 1 // the φ-quantile of x, from the summary
	AggMin                     // the smallest x, exact
	AggMax                     // the largest x, exact
	AggMean                    // Σx/N, from the exact count and the running sum
)

// String returns the aggregate's name.
func (a Agg) String() string {
	switch a {
	case AggQuantile:
		return "quantile"
	case AggMin:
		return "min"
	case AggMax:
		return "max"
	case AggMean:
		return "mean"
	}
	return fmt.Sprintf("Agg(%d)", uint8(a))
}

// Query is a correlated-sum query: the threshold t = Factor·AGG(x), with
// Phi the quantile's φ in [0, 1] for AggQuantile (ignored otherwise).
// Factor is used as given: 1 takes the aggregate itself.
type Query struct {
	Agg    Agg
	Phi    float64
	Factor float64
}

// Answer is the answer to a Query. Aggregate is AGG(x) and
// [AggRankLo, AggRankHi] bounds its rank: some r in it has
// #{x < Aggregate} ≤ r ≤ #{x ≤ Aggregate} (for a quantile, the rank of
// the element returned; for the minimum and maximum, 1 and N; for the
// mean, AtMost(mean)'s count bounds). Threshold = Factor·Aggregate, and
// AtMost and AtLeast are the bounds for that concrete threshold, exactly
// as the methods of those names return them.
type Answer struct {
	Query                Query
	Aggregate            float64
	AggRankLo, AggRankHi int64
	Threshold            float64
	AtMost, AtLeast      Bounds
}

// Correlated answers q. It returns ErrEmpty on an empty summary, and an
// error for an unknown aggregate, a φ outside [0, 1], or a threshold that
// is not finite.
func (s *Summary) Correlated(q Query) (Answer, error) {
	a := Answer{Query: q}
	if s.n == 0 {
		return a, ErrEmpty
	}
	switch q.Agg {
	case AggQuantile:
		if !(q.Phi >= 0 && q.Phi <= 1) {
			return a, fmt.Errorf("corrsum: quantile φ %v outside [0, 1]", q.Phi)
		}
		u := s.quantile(q.Phi)
		a.Aggregate, a.AggRankLo, a.AggRankHi = u.x, u.rmin, u.rmax
	case AggMin:
		a.Aggregate, a.AggRankLo, a.AggRankHi = s.minX, 1, 1
	case AggMax:
		a.Aggregate, a.AggRankLo, a.AggRankHi = s.maxX, s.n, s.n
	case AggMean:
		a.Aggregate = s.sumX / float64(s.n)
		b := s.AtMost(a.Aggregate)
		a.AggRankLo, a.AggRankHi = b.CountLo, b.CountHi
	default:
		return a, fmt.Errorf("corrsum: unknown aggregate %v", q.Agg)
	}
	a.Threshold = q.Factor * a.Aggregate
	if math.IsNaN(a.Threshold) || math.IsInf(a.Threshold, 0) {
		return a, fmt.Errorf("corrsum: threshold %v·%v not finite", q.Factor, a.Aggregate)
	}
	a.AtMost, a.AtLeast = s.AtMost(a.Threshold), s.AtLeast(a.Threshold)
	return a, nil
}

// quantile returns the tuple whose rank bounds are closest to ⌈φN⌉ (1
// for φ = 0): the one minimising max(r − rmin, rmax − r), within
// ⌊(ε·N + 1)/2⌋ of r since every count gap is at most ε·N.
func (s *Summary) quantile(phi float64) tuple {
	m := s.all()
	t := m.t
	r := min(max(int64(math.Ceil(phi*float64(m.n))), 1), m.n)
	// rmin+rmax is non-decreasing, so max(r−rmin, rmax−r) falls then rises
	// around the first tuple with rmin+rmax ≥ 2r.
	i, _ := slices.BinarySearchFunc(t, 2*r, func(u tuple, target int64) int {
		return cmp.Compare(u.rmin+u.rmax, target)
	})
	dev := func(u tuple) int64 { return max(r-u.rmin, u.rmax-r) }
	if i == len(t) || (i > 0 && dev(t[i-1]) <= dev(t[i])) {
		i--
	}
	return t[i]
}

// Reset empties s, keeping its sort buffer.
func (s *Summary) Reset() {
	*s = Summary{eps: s.eps, scratch: s.scratch, spare: s.spare}
}

// Copy returns a deep copy of s, without its caches.
func (s *Summary) Copy() *Summary {
	c := *s
	c.merged, c.scratch, c.spare = nil, nil, nil
	c.parts = make([]part, len(s.parts))
	for i, p := range s.parts {
		c.parts[i] = part{id: p.id, n: p.n, t: slices.Clone(p.t)}
	}
	return &c
}

// validSlack is the rounding allowed, relative to a bucket's Σ|y|, above
// its gap bound in Σ|y|: the windows' sums of at most 2^30 terms.
const validSlack = 0x1p-20

// Valid checks every bucket's invariants and gap bounds and the count.
func (s *Summary) Valid() error {
	var n int64
	for i := range s.parts {
		p := &s.parts[i]
		if p.id < 1 || (i > 0 && p.id <= s.parts[i-1].id) {
			return fmt.Errorf("%w: bucket ids out of order", ErrInvalid)
		}
		if err := p.valid(); err != nil {
			return fmt.Errorf("bucket %d: %w", p.id, err)
		}
		eb := bucketError(s.eps, p.id)
		l := p.lastT()
		absHi := l.pmax + l.qmax
		for k := 1; k < len(p.t); k++ {
			if float64(gapCount(p.t[k-1], p.t[k])) > eb*float64(p.n) {
				return fmt.Errorf("%w: bucket %d count gap above ε_b·%d", ErrInvalid, p.id, p.n)
			}
			if gapAbs(p.t[k-1], p.t[k]) > (eb+validSlack)*absHi {
				return fmt.Errorf("%w: bucket %d sum gap above ε_b·Σ|y|", ErrInvalid, p.id)
			}
		}
		n += p.n
		if n < 0 || n > maxCount {
			return fmt.Errorf("%w: count overflows", ErrInvalid)
		}
	}
	if n != s.n {
		return fmt.Errorf("%w: buckets hold %d pairs, count says %d", ErrInvalid, n, s.n)
	}
	return nil
}
