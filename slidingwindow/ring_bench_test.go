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

// BenchmarkEncodeRings encodes, then decodes, 20,000 sliding windows of
// float32 values holding 1,000 values each (80 MB of values, out of the
// cache), as a checkpoint of many streams and the restart after it do.
func BenchmarkEncodeRings(b *testing.B) {
	const windows, values = 20_000, 1000
	ws := make([]*Window, windows)
	vals := make([]float32, values)
	for i := range ws {
		for j := range vals {
			vals[j] = float32(i*values + j)
		}
		ws[i], _ = NewFloat32(0.001, 1<<20)
		ws[i].AddFloat32(1, vals)
	}
	encs := make([][]byte, windows)
	b.Run("encode", func(b *testing.B) {
		b.SetBytes(windows * values * 4)
		var buf []byte
		for b.Loop() {
			for _, w := range ws {
				buf, _ = w.AppendBinary(buf[:0])
			}
		}
	})
	for i, w := range ws {
		encs[i], _ = w.AppendBinary(nil)
	}
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(windows * values * 4)
		for b.Loop() {
			for _, enc := range encs {
				var w Window
				if err := w.UnmarshalBinary(enc); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
