package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// PairSource draws pairs (x, y) of a request's latency and its response's
// size, correlated: x is lognormal, in milliseconds (e^N(ln 20, 0.8²):
// median 20 ms, p99 about 130 ms), and y is a whole number of bytes about
// BytesPerMs·x, times lognormal noise (e^N(0, 0.3²)), but one pair in
// HugeEvery (on average) is a huge response of 10^8 to 2·10^8 bytes, at
// any latency. y is a whole number well below 2^53, so any sum of fewer
// than 10^7 of them is exact in float64 in any order.
type PairSource struct {
	rng *rand.Rand
}

// The parameters of PairSource.
const (
	BytesPerMs = 2000
	HugeEvery  = 1000
)

// NewPairSource returns a PairSource of the given seed.
func NewPairSource(seed uint64) *PairSource {
	return &PairSource{rng: rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))}
}

// Next returns the next pair.
func (p *PairSource) Next() (x, y float64) {
	x = 20 * math.Exp(0.8*p.rng.NormFloat64())
	if p.rng.IntN(HugeEvery) == 0 {
		return x, float64(1e8 + p.rng.IntN(1e8))
	}
	return x, math.Round(BytesPerMs * x * math.Exp(0.3*p.rng.NormFloat64()))
}

// GeneratePairs returns n pairs of a PairSource of seed, in order: Random
// as drawn, Sorted or Reverse by x (each y with its x). Other orders are
// errors.
func GeneratePairs(seed uint64, n int, order Order) (x, y []float64, err error) {
	src := NewPairSource(seed)
	x, y = make([]float64, n), make([]float64, n)
	for i := range x {
		x[i], y[i] = src.Next()
	}
	switch order {
	case Random, "":
		return x, y, nil
	case Sorted, Reverse:
	default:
		return nil, nil, fmt.Errorf("synth: order %q for pairs: want random, sorted or reverse", order)
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if order == Reverse {
			a, b = b, a
		}
		switch {
		case x[a] < x[b]:
			return -1
		case x[a] > x[b]:
			return 1
		}
		return 0
	})
	sx, sy := make([]float64, n), make([]float64, n)
	for i, j := range idx {
		sx[i], sy[i] = x[j], y[j]
	}
	return sx, sy, nil
}
