package slidingwindow

import "testing"

// BenchmarkGrowManyRings feeds 10,000 sliding windows of 2^20 float32
// values in turn, 64 values at a time, until each holds 2,560: the rings
// of many thin streams growing together, each out of the cache when its
// next values come, as a daemon feeding a million streams grows them.
func BenchmarkGrowManyRings(b *testing.B) {
	const windows, batch, rounds = 10_000, 64, 40
	vals := make([]float64, batch)
	for i := range vals {
		vals[i] = float64(i)
	}
	b.SetBytes(windows * batch * rounds * 4)
	for b.Loop() {
		ws := make([]*Window, windows)
		for i := range ws {
			ws[i], _ = NewFloat32(0.001, 1<<20)
		}
		for r := range rounds {
			for _, w := range ws {
				w.Add(int64(r), vals...)
			}
		}
	}
}
