package window

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"
)

func TestFiller(t *testing.T) {
	for _, f64 := range []bool{false, true} {
		f := NewFiller(4, f64)
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

func TestClone(t *testing.T) {
	w := &Window{F32: []float32{3, 1, 2}, Owner: "s"}
	c := w.Clone()
	w.F32[0] = float32(math.Inf(1))
	if c.F32[0] != 3 || c.Owner != nil {
		t.Errorf("clone %+v", c)
	}
}
