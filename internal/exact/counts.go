package exact

import (
	"cmp"
	"slices"
)

// Counts is the exact answer key of a multiset of keys of any ordered
// type, such as the items of an item stream: each key's count, and the
// heavy-hitter checks of Stream for them.
type Counts[K cmp.Ordered] struct {
	counts map[K]int64
	n      int64
}

// CountKeys returns the answer key of keys.
func CountKeys[K cmp.Ordered](keys []K) *Counts[K] {
	c := &Counts[K]{counts: make(map[K]int64), n: int64(len(keys))}
	for _, k := range keys {
		c.counts[k]++
	}
	return c
}

// N reports the number of keys.
func (c *Counts[K]) N() int64 { return c.n }

// Count returns the number of occurrences of k.
func (c *Counts[K]) Count(k K) int64 { return c.counts[k] }

// Has reports whether k occurs.
func (c *Counts[K]) Has(k K) bool {
	_, ok := c.counts[k]
	return ok
}

// CheckFrequency returns an error unless lo ≤ count(k) ≤ hi and the lower
// bound is within eps·N of the count.
func (c *Counts[K]) CheckFrequency(k K, lo, hi int64, eps float64) error {
	return checkFrequency(k, c.Count(k), c.n, lo, hi, eps)
}

// CheckHeavyHitter returns an error if k, reported as a heavy hitter at
// support with error eps, has a count below (support − eps)·N.
func (c *Counts[K]) CheckHeavyHitter(k K, support, eps float64) error {
	return checkHeavyHitter(k, c.Count(k), c.n, support, eps)
}

// KeyCount is a distinct key and its count.
type KeyCount[K cmp.Ordered] struct {
	Key   K
	Count int64
}

// HeavyHitters returns the keys with count ≥ support·N, largest first,
// ties in ascending order of key.
func (c *Counts[K]) HeavyHitters(support float64) []KeyCount[K] {
	var out []KeyCount[K]
	cut := support * float64(c.n)
	for k, n := range c.counts {
		if float64(n) >= cut {
			out = append(out, KeyCount[K]{k, n})
		}
	}
	slices.SortFunc(out, func(a, b KeyCount[K]) int {
		if a.Count != b.Count {
			return cmp.Compare(b.Count, a.Count)
		}
		return cmp.Compare(a.Key, b.Key)
	})
	return out
}
