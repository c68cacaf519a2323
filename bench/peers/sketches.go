package main

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/apache/datasketches-go/common"
	"github.com/apache/datasketches-go/frequencies"
	"github.com/apache/datasketches-go/kll"
	"github.com/influxdata/tdigest"

	"streamd/feed"
	"streamd/gpusort"
	"streamd/slidingwindow"
	"streamd/summary"
)

// quantileSketch is what the comparison needs from every quantile sketch.
type quantileSketch interface {
	// ingest adds x, in arrival order, and makes the sketch ready to
	// answer (for streamd: flush into a View; for the exact baseline: sort).
	ingest(x []float64) error
	// quantile answers the φ-quantile.
	quantile(phi float64) (float64, error)
	// bytes is the size of the sketch's own serialization.
	bytes() (int, error)
}

// A contender builds one kind of sketch with one size parameter.
type contender struct {
	name  string // sketch name, the same for every parameter
	param string // the size parameter, printed
	value float64
	make  func() (quantileSketch, error)
}

// Names of the contenders, in table order.
const (
	nameStreamd = "streamd"
	nameDD      = "DDSketch"
	nameKLL     = "KLL"
	nameTDigest = "t-digest"
	nameExact   = "exact"
)

var sketchNames = []string{nameStreamd, nameDD, nameKLL, nameTDigest, nameExact}

func streamdContender(eps float64, w int) contender {
	return contender{nameStreamd, fmt.Sprintf("ε=%g", eps), eps, func() (quantileSketch, error) { return newStreamdSketch(eps, w) }}
}

func ddContender(alpha float64) contender {
	return contender{nameDD, fmt.Sprintf("α=%g", alpha), alpha, func() (quantileSketch, error) {
		s, err := ddsketch.NewDefaultDDSketch(alpha)
		if err != nil {
			return nil, err
		}
		return &ddSketch{s}, nil
	}}
}

func kllContender(k int) contender {
	return contender{nameKLL, fmt.Sprintf("k=%d", k), float64(k), func() (quantileSketch, error) {
		s, err := kll.NewKllItemsSketch[float64](uint16(k), 8, common.ItemSketchDoubleComparator(false), common.ItemSketchDoubleSerDe{})
		if err != nil {
			return nil, err
		}
		return &kllSketch{s}, nil
	}}
}

func tdigestContender(compression float64) contender {
	return contender{nameTDigest, fmt.Sprintf("δ=%g", compression), compression, func() (quantileSketch, error) {
		return &tdigestSketch{tdigest.NewWithCompression(compression)}, nil
	}}
}

func exactContender() contender {
	return contender{nameExact, "-", 0, func() (quantileSketch, error) { return &exactSketch{}, nil }}
}

// streamdSketch runs streamd's library path: windows of W values, rounded
// to float32, radix-sorted (gpusort.SortFloat32), digested
// (summary.DigestSorted) and added (History.AddWindow), every value also
// added in arrival order to the sliding window (slidingwindow.Window.Add)
// and counted (History.AddMoments). The last partial window stays pending,
// as in the daemon, and queries go through History.View(pending, true).
type streamdSketch struct {
	s       *summary.History
	recent  *slidingwindow.Window
	w       int
	win     []float32
	scratch []uint32
	known   []float64
	d       summary.Digest
	pending []float64
	view    *summary.View

	// Time spent in each part of ingest.
	tObserve, tSort, tDigest time.Duration
}

func newStreamdSketch(eps float64, w int) (*streamdSketch, error) {
	cfg := summary.Config{Epsilon: eps, WindowSize: w}
	s, err := summary.NewHistory(cfg)
	if err != nil {
		return nil, err
	}
	recent, err := summary.NewSlidingWindow(cfg)
	if err != nil {
		return nil, err
	}
	return &streamdSketch{s: s, recent: recent, w: w, win: make([]float32, 0, w)}, nil
}

func (s *streamdSketch) ingest(x []float64) error {
	for i := 0; i < len(x); i += s.w {
		chunk := x[i:min(i+s.w, len(x))]
		t0 := time.Now()
		s.recent.Add(int64(i), chunk...)
		s.s.AddMoments(feed.Measure(chunk))
		t1 := time.Now()
		s.tObserve += t1.Sub(t0)
		if len(chunk) < s.w {
			s.pending = append(s.pending[:0], chunk...)
			slices.Sort(s.pending)
			s.tSort += time.Since(t1)
			break
		}
		s.win = s.win[:0]
		for _, v := range chunk {
			s.win = append(s.win, float32(v))
		}
		s.scratch = gpusort.SortFloat32(s.win, s.scratch)
		t2 := time.Now()
		s.tSort += t2.Sub(t1)
		spec := s.s.Spec(len(s.win), s.known)
		s.known = spec.Known
		summary.DigestSorted(s.win, spec, &s.d)
		if err := s.s.AddWindow(&s.d); err != nil {
			return err
		}
		s.tDigest += time.Since(t2)
	}
	s.view = s.s.View(s.pending, true)
	return nil
}

func (s *streamdSketch) quantile(phi float64) (float64, error) {
	x, _, _ := s.view.Quantile(phi)
	return x, nil
}

// bytes is the whole stream's encoding: the quantile sketch, the lossy
// counts and the sliding window.
func (s *streamdSketch) bytes() (int, error) {
	h, err := s.s.MarshalBinary()
	if err != nil {
		return 0, err
	}
	w, err := s.recent.MarshalBinary()
	return len(h) + len(w), err
}

// partBytes returns the encoded sizes of the all-history quantile sketch
// and of the lossy counting summary, the parts of the History.
func (s *streamdSketch) partBytes() (history, counts int, err error) {
	h, err := s.s.Sketch().MarshalBinary()
	if err != nil {
		return 0, 0, err
	}
	c, err := s.s.Counts().MarshalBinary()
	if err != nil {
		return 0, 0, err
	}
	return len(h), len(c), nil
}

// quantileOnly wraps a streamdSketch so that bytes counts only the
// all-history quantile sketch (gksketch), for comparisons at equal memory
// with sketches that answer only quantiles.
type quantileOnly struct{ *streamdSketch }

func (q quantileOnly) bytes() (int, error) {
	h, _, err := q.partBytes()
	return h, err
}

type ddSketch struct{ s *ddsketch.DDSketch }

func (d *ddSketch) ingest(x []float64) error {
	for _, v := range x {
		if err := d.s.Add(v); err != nil {
			return err
		}
	}
	return nil
}

func (d *ddSketch) quantile(phi float64) (float64, error) { return d.s.GetValueAtQuantile(phi) }

func (d *ddSketch) bytes() (int, error) {
	var b []byte
	d.s.Encode(&b, false)
	return len(b), nil
}

type kllSketch struct{ s *kll.ItemsSketch[float64] }

func (k *kllSketch) ingest(x []float64) error {
	for _, v := range x {
		k.s.Update(v)
	}
	return nil
}

func (k *kllSketch) quantile(phi float64) (float64, error) { return k.s.GetQuantile(phi, true) }

func (k *kllSketch) bytes() (int, error) {
	b, err := k.s.ToSlice()
	return len(b), err
}

type tdigestSketch struct{ s *tdigest.TDigest }

func (t *tdigestSketch) ingest(x []float64) error {
	for _, v := range x {
		t.s.Add(v, 1)
	}
	t.s.Centroids() // process the buffer
	return nil
}

func (t *tdigestSketch) quantile(phi float64) (float64, error) { return t.s.Quantile(phi), nil }

// bytes estimates: influxdata/tdigest has no serialization, so count 16
// bytes (mean and weight, float64) per centroid plus 16 for the header
// (compression and count).
func (t *tdigestSketch) bytes() (int, error) { return 16 + 16*len(t.s.Centroids()), nil }

// exactSketch keeps every value and sorts them once all have arrived.
type exactSketch struct{ x []float64 }

func (e *exactSketch) ingest(x []float64) error {
	e.x = append(e.x, x...)
	slices.Sort(e.x)
	return nil
}

func (e *exactSketch) quantile(phi float64) (float64, error) {
	if len(e.x) == 0 {
		return math.NaN(), fmt.Errorf("exact: empty")
	}
	return e.x[targetRank(phi, int64(len(e.x)))-1], nil
}

// bytes is 8 bytes per value: the values as a raw float64 array.
func (e *exactSketch) bytes() (int, error) { return 8 * len(e.x), nil }

// frequentItems is datasketches' frequent items sketch (Misra–Gries with
// reverse purge) keyed by the values' float64 bits.
type frequentItems struct{ s *frequencies.LongsSketch }

// newFrequentItems returns a sketch whose a-priori ε (3.5/maxMapSize) is at
// most eps: maxMapSize is the power of two at or above 3.5/eps.
func newFrequentItems(eps float64) (*frequentItems, error) {
	m := 1
	for float64(m) < 3.5/eps {
		m *= 2
	}
	s, err := frequencies.NewLongsSketchWithMaxMapSize(m)
	if err != nil {
		return nil, err
	}
	return &frequentItems{s}, nil
}

func (f *frequentItems) ingest(x []float64) error {
	for _, v := range x {
		if err := f.s.Update(int64(math.Float64bits(v))); err != nil {
			return err
		}
	}
	return nil
}

// heavy returns the values reported for support·N: with noFalsePositives
// those whose lower bound reaches it, otherwise those whose upper bound
// does.
func (f *frequentItems) heavy(support float64, noFalsePositives bool) ([]float64, error) {
	t := int64(math.Ceil(support * float64(f.s.GetStreamLength())))
	et := frequencies.ErrorTypeEnum.NoFalseNegatives
	if noFalsePositives {
		et = frequencies.ErrorTypeEnum.NoFalsePositives
	}
	rows, err := f.s.GetFrequentItemsWithThreshold(t, et)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(rows))
	for i, r := range rows {
		out[i] = math.Float64frombits(uint64(r.GetItem()))
	}
	return out, nil
}

func (f *frequentItems) bytes() int { return len(f.s.ToSlice()) }

// streamdHeavy returns the values streamd reports for support·N: with
// noFalsePositives those whose count lower bound reaches it, otherwise
// View.HeavyHitters (every value whose count may reach it).
func streamdHeavy(v *summary.View, support float64, noFalsePositives bool) []float64 {
	var out []float64
	cut := support * float64(v.Count())
	for _, e := range v.HeavyHitters(support) {
		if !noFalsePositives || float64(e.Count) >= cut {
			out = append(out, e.Value)
		}
	}
	return out
}
