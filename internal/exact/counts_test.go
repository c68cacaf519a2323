package exact

import (
	"slices"
	"testing"
)

// TestCounts checks the counts, heavy hitters and checks of an answer key
// of strings against hand-counted answers.
func TestCounts(t *testing.T) {
	var keys []string
	for _, r := range []struct {
		key   string
		count int
	}{{"b", 30}, {"a", 30}, {"c", 20}, {"d", 10}, {"e", 5}, {"f", 5}} {
		for range r.count {
			keys = append(keys, r.key)
		}
	}
	c := CountKeys(keys) // N = 100
	if c.N() != 100 || c.Count("a") != 30 || c.Count("z") != 0 || !c.Has("f") || c.Has("z") {
		t.Fatalf("N %d, count(a) %d, count(z) %d, has(f) %v, has(z) %v", c.N(), c.Count("a"), c.Count("z"), c.Has("f"), c.Has("z"))
	}
	want := []KeyCount[string]{{"a", 30}, {"b", 30}, {"c", 20}}
	if got := c.HeavyHitters(0.2); !slices.Equal(got, want) {
		t.Errorf("HeavyHitters(0.2) = %v, want %v", got, want)
	}
	for _, tc := range []struct {
		key     string
		lo, hi  int64
		wantErr bool
	}{
		{"a", 25, 30, false}, {"a", 30, 35, false},
		{"a", 24, 30, true}, // lower bound more than εN = 5 below
		{"a", 31, 40, true}, // count below the lower bound
		{"a", 20, 29, true}, // count above the upper bound
		{"z", 0, 5, false},  // never sent, within its bounds
		{"z", 1, 5, true},
	} {
		if err := c.CheckFrequency(tc.key, tc.lo, tc.hi, 0.05); (err != nil) != tc.wantErr {
			t.Errorf("CheckFrequency(%q, %d, %d) = %v, want error %v", tc.key, tc.lo, tc.hi, err, tc.wantErr)
		}
	}
	// Support 0.2, ε 0.1: (s−ε)N = 10.
	for key, wantErr := range map[string]bool{"a": false, "d": false, "e": true, "z": true} {
		if err := c.CheckHeavyHitter(key, 0.2, 0.1); (err != nil) != wantErr {
			t.Errorf("CheckHeavyHitter(%q) = %v, want error %v", key, err, wantErr)
		}
	}
}

// TestBelowHeavyCut checks the cut at its boundary, where (s−ε)N is not a
// float64 exactly.
func TestBelowHeavyCut(t *testing.T) {
	for _, tc := range []struct {
		count, n     int64
		support, eps float64
		want         bool
	}{
		{60, 1000, 0.07, 0.01, false}, // (0.07−0.01)·1000 rounds to 60.00000000000001
		{59, 1000, 0.07, 0.01, true},
		{400, 10000, 0.07, 0.03, false}, // 400.00000000000006
		{399, 10000, 0.07, 0.03, true},
		{0, 1000, 0.01, 0.01, false},
	} {
		if got := BelowHeavyCut(tc.count, tc.n, tc.support, tc.eps); got != tc.want {
			t.Errorf("BelowHeavyCut(%d, %d, %v, %v) = %v, want %v", tc.count, tc.n, tc.support, tc.eps, got, tc.want)
		}
	}
}
