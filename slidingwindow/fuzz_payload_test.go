package slidingwindow

import (
	"testing"

	"streamd/internal/codec"
)

// FuzzUnmarshalPayload fuzzes the decoder behind its checksum: each input
// is a version byte and a payload, sealed in a valid envelope, so that the
// fuzzer reaches the fields rather than stopping at the CRC-32C as
// FuzzUnmarshal's mutations mostly do. A window that decodes answers its
// queries and takes more values without panicking, and encodes to what
// decodes to the same window.
func FuzzUnmarshalPayload(f *testing.F) {
	for _, tc := range []struct {
		eps float64
		n   int64
		add int
		f32 bool
	}{{0.5, 10, 25, false}, {0.3, 400, 2000, false}, {0.1, 100000, 0, false}, {0.5, 10, 25, true}, {0.3, 400, 2000, true}, {0.2, 64, 3, true}} {
		newWindow := New
		if tc.f32 {
			newWindow = NewFloat32
		}
		w, _ := newWindow(tc.eps, tc.n)
		for i := range tc.add {
			w.Add(int64(i), float64(i%7))
		}
		data, _ := w.MarshalBinary()
		f.Add(data[len(magic) : len(data)-4])
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) == 0 {
			return
		}
		data := codec.End(append(codec.Begin(nil, magic, raw[0]), raw[1:]...), 0)
		var w Window
		if err := w.UnmarshalBinary(data); err != nil {
			return
		}
		if s, err := w.Last(w.Capacity()); err == nil {
			s.Quantile(0.5)
			s.HeavyHitters(0.5)
		}
		enc, err := w.MarshalBinary()
		if err != nil {
			t.Fatalf("encode a decoded window: %v", err)
		}
		var d Window
		if err := d.UnmarshalBinary(enc); err != nil {
			t.Fatalf("decode a window encoded again: %v", err)
		}
		w.Add(0, 1, 2, 3)
	})
}
