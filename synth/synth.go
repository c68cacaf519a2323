// Package synth generates reproducible synthetic streams: values drawn from
// a distribution with a seed, then put in an arrival order. Some orders
// (sorted, reverse-sorted, sawtooth, organ pipe, alternating blocks) are the
// ones that break naive quantile summaries; tests of every summary and
// loadgen's synthetic sources share them.
package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
)

// Dist names a value distribution.
type Dist string

// The distributions.
const (
	Uniform     Dist = "uniform"     // uniform on [0, 1)
	Normal      Dist = "normal"      // mean 0, standard deviation 1
	LogNormal   Dist = "lognormal"   // exp of a standard normal
	Pareto      Dist = "pareto"      // shape Alpha (default 1.5), scale 1
	Exponential Dist = "exponential" // rate 1
	Zipf        Dist = "zipf"        // integers 0..Distinct-1, exponent S
	Constant    Dist = "constant"    // every value 1
	TwoValued   Dist = "twovalued"   // 0 or 1 with equal probability
)

// Dists lists every distribution.
var Dists = []Dist{Uniform, Normal, LogNormal, Pareto, Exponential, Zipf, Constant, TwoValued}

// Order names an arrival order.
type Order string

// The arrival orders.
const (
	Random      Order = "random"      // as drawn
	Sorted      Order = "sorted"      // ascending
	Reverse     Order = "reverse"     // descending
	Sawtooth    Order = "sawtooth"    // ascending runs of Period values
	OrganPipe   Order = "organpipe"   // ascending then descending
	Alternating Order = "alternating" // blocks of Period, alternately ascending and descending, small and large values interleaved
)

// Orders lists every arrival order.
var Orders = []Order{Random, Sorted, Reverse, Sawtooth, OrganPipe, Alternating}

// Spec describes a synthetic stream.
type Spec struct {
	Dist  Dist
	Order Order
	Seed  uint64
	// S is the Zipf exponent (> 1; default 1.2); Distinct the number of
	// Zipf values (default 1000).
	S        float64
	Distinct uint64
	// Alpha is the Pareto shape (default 1.5).
	Alpha float64
	// Period is the block length of Sawtooth and Alternating (default 1000).
	Period int
}

// Source draws values of one distribution, one at a time.
type Source struct {
	spec Spec
	rng  *rand.Rand
	zipf *rand.Zipf
}

// NewSource returns a Source for spec's distribution (its Order is not
// used: a Source is endless and unordered).
func NewSource(spec Spec) (*Source, error) {
	s := &Source{spec: spec, rng: rand.New(rand.NewPCG(spec.Seed, spec.Seed^0x9e3779b97f4a7c15))}
	switch spec.Dist {
	case Uniform, Normal, LogNormal, Exponential, Constant, TwoValued:
	case Pareto:
		if s.spec.Alpha == 0 {
			s.spec.Alpha = 1.5
		}
		if s.spec.Alpha <= 0 {
			return nil, fmt.Errorf("synth: pareto alpha %v must be positive", spec.Alpha)
		}
	case Zipf:
		if s.spec.S == 0 {
			s.spec.S = 1.2
		}
		if s.spec.Distinct == 0 {
			s.spec.Distinct = 1000
		}
		if s.spec.S <= 1 {
			return nil, fmt.Errorf("synth: zipf exponent %v must be above 1", spec.S)
		}
		s.zipf = rand.NewZipf(s.rng, s.spec.S, 1, s.spec.Distinct-1)
	default:
		return nil, fmt.Errorf("synth: unknown distribution %q", spec.Dist)
	}
	return s, nil
}

// Next returns the next value.
func (s *Source) Next() float64 {
	switch s.spec.Dist {
	case Uniform:
		return s.rng.Float64()
	case Normal:
		return s.rng.NormFloat64()
	case LogNormal:
		return math.Exp(s.rng.NormFloat64())
	case Pareto:
		return math.Pow(1-s.rng.Float64(), -1/s.spec.Alpha)
	case Exponential:
		return s.rng.ExpFloat64()
	case Zipf:
		return float64(s.zipf.Uint64())
	case Constant:
		return 1
	default: // TwoValued
		return float64(s.rng.IntN(2))
	}
}

// Generate returns n values of spec: drawn, then arranged in spec.Order.
func Generate(spec Spec, n int) ([]float64, error) {
	src, err := NewSource(spec)
	if err != nil {
		return nil, err
	}
	x := make([]float64, n)
	for i := range x {
		x[i] = src.Next()
	}
	if err := Arrange(x, spec.Order, spec.Period); err != nil {
		return nil, err
	}
	return x, nil
}

// Arrange puts x in the given arrival order in place. period is the block
// length of Sawtooth and Alternating (≤ 0 means 1000).
func Arrange(x []float64, order Order, period int) error {
	if period <= 0 {
		period = 1000
	}
	switch order {
	case Random, "":
	case Sorted:
		slices.Sort(x)
	case Reverse:
		slices.Sort(x)
		slices.Reverse(x)
	case Sawtooth:
		// Deal the sorted values round-robin into blocks of period values,
		// each ascending: every block spans the whole range.
		slices.Sort(x)
		arrangeBlocks(x, period, false)
	case OrganPipe:
		slices.Sort(x)
		y := make([]float64, 0, len(x))
		for i := 0; i < len(x); i += 2 {
			y = append(y, x[i])
		}
		for i := len(x) - 1 - len(x)%2; i >= 1; i -= 2 {
			y = append(y, x[i])
		}
		copy(x, y)
	case Alternating:
		slices.Sort(x)
		arrangeBlocks(x, period, true)
	default:
		return fmt.Errorf("synth: unknown order %q", order)
	}
	return nil
}

// arrangeBlocks rearranges sorted x into consecutive blocks of period
// values: block b gets the values of rank b, b+k, b+2k, … (k blocks in all),
// so each block covers the whole range. With alternate, every other block
// is descending.
func arrangeBlocks(x []float64, period int, alternate bool) {
	n := len(x)
	k := (n + period - 1) / period
	y := make([]float64, 0, n)
	for b := range k {
		start := len(y)
		for i := b; i < n; i += k {
			y = append(y, x[i])
		}
		if alternate && b%2 == 1 {
			slices.Reverse(y[start:])
		}
	}
	copy(x, y)
}

// ItemName returns the item string of the value v of a synthetic stream,
// for item streams: "item-" and the integer part of |v| in base 36, so that
// the Zipf distribution's integers become Zipf-distributed strings.
func ItemName(v float64) string {
	return "item-" + strconv.FormatUint(uint64(math.Abs(v)), 36)
}
