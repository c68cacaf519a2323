package main

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// worst returns the largest value of f over the results of sketch, and
// the stream it came from.
func (r *report) worst(sketch string, f func(result) float64) (float64, string) {
	w, at := math.Inf(-1), ""
	for _, x := range r.results {
		if x.Sketch == sketch && f(x) > w {
			w, at = f(x), x.Stream
		}
	}
	return w, at
}

// medianOf returns the median of f over the results of sketch.
func (r *report) medianOf(sketch string, f func(result) float64) float64 {
	var v []float64
	for _, x := range r.results {
		if x.Sketch == sketch {
			v = append(v, f(x))
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	return median(v)
}

// smallestBelow returns the fewest bytes at which sketch reached a max rank
// error ≤ target on stream in the sweep (0 when it never did), and the
// parameter.
func (r *report) smallestBelow(stream, sketch string, target float64) (int, string) {
	best, param := 0, ""
	for _, p := range r.sweep {
		if p.Stream == stream && p.Sketch == sketch && p.MaxRankErr <= target && (best == 0 || p.Bytes < best) {
			best, param = p.Bytes, p.Param
		}
	}
	return best, param
}

func writeConclusions(w io.Writer, r *report) {
	o := r.opts
	fmt.Fprintf(w, "## Conclusions\n\n")
	fmt.Fprintf(w, "The numbers below are computed from the tables above (this run: N = %d per synthetic stream, a shared machine).\n\n", o.N)

	rank := func(x result) float64 { return x.MaxRankErr }
	within, total := 0, 0
	for _, x := range r.results {
		if x.Sketch == nameStreamd {
			total++
			if x.MaxRankErr <= o.Epsilon {
				within++
			}
		}
	}
	sw, swAt := r.worst(nameStreamd, rank)
	fmt.Fprintf(w, "**Where streamd wins**\n\n")
	fmt.Fprintf(w, "- *A deterministic bound, whatever the order.* streamd's rank error stayed within ε = %g on %d of %d streams (worst %s, on %s), sorted and alternating orders included, and every answer comes with its own bound (`View.MaxRankError`). The peers give no per-answer bound: their worst maximum rank errors were",
		o.Epsilon, within, total, fmtFrac(sw), swAt)
	var parts []string
	for _, s := range []string{nameDD, nameKLL, nameTDigest} {
		v, at := r.worst(s, rank)
		parts = append(parts, fmt.Sprintf(" %s %s %s (%s)", s, r.param(s), fmtFrac(v), at))
	}
	fmt.Fprintf(w, "%s. KLL's error is probabilistic (k = %d is specified for about 1.65%% normalized rank error with high probability); DDSketch bounds the relative *value* error, not the rank error; t-digest has no worst-case bound.\n", strings.Join(parts, ","), o.KLLK)

	var hhRecall []float64
	dsNFP := math.Inf(1)
	hhStreams := 0
	for _, h := range r.heavy {
		if h.True == 0 {
			continue
		}
		hhStreams++
		hhRecall = append(hhRecall, h.Streamd[0].Recall)
		dsNFP = min(dsNFP, h.DS[1].Recall)
	}
	if hhStreams > 0 {
		minRecall := math.Inf(1)
		for _, v := range hhRecall {
			minRecall = min(minRecall, v)
		}
		fmt.Fprintf(w, "- *Heavy hitters and sliding windows from the same sort.* On the %d streams that have items above 0.1%% of N, streamd's no-false-negative heavy hitters had recall %.2f at worst, from the runs the sorted windows already hold, with the lossy summary adding a median of %s to the stream. The frequent items sketch is a second pass over every value (median %s ns/value on those streams, on top of a quantile sketch). The same ingest also keeps the last-n sliding window, which none of the peers offers.\n",
			hhStreams, minRecall, fmtBytes(int(r.medianHeavy(func(h hhResult) float64 { return float64(h.LossyB) }))), fmtNs(r.medianHeavy(func(h hhResult) float64 { return h.DSNs })))
	}
	ns := func(x result) float64 { return x.NsPerValue }
	fmt.Fprintf(w, "- *Speed.* Median ingest over all streams, ns/value, one goroutine: streamd %s (everything: sort, GK, lossy counting, sliding window; the radix sort alone %s), DDSketch %s, KLL %s, t-digest %s, exact %s.",
		fmtNs(r.medianOf(nameStreamd, ns)), fmtNs(r.medianOf(nameStreamd, func(x result) float64 {
			if x.Streamd == nil {
				return math.NaN()
			}
			return x.Streamd.SortNs
		})), fmtNs(r.medianOf(nameDD, ns)), fmtNs(r.medianOf(nameKLL, ns)), fmtNs(r.medianOf(nameTDigest, ns)), fmtNs(r.medianOf(nameExact, ns)))
	var faster, slower []string
	for _, s := range []string{nameDD, nameKLL, nameTDigest, nameExact} {
		if r.medianOf(s, ns) < r.medianOf(nameStreamd, ns) {
			faster = append(faster, s)
		} else {
			slower = append(slower, s)
		}
	}
	if len(faster) > 0 {
		fmt.Fprintf(w, " Faster than streamd's whole path: %s.", strings.Join(faster, ", "))
	}
	if len(slower) > 0 {
		fmt.Fprintf(w, " Slower (by the median): %s.", strings.Join(slower, ", "))
	}
	names, m := r.byStream()
	fastest := 0
	var lost []string
	for _, n := range names {
		sd := m[n][nameStreamd].NsPerValue
		if sd < m[n][nameDD].NsPerValue && sd < m[n][nameKLL].NsPerValue && sd < m[n][nameTDigest].NsPerValue {
			fastest++
		} else {
			lost = append(lost, n)
		}
	}
	fmt.Fprintf(w, " streamd was the fastest of the four sketches on %d of %d streams", fastest, len(names))
	if len(lost) > 0 {
		fmt.Fprintf(w, " (on %s a peer was faster)", strings.Join(lost, ", "))
	}
	fmt.Fprintf(w, ". The exact baseline is fastest of all on already-sorted input (pdqsort detects it; %s ns/value on uniform/sorted) and needs 8 bytes per value. The peers take one value per call, streamd a window at a time.", fmtNs(m["uniform/sorted"][nameExact].NsPerValue))
	fmt.Fprintf(w, "\n\n")

	fmt.Fprintf(w, "**Where a peer wins**\n\n")
	rel999 := func(x result) float64 { return x.RelErr999 }
	rel99 := func(x result) float64 { return x.RelErr99 }
	dd99, _ := r.worst(nameDD, rel99)
	dd999, _ := r.worst(nameDD, rel999)
	sd99, sd99At := r.worst(nameStreamd, rel99)
	sd999, sd999At := r.worst(nameStreamd, rel999)
	fmt.Fprintf(w, "- *Relative-error tails: DDSketch.* DDSketch's worst relative value error over all streams was %s at p99 and %s at p99.9 (its α = %g bounds it), on heavy tails (pareto, lognormal) as on the rest. streamd bounds ranks, not values: its worst was %s at p99 (%s) and %s at p99.9 (%s). Where a tail is steep, an ε·N rank error is a large value error; a user who needs \"p99.9 within 1%%\" should use DDSketch.\n",
		fmtPct(dd99), fmtPct(dd999), o.DDAlpha, fmtPct(sd99), sd99At, fmtPct(sd999), sd999At)

	for _, st := range sweepStreams(r) {
		fmt.Fprintf(w, "- *Memory at equal rank error (%s).* Fewest serialized bytes at which each sketch reached a max rank error ≤ %g in the sweep:", st, o.Epsilon)
		var p []string
		for _, s := range []string{nameStreamd, nameDD, nameKLL, nameTDigest} {
			b, param := r.smallestBelow(st, s, o.Epsilon)
			if b == 0 {
				p = append(p, fmt.Sprintf(" %s: not reached", s))
			} else {
				p = append(p, fmt.Sprintf(" %s %s (%s)", s, fmtBytes(b), param))
			}
		}
		fmt.Fprintf(w, "%s. At 1%% rank error:", strings.Join(p, ";"))
		p = nil
		for _, s := range []string{nameStreamd, nameDD, nameKLL, nameTDigest} {
			b, param := r.smallestBelow(st, s, 0.01)
			if b == 0 {
				p = append(p, fmt.Sprintf(" %s: not reached", s))
			} else {
				p = append(p, fmt.Sprintf(" %s %s (%s)", s, fmtBytes(b), param))
			}
		}
		fmt.Fprintf(w, "%s.\n", strings.Join(p, ";"))
	}
	if hhStreams > 0 {
		sdP, dsP := math.Inf(1), math.Inf(1)
		sdR, dsR := math.Inf(1), math.Inf(1)
		var sdB, dsB []float64
		for _, h := range r.heavy {
			if h.True == 0 {
				continue
			}
			sdP, dsP = min(sdP, h.Streamd[0].Precise), min(dsP, h.DS[0].Precise)
			sdR, dsR = min(sdR, h.Streamd[1].Recall), min(dsR, h.DS[1].Recall)
			sdB, dsB = append(sdB, float64(h.LossyB)), append(dsB, float64(h.DSBytes))
		}
		fmt.Fprintf(w, "- *Heavy-hitter precision: DataSketches frequent items.* With no false negatives, the frequent items sketch's precision was %.2f at worst against streamd's %.2f, and with no false positives its recall %.2f at worst against streamd's %.2f, on the streams with heavy items. It pays in memory: a median of %s against streamd's lossy summary's %s, for a slightly smaller a-priori ε (3.5/maxMapSize). streamd's lossy counting with ε equal to the support keeps every item whose count *may* reach it.\n",
			dsP, sdP, dsR, sdR, fmtBytes(int(median(dsB))), fmtBytes(int(median(sdB))))
	}
	hist := r.medianOf(nameStreamd, func(x result) float64 { return float64(x.Streamd.HistoryBytes) })
	all := r.medianOf(nameStreamd, func(x result) float64 { return float64(x.Bytes) })
	kb := r.medianOf(nameKLL, func(x result) float64 { return float64(x.Bytes) })
	hmin, hminAt := math.Inf(1), ""
	hmax, hmaxAt := math.Inf(-1), ""
	for _, x := range r.results {
		if x.Streamd != nil && x.N == o.N {
			if b := float64(x.Streamd.HistoryBytes); b < hmin {
				hmin, hminAt = b, x.Stream
			}
			if b := float64(x.Streamd.HistoryBytes); b > hmax {
				hmax, hmaxAt = b, x.Stream
			}
		}
	}
	fmt.Fprintf(w, "- *Memory at default settings.* Median serialized size: streamd's GK part %s, the whole Stream %s, KLL k = %d %s, DDSketch %s, t-digest ≈ %s. streamd's GK part is an exponential histogram of O(log(N/W)) summaries whose size depends on the order: from %s (%s) to %s (%s) at N = %d. The whole Stream is dominated by the sliding window, which at the default capacity of 2^20 values and ε = 0.001 is exact by design: it keeps up to the last 2^20 values raw as float64, 8 MiB once full. The bound streamd proves is ε·N in the worst case; a sketch that meets a rank error *in practice*, with high probability (KLL) or on smooth data (t-digest), can be much smaller.\n",
		fmtBytes(int(hist)), fmtBytes(int(all)), o.KLLK, fmtBytes(int(kb)),
		fmtBytes(int(r.medianOf(nameDD, func(x result) float64 { return float64(x.Bytes) }))),
		fmtBytes(int(r.medianOf(nameTDigest, func(x result) float64 { return float64(x.Bytes) }))),
		fmtBytes(int(hmin)), hminAt, fmtBytes(int(hmax)), hmaxAt, o.N)
	fmt.Fprintf(w, "\n**Caveats.** Timings come from a shared 2-core machine and are medians of %d runs; KLL and DataSketches' frequent items are randomized or hash-based, and one seed of each synthetic stream was run. streamd's timings are its library path on the CPU; the daemon's GPU back-ends are not measured here. The t-digest sizes are estimates (no serializer). Streams were rounded to float32 for every sketch, which favours none of them.\n", o.Reps)
}

// medianHeavy returns the median of f over the streams with heavy items.
func (r *report) medianHeavy(f func(hhResult) float64) float64 {
	var v []float64
	for _, h := range r.heavy {
		if h.True > 0 {
			v = append(v, f(h))
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	return median(v)
}

func sweepStreams(r *report) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range r.sweep {
		if !seen[p.Stream] {
			seen[p.Stream] = true
			out = append(out, p.Stream)
		}
	}
	return out
}
