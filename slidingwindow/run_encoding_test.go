package slidingwindow

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRunEncodingBulk: a run of values copied whole (as on a
// little-endian host) is encoded to the same bytes as one written value
// by value, little-endian, and reads back the same either way, with NaN
// and ±Inf found by both: runs of every length to 70 values, of random,
// tiny, huge and signed-zero values, with a non-finite value at a random
// place in some.
func TestRunEncodingBulk(t *testing.T) {
	if !hostLittleEndian() {
		t.Skip("the bulk copy is the encoding only on a little-endian host")
	}
	rnd := rand.New(rand.NewPCG(4, 11))
	special := []float64{0, math.Copysign(0, -1), math.SmallestNonzeroFloat32, math.MaxFloat32, -1e-40, 1e300}
	bad := []float64{math.NaN(), math.Inf(1), math.Inf(-1)}
	for n := range 71 {
		for _, nonFinite := range []bool{false, true} {
			vals := make([]float64, n)
			for i := range vals {
				if rnd.IntN(4) == 0 {
					vals[i] = special[rnd.IntN(len(special))]
				} else {
					vals[i] = rnd.NormFloat64() * 1000
				}
			}
			if nonFinite && n > 0 {
				vals[rnd.IntN(n)] = bad[rnd.IntN(len(bad))]
			}
			f32 := make([]float32, n)
			for i, v := range vals {
				f32[i] = float32(v)
			}
			checkRunEncoding(t, vals)
			checkRunEncoding(t, f32) // 1e300 is +Inf as a float32
		}
	}
}

// checkRunEncoding checks appendRun and readRun on run both ways.
func checkRunEncoding[E float32 | float64](t *testing.T, run []E) {
	t.Helper()
	nonFinite := slices.ContainsFunc(run, func(v E) bool { return math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) })
	prefix := []byte{7}
	bulk := appendRun(slices.Clone(prefix), run, true)
	each := appendRun(slices.Clone(prefix), run, false)
	if !slices.Equal(bulk, each) {
		t.Fatalf("%d values: copied whole %x, written one by one %x", len(run), bulk, each)
	}
	for _, way := range []bool{true, false} {
		got := make([]E, len(run))
		finite := readRun(got, each[len(prefix):], way)
		if finite == nonFinite {
			t.Fatalf("%d values, bulk %v: finite %v, with a NaN or ±Inf %v", len(run), way, finite, nonFinite)
		}
		if !slices.EqualFunc(got, run, func(a, b E) bool { return a == b || (a != a && b != b) }) {
			t.Fatalf("%d values, bulk %v: read %v, want %v", len(run), way, got, run)
		}
	}
}
