package hhh

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// ErrBounds is wrapped by the errors of Heavy and Discounted for inputs
// outside their contract: a support not above ε, bounds wider than εN,
// a prefix listed twice, or a level count that does not match the hierarchy.
var ErrBounds = errors.New("bad hierarchical heavy hitter query")

// Bounds are bounds on a count c: Lo ≤ c ≤ Hi.
type Bounds struct {
	Lo, Hi int64
}

// Candidate is a prefix of one level and bounds on its count: for a
// lossy-counting summary, an entry (Count, Count+Delta).
type Candidate struct {
	Prefix string
	Count  Bounds
}

// Level is what one level's summary knows: bounds on the counts of some
// prefixes, and a bound on the count of every prefix not listed.
type Level struct {
	// Candidates lists prefixes of the level with bounds on their counts,
	// Hi − Lo ≤ εN, each prefix once, in any order: a summary's entries.
	// Those with Hi < sN may be left out of a query with support s: the
	// guarantees need only that a prefix not listed counts less than sN.
	Candidates []Candidate
	// Absent bounds the count of every prefix of the level that is not
	// listed: at most εN (a lossy summary's Absent, or its MaxError).
	Absent int64
}

// Hitter is one prefix of an answer: a hierarchical heavy hitter.
type Hitter struct {
	// Prefix is the prefix's name, as Hierarchy.Prefixes writes it.
	Prefix string
	// Level is the prefix's level: 0 for an item, Levels()−1 for the root.
	Level int
	// Count bounds the prefix's count: the candidate's bounds, with Hi
	// capped at N.
	Count Bounds
	// Discounted bounds the prefix's discounted count (Discounted); Heavy
	// leaves it zero.
	Discounted Bounds
	// Discounts is the number of closest reported descendants whose counts
	// were taken off: the k of the package doc's precision bound.
	Discounts int
}

// Heavy returns the heavy prefixes of every level: each listed prefix whose
// count may reach support·N (Count.Hi ≥ sN), sorted by level, then Count.Hi
// from the largest, then name. Every prefix with count ≥ sN is among them
// and none has count below (s − ε)N. A prefix that is an item carried up
// unchanged from the level below (Hierarchy) is reported at level 0 only.
// The input must satisfy Level's contract with 0 < ε < support ≤ 1; it
// fails with an error wrapping ErrBounds otherwise. The answer for N = 0 is
// empty. It costs
// O(C + R log R) for C candidates and R answers.
func Heavy(h Hierarchy, levels []Level, n int64, support, eps float64) ([]Hitter, error) {
	if err := validate(h, levels, n, support, eps); err != nil || n == 0 {
		return nil, err
	}
	cut := support * float64(n)
	var out []Hitter
	for l, lv := range levels {
		for _, c := range lv.Candidates {
			if float64(c.Count.Hi) < cut || h.leafCopy(c.Prefix, l) {
				continue
			}
			out = append(out, Hitter{Prefix: c.Prefix, Level: l, Count: capped(c.Count, n)})
		}
	}
	slices.SortFunc(out, func(a, b Hitter) int {
		return cmp.Or(cmp.Compare(a.Level, b.Level), cmp.Compare(b.Count.Hi, a.Count.Hi), cmp.Compare(a.Prefix, b.Prefix))
	})
	return out, nil
}

// Discounted returns the discounted hierarchical heavy hitters of the
// package doc: level by level from the items up, each listed prefix whose
// discounted count — its count less the counts of its closest descendants
// already reported — may reach support·N. They come sorted by level, then
// Discounted.Hi from the largest, then name.
//
// Every prefix whose discounted count with respect to the answer is ≥ sN is
// in it, and a reported prefix with k Discounts has discounted count at
// least Discounted.Hi − (1+k)·εN ≥ (s − (1+k)ε)N, with k ≤ ⌊1/(s−ε)⌋
// (the package doc proves both). The input must satisfy Level's contract
// with 0 < ε < support ≤ 1, one Level per level of h; it fails with an
// error wrapping ErrBounds otherwise, and with one wrapping ErrItem for a
// reported prefix that is not a canonical name of its level. The answer for
// N = 0 is empty. It costs
// O(C + R·L) for C candidates, R answers and L levels, plus sorting.
func Discounted(h Hierarchy, levels []Level, n int64, support, eps float64) ([]Hitter, error) {
	if err := validate(h, levels, n, support, eps); err != nil || n == 0 {
		return nil, err
	}
	cut := support * float64(n)
	var out []Hitter
	// pending are the answers not yet discounted from a reported ancestor,
	// by index into out, with the name of their ancestor at level l.
	type pend struct {
		i    int
		name string
	}
	var pending []pend
	var next []pend
	under := make(map[string][]int) // pending names at level l → indices into pending
	taken := []bool(nil)            // taken[j]: pending[j] is discounted at level l
	for l, lv := range levels {
		if l > 0 {
			for j := range pending {
				parent, err := h.Parent(pending[j].name, l-1)
				if err != nil {
					return nil, fmt.Errorf("discount %q: %w", out[pending[j].i].Prefix, err)
				}
				pending[j].name = parent
			}
		}
		clear(under)
		for j, p := range pending {
			under[p.name] = append(under[p.name], j)
		}
		taken = slices.Grow(taken[:0], len(pending))[:len(pending)]
		clear(taken)
		next = next[:0]
		for _, c := range lv.Candidates {
			if float64(c.Count.Hi) < cut {
				continue // D ≤ c ≤ Hi < sN
			}
			if l > 0 && h.leafCopy(c.Prefix, l) {
				// The same items as its child: D is 0 if the child was
				// reported, else the child's own D, which is below sN.
				continue
			}
			count := capped(c.Count, n)
			var sumLo, sumHi int64
			desc := under[c.Prefix]
			for _, j := range desc {
				q := out[pending[j].i].Count
				sumLo += q.Lo
				sumHi += q.Hi
			}
			disc := Bounds{Lo: max(0, count.Lo-sumHi), Hi: count.Hi - sumLo}
			if float64(disc.Hi) < cut {
				continue
			}
			if l == len(levels)-1 {
				if err := h.checkPrefix(c.Prefix, l); err != nil {
					return nil, err
				}
			}
			for _, j := range desc {
				taken[j] = true
			}
			next = append(next, pend{i: len(out), name: c.Prefix})
			out = append(out, Hitter{Prefix: c.Prefix, Level: l, Count: count, Discounted: disc, Discounts: len(desc)})
		}
		for j, p := range pending {
			if !taken[j] {
				next = append(next, p)
			}
		}
		pending, next = next, pending
	}
	slices.SortFunc(out, func(a, b Hitter) int {
		return cmp.Or(cmp.Compare(a.Level, b.Level), cmp.Compare(b.Discounted.Hi, a.Discounted.Hi),
			cmp.Compare(b.Count.Hi, a.Count.Hi), cmp.Compare(a.Prefix, b.Prefix))
	})
	return out, nil
}

// LevelEpsilon returns the error each level's summary must have for
// Discounted to answer every support s ≥ minSupport with precision ε, as
// Heavy does: no reported prefix with discounted count below (s − ε)N. It is
// ε/(1 + ⌊1/(minSupport − ε)⌋), from the precision bound of the package doc;
// it needs 0 < ε < minSupport ≤ 1 and returns NaN otherwise.
func LevelEpsilon(eps, minSupport float64) float64 {
	if !(eps > 0 && eps < minSupport && minSupport <= 1) {
		return math.NaN()
	}
	return eps / (1 + math.Floor(1/(minSupport-eps)))
}

// capped returns b with Hi at most n: no count exceeds N.
func capped(b Bounds, n int64) Bounds {
	b.Hi = min(b.Hi, n)
	return b
}

// validate checks the contract of Heavy and Discounted.
func validate(h Hierarchy, levels []Level, n int64, support, eps float64) error {
	if !(eps > 0 && eps < support && support <= 1) {
		return fmt.Errorf("support %v and ε %v: want 0 < ε < support ≤ 1: %w", support, eps, ErrBounds)
	}
	if n < 0 {
		return fmt.Errorf("count %d is negative: %w", n, ErrBounds)
	}
	if len(levels) != h.Levels() {
		return fmt.Errorf("%d levels for %s of %d: %w", len(levels), h, h.Levels(), ErrBounds)
	}
	width := int64(eps * float64(n)) // ⌊εN⌋
	seen := make(map[string]struct{})
	for l, lv := range levels {
		if lv.Absent < 0 || lv.Absent > width {
			return fmt.Errorf("level %d: absent bound %d outside 0 to εN = %d: %w", l, lv.Absent, width, ErrBounds)
		}
		clear(seen)
		for _, c := range lv.Candidates {
			if c.Count.Lo < 0 || c.Count.Hi < c.Count.Lo || c.Count.Hi-c.Count.Lo > width {
				return fmt.Errorf("level %d: prefix %q: bounds [%d, %d] not within εN = %d: %w",
					l, c.Prefix, c.Count.Lo, c.Count.Hi, width, ErrBounds)
			}
			if _, ok := seen[c.Prefix]; ok {
				return fmt.Errorf("level %d: prefix %q listed twice: %w", l, c.Prefix, ErrBounds)
			}
			seen[c.Prefix] = struct{}{}
		}
	}
	return nil
}
