package synth

import (
	"math"
	"slices"
	"testing"
)

// TestPairs: the pairs are reproducible, finite, y whole and correlated
// with x, a few huge, and the orders sort by x carrying y.
func TestPairs(t *testing.T) {
	const n = 20000
	x, y, err := GeneratePairs(7, n, Random)
	if err != nil {
		t.Fatal(err)
	}
	x2, y2, _ := GeneratePairs(7, n, Random)
	if !slices.Equal(x, x2) || !slices.Equal(y, y2) {
		t.Fatal("pairs of one seed differ")
	}
	huge := 0
	var below, above float64 // mean y of the pairs below and above the median x
	med := slices.Clone(x)
	slices.Sort(med)
	for i := range x {
		if x[i] <= 0 || math.IsInf(x[i], 0) || y[i] < 0 || y[i] != math.Round(y[i]) || y[i] >= 2e8 {
			t.Fatalf("pair %d: (%v, %v)", i, x[i], y[i])
		}
		if y[i] >= 1e8 {
			huge++
			continue
		}
		if x[i] < med[n/2] {
			below += y[i]
		} else {
			above += y[i]
		}
	}
	if huge < n/HugeEvery/3 || huge > 3*n/HugeEvery || above < 3*below {
		t.Fatalf("%d huge pairs; y below the median x %v, above %v", huge, below, above)
	}
	for _, order := range []Order{Sorted, Reverse} {
		sx, sy, err := GeneratePairs(7, n, order)
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Clone(med)
		if order == Reverse {
			slices.Reverse(want)
		}
		if !slices.Equal(sx, want) {
			t.Fatalf("%s: x not in order", order)
		}
		pos := map[float64]float64{}
		for i := range x {
			pos[x[i]] = y[i]
		}
		for i := range sx {
			if pos[sx[i]] != sy[i] {
				t.Fatalf("%s: y %v moved away from its x %v", order, sy[i], sx[i])
			}
		}
	}
	if _, _, err := GeneratePairs(7, 10, Sawtooth); err == nil {
		t.Fatal("sawtooth pairs generated")
	}
}
