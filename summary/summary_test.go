package summary

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"streamd/feed"
	"streamd/gksketch"
	"streamd/internal/codec"
	"streamd/internal/exact"
	"streamd/internal/radix"
	"streamd/lossy"
	"streamd/slidingwindow"
	"streamd/synth"
)

// feedHistory runs x through the pipeline path: rounded as the stream stores it,
// counted in arrival order, cut into windows that are radix-sorted and
// digested. The last partial window stays pending, as in the daemon; feedHistory
// returns it sorted, with the rounded values.
func feedHistory(t testing.TB, s *History, x []float64) (pending, rounded []float64) {
	t.Helper()
	cfg := s.Config()
	w := cfg.WindowSize
	rounded = make([]float64, len(x))
	for i, v := range x {
		rounded[i] = cfg.Round(v)
	}
	var d Digest
	var known []float64
	win := make([]float32, 0, w)
	for i := 0; i < len(rounded); i += w {
		chunk := rounded[i:min(i+w, len(rounded))]
		s.AddMoments(feed.Measure(chunk))
		if len(chunk) < w {
			pending = slices.Clone(chunk)
			slices.Sort(pending)
			break
		}
		spec := s.Spec(len(chunk), known)
		known = spec.Known
		if cfg.Float64 {
			win64 := slices.Clone(chunk)
			radix.Float64s(win64, nil)
			DigestSorted(win64, spec, &d)
		} else {
			win = win[:0]
			for _, v := range chunk {
				win = append(win, float32(v))
			}
			radix.Float32s(win, nil)
			DigestSorted(win, spec, &d)
		}
		if err := s.AddWindow(&d); err != nil {
			t.Fatal(err)
		}
	}
	return pending, rounded
}

func checkView(t *testing.T, key *exact.Stream, v *View, eps float64) {
	t.Helper()
	if v.Count() != key.N() {
		t.Fatalf("count %d, want %d", v.Count(), key.N())
	}
	for _, phi := range []float64{0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1} {
		x, lo, hi := v.Quantile(phi)
		if err := key.CheckQuantile(phi, x, eps, lo, hi); err != nil {
			t.Fatal(err)
		}
	}
	sorted := key.Sorted()
	for i := range 50 {
		x := sorted[i*(len(sorted)-1)/49]
		lo, hi := v.Rank(x)
		if err := key.CheckRank(x, lo, hi, eps); err != nil {
			t.Fatal(err)
		}
		lo, hi = v.Frequency(x)
		if err := key.CheckFrequency(x, lo, hi, eps); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []float64{2 * eps, 0.01, 0.1, 0.5} {
		if s <= eps {
			continue
		}
		var got []float64
		for _, e := range v.HeavyHitters(s) {
			got = append(got, e.Value)
		}
		if err := key.CheckHeavyHitters(s, eps, got); err != nil {
			t.Fatalf("support %v: %v", s, err)
		}
	}
}

func TestPipeline(t *testing.T) {
	n := 300000
	if testing.Short() {
		n = 100000
	}
	for _, st := range exact.Synthetic(n, 3, synth.Random, synth.Sorted, synth.Reverse, synth.Alternating) {
		for _, cfg := range []Config{
			{Epsilon: 0.001, WindowSize: 1 << 16},
			{Epsilon: 0.01, WindowSize: 10},
			{Epsilon: 0.1, WindowSize: 4096, SlidingWindow: 50000, Float64: true},
		} {
			t.Run(fmt.Sprintf("%s/ε=%v/W=%d", st.Name, cfg.Epsilon, cfg.WindowSize), func(t *testing.T) {
				s, err := NewHistory(cfg)
				if err != nil {
					t.Fatal(err)
				}
				pending, rounded := feedHistory(t, s, st.Values)
				key := exact.New(rounded)
				checkView(t, key, s.View(pending, true), cfg.Epsilon)
				if st := s.Stats(); st.Count != int64(len(rounded)) || st.Summarised != int64(len(rounded)-len(pending)) {
					t.Fatalf("stats %+v", st)
				}

				d := reencode(t, s)
				checkView(t, key, d.View(pending, true), cfg.Epsilon)
				got, want := d.Stats(), s.Stats()
				got.Bytes, want.Bytes = 0, 0 // capacities may differ
				if got != want {
					t.Errorf("stats after round trip %+v, want %+v", got, want)
				}
			})
		}
	}
}

func TestDigestSorted(t *testing.T) {
	x := []float64{1, 1, 1, 2, 3, 3, 4, 5, 5, 5, 5, 5, 6}
	var d Digest
	DigestSorted(x, WindowSpec{Spacing: 2, Threshold: 2, Known: []float64{2, 4.5, 6}}, &d)
	want := "[{1 3} {2 1} {5 5} {6 1}]"
	if got := fmt.Sprint(d.Runs); got != want {
		t.Errorf("runs %s, want %s", got, want)
	}
	if d.N != 13 || d.Sample[0].RMin != 1 || d.Sample[len(d.Sample)-1].RMin != 13 {
		t.Errorf("digest %+v", d)
	}
	// One value filling the window: one run, found by galloping.
	one := slices.Repeat([]float64{7}, 100000)
	DigestSorted(one, WindowSpec{Spacing: 50}, &d)
	if len(d.Runs) != 1 || d.Runs[0].Count != 100000 {
		t.Errorf("runs %v", d.Runs)
	}
}

// TestDigestRuns checks the runs DigestSorted keeps against counting every
// value, over thresholds on both sides of minProbeGap, windows of few and
// many distinct values, long runs at the ends, and Known lists with values
// present, absent, in long runs and beyond the window.
func TestDigestRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var d Digest
	for k := range 3000 {
		n := 1 + r.IntN(3000)
		distinct := 1 + r.IntN(n)
		if k%5 == 0 {
			distinct = 1 + r.IntN(8)
		}
		x := make([]float32, n)
		for i := range x {
			// Skewed: low values repeat far more often.
			x[i] = float32(int(float64(distinct) * math.Pow(r.Float64(), 3)))
		}
		slices.Sort(x)
		counts := map[float64]int64{}
		for _, v := range x {
			counts[float64(v)]++
		}
		var known []float64
		for range r.IntN(20) {
			known = append(known, float64(r.IntN(distinct+3)-1))
		}
		if r.IntN(2) == 0 {
			// Not a float32: its float32 rounding may be in x, but it is not.
			known = append(known, float64(r.IntN(distinct))+1e-9)
		}
		slices.Sort(known)
		known = slices.Compact(known)
		threshold := int64(r.IntN(80))
		DigestSorted(x, WindowSpec{Spacing: 1, Threshold: threshold, Known: known}, &d)
		var want []lossy.Run
		for v, c := range counts {
			if c > threshold || slices.Contains(known, v) {
				want = append(want, lossy.Run{Value: v, Count: c})
			}
		}
		slices.SortFunc(want, func(a, b lossy.Run) int { return cmp.Compare(a.Value, b.Value) })
		if !slices.Equal(d.Runs, want) {
			t.Fatalf("n=%d distinct=%d threshold=%d known=%v:\nruns %v\nwant %v", n, distinct, threshold, known, d.Runs, want)
		}
	}
}

func TestConfig(t *testing.T) {
	for _, c := range []Config{{Epsilon: 1}, {Epsilon: -1}, {Epsilon: 0.1, WindowSize: -1}, {Epsilon: 0.1, WindowSize: 10, SlidingWindow: -5}} {
		if _, err := NewHistory(c); err == nil {
			t.Errorf("NewHistory(%+v) succeeded", c)
		}
	}
	s, err := NewHistory(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Config(); c.Epsilon != DefaultEpsilon || c.WindowSize != DefaultWindowSize || c.SlidingWindow != DefaultSlidingWindow {
		t.Errorf("defaults %+v", c)
	}
}

func TestHousehold(t *testing.T) {
	cols := []string{"Global_active_power", "Voltage", "Global_intensity", "Sub_metering_1", "Sub_metering_2"}
	data, _, err := exact.CSVColumns("../data/household_power_consumption.csv.gz", cols...)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cols {
		t.Run(c, func(t *testing.T) {
			cfg := Config{Epsilon: 0.001, WindowSize: 1 << 14}
			s, _ := NewHistory(cfg)
			pending, rounded := feedHistory(t, s, data[c])
			checkView(t, exact.New(rounded), s.View(pending, true), 0.001)
			recent, err := NewSlidingWindow(cfg)
			if err != nil {
				t.Fatal(err)
			}
			recent.Add(0, rounded...)
			last, err := recent.Last(10000)
			if err != nil {
				t.Fatal(err)
			}
			v, _, _ := last.Quantile(0.99)
			tail := exact.New(rounded[len(rounded)-10000:])
			if e, err := tail.RankError(0.99, v); err != nil || float64(e) > 10 {
				t.Errorf("p99 of the last 10000: %v, rank error %d", err, e)
			}
		})
	}
}

func FuzzStreamUnmarshal(f *testing.F) {
	s, _ := NewHistory(Config{Epsilon: 0.1, WindowSize: 8, SlidingWindow: 20})
	feedHistory(f, s, []float64{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4})
	data, _ := s.MarshalBinary()
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		var s History
		if err := s.UnmarshalBinary(data); err != nil {
			return
		}
		v := s.View(nil, true)
		v.Quantile(0.5)
		v.HeavyHitters(0.5)
		_ = s.AddSorted([]float64{1, 2, 3})
	})
}

// TestEmptyHistoryEncoding: a history before its first window, as most of
// a million thin streams are at each checkpoint, encodes into a buffer
// with room without allocating, and decodes to an empty history of its
// configuration, whose summaries encode as NewSketch's and lossy.New's.
func TestEmptyHistoryEncoding(t *testing.T) {
	cfg := Config{Epsilon: 0.01, WindowSize: 100, SlidingWindow: 1000}
	s, err := NewHistory(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.AddMoments(feed.Measure([]float64{1, 2, 3}))
	buf := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() { _, _ = s.AppendBinary(buf[:0]) }); n != 0 {
		t.Errorf("encoding an empty history allocates %v times", n)
	}
	d := reencode(t, s)
	if got, want := d.Stats(), s.Stats(); got != want {
		t.Errorf("stats after round trip %+v, want %+v", got, want)
	}
	first, _ := s.MarshalBinary()
	if again, _ := d.MarshalBinary(); !bytes.Equal(again, first) {
		t.Errorf("a decoded empty history encodes as %x, was %x", again, first)
	}
	// A decoded history keeps a copy of its configuration until it shares
	// one that configures the same summaries.
	shared := cfg.WithDefaults()
	other := shared
	other.Epsilon = 0.02
	if d.ShareConfig(&other) {
		t.Error("ShareConfig took a configuration of another ε")
	}
	if !d.ShareConfig(&shared) || d.Config().Epsilon != shared.Epsilon || d.Config().SlidingWindow != shared.SlidingWindow {
		t.Errorf("ShareConfig of the history's own configuration: %+v, want %+v", d.Config(), shared)
	}
	for _, c := range []struct {
		name      string
		got, want func() ([]byte, error)
	}{
		{"sketch", d.Sketch().MarshalBinary, func() ([]byte, error) { k, _ := gksketch.NewSketch(cfg.Epsilon); return k.MarshalBinary() }},
		{"counts", d.Counts().MarshalBinary, func() ([]byte, error) { k, _ := lossy.New(cfg.Epsilon); return k.MarshalBinary() }},
	} {
		got, err1 := c.got()
		want, err2 := c.want()
		if err1 != nil || err2 != nil || !bytes.Equal(got, want) {
			t.Errorf("the decoded history's %s encodes as %x (%v), an empty one as %x (%v)", c.name, got, err1, want, err2)
		}
	}
}

// TestHistoryEncoding: a history round-trips, and an encoding that holds a
// sliding window — every version 1 encoding — is refused.
func TestHistoryEncoding(t *testing.T) {
	cfg := Config{Epsilon: 0.01, WindowSize: 100, SlidingWindow: 1000}
	s, err := NewHistory(cfg)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := synth.Generate(synth.Spec{Dist: synth.Zipf, Seed: 3}, 12345)
	pending, rounded := feedHistory(t, s, x)
	checkView(t, exact.New(rounded), s.View(pending, true), cfg.Epsilon)
	d := reencode(t, s)
	checkView(t, exact.New(rounded), d.View(pending, true), cfg.Epsilon)
	if got, want := d.Stats(), s.Stats(); got.Count != want.Count || got.Summarised != want.Summarised || got.Entries != want.Entries {
		t.Errorf("stats after round trip %+v, want %+v", got, want)
	}

	// The same history followed by a sliding window.
	recent, err := NewSlidingWindow(cfg)
	if err != nil {
		t.Fatal(err)
	}
	recent.Add(0, 1, 2, 3)
	withWindow, err := appendWithWindow(nil, s, recent)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.UnmarshalBinary(withWindow); !errors.Is(err, codec.ErrCorrupt) {
		t.Errorf("a history with a sliding window: %v, want ErrCorrupt", err)
	}
	old, err := os.ReadFile("testdata/stream-v1.bin")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.UnmarshalBinary(old); !errors.Is(err, codec.ErrVersion) {
		t.Errorf("version 1: %v, want ErrVersion", err)
	}
}

// TestHistoryBeforeWindow: a history whose values are all pending holds
// no summaries, answers over its pending values alone, encodes as an empty
// history that decodes to one, and makes its summaries with its first
// window.
func TestHistoryBeforeWindow(t *testing.T) {
	cfg := Config{Epsilon: 0.01, WindowSize: 100, SlidingWindow: 1000}
	s, err := NewHistory(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pending := []float64{1, 2, 2, 3}
	s.AddMoments(feed.Measure(pending))
	if sk, c := s.Bytes(); sk != 0 || c != 0 || s.history != nil || s.counts != nil {
		t.Fatalf("before a window: summaries of %d and %d bytes (%p, %p), want none", sk, c, s.history, s.counts)
	}
	checkView(t, exact.New(pending), s.View(pending, true), cfg.Epsilon)
	if st := s.Stats(); st.Count != 4 || st.Summarised != 0 || st.Entries != 0 || st.Bytes != 0 {
		t.Errorf("stats %+v", st)
	}
	if spec := s.Spec(100, nil); len(spec.Known) != 0 {
		t.Errorf("spec knows %v", spec.Known)
	}
	s.RemapCounts(func(v float64) float64 { return v + 1 })
	if s.Sketch().Count() != 0 || s.Counts().Count() != 0 || s.history != nil {
		t.Errorf("empty sketch and counts count %d and %d", s.Sketch().Count(), s.Counts().Count())
	}
	d := reencode(t, s)
	if st := d.Stats(); st.Count != 4 || st.Summarised != 0 {
		t.Errorf("decoded stats %+v", st)
	}
	if err := s.AddSorted(pending); err != nil {
		t.Fatal(err)
	}
	checkView(t, exact.New(pending), s.View(nil, true), cfg.Epsilon)
	if sk, c := s.Bytes(); sk == 0 || c == 0 || s.Stats().Summarised != 4 {
		t.Errorf("after a window: summaries of %d and %d bytes, stats %+v", sk, c, s.Stats())
	}
}

// TestHistoryOf: histories of one shared configuration (Init) keep it, not a
// copy each, and answer as a history of their own configuration does.
func TestHistoryOf(t *testing.T) {
	cfg := Config{Epsilon: 0.01, WindowSize: 100, SlidingWindow: 1000}.WithDefaults()
	a, b := new(History), new(History)
	for _, h := range []*History{a, b} {
		if err := h.Init(&cfg); err != nil {
			t.Fatal(err)
		}
	}
	if a.cfg != &cfg || b.cfg != &cfg || a.Config().Epsilon != cfg.Epsilon {
		t.Errorf("histories keep %p and %p, not the shared %p", a.cfg, b.cfg, &cfg)
	}
	own, err := NewHistory(cfg)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := synth.Generate(synth.Spec{Dist: synth.Zipf, Seed: 4}, 3456)
	pa, rounded := feedHistory(t, a, x)
	po, _ := feedHistory(t, own, x)
	checkView(t, exact.New(rounded), a.View(pa, true), cfg.Epsilon)
	da, _ := a.MarshalBinary()
	do, _ := own.MarshalBinary()
	if !slices.Equal(da, do) {
		t.Error("a history of a shared config encodes otherwise than one of its own")
	}
	if len(pa) != len(po) {
		t.Errorf("pending %d and %d values", len(pa), len(po))
	}
	bad := Config{Epsilon: 2}
	if err := new(History).Init(&bad); !errors.Is(err, ErrOutOfRange) {
		t.Errorf("epsilon 2: %v, want ErrOutOfRange", err)
	}
}

// appendWithWindow appends s's version 2 encoding with recent's encoding
// in place of the empty sliding window.
func appendWithWindow(dst []byte, s *History, recent *slidingwindow.Window) ([]byte, error) {
	data, err := s.MarshalBinary()
	if err != nil {
		return nil, err
	}
	w, err := recent.MarshalBinary()
	if err != nil {
		return nil, err
	}
	// The payload ends with the empty window's length, 0, before the CRC.
	start := len(dst)
	dst = append(dst, data[:len(data)-5]...)
	dst = codec.AppendBytes(dst, w)
	return codec.End(dst[:len(dst):len(dst)], start), nil
}

// TestDecodeV1 decodes a version 1 encoding, kept from when a History held
// its stream's sliding window: the history and the window come apart, and
// the window is as NewSlidingWindow makes it for the configuration.
func TestDecodeV1(t *testing.T) {
	old, err := os.ReadFile("testdata/stream-v1.bin")
	if err != nil {
		t.Fatal(err)
	}
	h, recent, err := DecodeV1(old)
	if err != nil {
		t.Fatal(err)
	}
	if st := h.Stats(); st.Count != 9 || st.Summarised != 8 {
		t.Fatalf("version 1 history: %+v, want 9 values, 8 summarised", st)
	}
	cfg := h.Config()
	want, err := NewSlidingWindow(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if recent.Added() != 9 || recent.Epsilon() != cfg.Epsilon || recent.Capacity() != cfg.SlidingWindow || recent.Footprint() != want.Footprint() {
		t.Fatalf("version 1 window: %d values, ε %v, capacity %d, footprint %d; want 9 values, %v, %d, %d", recent.Added(), recent.Epsilon(), recent.Capacity(), recent.Footprint(), cfg.Epsilon, cfg.SlidingWindow, want.Footprint())
	}
	// The history goes on as one made now.
	data, err := h.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var d History
	if err := d.UnmarshalBinary(data); err != nil {
		t.Fatalf("re-encoded: %v", err)
	}
	for _, bad := range [][]byte{old[:len(old)-1], data} {
		if _, _, err := DecodeV1(bad); !errors.Is(err, codec.ErrCorrupt) {
			t.Errorf("DecodeV1 of bad input: %v, want ErrCorrupt", err)
		}
	}
}

func FuzzDecodeV1(f *testing.F) {
	if old, err := os.ReadFile("testdata/stream-v1.bin"); err == nil {
		f.Add(old)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, recent, err := DecodeV1(data)
		if err != nil {
			return
		}
		h.View(nil, true).Quantile(0.5)
		_, _ = recent.Last(3)
		_ = h.AddSorted([]float64{1, 2, 3})
	})
}

// TestMergeViews: views of disjoint parts of a stream, with their own ε,
// merge into a view of the whole within the weighted ε.
func TestMergeViews(t *testing.T) {
	x, _ := synth.Generate(synth.Spec{Dist: synth.Zipf, Order: synth.Sorted, Seed: 4}, 200000)
	epss := []float64{0.001, 0.01, 0.001, 0.02}
	var views []*View
	var all []float64
	var errSum float64
	for i, eps := range epss {
		part := x[i*len(x)/len(epss) : (i+1)*len(x)/len(epss)]
		s, err := NewHistory(Config{Epsilon: eps, WindowSize: 4096})
		if err != nil {
			t.Fatal(err)
		}
		pending, rounded := feedHistory(t, s, part)
		all = append(all, rounded...)
		v := s.View(pending, true)
		if i%2 == 1 {
			// As a peer sends it: the summaries with pending values folded in.
			v = NewView(v.Epsilon(), v.Quantiles(), v.Counts())
		}
		views = append(views, v)
		errSum += eps * float64(len(part))
	}
	m := MergeViews(views)
	if want := errSum / float64(len(x)); math.Abs(m.Epsilon()-want) > 1e-12 {
		t.Fatalf("merged ε %v, want %v", m.Epsilon(), want)
	}
	checkView(t, exact.New(all), m, m.Epsilon())
	if one := MergeViews(views[:1]); one != views[0] {
		t.Fatal("merging one view should return it")
	}
}

// TestDiffDigests: equal digests have no difference; a count, a rank or
// the sign of a zero does.
func TestDiffDigests(t *testing.T) {
	x := []float64{-1, 0, 0, 2, 2, 2, 5}
	var a, b Digest
	DigestSorted(x, WindowSpec{Spacing: 2, Threshold: 1}, &a)
	DigestSorted(x, WindowSpec{Spacing: 2, Threshold: 1}, &b)
	if d := DiffDigests(&a, &b); d != "" {
		t.Fatalf("equal digests: %s", d)
	}
	for _, change := range []func(d *Digest){
		func(d *Digest) { d.N++ },
		func(d *Digest) { d.Sample[1].RMax++ },
		func(d *Digest) { d.Runs[0].Count++ },
		func(d *Digest) { d.Runs[0].Value = math.Copysign(0, -1) },
	} {
		c := Digest{N: b.N, Sample: slices.Clone(b.Sample), Runs: slices.Clone(b.Runs)}
		change(&c)
		if DiffDigests(&a, &c) == "" {
			t.Fatalf("no difference found: %+v against %+v", a, c)
		}
	}
}

// TestRound checks Round against float32 conversion: ties to even, −0 as
// +0, and ±Inf beyond float32's range, for a float32 stream; only −0
// changes in a float64 stream.
func TestRound(t *testing.T) {
	half := 1 + math.Ldexp(1, -24)
	for _, c := range []struct{ v, want32 float64 }{
		{0.1, 0.10000000149011612},
		{13.1, 13.100000381469727},
		{half, 1},
		{math.Nextafter(half, 2), 1 + math.Ldexp(1, -23)},
		{math.Nextafter(half, 0), 1},
		{16777217, 16777216},
		{3.4e38, 3.3999999521443642e38},
		{math.MaxFloat32, math.MaxFloat32},
		{3.5e38, math.Inf(1)},
		{-3.5e38, math.Inf(-1)},
		{5e-324, 0},
		{1e-40, 9.99994610111476e-41},
		{math.Copysign(0, -1), 0},
	} {
		if got := (Config{}).Round(c.v); got != c.want32 || math.Signbit(got) != math.Signbit(c.want32) {
			t.Errorf("float32 Round(%v) = %v, want %v", c.v, got, c.want32)
		}
		want64 := c.v + 0
		if got := (Config{Float64: true}).Round(c.v); got != want64 || got == 0 && math.Signbit(got) {
			t.Errorf("float64 Round(%v) = %v, want %v", c.v, got, want64)
		}
	}
}

// TestPairsConfig: a pair stream keeps float64, is no item stream too, and
// its kind survives the encoding.
func TestPairsConfig(t *testing.T) {
	if _, err := NewHistory(Config{Items: true, Pairs: true}); err == nil {
		t.Error("NewHistory of items and pairs succeeded")
	}
	s, err := NewHistory(Config{Epsilon: 0.01, WindowSize: 10, Pairs: true})
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Config(); !c.Pairs || !c.Float64 || c.Items {
		t.Fatalf("config %+v, want pairs with float64", c)
	}
	d := reencode(t, s)
	if c := d.Config(); !c.Pairs || !c.Float64 || c.Items {
		t.Fatalf("decoded config %+v, want pairs with float64", c)
	}
}

// reencode returns s encoded with MarshalBinary and decoded with
// UnmarshalBinary.
func reencode(t *testing.T, s *History) *History {
	t.Helper()
	data, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var d History
	if err := d.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	return &d
}
