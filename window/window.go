// Package window fills fixed-size windows of W values per stream and packs
// full windows, four at a time and from any streams, into the batches that
// a gpusort.Sorter sorts: the four colour channels of one RGBA texture, as
// Govindaraju, Raghuvanshi and Manocha (SIGMOD 2005) buffer them.
package window

import (
	"context"
	"slices"
	"time"

	"streamd/gpusort"
)

// Window is one full window of a stream, on its way to the sorter. Exactly
// one of F32 and F64 holds its values. Owner is the caller's: the pipeline
// uses it to find the stream the window belongs to.
type Window struct {
	F32   []float32
	F64   []float64
	Owner any
}

// Len reports the number of values in w.
func (w *Window) Len() int { return len(w.F32) + len(w.F64) }

// AppendValues appends w's values, widened to float64, to dst.
func (w *Window) AppendValues(dst []float64) []float64 {
	for _, v := range w.F32 {
		dst = append(dst, float64(v))
	}
	return append(dst, w.F64...)
}

// Clone returns a copy of w's values (not its Owner).
func (w *Window) Clone() *Window {
	return &Window{F32: slices.Clone(w.F32), F64: slices.Clone(w.F64)}
}

// Filler fills one stream's windows. Values are rounded to float32 unless
// the stream keeps float64. The zero Filler is not usable; use NewFiller.
type Filler struct {
	size    int
	float64 bool
	f32     []float32
	f64     []float64
}

// NewFiller returns a Filler of windows of size values, float64 or not.
func NewFiller(size int, float64 bool) *Filler {
	return &Filler{size: size, float64: float64}
}

// Size reports W.
func (f *Filler) Size() int { return f.size }

// Len reports how many values the partial window holds.
func (f *Filler) Len() int { return len(f.f32) + len(f.f64) }

// Append adds values to the partial window. Each time the window fills, it
// is passed to full (which takes ownership) and a new one is started.
// Values are rounded to the stream's precision first; Append returns the
// rounded values in the same slice, so that the caller records exactly
// what the summaries will see.
func (f *Filler) Append(values []float64, full func(*Window)) {
	for len(values) > 0 {
		room := f.size - f.Len()
		k := min(room, len(values))
		chunk := values[:k]
		if f.float64 {
			if f.f64 == nil {
				f.f64 = make([]float64, 0, f.initialCap(k))
			}
			f.f64 = append(f.f64, chunk...)
		} else {
			if f.f32 == nil {
				f.f32 = make([]float32, 0, f.initialCap(k))
			}
			for i, v := range chunk {
				r := float32(v)
				f.f32 = append(f.f32, r)
				chunk[i] = float64(r)
			}
		}
		values = values[k:]
		if f.Len() == f.size {
			full(&Window{F32: f.f32, F64: f.f64})
			f.f32, f.f64 = nil, nil
		}
	}
}

// initialCap sizes a new window's buffer: small for a stream's first few
// values, so that many small streams stay small; whole after that.
func (f *Filler) initialCap(first int) int {
	return min(f.size, max(first, 64))
}

// AppendPartial appends the partial window's values to dst.
func (f *Filler) AppendPartial(dst []float64) []float64 {
	partial := Window{F32: f.f32, F64: f.f64}
	return partial.AppendValues(dst)
}

// Batch is up to four windows sorted together, each in one channel.
type Batch struct {
	Windows []*Window
	Sort    gpusort.Batch
}

// Pack fills b's channels from windows (at most gpusort.Channels).
func Pack(windows []*Window) *Batch {
	b := &Batch{Windows: windows}
	for i, w := range windows {
		b.Sort.F32[i] = w.F32
		b.Sort.F64[i] = w.F64
	}
	return b
}

// Packer reads full windows from In and sends batches of up to four to
// Out. It sends a batch as soon as it has four windows, or when Linger has
// passed since its first window arrived, or at once when In is empty and
// Linger is zero.
type Packer struct {
	In     <-chan *Window
	Out    chan<- *Batch
	Linger time.Duration
}

// Run packs until In is closed (sending what remains) or ctx ends.
func (p *Packer) Run(ctx context.Context) error {
	defer close(p.Out)
	for {
		var first *Window
		select {
		case w, ok := <-p.In:
			if !ok {
				return nil
			}
			first = w
		case <-ctx.Done():
			return ctx.Err()
		}
		windows := []*Window{first}
		timer := time.NewTimer(p.Linger)
		closed := false
	gather:
		for len(windows) < gpusort.Channels {
			select {
			case w, ok := <-p.In:
				if !ok {
					closed = true
					break gather
				}
				windows = append(windows, w)
			case <-timer.C:
				break gather
			case <-ctx.Done():
				timer.Stop()
				return ctx.Err()
			}
		}
		timer.Stop()
		select {
		case p.Out <- Pack(windows):
		case <-ctx.Done():
			return ctx.Err()
		}
		if closed {
			return nil
		}
	}
}
