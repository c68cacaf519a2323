package summary

import (
	"sort"

	"streamd/gksketch"
	"streamd/lossy"
)

// WindowSpec says what the summaries need from one sorted window.
type WindowSpec struct {
	// Spacing is the sample's rank spacing h: the values at ranks 1, ⌈h⌉,
	// ⌈2h⌉, …, W are kept (gksketch.FromSorted). SampleSpacing gives the
	// paper's ε/2 sample.
	Spacing float64
	// Threshold is the count a value must exceed for its run to be kept
	// (lossy.Summary.Threshold).
	Threshold int64
	// Known lists, sorted ascending, the values whose runs are kept whatever
	// their count: the values the lossy table already holds.
	Known []float64
}

// Digest is what the summaries take from one sorted window: its size, its
// quantile sample, and its histogram thinned to the runs lossy counting
// needs. A GPU back-end computes it next to the sorted window and reads
// back only this.
type Digest struct {
	N      int64
	Sample []gksketch.Tuple
	Runs   []lossy.Run
}

// SampleSpacing returns the rank spacing of the ε/2 sample of a window of w
// values: εw/2, but at least 1 (every value is kept when εw < 2).
func SampleSpacing(eps float64, w int) float64 {
	return max(1, eps*float64(w)/2)
}

// DigestSorted fills d from the sorted window x in one pass, reusing d's
// slices: the sample of spec.Spacing, and the runs of x whose count exceeds
// spec.Threshold or whose value is in spec.Known. It allocates nothing when
// d's slices have room.
func DigestSorted[K float32 | float64](x []K, spec WindowSpec, d *Digest) {
	d.N = int64(len(x))
	d.Sample = gksketch.AppendSample(d.Sample[:0], x, spec.Spacing)
	d.Runs = d.Runs[:0]
	known := spec.Known
	for i := 0; i < len(x); {
		v := x[i]
		j := i + 1
		// Gallop over long runs: duplicates are common (one value may fill
		// a window). Double the step while x[j+step-1] is still v, then
		// binary-search the run's end in the last step.
		if j < len(x) && x[j] == v {
			step := 1
			for j+step < len(x) && x[j+step] == v {
				j += step
				step *= 2
			}
			hi := min(j+step, len(x))
			j += sort.Search(hi-j, func(k int) bool { return x[j+k] != v })
		}
		c := int64(j - i)
		f := float64(v)
		for len(known) > 0 && known[0] < f {
			known = known[1:]
		}
		if c > spec.Threshold || (len(known) > 0 && known[0] == f) {
			d.Runs = append(d.Runs, lossy.Run{Value: f, Count: c})
		}
		i = j
	}
}
