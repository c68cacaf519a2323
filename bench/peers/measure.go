package main

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"
)

// phis are the quantiles every sketch is asked for.
var phis = []float64{0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999}

// hhSupport is the heavy-hitter support: items with count ≥ 0.1% of N.
const hhSupport = 0.001

// accuracy is how well one sketch answered one stream.
type accuracy struct {
	MaxRankErr float64 // max over phis of rank error / N
	RelErr99   float64 // |v − exact| / |exact| at φ = 0.99
	RelErr999  float64 // the same at φ = 0.999
}

// result is one sketch on one stream.
type result struct {
	Stream, Sketch, Param string
	N                     int
	NsPerValue            float64 // median over the timed runs
	Bytes                 int
	accuracy
	Streamd *streamdExtra // streamd only
}

// streamdExtra breaks streamd's ingest into its parts.
type streamdExtra struct {
	ObserveNs, SortNs, DigestNs float64 // ns/value, medians
	HistoryBytes, CountsBytes   int
	Bound                       float64 // View.MaxRankError / N
}

// hhResult compares the heavy hitters of one stream.
type hhResult struct {
	Stream    string
	N         int
	True      int    // items with count ≥ hhSupport·N
	Streamd   [2]prf // no false negatives, no false positives
	DS        [2]prf
	LossyB    int
	DSBytes   int
	DSNs      float64
	StreamdHH int // reported for no false negatives
}

// prf is recall and precision of a reported set against the true set.
type prf struct {
	Reported        int
	Recall, Precise float64 // NaN when undefined
}

func score(got []float64, truth map[float64]int64) prf {
	hit := 0
	for _, v := range got {
		if _, ok := truth[v]; ok {
			hit++
		}
	}
	p := prf{Reported: len(got), Recall: math.NaN(), Precise: math.NaN()}
	if len(truth) > 0 {
		p.Recall = float64(hit) / float64(len(truth))
	}
	if len(got) > 0 {
		p.Precise = float64(hit) / float64(len(got))
	}
	return p
}

// evaluate asks s every φ and scores the answers against k.
func evaluate(s quantileSketch, k *key) (accuracy, error) {
	var a accuracy
	for _, phi := range phis {
		v, err := s.quantile(phi)
		if err != nil {
			return a, fmt.Errorf("quantile %v: %w", phi, err)
		}
		a.MaxRankErr = max(a.MaxRankErr, float64(k.rankError(phi, v))/float64(k.n()))
		switch phi {
		case 0.99:
			a.RelErr99 = relErr(v, k.quantile(phi))
		case 0.999:
			a.RelErr999 = relErr(v, k.quantile(phi))
		}
	}
	return a, nil
}

func relErr(v, want float64) float64 {
	if v == want {
		return 0
	}
	return math.Abs(v-want) / math.Abs(want) // +Inf when want is 0
}

func median(x []float64) float64 {
	y := slices.Clone(x)
	slices.Sort(y)
	if len(y)%2 == 1 {
		return y[len(y)/2]
	}
	return (y[len(y)/2-1] + y[len(y)/2]) / 2
}

// timed ingests x into reps fresh sketches of c and returns the last one
// and the median ns/value. A GC runs before each timed run.
func timed(c contender, x []float64, reps int) (quantileSketch, float64, []quantileSketch, error) {
	var ns []float64
	var last quantileSketch
	var all []quantileSketch
	for range reps {
		s, err := c.make()
		if err != nil {
			return nil, 0, nil, err
		}
		runtime.GC()
		t0 := time.Now()
		if err := s.ingest(x); err != nil {
			return nil, 0, nil, fmt.Errorf("%s %s: %w", c.name, c.param, err)
		}
		ns = append(ns, float64(time.Since(t0).Nanoseconds())/float64(len(x)))
		last = s
		if c.name == nameStreamd {
			all = append(all, s)
		}
	}
	return last, median(ns), all, nil
}

// compare runs every contender on st and, when hh, compares heavy
// hitters too.
func compare(st stream, k *key, contenders []contender, reps int, eps float64, hh bool) ([]result, *hhResult, error) {
	var out []result
	var sd *streamdSketch
	for _, c := range contenders {
		s, ns, all, err := timed(c, st.Values, reps)
		if err != nil {
			return nil, nil, err
		}
		a, err := evaluate(s, k)
		if err != nil {
			return nil, nil, fmt.Errorf("%s on %s: %w", c.name, st.Name, err)
		}
		b, err := s.bytes()
		if err != nil {
			return nil, nil, fmt.Errorf("%s on %s: encode: %w", c.name, st.Name, err)
		}
		r := result{Stream: st.Name, Sketch: c.name, Param: c.param, N: len(st.Values), NsPerValue: ns, Bytes: b, accuracy: a}
		if x, ok := s.(*streamdSketch); ok {
			sd = x
			r.Streamd, err = streamdParts(x, all, len(st.Values))
			if err != nil {
				return nil, nil, err
			}
		}
		out = append(out, r)
	}
	if !hh || sd == nil {
		return out, nil, nil
	}
	h, err := compareHeavy(st, k, sd, eps, reps)
	return out, h, err
}

func streamdParts(s *streamdSketch, all []quantileSketch, n int) (*streamdExtra, error) {
	var obs, srt, dig []float64
	for _, q := range all {
		x := q.(*streamdSketch)
		obs = append(obs, float64(x.tObserve.Nanoseconds())/float64(n))
		srt = append(srt, float64(x.tSort.Nanoseconds())/float64(n))
		dig = append(dig, float64(x.tDigest.Nanoseconds())/float64(n))
	}
	h, c, err := s.partBytes()
	if err != nil {
		return nil, err
	}
	return &streamdExtra{
		ObserveNs: median(obs), SortNs: median(srt), DigestNs: median(dig),
		HistoryBytes: h, CountsBytes: c,
		Bound: float64(s.view.MaxRankError()) / float64(n),
	}, nil
}

func compareHeavy(st stream, k *key, sd *streamdSketch, eps float64, reps int) (*hhResult, error) {
	truth := k.heavy(hhSupport)
	h := &hhResult{Stream: st.Name, N: len(st.Values), True: len(truth)}
	var ns []float64
	var f *frequentItems
	for range reps {
		var err error
		if f, err = newFrequentItems(eps); err != nil {
			return nil, err
		}
		runtime.GC()
		t0 := time.Now()
		if err := f.ingest(st.Values); err != nil {
			return nil, err
		}
		ns = append(ns, float64(time.Since(t0).Nanoseconds())/float64(len(st.Values)))
	}
	h.DSNs = median(ns)
	h.DSBytes = f.bytes()
	for i, nfp := range []bool{false, true} {
		h.Streamd[i] = score(streamdHeavy(sd.view, hhSupport, nfp), truth)
		got, err := f.heavy(hhSupport, nfp)
		if err != nil {
			return nil, err
		}
		h.DS[i] = score(got, truth)
	}
	_, c, err := sd.partBytes()
	h.LossyB = c
	return h, err
}

// sweepPoint is one size parameter of one sketch on one stream.
type sweepPoint struct {
	Stream, Sketch, Param string
	Value                 float64
	Bytes                 int
	MaxRankErr            float64
}

// sweep runs each contender once on st, untimed.
func sweep(st stream, k *key, contenders []contender) ([]sweepPoint, error) {
	var out []sweepPoint
	for _, c := range contenders {
		s, err := c.make()
		if err != nil {
			return nil, err
		}
		if x, ok := s.(*streamdSketch); ok {
			s = quantileOnly{x}
		}
		if err := s.ingest(st.Values); err != nil {
			return nil, err
		}
		a, err := evaluate(s, k)
		if err != nil {
			return nil, fmt.Errorf("%s %s on %s: %w", c.name, c.param, st.Name, err)
		}
		b, err := s.bytes()
		if err != nil {
			return nil, err
		}
		out = append(out, sweepPoint{st.Name, c.name, c.param, c.value, b, a.MaxRankErr})
	}
	return out, nil
}
