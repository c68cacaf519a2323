package window

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestFiller(t *testing.T) {
	for _, f64 := range []bool{false, true} {
		f := NewFiller(4, f64, nil)
		var full []*Window
		vals := []float64{0.1, 1, 2, 3, 4, 5, 6, 7, 8, 9}
		f.Append(vals, func(w *Window) { full = append(full, w) })
		if len(full) != 2 || f.Len() != 2 {
			t.Fatalf("float64=%v: %d windows, %d pending", f64, len(full), f.Len())
		}
		want := 0.1
		if !f64 {
			want = float64(float32(0.1))
		}
		if vals[0] != want {
			t.Errorf("float64=%v: Append left %v, want the stored value %v", f64, vals[0], want)
		}
		got := append(full[0].AppendValues(nil), full[1].AppendValues(nil)...)
		got = f.AppendPartial(got)
		if !slices.Equal(got, vals) {
			t.Errorf("float64=%v: windows and partial hold %v, want %v", f64, got, vals)
		}
		if (full[0].F64 != nil) != f64 || full[0].Len() != 4 {
			t.Errorf("float64=%v: window %+v", f64, full[0])
		}
	}
}

// TestPacker: batches of at most four windows, in order, and every window
// sent even when fewer than four arrive before In is closed.
func TestPacker(t *testing.T) {
	in := make(chan *Window, 16)
	out := make(chan *Batch, 16)
	p := Packer{In: in, Out: out, Linger: time.Millisecond}
	for i := range 10 {
		in <- &Window{F32: []float32{float32(i)}}
	}
	close(in)
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var seen []float32
	for b := range out {
		if n := len(b.Windows); n < 1 || n > 4 {
			t.Fatalf("batch of %d windows", n)
		}
		for i, w := range b.Windows {
			if &b.Sort.F32[i][0] != &w.F32[0] {
				t.Fatalf("channel %d is not window %d", i, i)
			}
			seen = append(seen, w.F32[0])
		}
	}
	if len(seen) != 10 || !slices.IsSorted(seen) {
		t.Errorf("windows packed %v", seen)
	}
}

// TestPool: a stream's first window starts small, the later ones come
// whole from the pool (sync.Pool may drop a recycled buffer at any time, so
// reuse itself is not checked), and a nil pool allocates.
func TestPool(t *testing.T) {
	for _, f64 := range []bool{false, true} {
		var pool Pool
		f := NewFiller(1000, f64, &pool)
		var full []*Window
		collect := func(w *Window) { full = append(full, w) }
		f.Append(make([]float64, 10), collect)
		if c := cap(f.f32) + cap(f.f64); c != 64 {
			t.Errorf("float64=%v: first buffer of a stream holds %d values, want 64", f64, c)
		}
		f.Append(make([]float64, 1990), collect)
		if len(full) != 2 {
			t.Fatalf("float64=%v: %d windows", f64, len(full))
		}
		if c := cap(full[1].F32) + cap(full[1].F64); c != 1000 {
			t.Errorf("float64=%v: second window's buffer holds %d values, want 1000", f64, c)
		}
		old := full[1]
		pool.Recycle(old)
		if old.F32 != nil || old.F64 != nil {
			t.Errorf("float64=%v: Recycle left the window's buffers", f64)
		}
		f.Append(make([]float64, 1), collect)
		if c := cap(f.f32) + cap(f.f64); c != 1000 {
			t.Errorf("float64=%v: third buffer holds %d values, want 1000", f64, c)
		}
	}
	var none *Pool
	if b := none.getF32(8); cap(b) != 8 || len(b) != 0 {
		t.Errorf("nil pool: buffer len %d cap %d", len(b), cap(b))
	}
	none.Recycle(&Window{F32: make([]float32, 8)})
}

// TestAppendEncoded: decoding encoded values straight into the windows
// gives the same windows, partial window and stored values as cleaning
// the decoded values (NaN and ±Inf out, −0 to +0) and calling Append, for
// both precisions, both encodings and every window size, and passes every
// stored value to added exactly once, in order.
func TestAppendEncoded(t *testing.T) {
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, -1e-50, 1e-50, 3.5e38, -1e300, 1}
	r := rand.New(rand.NewPCG(1, 2))
	var in []float64
	for range 500 {
		if r.IntN(4) == 0 {
			in = append(in, specials[r.IntN(len(specials))])
		} else {
			in = append(in, r.NormFloat64()*1e3)
		}
	}
	for _, size := range []int{4, 8} {
		var data []byte
		var decoded []float64
		for _, v := range in {
			if size == 4 {
				data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(v)))
				decoded = append(decoded, float64(float32(v)))
			} else {
				data = binary.LittleEndian.AppendUint64(data, math.Float64bits(v))
				decoded = append(decoded, v)
			}
		}
		var clean []float64
		wantNaN, wantInf := 0, 0
		for _, v := range decoded {
			switch {
			case math.IsNaN(v):
				wantNaN++
			case math.IsInf(v, 0):
				wantInf++
			default:
				clean = append(clean, v+0) // −0 + 0 is +0
			}
		}
		for _, f64 := range []bool{false, true} {
			for _, w := range []int{1, 7, 64, 100, 1000} {
				name := fmt.Sprintf("size=%d float64=%v W=%d", size, f64, w)
				ref := NewFiller(w, f64, nil)
				var want []*Window
				stored := slices.Clone(clean)
				ref.Append(stored, func(x *Window) { want = append(want, x) })

				f := NewFiller(w, f64, &Pool{})
				var got []*Window
				var seen []float64
				var nan, inf int
				// Feed the bytes in uneven pieces, as reads deliver them.
				for rest := data; len(rest) > 0; {
					k := min(len(rest), size*(1+r.IntN(70)))
					n1, n2 := f.AppendEncoded(size, rest[:k],
						func(a []float32, b []float64) {
							if (a != nil) == f64 || (b != nil) != f64 && len(b) > 0 {
								t.Fatalf("%s: added got the other precision", name)
							}
							for _, v := range a {
								seen = append(seen, float64(v))
							}
							seen = append(seen, b...)
						},
						func(x *Window) { got = append(got, x) })
					nan, inf = nan+n1, inf+n2
					rest = rest[k:]
				}
				if nan != wantNaN || inf != wantInf {
					t.Errorf("%s: counted %d NaN and %d Inf, want %d and %d", name, nan, inf, wantNaN, wantInf)
				}
				if len(got) != len(want) {
					t.Fatalf("%s: %d full windows, want %d", name, len(got), len(want))
				}
				for i := range got {
					if !sameBits(got[i].AppendValues(nil), want[i].AppendValues(nil)) {
						t.Fatalf("%s: window %d differs", name, i)
					}
				}
				if !sameBits(f.AppendPartial(nil), ref.AppendPartial(nil)) {
					t.Fatalf("%s: partial windows differ", name)
				}
				for _, v := range seen {
					if v == 0 && math.Signbit(v) {
						t.Fatalf("%s: stored −0", name)
					}
				}
				if !sameBits(seen, stored) {
					t.Fatalf("%s: added saw %d values, want the %d stored ones", name, len(seen), len(stored))
				}
			}
		}
	}
}

// sameBits reports whether a and b hold the same values bit for bit, so
// that −0 and +0 differ.
func sameBits(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}
