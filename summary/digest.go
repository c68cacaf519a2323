package summary

import (
	"fmt"
	"math"
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

// DiffDigests returns "" if a and b hold the same digest, bit for bit,
// or else the first difference: how the GPU back-ends' digests are checked
// against the CPU's.
func DiffDigests(a, b *Digest) string {
	if a.N != b.N || len(a.Sample) != len(b.Sample) || len(a.Runs) != len(b.Runs) {
		return fmt.Sprintf("N %d, %d samples, %d runs against N %d, %d samples, %d runs",
			a.N, len(a.Sample), len(a.Runs), b.N, len(b.Sample), len(b.Runs))
	}
	for i, x := range a.Sample {
		y := b.Sample[i]
		if math.Float64bits(x.Value) != math.Float64bits(y.Value) || x.RMin != y.RMin || x.RMax != y.RMax {
			return fmt.Sprintf("sample[%d] %+v against %+v", i, x, y)
		}
	}
	for i, x := range a.Runs {
		y := b.Runs[i]
		if math.Float64bits(x.Value) != math.Float64bits(y.Value) || x.Count != y.Count {
			return fmt.Sprintf("run[%d] %+v against %+v", i, x, y)
		}
	}
	return ""
}

// SampleSpacing returns the rank spacing of the ε/2 sample of a window of w
// values: εw/2, but at least 1 (every value is kept when εw < 2).
func SampleSpacing(eps float64, w int) float64 {
	return max(1, eps*float64(w)/2)
}

// DigestSorted fills d from the sorted window x, reusing d's slices: the
// sample of spec.Spacing, and the runs of x whose count exceeds
// spec.Threshold or whose value is in spec.Known. It allocates nothing when
// d's slices have room.
//
// A run longer than the threshold T covers T+1 consecutive ranks, so it
// holds one of every T+1 positions: DigestSorted probes only those, finds
// each probed value's run by binary search, and looks each Known value up
// by binary search, in O((n/T + |Known|)·log n) steps instead of a pass
// over x. Below minProbeGap it makes one pass.
func DigestSorted[K float32 | float64](x []K, spec WindowSpec, d *Digest) {
	d.N = int64(len(x))
	d.Sample = gksketch.AppendSample(d.Sample[:0], x, spec.Spacing)
	d.Runs = d.Runs[:0]
	if spec.Threshold < minProbeGap {
		d.Runs = appendRunsScan(d.Runs, x, spec)
		return
	}
	known := spec.Known
	step := int(spec.Threshold) + 1
	done := 0 // x[:done] is accounted for
	for p := 0; p < len(x); p += step {
		if p < done {
			continue // inside the last run found
		}
		v := x[p]
		// x[p-step] differs from v, or lies before done (see above), so
		// the run starts in (max(done, p-step), p].
		from := max(done, p-step+1)
		lo := from + sort.Search(p-from, func(i int) bool { return x[from+i] == v })
		hi := runEnd(x, p)
		if int64(hi-lo) <= spec.Threshold {
			continue
		}
		f := float64(v)
		d.Runs, known = appendKnownRuns(d.Runs, x[done:lo], known, f, false)
		if len(known) > 0 && known[0] == f {
			known = known[1:]
		}
		d.Runs = append(d.Runs, lossy.Run{Value: f, Count: int64(hi - lo)})
		done = hi
	}
	d.Runs, _ = appendKnownRuns(d.Runs, x[done:], known, 0, true)
}

// minProbeGap is the smallest threshold at which DigestSorted probes
// rather than scans: below it probes come too close together to pay.
const minProbeGap = 16

// runEnd returns the end (exclusive) of the run of x[p] that contains p,
// galloping forward: one value may fill a window.
func runEnd[K float32 | float64](x []K, p int) int {
	v := x[p]
	j, step := p+1, 1
	for j+step-1 < len(x) && x[j+step-1] == v {
		j += step
		step *= 2
	}
	hi := min(j+step-1, len(x))
	return j + sort.Search(hi-j, func(k int) bool { return x[j+k] != v })
}

// appendKnownRuns appends the runs in the sorted x of the Known values
// below limit, or of all of them when all is set, and returns the Known
// values left.
func appendKnownRuns[K float32 | float64](runs []lossy.Run, x []K, known []float64, limit float64, all bool) ([]lossy.Run, []float64) {
	for len(known) > 0 && (all || known[0] < limit) {
		v := K(known[0])
		if float64(v) != known[0] {
			known = known[1:] // not a value of K: not in x
			continue
		}
		lo := sort.Search(len(x), func(i int) bool { return x[i] >= v })
		if lo < len(x) && x[lo] == v {
			hi := runEnd(x, lo)
			runs = append(runs, lossy.Run{Value: float64(x[lo]), Count: int64(hi - lo)})
			lo = hi
		}
		x = x[lo:]
		known = known[1:]
	}
	return runs, known
}

// appendRunsScan appends the runs of x that DigestSorted keeps, in one
// pass over x.
func appendRunsScan[K float32 | float64](runs []lossy.Run, x []K, spec WindowSpec) []lossy.Run {
	known := spec.Known
	for i := 0; i < len(x); {
		j := runEnd(x, i)
		c := int64(j - i)
		f := float64(x[i])
		for len(known) > 0 && known[0] < f {
			known = known[1:]
		}
		if c > spec.Threshold || (len(known) > 0 && known[0] == f) {
			runs = append(runs, lossy.Run{Value: f, Count: c})
		}
		i = j
	}
	return runs
}
