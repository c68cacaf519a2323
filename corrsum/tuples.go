package corrsum

import (
	"fmt"
	"math"
)

// tuple is one kept element of a bucket: its x and y, bounds on its rank
// (counted from 1 in the bucket's total order: by x, ties in a fixed
// order), and bounds on P and Q at its rank, where P(r) is the sum of
// y⁺ = max(y, 0) and Q(r) the sum of y⁻ = max(−y, 0) over the elements
// of rank ≤ r, itself included. Count, P and Q are the prefix sums of the
// weights 1, y⁺ and y⁻ over the order, so the same merge rules hold for
// all three (see mergeParts).
type tuple struct {
	x, y       float64
	rmin, rmax int64
	pmin, pmax float64
	qmin, qmax float64
}

// pos and neg return y⁺ and y⁻.
func pos(y float64) float64 { return max(y, 0) }
func neg(y float64) float64 { return max(-y, 0) }

// addDown and addUp return a+b rounded down and up: the sum rounded to
// nearest, moved one step when the rounding error (found exactly by
// Knuth's TwoSum) went the wrong way. Exact sums stay exact, so the bounds
// stay bounds whatever the rounding and widen only where it happened.
func addDown(a, b float64) float64 {
	s := a + b
	if sumError(a, b, s) < 0 {
		return math.Nextafter(s, math.Inf(-1))
	}
	return s
}

func addUp(a, b float64) float64 {
	s := a + b
	if sumError(a, b, s) > 0 {
		return math.Nextafter(s, math.Inf(1))
	}
	return s
}

// sumError returns a + b − s exactly for s = a + b rounded (TwoSum).
func sumError(a, b, s float64) float64 {
	bb := s - a
	return (a - (s - bb)) + (b - bb)
}

// errMargin widens a sum of rounding errors, itself computed in float64
// (k terms, relative error below k·2^-53 ≤ 2^-23 for k ≤ 2^30), to a
// bound on the exact sum of them.
const errMargin = 1 + 0x1p-20

// maxWindow is the most pairs one window may hold: it keeps the rounding
// of the window's sums below 2^-23 of its Σ|y|.
const maxWindow = 1 << 30

// part is one bucket of the exponential histogram: the tuples of n
// elements, within its id's error.
type part struct {
	id int
	n  int64
	t  []tuple
}

// lastT returns p's last tuple, the maximum, whose bounds are those of the
// totals; p must not be empty.
func (p *part) lastT() tuple { return p.t[len(p.t)-1] }

// absLo returns a lower bound on the sum of |y| over p's elements.
func (p *part) absLo() float64 {
	l := p.lastT()
	return max(addDown(l.pmin, l.qmin), 0)
}

// checkWindow checks that x is ascending, every x and y finite and the
// lengths equal, and returns Σ|y|, Σx and Σy.
func checkWindow(x, y []float64) (abs, sx, sy float64, err error) {
	if len(x) != len(y) {
		return 0, 0, 0, fmt.Errorf("%w: %d x and %d y", ErrInput, len(x), len(y))
	}
	if len(x) > maxWindow {
		return 0, 0, 0, fmt.Errorf("%w: window of %d pairs, the most is %d", ErrInput, len(x), maxWindow)
	}
	y = y[:len(x)]
	for i, v := range x {
		w := y[i]
		if v-v != 0 || w-w != 0 { // NaN or ±Inf
			return 0, 0, 0, fmt.Errorf("%w: pair %d (%v, %v) not finite", ErrInput, i, v, w)
		}
		if i > 0 && v < x[i-1] {
			return 0, 0, 0, fmt.Errorf("%w: x not ascending at %d", ErrInput, i)
		}
		abs += math.Abs(w)
		sx += v
		sy += w
	}
	if math.IsInf(abs, 0) || math.IsInf(sx, 0) {
		return 0, 0, 0, fmt.Errorf("%w: sum of |y| or of x overflows", ErrInput)
	}
	return abs, sx, sy, nil
}

// appendSample appends the sample of the sorted window (x, y) whose Σ|y|
// is abs: the first and last pairs, and between them, greedily, the
// fewest such that between consecutive kept pairs i < j
//
//	j − 1 − i ≤ e   and   Σ_{i<m<j} |y_m| ≤ a,   e = εW/2, a = ε·abs/2
//
// for the summary's ε: the gaps of ε_1 = ε/2
//
// — each kept pair k is the first after the previous kept one where
// skipping it would break either. Each tuple has its exact rank and the
// running sums of y⁺ and y⁻, widened by the sum of their rounding errors
// (none when every sum is exact).
//
// Size: a kept pair other than the first and last ends a run of more than
// e pairs, or of more than a in Σ|y|, since the previous one; the runs do
// not overlap, so there are fewer than W/e + abs/a = 4/ε of them.
func appendSample(dst []tuple, x, y []float64, abs, eps float64) []tuple {
	w := len(x)
	e, a := eps*float64(w)/2, eps*abs/2
	var p, q, g, pe, qe, pmin, qmin float64
	prev := 0
	for k, v := range y {
		pk, qk := pos(v), neg(v)
		ps, qs := p+pk, q+qk
		pe += math.Abs(sumError(p, pk, ps)) // the rounding of each sum, exactly
		qe += math.Abs(sumError(q, qk, qs))
		p, q = ps, qs
		if k > 0 && k < w-1 {
			g += pk + qk
			if float64(k-prev) <= e && g <= a {
				continue
			}
		}
		// P is non-decreasing: a lower bound at an earlier rank holds.
		pmin = max(pmin, addDown(p, -pe*errMargin))
		qmin = max(qmin, addDown(q, -qe*errMargin))
		r := int64(k + 1)
		dst = append(dst, tuple{x: x[k], y: v, rmin: r, rmax: r, pmin: pmin, pmax: addUp(p, pe*errMargin), qmin: qmin, qmax: addUp(q, qe*errMargin)})
		g, prev = 0, k
	}
	return dst
}

// mergeParts appends to dst the tuples of the merge of a and b, by the
// rules of Greenwald and Khanna ("Power-conserving computation of
// order-statistics over sensor networks", PODS 2004) applied to each of
// the prefix sums count, P and Q. For a tuple x of a, with y the last
// tuple of b before x and z the first after it:
//
//	rmin = rmin_a(x) + rmin_b(y)      pmin = pmin_a(x) + pmin_b(y)
//	rmax = rmax_a(x) + rmax_b(z) − 1  pmax = pmax_a(x) + pmax_b(z) − z.y⁺
//
// (rmin_b, pmin_b = 0 without y; without z, rmax_b(z) − 1 = |b| and
// pmax_b(z) − z.y⁺ = b's total P bound), and likewise Q and b's tuples;
// ties put a's elements first. The elements of b before x are those up to
// y and before z, so the bounds hold. Ties put a's tuples first.
//
// Gap: call the gap of consecutive tuples i < j, for a prefix sum W of
// weight w, G_W(i, j) = Wmax(j) − w(j) − Wmin(i): the most weight the
// elements strictly between them can carry. For count, G = rmax(j) − 1 −
// rmin(i). For consecutive merged tuples both from a, y and z are the same
// for both and consecutive in b, and the sums give G = G_a + G_b(y, z);
// for one from a and the next from b the same sum falls out with the roles
// crossed. The gaps before b's first and after its last tuple are the
// rounding slack of its exact minimum and maximum. So every merged gap is
// at most the sum of one gap of a and one of b: absolute errors add.
func mergeParts(dst []tuple, a, b *part) []tuple {
	ta, tb := a.t, b.t
	la, lb := ta[len(ta)-1], tb[len(tb)-1]
	i, j := 0, 0
	for i < len(ta) || j < len(tb) {
		if j == len(tb) || (i < len(ta) && ta[i].x <= tb[j].x) {
			dst = append(dst, mergeTuple(ta[i], tb, j, b.n, lb))
			i++
		} else {
			dst = append(dst, mergeTuple(tb[j], ta, i, a.n, la))
			j++
		}
	}
	return dst
}

// mergeTuple returns x with the bounds of the other part's tuples o added:
// those of o[j−1] to its lower bounds and of o[j] to its upper bounds; n
// and last are the other part's count and last tuple.
func mergeTuple(x tuple, o []tuple, j int, n int64, last tuple) tuple {
	if j > 0 {
		y := o[j-1]
		x.rmin += y.rmin
		x.pmin = addDown(x.pmin, y.pmin)
		x.qmin = addDown(x.qmin, y.qmin)
	}
	if j < len(o) {
		z := o[j]
		x.rmax += z.rmax - 1
		x.pmax = addUp(x.pmax, addUp(z.pmax, -pos(z.y)))
		x.qmax = addUp(x.qmax, addUp(z.qmax, -neg(z.y)))
	} else {
		x.rmax += n
		x.pmax = addUp(x.pmax, last.pmax)
		x.qmax = addUp(x.qmax, last.qmax)
	}
	return x
}

// gapCount and gapAbs return the gaps between tuples i and j, i before j:
// the most elements, and the most Σ|y|, strictly between them.
func gapCount(i, j tuple) int64 { return j.rmax - 1 - i.rmin }
func gapAbs(i, j tuple) float64 {
	return addUp(addUp(addUp(j.pmax, -pos(j.y)), -i.pmin), addUp(addUp(j.qmax, -neg(j.y)), -i.qmin))
}

// compress drops tuples of t, in place, keeping the fewest such that the
// gaps of consecutive kept tuples stay within count ≤ e and Σ|y| ≤ a:
// greedily, each kept tuple is followed by the farthest one within both.
// The first and last stay. Gaps already wider stay as they are.
//
// Size: if every gap of t is within e' and a', a kept tuple k other than
// the first and the last two was kept because the gap from the previous
// kept tuple to k+1 broke a limit while the gap from k to k+1 did not, so
// rmin advanced by more than e − e' or pmin + qmin by more than a − a'
// since the previous kept tuple: at most n/(e − e') + Σ|y|/(a − a') + 3
// tuples remain.
func compress(t []tuple, e, a float64) []tuple {
	if len(t) <= 2 {
		return t
	}
	kept := 1
	prev := t[0]
	for k := 1; k < len(t)-1; k++ {
		next := t[k+1]
		// The sum gap rounded to nearest: a few ulps of Σ|y| either way
		// only move the choice, never a bound.
		ga := (next.pmax - pos(next.y) - prev.pmin) + (next.qmax - neg(next.y) - prev.qmin)
		if float64(gapCount(prev, next)) > e || ga > a {
			prev = t[k]
			t[kept] = prev
			kept++
		}
	}
	t[kept] = t[len(t)-1]
	return t[:kept+1]
}

// valid checks the invariants of a part's tuples: sorted by x, ranks
// non-decreasing within [1, n], exact ranks at the first and last, finite
// bounds in order.
func (p *part) valid() error {
	t := p.t
	if p.n < 1 || len(t) == 0 || int64(len(t)) > p.n {
		return fmt.Errorf("%w: %d tuples for %d pairs", ErrInvalid, len(t), p.n)
	}
	if f, l := t[0], t[len(t)-1]; f.rmin != 1 || f.rmax != 1 || l.rmin != p.n || l.rmax != p.n {
		return fmt.Errorf("%w: ranks of the first and last tuples not 1 and %d", ErrInvalid, p.n)
	}
	for i, u := range t {
		for _, v := range []float64{u.x, u.y, u.pmin, u.pmax, u.qmin, u.qmax} {
			if v-v != 0 {
				return fmt.Errorf("%w: tuple %d not finite", ErrInvalid, i)
			}
		}
		if u.rmin < 1 || u.rmin > u.rmax || u.rmax > p.n || u.pmin > u.pmax || u.qmin > u.qmax {
			return fmt.Errorf("%w: tuple %d bounds out of order", ErrInvalid, i)
		}
		if i > 0 {
			v := t[i-1]
			if u.x < v.x || u.rmin < v.rmin || u.rmax < v.rmax || u.pmin < v.pmin || u.qmin < v.qmin {
				return fmt.Errorf("%w: tuple %d out of order", ErrInvalid, i)
			}
		}
	}
	return nil
}
