package synth

import (
	"math"
	"slices"
	"testing"
)

func TestParseSizes(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Sizes
	}{
		{"zipf:5:1000000", Sizes{Min: 5, Max: 1000000, S: 1}},
		{"zipf:1:1", Sizes{Min: 1, Max: 1, S: 1}},
		{"zipf:10:500:1.5", Sizes{Min: 10, Max: 500, S: 1.5}},
	} {
		got, err := ParseSizes(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseSizes(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
		if back, err := ParseSizes(got.String()); err != nil || back != got {
			t.Errorf("ParseSizes(%q) = %+v, %v; want %+v", got.String(), back, err, got)
		}
	}
	for _, in := range []string{"", "zipf", "zipf:5", "uniform:5:10", "zipf:0:10", "zipf:10:5", "zipf:5:x",
		"zipf:5:10:0", "zipf:5:10:-1", "zipf:5:10:NaN", "zipf:5:10:Inf", "zipf:5:10:1:2"} {
		if z, err := ParseSizes(in); err == nil {
			t.Errorf("ParseSizes(%q) = %+v, want an error", in, z)
		}
	}
}

// TestSizesDraw checks the sizes of a million streams of zipf:5:1000000
// against the distribution: bounds, the share of 5–50, the number of
// large streams and the mean, within a few standard deviations.
func TestSizesDraw(t *testing.T) {
	z := Sizes{Min: 5, Max: 1_000_000, S: 1}
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	sizes := z.Draw(1, n)
	if len(sizes) != n {
		t.Fatalf("drew %d sizes, want %d", len(sizes), n)
	}
	var small, big int
	for _, s := range sizes {
		if s < z.Min || s > z.Max {
			t.Fatalf("size %d out of [%d, %d]", s, z.Min, z.Max)
		}
		if s <= 50 {
			small++
		}
		if s >= 10_000 {
			big++
		}
	}
	// Binomial counts: mean np, standard deviation √(np(1−p)).
	within := func(what string, got int, p float64) {
		t.Helper()
		mean, sd := float64(n)*p, math.Sqrt(float64(n)*p*(1-p))
		if math.Abs(float64(got)-mean) > 5*sd {
			t.Errorf("%s: %d of %d, want %.0f ± %.0f", what, got, n, mean, 5*sd)
		}
	}
	if p := 1 - z.Tail(51); math.Abs(p-0.902) > 0.001 {
		t.Errorf("P(size ≤ 50) = %v, want 0.902", p)
	}
	within("sizes 5–50", small, 1-z.Tail(51))
	within("sizes ≥ 10,000", big, z.Tail(10_000))
	if m := z.Mean(); math.Abs(m-60.55) > 0.01 {
		t.Errorf("mean %v, want 60.55", m)
	}
	// The smallest size holds P(size < Min+1) of the streams.
	within("size 5", count(sizes, 5), 1-z.Tail(6))

	if again := z.Draw(1, n); !slices.Equal(again, sizes) {
		t.Error("the same seed drew other sizes")
	}
	if other := z.Draw(2, n); slices.Equal(other, sizes) {
		t.Error("seeds 1 and 2 drew the same sizes")
	}
}

// TestSizesBounds: the bounds are reached, and a single size is that
// size.
func TestSizesBounds(t *testing.T) {
	z := Sizes{Min: 3, Max: 20, S: 1}
	sizes := z.Draw(7, 100_000)
	if lo, hi := slices.Min(sizes), slices.Max(sizes); lo != 3 || hi != 20 {
		t.Errorf("sizes in [%d, %d], want [3, 20]", lo, hi)
	}
	for _, s := range (Sizes{Min: 9, Max: 9, S: 2}).Draw(1, 100) {
		if s != 9 {
			t.Fatalf("size %d of zipf:9:9, want 9", s)
		}
	}
	if got := (Sizes{Min: 9, Max: 9, S: 2}).Mean(); got != 9 {
		t.Errorf("mean of zipf:9:9 = %v, want 9", got)
	}
}

func count(x []int64, v int64) int {
	n := 0
	for _, y := range x {
		if y == v {
			n++
		}
	}
	return n
}
