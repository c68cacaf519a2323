package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Sizes is a distribution of stream sizes (values per stream): a bounded
// power law on [Min, Max], as the sizes of many real sets of streams are
// (Zipf's law). A size is ⌊x⌋ for x drawn from the Pareto distribution of
// shape S truncated to [Min, Max+1), so that
//
//	P(size ≥ k) = ((Min/k)^S − c) / (1 − c),  c = (Min/(Max+1))^S,
//
// for Min ≤ k ≤ Max. With S = 1, the r-th largest of n streams holds about
// Min·n/r values: most streams are small and a few are as large as Max.
// For zipf:5:1000000 (S = 1), 90.2% of the streams hold 5 to 50 values,
// one in 22,000 holds at least 100,000, one in 200,000 holds the most,
// 10^6, and the mean size is 60.5 (Mean): a million streams hold about
// 60 million values (63.1 million for seed 1: the largest sizes vary).
type Sizes struct {
	Min, Max int64
	// S is the exponent of the tail, above 0; 1 is Zipf's law.
	S float64
}

// ParseSizes parses a distribution of stream sizes written
// "zipf:MIN:MAX" or "zipf:MIN:MAX:S" (S defaults to 1), with
// 1 ≤ MIN ≤ MAX and S > 0.
func ParseSizes(s string) (Sizes, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 3 || len(parts) > 4 || parts[0] != "zipf" {
		return Sizes{}, fmt.Errorf("synth: stream sizes %q: want zipf:MIN:MAX or zipf:MIN:MAX:S", s)
	}
	z := Sizes{S: 1}
	var err error
	if z.Min, err = strconv.ParseInt(parts[1], 10, 64); err != nil {
		return Sizes{}, fmt.Errorf("synth: stream sizes %q: min: %w", s, err)
	}
	if z.Max, err = strconv.ParseInt(parts[2], 10, 64); err != nil {
		return Sizes{}, fmt.Errorf("synth: stream sizes %q: max: %w", s, err)
	}
	if len(parts) == 4 {
		if z.S, err = strconv.ParseFloat(parts[3], 64); err != nil {
			return Sizes{}, fmt.Errorf("synth: stream sizes %q: exponent: %w", s, err)
		}
	}
	if err := z.Validate(); err != nil {
		return Sizes{}, err
	}
	return z, nil
}

// Validate reports whether z is a distribution: 1 ≤ Min ≤ Max and S > 0
// (and finite).
func (z Sizes) Validate() error {
	if z.Min < 1 || z.Max < z.Min {
		return fmt.Errorf("synth: stream sizes [%d, %d]: want 1 ≤ min ≤ max", z.Min, z.Max)
	}
	if !(z.S > 0) || math.IsInf(z.S, 0) {
		return fmt.Errorf("synth: stream sizes exponent %v: must be above 0", z.S)
	}
	return nil
}

// String returns z in the form ParseSizes reads.
func (z Sizes) String() string {
	return fmt.Sprintf("zipf:%d:%d:%v", z.Min, z.Max, z.S)
}

// Draw returns n sizes drawn from z with seed: the same for the same seed,
// on every platform. z must be valid (Validate).
func (z Sizes) Draw(seed uint64, n int) []int64 {
	rng := rand.New(rand.NewPCG(seed, seed^0x5deece66d))
	c := math.Pow(float64(z.Min)/float64(z.Max+1), z.S)
	sizes := make([]int64, n)
	for i := range sizes {
		// The inverse of the truncated Pareto's distribution function:
		// u = 0 gives Min, u → 1 gives Max+1.
		u := rng.Float64()
		x := float64(z.Min) * math.Pow(1-u*(1-c), -1/z.S)
		sizes[i] = min(max(int64(x), z.Min), z.Max)
	}
	return sizes
}

// Tail returns P(size ≥ k), the share of the streams that hold at least k
// values.
func (z Sizes) Tail(k int64) float64 {
	switch {
	case k <= z.Min:
		return 1
	case k > z.Max:
		return 0
	}
	c := math.Pow(float64(z.Min)/float64(z.Max+1), z.S)
	return (math.Pow(float64(z.Min)/float64(k), z.S) - c) / (1 - c)
}

// Mean returns the expected size, Σ P(size ≥ k) over k ≥ 1: O(Max − Min)
// time.
func (z Sizes) Mean() float64 {
	m := float64(z.Min)
	for k := z.Min + 1; k <= z.Max; k++ {
		m += z.Tail(k)
	}
	return m
}
