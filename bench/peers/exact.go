package main

import (
	"math"
	"slices"
)

// key is the exact answer key of a stream: its values sorted.
type key struct {
	sorted []float64
}

func newKey(x []float64) *key {
	k := &key{sorted: slices.Clone(x)}
	slices.Sort(k.sorted)
	return k
}

func (k *key) n() int64 { return int64(len(k.sorted)) }

// targetRank returns ⌈φN⌉ clamped to [1, N].
func targetRank(phi float64, n int64) int64 {
	r := int64(math.Ceil(phi * float64(n)))
	return min(max(r, 1), n)
}

// rankRange returns #{x < v} and #{x ≤ v}.
func (k *key) rankRange(v float64) (below, atMost int64) {
	i, _ := slices.BinarySearch(k.sorted, v)
	j, _ := slices.BinarySearchFunc(k.sorted[i:], v, func(x, v float64) int {
		if x <= v {
			return -1
		}
		return 1
	})
	return int64(i), int64(i + j)
}

// rankError returns the rank error of answering v for φ: the distance from
// ⌈φN⌉ to the nearest rank v has. A value in the stream has the ranks
// #{x<v}+1 … #{x≤v}; a value that is not (DDSketch and t-digest answer
// with such values) sits between ranks #{x<v} and #{x<v}+1 and gets the
// rank #{x<v}.
func (k *key) rankError(phi, v float64) int64 {
	below, atMost := k.rankRange(v)
	lo := below + 1
	if below == atMost {
		lo = below
	}
	r := targetRank(phi, k.n())
	switch {
	case r < lo:
		return lo - r
	case r > atMost:
		return r - atMost
	}
	return 0
}

// quantile returns the exact φ-quantile, the value of rank ⌈φN⌉.
func (k *key) quantile(phi float64) float64 {
	return k.sorted[targetRank(phi, k.n())-1]
}

// heavy returns the values with count ≥ support·N and their counts.
func (k *key) heavy(support float64) map[float64]int64 {
	out := make(map[float64]int64)
	cut := support * float64(len(k.sorted))
	for i := 0; i < len(k.sorted); {
		j := i + 1
		for j < len(k.sorted) && k.sorted[j] == k.sorted[i] {
			j++
		}
		if float64(j-i) >= cut {
			out[k.sorted[i]] = int64(j - i)
		}
		i = j
	}
	return out
}
