// Package hhhexact counts the prefixes of a hierarchy (package hhh)
// exactly, and checks answers of hierarchical heavy hitters against those
// counts: what loadgen --verify and the tests of a hierarchy stream do
// with the items they sent. It keeps every distinct item, so it is meant
// for traces of test size.
package hhhexact

import (
	"fmt"

	pb "streamd/api/proto/streamd/v1"
	"streamd/hhh"
)

// Hitters returns the hitters of a HierarchicalHeavyHitters answer as
// hhh's, as CheckHeavy and CheckDiscounted take them.
func Hitters(resp *pb.HierarchicalHeavyHittersResponse) []hhh.Hitter {
	out := make([]hhh.Hitter, len(resp.Hitters))
	for i, x := range resp.Hitters {
		out[i] = hhh.Hitter{
			Prefix: x.Prefix, Level: int(x.Level),
			Count:      hhh.Bounds{Lo: int64(x.CountMin), Hi: int64(x.CountMax)},
			Discounted: hhh.Bounds{Lo: int64(x.DiscountedMin), Hi: int64(x.DiscountedMax)},
			Discounts:  int(x.Discounts),
		}
	}
	return out
}

// node is a prefix of one level.
type node struct {
	level  int
	prefix string
}

// Counts are the exact counts of every prefix of the items added.
type Counts struct {
	h      hhh.Hierarchy
	n      int64
	items  map[string]int64    // canonical item (level 0) → count
	chains map[string][]string // canonical item → its prefixes
	counts map[node]int64
	// real marks the prefixes of a level above 0 that hold an item whose
	// prefix one level down is another: the others are copies of an item
	// carried up unchanged, which answers never report.
	real map[node]bool
}

// New returns empty counts over h.
func New(h hhh.Hierarchy) *Counts {
	return &Counts{h: h, items: map[string]int64{}, chains: map[string][]string{}, counts: map[node]int64{}, real: map[node]bool{}}
}

// Add counts item, or fails with an error wrapping hhh.ErrItem if it is
// not in the hierarchy (and counts nothing).
func (c *Counts) Add(item string) error {
	p, err := c.h.Prefixes(item)
	if err != nil {
		return err
	}
	if _, ok := c.chains[p[0]]; !ok {
		c.chains[p[0]] = p
		for l := 1; l < len(p); l++ {
			if p[l] != p[l-1] {
				c.real[node{l, p[l]}] = true
			}
		}
	}
	c.items[p[0]]++
	for l, x := range p {
		c.counts[node{l, x}]++
	}
	c.n++
	return nil
}

// N returns the number of items counted.
func (c *Counts) N() int64 { return c.n }

// Count returns the count of prefix at level.
func (c *Counts) Count(level int, prefix string) int64 { return c.counts[node{level, prefix}] }

// copyOf reports whether nd is a copy of an item carried up unchanged.
func (c *Counts) copyOf(nd node) bool { return nd.level > 0 && !c.real[nd] }

// CheckHeavy checks an answer of heavy prefixes (hhh.Heavy) with support
// s and per-level error ε: every prefix with count ≥ sN reported (a copy
// of an item only at level 0), none with count below (s − ε)N, each
// prefix once, and count bounds that hold.
func (c *Counts) CheckHeavy(got []hhh.Hitter, support, eps float64) error {
	n := float64(c.n)
	seen := map[node]bool{}
	for _, p := range got {
		nd := node{p.Level, p.Prefix}
		cnt, ok := c.counts[nd]
		switch {
		case seen[nd]:
			return fmt.Errorf("s=%v: %v reported twice", support, nd)
		case !ok:
			return fmt.Errorf("s=%v: %v is no prefix of the items", support, nd)
		case cnt < p.Count.Lo || cnt > p.Count.Hi:
			return fmt.Errorf("s=%v: %v counts %d, outside [%d, %d]", support, nd, cnt, p.Count.Lo, p.Count.Hi)
		case float64(cnt) < (support-eps)*n:
			return fmt.Errorf("s=%v: %v counts %d, below (s−ε)N = %v", support, nd, cnt, (support-eps)*n)
		case c.copyOf(nd):
			return fmt.Errorf("s=%v: %v is a copy of an item below", support, nd)
		}
		seen[nd] = true
	}
	for nd, cnt := range c.counts {
		if float64(cnt) >= support*n && !seen[nd] && !c.copyOf(nd) {
			return fmt.Errorf("s=%v: %v counts %d ≥ sN = %v and is missing", support, nd, cnt, support*n)
		}
	}
	return nil
}

// CheckDiscounted checks an answer of discounted hierarchical heavy
// hitters (hhh.Discounted) with support s, per-level error ε and stated
// precision: with P the prefixes reported and D_P(p) the discounted count
// of p (its items under no member of P below it), every prefix with D_P ≥
// sN is in P; every p in P has D_P(p) ≥ (s − precision)N and D_P(p) ≥
// Discounted.Hi − (1+k)εN, k its Discounts, which must be the number of
// its closest descendants in P; and every bound holds.
func (c *Counts) CheckDiscounted(got []hhh.Hitter, support, eps, precision float64) error {
	n := float64(c.n)
	in := map[node]int{}
	for i, p := range got {
		nd := node{p.Level, p.Prefix}
		if _, ok := in[nd]; ok {
			return fmt.Errorf("s=%v: %v reported twice", support, nd)
		}
		if _, ok := c.counts[nd]; !ok || c.copyOf(nd) {
			return fmt.Errorf("s=%v: %v is no prefix of the items, or a copy of an item below", support, nd)
		}
		in[nd] = i
	}
	disc := map[node]int64{}
	closest := map[node]map[node]bool{}
	for item, m := range c.items {
		var below *node
		for l, x := range c.chains[item] {
			nd := node{l, x}
			if below == nil {
				disc[nd] += m
			}
			if _, ok := in[nd]; ok {
				if below != nil {
					if closest[nd] == nil {
						closest[nd] = map[node]bool{}
					}
					closest[nd][*below] = true
				}
				below = &nd
			}
		}
	}
	for nd, d := range disc {
		if _, ok := in[nd]; !ok && float64(d) >= support*n {
			return fmt.Errorf("s=%v: %v with discounted count %d ≥ sN = %v is missing", support, nd, d, support*n)
		}
	}
	for nd, i := range in {
		p := got[i]
		cnt, d, k := c.counts[nd], disc[nd], len(closest[nd])
		switch {
		case cnt < p.Count.Lo || cnt > p.Count.Hi:
			return fmt.Errorf("s=%v: %v counts %d, outside [%d, %d]", support, nd, cnt, p.Count.Lo, p.Count.Hi)
		case d < p.Discounted.Lo || d > p.Discounted.Hi:
			return fmt.Errorf("s=%v: %v has discounted count %d, outside [%d, %d]", support, nd, d, p.Discounted.Lo, p.Discounted.Hi)
		case p.Discounts != k:
			return fmt.Errorf("s=%v: %v has %d discounts, want %d", support, nd, p.Discounts, k)
		case float64(d) < (support-precision)*n:
			return fmt.Errorf("s=%v: %v has discounted count %d, below (s − precision)N = %v", support, nd, d, (support-precision)*n)
		case float64(d) < float64(p.Discounted.Hi)-float64(1+k)*eps*n:
			return fmt.Errorf("s=%v: %v has discounted count %d, below its bound %d − (1+%d)εN", support, nd, d, p.Discounted.Hi, k)
		}
	}
	return nil
}
