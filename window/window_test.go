package window

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestFiller(t *testing.T) {
	for _, f64 := range []bool{false, true} {
		f := NewFiller(4, f64, nil)
		var full []*Buffer
		// Values of float32 precision, as Append takes them (the caller
		// rounds).
		vals := []float64{0.5, 1, 2, 3, 4, 5, 6, 7, 8, 9}
		f.Append(vals, func(w *Buffer) { full = append(full, w) })
		if len(full) != 2 || f.Len() != 2 {
			t.Fatalf("float64=%v: %d windows, %d pending", f64, len(full), f.Len())
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
	in := make(chan Full[int], 16)
	out := make(chan *Quad[int], 16)
	p := Packer[int]{In: in, Out: out, Linger: time.Millisecond}
	for i := range 10 {
		in <- Full[int]{&Buffer{F32: []float32{float32(i)}}, i}
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
			if &b.Sort.F32[i][0] != &w.Buffer.F32[0] {
				t.Fatalf("channel %d is not window %d", i, i)
			}
			if w.Owner != int(w.Buffer.F32[0]) {
				t.Fatalf("window %v has owner %d", w.Buffer.F32, w.Owner)
			}
			seen = append(seen, w.Buffer.F32[0])
		}
	}
	if len(seen) != 10 || !slices.IsSorted(seen) {
		t.Errorf("windows packed %v", seen)
	}
}

// TestPool: a stream's first window starts at the size of its first
// values and doubles, the later ones come whole from the pool (sync.Pool
// may drop a recycled buffer at any time, so reuse itself is not checked),
// and a nil pool allocates.
func TestPool(t *testing.T) {
	for _, f64 := range []bool{false, true} {
		var pool Pool
		f := NewFiller(1000, f64, &pool)
		var full []*Buffer
		collect := func(w *Buffer) { full = append(full, w) }
		f.Append(make([]float64, 10), collect)
		if c := cap(f.f32) + cap(f.f64); c != 10 {
			t.Errorf("float64=%v: first buffer of a stream holds %d values, want 10", f64, c)
		}
		f.Append(make([]float64, 3), collect)
		if c := cap(f.f32) + cap(f.f64); c != 20 {
			t.Errorf("float64=%v: second buffer of a stream holds %d values, want 20", f64, c)
		}
		f.Append(make([]float64, 1987), collect)
		if len(full) != 2 {
			t.Fatalf("float64=%v: %d windows", f64, len(full))
		}
		if c := cap(full[1].F32) + cap(full[1].F64); c != 1000 {
			t.Errorf("float64=%v: second window's buffer holds %d values, want 1000", f64, c)
		}
		// The first buffer grew up to a whole window, never past it, so
		// it goes back to the pool too.
		if c := cap(full[0].F32) + cap(full[0].F64); c != 1000 {
			t.Errorf("float64=%v: first window's buffer holds %d values, want 1000", f64, c)
		}
		if full[0].home == nil || full[1].home == nil {
			t.Errorf("float64=%v: windows recycled to %p and %p, want the pool", f64, full[0].home, full[1].home)
		}
		pool.Recycle(full[0])
		sizes := 0
		for range pool.pools.Range {
			sizes++
		}
		if sizes != 1 {
			t.Errorf("float64=%v: pool keeps %d sizes of buffers, want 1", f64, sizes)
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
	if b, staged := none.getF32(8, true); cap(b) != 8 || len(b) != 0 || staged {
		t.Errorf("nil pool: buffer len %d cap %d, staged %v", len(b), cap(b), staged)
	}
	none.Recycle(&Buffer{F32: make([]float32, 8)})
}

// TestAppendFloat32: copying float32 values into the windows gives the
// same windows and partial window as Append of the same values, for both
// precisions, every window size and uneven pieces.
func TestAppendFloat32(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	in := make([]float32, 700)
	for i := range in {
		in[i] = float32(r.NormFloat64() * 1e3)
	}
	wide := make([]float64, len(in))
	for i, v := range in {
		wide[i] = float64(v)
	}
	for _, f64 := range []bool{false, true} {
		for _, w := range []int{1, 7, 64, 100, 1000} {
			name := fmt.Sprintf("float64=%v W=%d", f64, w)
			ref := NewFiller(w, f64, nil)
			var want []*Buffer
			ref.Append(slices.Clone(wide), func(x *Buffer) { want = append(want, x) })
			f := NewFiller(w, f64, &Pool{})
			var got []*Buffer
			for rest := in; len(rest) > 0; {
				k := min(len(rest), 1+r.IntN(70))
				f.AppendFloat32(rest[:k], func(x *Buffer) { got = append(got, x) })
				rest = rest[k:]
			}
			if len(got) != len(want) {
				t.Fatalf("%s: %d full windows, want %d", name, len(got), len(want))
			}
			for i := range got {
				if (got[i].F64 != nil) != f64 || !sameBits(got[i].AppendValues(nil), want[i].AppendValues(nil)) {
					t.Fatalf("%s: window %d differs", name, i)
				}
			}
			if !sameBits(f.AppendPartial(nil), ref.AppendPartial(nil)) {
				t.Fatalf("%s: partial windows differ", name)
			}
		}
	}
}

// sameBits reports whether a and b hold the same values bit for bit, so
// that −0 and +0 differ.
func sameBits(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// fakeStager lends up to limit buffers of each precision and records what
// comes back.
type fakeStager struct {
	limit          int
	lent32, lent64 int
	back32, back64 int
	lentPtr32      map[*float32]bool
	lentPtr64      map[*float64]bool
}

// valueBytes returns the bytes of a value in a buffer of float64 values
// if f64, of float32 values if not.
func valueBytes(f64 bool) int {
	if f64 {
		return 8
	}
	return 4
}

// newFakeStager returns a fakeStager that lends up to limit buffers of
// each precision.
func newFakeStager(limit int) *fakeStager {
	return &fakeStager{limit: limit, lentPtr32: map[*float32]bool{}, lentPtr64: map[*float64]bool{}}
}

func (s *fakeStager) StageF32(n int) []float32 {
	if s.lent32 == s.limit {
		return nil
	}
	s.lent32++
	b := make([]float32, n)
	s.lentPtr32[&b[0]] = true
	return b
}

func (s *fakeStager) StageF64(n int) []float64 {
	if s.lent64 == s.limit {
		return nil
	}
	s.lent64++
	b := make([]float64, n)
	s.lentPtr64[&b[0]] = true
	return b
}

func (s *fakeStager) UnstageF32(w []float32) {
	if !s.lentPtr32[&w[:1][0]] {
		panic("UnstageF32 of a buffer not lent")
	}
	s.back32++
}

func (s *fakeStager) UnstageF64(w []float64) {
	if !s.lentPtr64[&w[:1][0]] {
		panic("UnstageF64 of a buffer not lent")
	}
	s.back64++
}

// TestPoolStager: whole windows are filled in buffers the Stager lends
// (a stream's first, small buffer never is), windows it cannot lend come
// from the heap, and Recycle hands each buffer back where it came from.
func TestPoolStager(t *testing.T) {
	for _, f64 := range []bool{false, true} {
		st := newFakeStager(2)
		pool := &Pool{Stager: st}
		f := NewFiller(100, f64, pool)
		var full []*Buffer
		f.Append(make([]float64, 450), func(w *Buffer) { full = append(full, w) })
		// Windows: the first grew from a small heap buffer, the next two
		// are staged, the fourth is from the heap again (limit reached).
		want := []bool{false, true, true, false}
		if len(full) != len(want) {
			t.Fatalf("float64=%v: %d windows", f64, len(full))
		}
		for i, w := range full {
			if w.Staged != want[i] {
				t.Errorf("float64=%v: window %d staged %v, want %v", f64, i, w.Staged, want[i])
			}
		}
		for _, w := range full {
			pool.Recycle(w)
		}
		if back := st.back32 + st.back64; back != 2 {
			t.Errorf("float64=%v: %d buffers handed back to the stager, want 2", f64, back)
		}
	}
}

// TestFillerGrows: a partial window's buffer starts at the size of the
// first values and doubles up to W, and BytesAfter says what Bytes will be after any append.
func TestFillerGrows(t *testing.T) {
	for _, f64 := range []bool{false, true} {
		v := valueBytes(f64)
		var pool Pool
		f := NewFiller(1000, f64, &pool)
		var caps []int
		windows := 0
		full := func(w *Buffer) { windows++; pool.Recycle(w) }
		for _, n := range []int{1, 63, 1, 100, 300, 535, 1, 999, 1000, 1500, 500, 7, 0, 3000} {
			want := f.BytesAfter(n)
			f.Append(make([]float64, n), full)
			if got := f.Bytes(); got != want {
				t.Fatalf("float64=%v: after %d more values Bytes is %d, BytesAfter said %d", f64, n, got, want)
			}
			caps = append(caps, f.Bytes()/v)
		}
		want := []int{1, 64, 128, 256, 512, 0, 1000, 0, 0, 1000, 0, 1000, 1000, 1000}
		if !slices.Equal(caps, want) {
			t.Errorf("float64=%v: buffer sizes %v, want %v", f64, caps, want)
		}
		if windows != 8 {
			t.Errorf("float64=%v: %d windows filled, want 8", f64, windows)
		}
	}
}

// TestFillerShrinkTake: Shrink keeps the partial window's values in a
// buffer of exactly their number, hands a staged buffer back to the
// Stager, and lets the window grow again; Take hands the partial window
// over, short, and leaves the Filler empty.
func TestFillerShrinkTake(t *testing.T) {
	for _, f64 := range []bool{false, true} {
		v := valueBytes(f64)
		st := newFakeStager(4)
		pool := &Pool{Stager: st}
		f := NewFiller(100, f64, pool)
		var full []*Buffer
		keep := func(w *Buffer) { full = append(full, w) }
		vals := make([]float64, 130)
		for i := range vals {
			vals[i] = float64(i)
		}
		f.Append(vals, keep) // one window; the partial one is staged
		if freed := f.Shrink(); freed != (100-30)*v || f.Bytes() != 30*v {
			t.Fatalf("float64=%v: Shrink freed %d bytes, holds %d; want %d, %d", f64, freed, f.Bytes(), 70*v, 30*v)
		}
		if back := st.back32 + st.back64; back != 1 {
			t.Fatalf("float64=%v: %d buffers handed back, want 1", f64, back)
		}
		if freed := f.Shrink(); freed != 0 {
			t.Fatalf("float64=%v: a second Shrink freed %d bytes", f64, freed)
		}
		f.Append(vals[:75], keep) // 105 values: one more window
		if len(full) != 2 || f.Len() != 5 {
			t.Fatalf("float64=%v: %d windows and %d values after growing again", f64, len(full), f.Len())
		}
		got := full[0].AppendValues(nil)
		got = full[1].AppendValues(got)
		got = f.AppendPartial(got)
		if want := append(slices.Clone(vals), vals[:75]...); !slices.Equal(got, want) {
			t.Fatalf("float64=%v: values %v, want %v", f64, got, want)
		}
		w := f.Take()
		if w == nil || w.Len() != 5 || f.Len() != 0 || f.Bytes() != 0 || f.Take() != nil {
			t.Fatalf("float64=%v: Take gave %v and left %d values in %d bytes", f64, w, f.Len(), f.Bytes())
		}
		if got := w.AppendValues(nil); !slices.Equal(got, vals[70:75]) {
			t.Fatalf("float64=%v: taken window %v, want %v", f64, got, vals[70:75])
		}
	}
}

// TestPoolHomes: Fillers of two sizes and both precisions share one
// Pool, with a Stager that lends one buffer of each precision: each whole
// window from the heap goes home to the pool of its size and precision,
// the staged ones back to the Stager, and every later window is whole, of
// its Filler's size and precision.
func TestPoolHomes(t *testing.T) {
	st := newFakeStager(1)
	pool := &Pool{Stager: st}
	homes := map[*sync.Pool]string{}
	staged := 0
	for _, size := range []int{64, 100} {
		for _, f64 := range []bool{false, true} {
			name := fmt.Sprintf("W=%d float64=%v", size, f64)
			f := NewFiller(size, f64, pool)
			var full []*Buffer
			f.Append(make([]float64, 4*size+1), func(w *Buffer) { full = append(full, w) })
			for i, w := range full {
				if (w.F64 != nil) != f64 || w.Len() != size || cap(w.F32)+cap(w.F64) != size {
					t.Errorf("%s: window %d of %d values in a buffer of %d, float64 %v", name, i, w.Len(), cap(w.F32)+cap(w.F64), w.F64 != nil)
				}
				switch {
				case w.Staged:
					staged++
					if w.home != nil {
						t.Errorf("%s: staged window %d has a home pool", name, i)
					}
				case w.home != pool.of(size, f64):
					t.Errorf("%s: window %d goes home to %p, want the pool of its size and precision %p", name, i, w.home, pool.of(size, f64))
				}
				if w.home != nil {
					if other, ok := homes[w.home]; ok && other != name {
						t.Errorf("%s: window %d goes home to the pool of %s", name, i, other)
					}
					homes[w.home] = name
				}
				pool.Recycle(w)
			}
			if c := cap(f.f32) + cap(f.f64); c != size || (f.f64 != nil) != f64 {
				t.Errorf("%s: partial window's buffer holds %d values, float64 %v", name, c, f.f64 != nil)
			}
		}
	}
	if len(homes) != 4 {
		t.Errorf("windows go home to %d pools, want 4", len(homes))
	}
	if staged != 2 || st.back32 != 1 || st.back64 != 1 {
		t.Errorf("%d windows staged, %d float32 and %d float64 handed back; want 2, 1, 1", staged, st.back32, st.back64)
	}
}
