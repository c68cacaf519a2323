package slidingwindow

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"streamd/internal/codec"
)

// sinceCases are windows whose rings lie in every layout: within the first
// chunk, in doubling chunks, in whole chunks, full and wrapping, in Exact
// and Blocks mode, of float64 and float32 values.
var sinceCases = []struct {
	eps float64
	n   int64
	f32 bool
}{
	{0.5, 10, false}, {0.5, 10, true},
	{0.1, 300, false}, {0.1, 300, true},
	{0.05, 5000, true}, {0.01, 20000, false},
	{0.3, 100000, true}, {0.2, 1 << 20, true}, {0.001, 1 << 20, true},
}

func newSinceWindow(t testing.TB, eps float64, n int64, f32 bool) *Window {
	t.Helper()
	newWindow := New
	if f32 {
		newWindow = NewFloat32
	}
	w, err := newWindow(eps, n)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func mustEncode(t testing.TB, w *Window) []byte {
	t.Helper()
	b, err := w.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEncodingSinceChain: a chain of encodings of the values added since
// the last one, each decoded after the window the one before decoded to,
// rebuilds the window exactly (the same encoding, so the same answers)
// after every step, whatever was added: nothing, one value, a few, more
// than the ring holds. The window each step decodes after is left as it
// was, and the last one decoded goes on taking values as the original
// does. Each encoding holds the values added since, not the ring.
func TestEncodingSinceChain(t *testing.T) {
	rnd := rand.New(rand.NewPCG(20, 26))
	for _, tc := range sinceCases {
		w := newSinceWindow(t, tc.eps, tc.n, tc.f32)
		ringCap := w.RawCapacity()
		var prev Window
		if err := prev.UnmarshalBinary(mustEncode(t, w)); err != nil {
			t.Fatal(err)
		}
		tm := int64(0)
		for step := range 40 {
			var k int64
			switch rnd.IntN(6) {
			case 0:
				k = 0
			case 1:
				k = 1
			case 2:
				k = rnd.Int64N(300)
			case 3:
				k = rnd.Int64N(ringCap + 1)
			case 4:
				k = ringCap - w.RawLen() // just fills the ring
			default:
				k = rnd.Int64N(min(3*ringCap, 1<<21) + 1)
			}
			vals := make([]float64, k)
			for i := range vals {
				vals[i] = float64(rnd.IntN(1000)) + 0.25
			}
			for len(vals) > 0 {
				m := min(len(vals), 1+rnd.IntN(5000))
				tm += int64(rnd.IntN(3))
				w.Add(tm, vals[:m]...)
				vals = vals[m:]
			}
			since := prev.Added()
			enc, err := w.AppendBinarySince(nil, since)
			if err != nil {
				t.Fatal(err)
			}
			width := int64(8)
			if tc.f32 {
				width = 4
			}
			// The ring's values in the encoding: only those added since,
			// unless the ring holds no other.
			if added := w.Added() - since; added < w.RawLen() {
				whole := mustEncode(t, w)
				if got, want := int64(len(whole)-len(enc)), (w.RawLen()-added)*width-8; got < want {
					t.Fatalf("eps %v n %d step %d: %d values added to a ring of %d: encoding %d bytes, the whole window's %d", tc.eps, tc.n, step, added, w.RawLen(), len(enc), len(whole))
				}
			} else if enc[4] != formatVersion {
				t.Fatalf("eps %v n %d step %d: every value the ring holds is new, version %d", tc.eps, tc.n, step, enc[4])
			}
			before := mustEncode(t, &prev)
			var d Window
			if err := d.UnmarshalBinaryAfter(enc, &prev); err != nil {
				t.Fatalf("eps %v n %d step %d: %v", tc.eps, tc.n, step, err)
			}
			if !bytes.Equal(mustEncode(t, &d), mustEncode(t, w)) {
				t.Fatalf("eps %v n %d step %d: the window rebuilt differs from the original", tc.eps, tc.n, step)
			}
			if !bytes.Equal(mustEncode(t, &prev), before) {
				t.Fatalf("eps %v n %d step %d: decoding after a window changed it", tc.eps, tc.n, step)
			}
			prev = d
		}
		more := make([]float64, ringCap/3+7)
		for i := range more {
			more[i] = float64(i % 13)
		}
		w.Add(tm+1, more...)
		prev.Add(tm+1, more...)
		if !bytes.Equal(mustEncode(t, &prev), mustEncode(t, w)) {
			t.Fatalf("eps %v n %d: the rebuilt window took values unlike the original", tc.eps, tc.n)
		}
		for _, n := range []int64{1, ringCap / 2, tc.n} {
			a, errA := w.Last(n)
			b, errB := prev.Last(n)
			if (errA == nil) != (errB == nil) {
				t.Fatalf("eps %v n %d: Last(%d): %v and %v", tc.eps, tc.n, n, errA, errB)
			}
			if errA != nil {
				continue
			}
			va, _, _ := a.Quantile(0.5)
			vb, _, _ := b.Quantile(0.5)
			if va != vb {
				t.Fatalf("eps %v n %d: Last(%d) median %v, rebuilt %v", tc.eps, tc.n, n, va, vb)
			}
		}
	}
}

// TestEncodingSinceMismatch: values added since a position decode only
// after the window as it was there: without it, after a window at another
// position, of another ε, capacity or precision, the decoder fails with
// codec.ErrCorrupt and leaves the window it was given as it was. A since
// past the window's position is refused when encoding.
func TestEncodingSinceMismatch(t *testing.T) {
	w := newSinceWindow(t, 0.1, 300, true)
	w.Add(1, 1, 2, 3, 4, 5)
	var at5 Window
	if err := at5.UnmarshalBinary(mustEncode(t, w)); err != nil {
		t.Fatal(err)
	}
	w.Add(2, 6, 7)
	enc, err := w.AppendBinarySince(nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	if enc[4] != sinceVersion {
		t.Fatalf("version %d, want %d", enc[4], sinceVersion)
	}
	if _, err := w.AppendBinarySince(nil, 8); err == nil {
		t.Fatal("encoded since a position past the window's")
	}
	at4 := newSinceWindow(t, 0.1, 300, true)
	at4.Add(1, 1, 2, 3, 4)
	otherEps := newSinceWindow(t, 0.2, 300, true)
	otherEps.Add(1, 1, 2, 3, 4, 5)
	otherCap := newSinceWindow(t, 0.1, 301, true)
	otherCap.Add(1, 1, 2, 3, 4, 5)
	float64s := newSinceWindow(t, 0.1, 300, false)
	float64s.Add(1, 1, 2, 3, 4, 5)
	for name, prev := range map[string]*Window{"none": nil, "at 4": at4, "another epsilon": otherEps, "another capacity": otherCap, "float64": float64s} {
		var before []byte
		if prev != nil {
			before = mustEncode(t, prev)
		}
		var d Window
		if err := d.UnmarshalBinaryAfter(enc, prev); !errors.Is(err, codec.ErrCorrupt) {
			t.Errorf("after %s: %v, want codec.ErrCorrupt", name, err)
		}
		if prev != nil && !bytes.Equal(mustEncode(t, prev), before) {
			t.Errorf("after %s: the window changed", name)
		}
	}
	var d Window
	if err := d.UnmarshalBinaryAfter(enc, &at5); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mustEncode(t, &d), mustEncode(t, w)) {
		t.Fatal("the window rebuilt differs from the original")
	}
}

// FuzzUnmarshalAfter fuzzes the decoder of values added since a position
// with a window to decode them after: every window that decodes passes
// checkDecoded, and the window it followed is left as it was.
func FuzzUnmarshalAfter(f *testing.F) {
	prev, seeds := sinceSeeds(f)
	for _, s := range seeds {
		f.Add(s)
	}
	before := mustEncode(f, prev)
	f.Fuzz(func(t *testing.T, data []byte) {
		var d Window
		if err := d.UnmarshalBinaryAfter(data, prev); err != nil {
			return
		}
		if !bytes.Equal(mustEncode(t, prev), before) {
			t.Fatal("decoding after a window changed it")
		}
		checkDecoded(t, mustEncode(t, &d))
	})
}

// sinceSeeds returns a window of float32 values and encodings of windows
// that follow it, to seed FuzzUnmarshalAfter.
func sinceSeeds(t testing.TB) (*Window, [][]byte) {
	w := newSinceWindow(t, 0.1, 300, true)
	for i := range 250 {
		w.Add(int64(i), float64(i%17))
	}
	var prev Window
	if err := prev.UnmarshalBinary(mustEncode(t, w)); err != nil {
		t.Fatal(err)
	}
	var seeds [][]byte
	for _, k := range []int{0, 1, 40, 60, 400} {
		next := newSinceWindow(t, 0.1, 300, true)
		if err := next.UnmarshalBinary(mustEncode(t, &prev)); err != nil {
			t.Fatal(err)
		}
		for i := range k {
			next.Add(int64(300+i), float64(i%5))
		}
		enc, err := next.AppendBinarySince(nil, prev.Added())
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, enc)
	}
	return &prev, seeds
}
