package gksketch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"streamd/internal/exact"
	"streamd/synth"
)

// phis are the quantiles every test asks for, plus an even grid.
func phis() []float64 {
	p := []float64{0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1}
	for i := 1; i < 40; i++ {
		p = append(p, float64(i)/40)
	}
	return p
}

// build feeds x to a new sketch in windows of w values, as the pipeline
// does: each window sorted, then sampled every εw/2 ranks.
func build(t testing.TB, eps float64, w int, x []float64) *Sketch {
	t.Helper()
	k, err := NewSketch(eps)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]float64, 0, w)
	for i := 0; i < len(x); i += w {
		buf = append(buf[:0], x[i:min(i+w, len(x))]...)
		slices.Sort(buf)
		h := max(1, eps*float64(len(buf))/2)
		if err := k.AddWindow(FromSorted(buf, h)); err != nil {
			t.Fatal(err)
		}
	}
	return k
}

// check asserts every guarantee of a summary of key's values with error
// eps: quantiles within εN, ranks within their bounds and 2εN wide.
func check(t *testing.T, key *exact.Stream, s *Summary, eps float64) {
	t.Helper()
	if err := s.Valid(); err != nil {
		t.Fatal(err)
	}
	if s.Count() != key.N() {
		t.Fatalf("count %d, want %d", s.Count(), key.N())
	}
	if float64(s.MaxError()) > eps*float64(key.N()) {
		t.Errorf("MaxError %d > εN = %v", s.MaxError(), eps*float64(key.N()))
	}
	for _, phi := range phis() {
		q := s.Quantile(phi)
		if err := key.CheckQuantile(phi, q.Value, eps, q.RMin, q.RMax); err != nil {
			t.Fatal(err)
		}
	}
	sorted := key.Sorted()
	for i := 0; i < 30 && len(sorted) > 0; i++ {
		v := sorted[i*(len(sorted)-1)/29]
		lo, hi := s.Rank(v)
		if err := key.CheckRank(v, lo, hi, eps); err != nil {
			t.Fatal(err)
		}
		lo, hi = s.Rank(v + 0.5)
		if err := key.CheckRank(v+0.5, lo, hi, eps); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFromSorted(t *testing.T) {
	for _, w := range []int{1, 2, 3, 5, 21, 100, 1000, 65536} {
		for _, eps := range []float64{0.1, 0.01, 0.001} {
			x := make([]float64, w)
			for i := range x {
				x[i] = float64(i / 3) // duplicates
			}
			h := max(1, eps*float64(w)/2)
			s := FromSorted(x, h)
			if err := s.Valid(); err != nil {
				t.Fatalf("w=%d ε=%v: %v", w, eps, err)
			}
			if float64(s.MaxError()) > eps*float64(w)/2 {
				t.Errorf("w=%d ε=%v: sample error %d > εW/2", w, eps, s.MaxError())
			}
			check(t, exact.New(x), &s, eps/2)
		}
	}
}

func TestQueryEmpty(t *testing.T) {
	var s Summary
	if got := s.Quantile(0.5); got != (Tuple{}) {
		t.Errorf("empty Quantile = %v", got)
	}
	if lo, hi := s.Rank(1); lo != 0 || hi != 0 {
		t.Errorf("empty Rank = %d, %d", lo, hi)
	}
}

func TestMergeGapBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		na, nb := 1+rng.IntN(500), 1+rng.IntN(500)
		a, b := make([]float64, na), make([]float64, nb)
		for i := range a {
			a[i] = float64(rng.IntN(50))
		}
		for i := range b {
			b[i] = float64(rng.IntN(70))
		}
		slices.Sort(a)
		slices.Sort(b)
		sa, sb := FromSorted(a, 1+rng.Float64()*20), FromSorted(b, 1+rng.Float64()*20)
		m := Merge(&sa, &sb)
		if err := m.Valid(); err != nil {
			t.Fatal(err)
		}
		if g := m.MaxGap(); g > max(sa.MaxGap(), 1)+max(sb.MaxGap(), 1)-1 {
			t.Fatalf("merged gap %d > %d + %d − 1", g, sa.MaxGap(), sb.MaxGap())
		}
		all := append(slices.Clone(a), b...)
		eps := float64(m.MaxError()+1) / float64(len(all))
		check(t, exact.New(all), &m, eps)
	}
}

func TestCompressAndPrune(t *testing.T) {
	x := make([]float64, 100000)
	for i := range x {
		x[i] = float64(i % 977)
	}
	key := exact.New(x)
	slices.Sort(x)
	for _, target := range []int64{0, 1, 10, 100, 1000} {
		s := FromSorted(x, 1)
		s.Compress(target)
		if err := s.Valid(); err != nil {
			t.Fatal(err)
		}
		if s.MaxError() > target {
			t.Errorf("Compress(%d): error %d", target, s.MaxError())
		}
		if bound := int(int64(len(x))/(2*target+1)) + 2; target > 0 && s.Len() > bound {
			t.Errorf("Compress(%d): %d tuples > %d", target, s.Len(), bound)
		}
		check(t, key, &s, float64(target+1)/float64(len(x)))
	}
	s := FromSorted(x, 1)
	for _, b := range []int{1, 2, 10, 1000} {
		p := s.Prune(b)
		if err := p.Valid(); err != nil {
			t.Fatal(err)
		}
		if p.Len() > b+1 {
			t.Errorf("Prune(%d) kept %d", b, p.Len())
		}
		if want := (int64(len(x)) + int64(2*b) - 1) / int64(2*b); p.MaxError() > want {
			t.Errorf("Prune(%d): error %d > n/2b = %d", b, p.MaxError(), want)
		}
	}
}

// TestSketchGuarantees checks all-history quantiles and ranks against exact
// answers for every distribution and arrival order, ε in {0.1, 0.01,
// 0.001}, windows smaller and larger than 1/ε, and N from 1 up.
func TestSketchGuarantees(t *testing.T) {
	type run struct {
		n      int
		orders []synth.Order
		eps    []float64
	}
	runs := []run{
		{1, nil, []float64{0.1, 0.01, 0.001}},
		{2, nil, []float64{0.1, 0.001}},
		{3, nil, []float64{0.1, 0.001}},
		{21, nil, []float64{0.1, 0.001}},
		{1000, nil, []float64{0.1, 0.01, 0.001}},
		{100000, nil, []float64{0.1, 0.01, 0.001}},
		{1000000, []synth.Order{synth.Random, synth.Sorted, synth.Reverse, synth.OrganPipe}, []float64{0.01, 0.001}},
	}
	if !testing.Short() {
		runs = append(runs, run{10000000, []synth.Order{synth.Random, synth.Sawtooth}, []float64{0.001}})
	}
	for _, r := range runs {
		streams := exact.Synthetic(r.n, uint64(r.n), r.orders...)
		if r.n == 10000000 {
			streams = streams[:4] // uniform and normal
		}
		for _, st := range streams {
			key := exact.New(st.Values)
			for _, eps := range r.eps {
				for _, w := range []int{int(0.5 / eps), 1 << 16} {
					t.Run(fmt.Sprintf("%s/ε=%v/W=%d", st.Name, eps, w), func(t *testing.T) {
						k := build(t, eps, w, st.Values)
						if err := k.Valid(); err != nil {
							t.Fatal(err)
						}
						check(t, key, k.Summary(), eps)
						if b := SpaceBound(eps, int64(w), int64(r.n)); int64(k.Entries()) > b {
							t.Errorf("%d entries > space bound %d", k.Entries(), b)
						}
					})
				}
			}
		}
	}
}

func TestHousehold(t *testing.T) {
	cols := []string{"Global_active_power", "Voltage", "Global_intensity", "Sub_metering_1", "Sub_metering_3"}
	data, rejected, err := exact.CSVColumns("../data/household_power_consumption.csv.gz", cols...)
	if err != nil {
		t.Fatal(err)
	}
	if rejected != 3771*len(cols) {
		t.Errorf("rejected %d fields, want %d", rejected, 3771*len(cols))
	}
	for _, c := range cols {
		key := exact.New(data[c])
		for _, eps := range []float64{0.01, 0.001} {
			t.Run(fmt.Sprintf("%s/ε=%v", c, eps), func(t *testing.T) {
				k := build(t, eps, 1<<14, data[c])
				check(t, key, k.Summary(), eps)
			})
		}
	}
}

// TestSketchRoundTripAndMerge checks the guarantees again after encoding
// and decoding, and after merging sketches of two halves of a stream.
func TestSketchRoundTripAndMerge(t *testing.T) {
	for _, st := range exact.Synthetic(200000, 7, synth.Random, synth.Sorted, synth.Alternating) {
		for _, eps := range []float64{0.01, 0.001} {
			t.Run(fmt.Sprintf("%s/ε=%v", st.Name, eps), func(t *testing.T) {
				key := exact.New(st.Values)
				k := build(t, eps, 4096, st.Values)
				data, err := k.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				var d Sketch
				if err := d.UnmarshalBinary(data); err != nil {
					t.Fatal(err)
				}
				check(t, key, d.Summary(), eps)

				half := len(st.Values) / 3
				a := build(t, eps, 4096, st.Values[:half])
				b := build(t, eps, 1000, st.Values[half:])
				if err := a.Merge(b); err != nil {
					t.Fatal(err)
				}
				if err := a.Valid(); err != nil {
					t.Fatal(err)
				}
				check(t, key, a.Summary(), eps)

				other, _ := NewSketch(eps * 2)
				if err := a.Merge(other); err == nil {
					t.Error("merging sketches of different ε succeeded")
				}
			})
		}
	}
}

// TestSketchSpaceGrowth fails if the exponential histogram grows faster
// than its bound as N grows, on an adversarial (alternating) order.
func TestSketchSpaceGrowth(t *testing.T) {
	eps, w := 0.01, 1000
	k, _ := NewSketch(eps)
	src, _ := synth.NewSource(synth.Spec{Dist: synth.Pareto, Seed: 3})
	buf := make([]float64, w)
	for i := 1; i <= 4096; i++ {
		for j := range buf {
			buf[j] = src.Next()
		}
		slices.Sort(buf)
		if err := k.AddWindow(FromSorted(buf, eps*float64(w)/2)); err != nil {
			t.Fatal(err)
		}
		n := int64(i * w)
		if b := SpaceBound(eps, int64(w), n); int64(k.Entries()) > b {
			t.Fatalf("after %d values: %d entries > bound %d", n, k.Entries(), b)
		}
		if i&(i-1) == 0 {
			t.Logf("N=%d: %d buckets, %d entries (bound %d)", n, k.Buckets(), k.Entries(), SpaceBound(eps, int64(w), n))
		}
	}
}

func TestUnmarshalRejects(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5}
	s := FromSorted(x, 1)
	good, _ := s.MarshalBinary()
	for i := range good {
		bad := slices.Clone(good)
		bad[i] ^= 0x40
		var d Summary
		if err := d.UnmarshalBinary(bad); err == nil {
			t.Errorf("flipped byte %d accepted", i)
		}
	}
	for i := range len(good) {
		var d Summary
		if err := d.UnmarshalBinary(good[:i]); err == nil {
			t.Errorf("truncation to %d bytes accepted", i)
		}
	}
}

func FuzzSummaryUnmarshal(f *testing.F) {
	for _, x := range [][]float64{nil, {1}, {1, 1, 2, 3, 5, 8}} {
		s := FromSorted(x, 1)
		data, _ := s.MarshalBinary()
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s Summary
		if err := s.UnmarshalBinary(data); err != nil {
			return
		}
		if err := s.Valid(); err != nil {
			t.Fatalf("decoded invalid summary: %v", err)
		}
		s.Quantile(0.5)
		s.Rank(0)
		again, _ := s.MarshalBinary()
		var d Summary
		if err := d.UnmarshalBinary(again); err != nil {
			t.Fatalf("re-encoding does not decode: %v", err)
		}
	})
}

func FuzzSketchUnmarshal(f *testing.F) {
	k := build(f, 0.1, 10, []float64{5, 1, 4, 2, 3, 9, 9, 9, 0, 7, 6, 5, 4, 3, 2, 1, 8, 8, 8, 8, 1, 1, 2})
	data, _ := k.MarshalBinary()
	f.Add(data)
	empty, _ := NewSketch(0.5)
	data, _ = empty.MarshalBinary()
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		var k Sketch
		if err := k.UnmarshalBinary(data); err != nil {
			return
		}
		if err := k.Valid(); err != nil {
			t.Fatalf("decoded invalid sketch: %v", err)
		}
		k.Quantile(0.3)
		w := FromSorted([]float64{1, 2}, 1)
		_ = k.AddWindow(w)
	})
}

// TestMergeAll: the k-way merge equals repeated pairwise Merges.
func TestMergeAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		var ss []*Summary
		for range rng.IntN(6) + 1 {
			x := make([]float64, rng.IntN(300))
			for i := range x {
				x[i] = float64(rng.IntN(50))
			}
			slices.Sort(x)
			s := FromSorted(x, float64(1+rng.IntN(8)))
			if rng.IntN(3) == 0 {
				s.Compress(int64(rng.IntN(20)))
			}
			ss = append(ss, &s)
		}
		var want Summary
		for _, s := range ss {
			want = Merge(&want, s)
		}
		got := MergeAll(ss)
		if got.Count() != want.Count() || !slices.Equal(got.Tuples(), want.Tuples()) {
			t.Fatalf("trial %d: MergeAll differs from repeated Merge", trial)
		}
		if err := got.Valid(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMergeAllInf: tuples of value +Inf (which only a bad peer would send)
// merge without confusing an exhausted summary for a live one.
func TestMergeAllInf(t *testing.T) {
	a := FromSorted([]float64{1, 2}, 1)
	b := FromSorted([]float64{math.Inf(1), math.Inf(1)}, 1)
	m := MergeAll([]*Summary{&a, &b})
	if m.Count() != 4 || m.Len() != 4 || m.Valid() != nil {
		t.Fatalf("%v", m.Tuples())
	}
}
