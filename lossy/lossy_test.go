package lossy

import (
	"fmt"
	"slices"
	"testing"

	"streamd/internal/exact"
	"streamd/synth"
)

// build feeds x in sorted windows of w values through the histogram path
// the pipeline uses: runs above the threshold plus runs of known values.
func build(t testing.TB, eps float64, w int, x []float64) *Summary {
	t.Helper()
	s, err := New(eps)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]float64, 0, w)
	var runs []Run
	for i := 0; i < len(x); i += w {
		buf = append(buf[:0], x[i:min(i+w, len(x))]...)
		slices.Sort(buf)
		known := s.AppendValues(nil)
		th := s.Threshold(int64(len(buf)))
		runs = runs[:0]
		for _, r := range AppendRuns(nil, buf) {
			if _, ok := slices.BinarySearch(known, r.Value); ok || r.Count > th {
				runs = append(runs, r)
			}
		}
		if err := s.AddWindow(int64(len(buf)), runs); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// check asserts the lossy-counting guarantees against exact counts.
func check(t *testing.T, key *exact.Stream, s *Summary, eps float64) {
	t.Helper()
	if err := s.Valid(); err != nil {
		t.Fatal(err)
	}
	if s.Count() != key.N() {
		t.Fatalf("count %d, want %d", s.Count(), key.N())
	}
	if float64(s.MaxError()) > eps*float64(key.N()) {
		t.Fatalf("MaxError %d > εN", s.MaxError())
	}
	sorted := key.Sorted()
	for i := 0; i < 200 && len(sorted) > 0; i++ {
		v := sorted[i*(len(sorted)-1)/199]
		lo, hi := s.Estimate(v)
		if err := key.CheckFrequency(v, lo, hi, eps); err != nil {
			t.Fatal(err)
		}
	}
	if lo, hi := s.Estimate(-12345.5); lo != 0 || hi > s.Bound() {
		t.Fatalf("absent value: [%d, %d]", lo, hi)
	}
	for _, support := range []float64{eps * 1.5, 0.001, 0.01, 0.05, 0.1, 0.5} {
		if support <= eps {
			continue
		}
		var got []float64
		for _, e := range s.HeavyHitters(support) {
			got = append(got, e.Value)
		}
		if err := key.CheckHeavyHitters(support, eps, got); err != nil {
			t.Fatalf("support %v: %v", support, err)
		}
	}
}

func TestGuarantees(t *testing.T) {
	type run struct {
		n      int
		orders []synth.Order
	}
	runs := []run{{1, nil}, {2, nil}, {3, nil}, {21, nil}, {1000, nil}, {100000, nil},
		{1000000, []synth.Order{synth.Random, synth.Sorted, synth.Alternating}}}
	if !testing.Short() {
		runs = append(runs, run{10000000, []synth.Order{synth.Random}})
	}
	for _, r := range runs {
		streams := exact.Synthetic(r.n, uint64(r.n)+1, r.orders...)
		if r.n == 10000000 {
			streams = streams[5:6] // zipf
		}
		for _, st := range streams {
			key := exact.New(st.Values)
			for _, eps := range []float64{0.1, 0.01, 0.001} {
				for _, w := range []int{int(0.5 / eps), 1 << 16} {
					t.Run(fmt.Sprintf("%s/ε=%v/W=%d", st.Name, eps, w), func(t *testing.T) {
						s := build(t, eps, w, st.Values)
						check(t, key, s, eps)
						if b := SpaceBound(eps, int64(r.n)); s.Len() > b {
							t.Errorf("%d entries > bound %d", s.Len(), b)
						}
					})
				}
			}
		}
	}
}

func TestHousehold(t *testing.T) {
	cols := []string{"Global_intensity", "Sub_metering_1", "Voltage"}
	data, _, err := exact.CSVColumns("../data/household_power_consumption.csv.gz", cols...)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cols {
		key := exact.New(data[c])
		for _, eps := range []float64{0.01, 0.001} {
			t.Run(fmt.Sprintf("%s/ε=%v", c, eps), func(t *testing.T) {
				check(t, key, build(t, eps, 4096, data[c]), eps)
			})
		}
	}
}

// TestSpaceGrowth fails if the table grows faster than (1/ε)(ln εN + 3) on
// a stream of ever-new values with a few repeats (the worst case for lossy
// counting's table).
func TestSpaceGrowth(t *testing.T) {
	eps := 0.01
	s, _ := New(eps)
	src, _ := synth.NewSource(synth.Spec{Dist: synth.Zipf, S: 1.05, Distinct: 1 << 40, Seed: 9})
	w := make([]float64, 50)
	for i := 1; i <= 20000; i++ {
		for j := range w {
			w[j] = src.Next()
		}
		if err := s.Add(w...); err != nil {
			t.Fatal(err)
		}
		if b := SpaceBound(eps, s.Count()); s.Len() > b {
			t.Fatalf("N=%d: %d entries > bound %d", s.Count(), s.Len(), b)
		}
	}
	t.Logf("N=%d: %d entries, bound %d", s.Count(), s.Len(), SpaceBound(eps, s.Count()))
}

func TestRoundTripAndMerge(t *testing.T) {
	for _, st := range exact.Synthetic(300000, 5, synth.Random, synth.Sawtooth) {
		for _, eps := range []float64{0.01, 0.001} {
			t.Run(fmt.Sprintf("%s/ε=%v", st.Name, eps), func(t *testing.T) {
				key := exact.New(st.Values)
				s := build(t, eps, 5000, st.Values)
				data, _ := s.MarshalBinary()
				var d Summary
				if err := d.UnmarshalBinary(data); err != nil {
					t.Fatal(err)
				}
				check(t, key, &d, eps)

				half := len(st.Values) / 2
				a := build(t, eps, 5000, st.Values[:half])
				b := build(t, eps, 333, st.Values[half:])
				if err := a.Merge(b); err != nil {
					t.Fatal(err)
				}
				check(t, key, a, eps)
				other, _ := New(eps / 2)
				if a.Merge(other) == nil {
					t.Error("merge across ε succeeded")
				}
			})
		}
	}
}

func TestAddWindowRejects(t *testing.T) {
	s, _ := New(0.1)
	for _, runs := range [][]Run{
		{{2, 1}, {1, 1}},
		{{1, 1}, {1, 1}},
		{{1, 0}},
		{{1, 5}, {2, 6}},
	} {
		if err := s.AddWindow(10, runs); err == nil {
			t.Errorf("AddWindow(%v) succeeded", runs)
		}
	}
	if s.Count() != 0 {
		t.Errorf("rejected windows counted: %d", s.Count())
	}
}

func FuzzUnmarshal(f *testing.F) {
	s, _ := New(0.1)
	_ = s.Add(1, 1, 1, 2, 3, 3, 4, 4, 4, 4)
	data, _ := s.MarshalBinary()
	f.Add(data)
	e, _ := New(0.5)
	data, _ = e.MarshalBinary()
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		var s Summary
		if err := s.UnmarshalBinary(data); err != nil {
			return
		}
		if err := s.Valid(); err != nil {
			t.Fatal(err)
		}
		s.Estimate(1)
		s.HeavyHitters(0.5)
		_ = s.Add(1, 2)
	})
}

// TestStaleKnown digests each window against the table as it was lag
// windows earlier, with threshold ⌊εn⌋, as the pipeline does when windows
// of one stream are digested while earlier ones are in flight: every
// guarantee still holds.
func TestStaleKnown(t *testing.T) {
	for _, st := range exact.Synthetic(200000, 12, synth.Random, synth.Sawtooth, synth.Alternating) {
		for _, eps := range []float64{0.01, 0.001} {
			for _, lag := range []int{1, 3} {
				t.Run(fmt.Sprintf("%s/ε=%v/lag=%d", st.Name, eps, lag), func(t *testing.T) {
					s, _ := New(eps)
					w := 1000
					var history [][]float64 // Known as of each window
					buf := make([]float64, 0, w)
					for i := 0; i < len(st.Values); i += w {
						history = append(history, s.AppendValues(nil))
						known := history[max(0, len(history)-1-lag)]
						buf = append(buf[:0], st.Values[i:min(i+w, len(st.Values))]...)
						slices.Sort(buf)
						th := int64(eps * float64(len(buf)))
						var runs []Run
						for _, r := range AppendRuns(nil, buf) {
							if _, ok := slices.BinarySearch(known, r.Value); ok || r.Count > th {
								runs = append(runs, r)
							}
						}
						if err := s.AddWindowKnown(int64(len(buf)), runs, known); err != nil {
							t.Fatal(err)
						}
					}
					check(t, exact.New(st.Values), s, eps)
				})
			}
		}
	}
}

// TestRemap relabels the values of summaries, one to one, as a rekeyed
// item stream does, and checks every guarantee against the exact counts of
// the relabelled stream; and checks that entries mapped onto one value are
// merged with their counts and Deltas added.
func TestRemap(t *testing.T) {
	relabel := func(v float64) float64 { return -3*v + 7 } // one to one, order reversed
	for _, st := range exact.Synthetic(100000, 11, synth.Random, synth.Sorted) {
		for _, eps := range []float64{0.01, 0.001} {
			t.Run(fmt.Sprintf("%s/ε=%v", st.Name, eps), func(t *testing.T) {
				s := build(t, eps, 1<<12, st.Values)
				s.Remap(relabel)
				mapped := make([]float64, len(st.Values))
				for i, v := range st.Values {
					mapped[i] = relabel(v)
				}
				check(t, exact.New(mapped), s, eps)
			})
		}
	}
	s := build(t, 0.01, 100, []float64{1, 1, 1, 2, 2, 3, 3, 3, 3, 9})
	before := map[float64]Entry{}
	for _, e := range s.Entries() {
		before[e.Value] = e
	}
	s.Remap(func(v float64) float64 { return min(v, 2) }) // 3 and 9 onto 2
	if err := s.Valid(); err != nil {
		t.Fatal(err)
	}
	var merged Entry
	for _, v := range []float64{2, 3, 9} {
		merged.Count += before[v].Count
		merged.Delta += before[v].Delta
	}
	if got := s.Entries(); len(got) != 2 || got[1].Value != 2 || got[1].Count != merged.Count || got[1].Delta != merged.Delta {
		t.Fatalf("entries after merging remap: %+v, want value 2 with %+v", got, merged)
	}
}
