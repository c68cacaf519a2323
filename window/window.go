// Package window fills fixed-size windows of W values per stream and packs
// full windows, four at a time and from any streams, into the batches that
// a gpusort.Sorter sorts: the four colour channels of one RGBA texture, as
// Govindaraju, Raghuvanshi and Manocha (SIGMOD 2005) buffer them.
package window

import (
	"context"
	"sync"
	"time"

	"streamd/gpusort"
)

// Buffer is one window of a stream. Exactly one of F32 and F64 holds its
// values.
type Buffer struct {
	F32 []float32
	F64 []float64
	// Staged is set when the buffer was lent by the Pool's Stager; the
	// Pool hands it back in Recycle.
	Staged bool
	// home is the pool of whole windows that Recycle puts the buffer in:
	// set by the Filler for a buffer of exactly W values from the heap.
	home *sync.Pool
}

// Len reports the number of values in w.
func (w *Buffer) Len() int { return len(w.F32) + len(w.F64) }

// AppendValues appends w's values, widened to float64, to dst.
func (w *Buffer) AppendValues(dst []float64) []float64 {
	for _, v := range w.F32 {
		dst = append(dst, float64(v))
	}
	return append(dst, w.F64...)
}

// Filler fills one stream's windows. Values are rounded to float32 unless
// the stream keeps float64. The zero Filler is not usable; use NewFiller or Init.
type Filler struct {
	pool *Pool
	f32  []float32
	f64  []float64
	// W and the flags come last, together, to keep a Filler small: a
	// daemon holds one for each part of each stream.
	size    int32 // W
	float64 bool
	filled  bool // a window was full once: take whole buffers from now on
	staged  bool // the partial window's buffer was lent by the pool's Stager
}

// NewFiller returns a Filler of windows of size values (at most 2^31−1; a
// stream's are at most 2^24), float64 or not, taking window buffers from
// pool (nil: from the heap).
func NewFiller(size int, float64 bool, pool *Pool) *Filler {
	f := new(Filler)
	f.Init(size, float64, pool)
	return f
}

// Init makes f the empty Filler that NewFiller returns, in place: a Filler
// kept inside a larger allocation, as the pipeline keeps one beside each
// part of a stream, costs no allocation of its own.
func (f *Filler) Init(size int, float64 bool, pool *Pool) {
	*f = Filler{size: int32(size), float64: float64, pool: pool}
}

// Size reports W.
func (f *Filler) Size() int { return int(f.size) }

// Len reports how many values the partial window holds.
func (f *Filler) Len() int { return len(f.f32) + len(f.f64) }

// Bytes reports the memory held by the partial window's buffer.
func (f *Filler) Bytes() int { return 4*cap(f.f32) + 8*cap(f.f64) }

// Append adds values to the partial window. Each time the window fills, it
// is passed to full (which takes ownership) and a new one is started.
// The values must be clean (finite, no −0) and, unless the stream keeps
// float64, already of float32 precision: the caller rounds and cleans them
// first, so that it counts a value beyond the range of float32 as a reject
// and records exactly what the summaries will see.
func (f *Filler) Append(values []float64, full func(*Buffer)) {
	for len(values) > 0 {
		k := min(f.Size()-f.Len(), len(values))
		f.start(k)
		f.grow(k)
		if f.float64 {
			f.f64 = append(f.f64, values[:k]...)
		} else {
			for _, v := range values[:k] {
				f.f32 = append(f.f32, float32(v))
			}
		}
		values = values[k:]
		f.pass(full)
	}
}

// start gets the partial window's buffer, if it has none, for at least k
// values.
func (f *Filler) start(k int) {
	switch {
	case f.float64 && f.f64 == nil:
		f.f64, f.staged = f.pool.getF64(f.initialCap(k), f.filled)
	case !f.float64 && f.f32 == nil:
		f.f32, f.staged = f.pool.getF32(f.initialCap(k), f.filled)
	}
}

// grow makes room in the partial window's buffer for k more values (at
// most what the window lacks), doubling it up to W: a stream's first
// buffers grow geometrically, never past one window.
func (f *Filler) grow(k int) {
	if f.float64 {
		f.f64 = growTo(f.f64, len(f.f64)+k, f.Size())
	} else {
		f.f32 = growTo(f.f32, len(f.f32)+k, f.Size())
	}
}

func growTo[E float32 | float64](buf []E, need, size int) []E {
	if need <= cap(buf) {
		return buf
	}
	grown := make([]E, len(buf), min(size, max(need, 2*cap(buf))))
	copy(grown, buf)
	return grown
}

// BytesAfter reports what Bytes will report once n more values are
// appended: the partial window's buffer, grown as it needs, or, when they
// fill windows, the buffer of the next partial window (a whole window's,
// or none if they fill the last one exactly). The windows they fill,
// (Len()+n)/Size() of them, leave the partial window.
func (f *Filler) BytesAfter(n int) int {
	v := 4
	if f.float64 {
		v = 8
	}
	size, total, c := f.Size(), f.Len()+n, cap(f.f32)+cap(f.f64)
	switch {
	case total >= size && total%size == 0:
		return 0
	case total >= size:
		return size * v
	case total <= c:
		return c * v
	case c == 0:
		return f.initialCap(n) * v
	}
	return min(size, max(total, 2*c)) * v
}

// window returns the partial window, to pass on or to recycle.
func (f *Filler) window() *Buffer {
	w := &Buffer{F32: f.f32, F64: f.f64, Staged: f.staged}
	if f.pool != nil && !f.staged && cap(f.f32)+cap(f.f64) == f.Size() {
		w.home = f.pool.of(f.Size(), f.float64)
	}
	return w
}

// pass passes the partial window to full when it is full.
func (f *Filler) pass(full func(*Buffer)) {
	if f.Len() < f.Size() {
		return
	}
	full(f.window())
	f.f32, f.f64, f.staged = nil, nil, false
	f.filled = true
}

// AppendFloat32 is Append for values already rounded to float32 and
// clean (finite, no −0), as ingest.DecodeFloat32 gives them: it copies them
// into the windows.
func (f *Filler) AppendFloat32(values []float32, full func(*Buffer)) {
	for len(values) > 0 {
		k := min(f.Size()-f.Len(), len(values))
		f.start(k)
		f.grow(k)
		if f.float64 {
			for _, v := range values[:k] {
				f.f64 = append(f.f64, float64(v))
			}
		} else {
			f.f32 = append(f.f32, values[:k]...)
		}
		values = values[k:]
		f.pass(full)
	}
}

// initialCap sizes a new window's buffer: the size of the first values
// (at most W) until the stream has filled a window, so that many small
// streams hold only their values; whole once it has.
func (f *Filler) initialCap(first int) int {
	if f.filled {
		return f.Size()
	}
	return min(f.Size(), first)
}

// Release recycles the partial window's buffer into pool and empties the
// partial window: its values are dropped.
func (f *Filler) Release(pool *Pool) {
	pool.Recycle(f.window())
	f.f32, f.f64, f.staged = nil, nil, false
}

// Take returns the partial window, shorter than W, and empties the
// partial window; nil when it holds no values. The caller owns the window
// (to sort it and recycle it as a full one) and the Filler starts a new
// buffer for the next values.
func (f *Filler) Take() *Buffer {
	if f.Len() == 0 {
		return nil
	}
	w := f.window()
	f.f32, f.f64, f.staged = nil, nil, false
	return w
}

// Shrink moves the partial window's values into a heap buffer of exactly
// their number, giving the larger buffer back to the pool (a whole window's
// or one lent by the Stager), so that a partial window that will not grow
// for a while holds no room to spare. The next values grow the buffer again
// as they need. It reports how many bytes it freed.
func (f *Filler) Shrink() int {
	before := f.Bytes()
	if f.Len() == cap(f.f32)+cap(f.f64) {
		return 0
	}
	old := f.window()
	switch {
	case f.Len() == 0:
		f.f32, f.f64 = nil, nil
	case f.float64:
		f.f64 = append(make([]float64, 0, len(f.f64)), f.f64...)
	default:
		f.f32 = append(make([]float32, 0, len(f.f32)), f.f32...)
	}
	f.staged = false
	f.pool.Recycle(old)
	return before - f.Bytes()
}

// AppendPartial appends the partial window's values to dst.
func (f *Filler) AppendPartial(dst []float64) []float64 {
	partial := Buffer{F32: f.f32, F64: f.f64}
	return partial.AppendValues(dst)
}

// A Pool recycles the buffers of whole windows (W values), so that a busy
// stream does not allocate (and the collector does not clear) a new buffer
// for every window; a stream's first, smaller buffers come from the heap
// and are left to the collector. A nil *Pool allocates every buffer. A
// Pool is safe for concurrent use.
type Pool struct {
	// Stager, if set, lends the buffers of whole windows inside the memory
	// the sorter uploads from, so that windows are filled in place there
	// (gpusort.Stager); when it lends none, buffers come from the heap. It
	// must be set before the Pool is used.
	Stager gpusort.Stager

	pools sync.Map // poolKey → *sync.Pool
}

type poolKey struct {
	size    int
	float64 bool
}

// of returns the pool of whole windows of size values, in a lookup that
// takes no lock. A Filler looks it up as it takes or passes on a whole
// window, not as it is made: keeping it would cost each of a million thin
// streams, which never fill one, a pointer for the collector to trace.
func (p *Pool) of(size int, float64 bool) *sync.Pool {
	k := poolKey{size, float64}
	if sp, ok := p.pools.Load(k); ok {
		return sp.(*sync.Pool)
	}
	sp, _ := p.pools.LoadOrStore(k, new(sync.Pool))
	return sp.(*sync.Pool)
}

// getF32 returns an empty buffer of capacity c. When whole is set (c is
// then W) it is lent by the Stager if it lends one (staged is then set),
// else taken from the pool of whole windows of c values, if that holds
// one.
func (p *Pool) getF32(c int, whole bool) (_ []float32, staged bool) {
	if p == nil || !whole {
		return make([]float32, 0, c), false
	}
	if p.Stager != nil {
		if b := p.Stager.StageF32(c); b != nil {
			return b[:0], true
		}
	}
	if b, ok := p.of(c, false).Get().(*[]float32); ok {
		return (*b)[:0], false
	}
	return make([]float32, 0, c), false
}

// getF64 is getF32 for float64 buffers.
func (p *Pool) getF64(c int, whole bool) (_ []float64, staged bool) {
	if p == nil || !whole {
		return make([]float64, 0, c), false
	}
	if p.Stager != nil {
		if b := p.Stager.StageF64(c); b != nil {
			return b[:0], true
		}
	}
	if b, ok := p.of(c, true).Get().(*[]float64); ok {
		return (*b)[:0], false
	}
	return make([]float64, 0, c), false
}

// Recycle gives w's buffer back for later windows of any stream of the
// same size and precision if it holds a whole window, or to the Stager
// that lent it; any other buffer is left to the collector. The caller must
// not use w afterwards, and must not recycle a window whose batch is being
// sorted.
func (p *Pool) Recycle(w *Buffer) {
	switch {
	case p == nil:
	case w.Staged:
		if w.F32 != nil {
			p.Stager.UnstageF32(w.F32)
		}
		if w.F64 != nil {
			p.Stager.UnstageF64(w.F64)
		}
	case w.home != nil:
		if b := w.F32; b != nil {
			w.home.Put(&b)
		}
		if b := w.F64; b != nil {
			w.home.Put(&b)
		}
	}
	w.F32, w.F64, w.Staged, w.home = nil, nil, false, nil
}

// Full is a full window on its way to the sorter, with its owner: what the
// caller needs to find where the window's digest goes (the pipeline's part
// of a stream).
type Full[O any] struct {
	Buffer *Buffer
	Owner  O
}

// Quad is up to four full windows sorted together, each in one channel.
type Quad[O any] struct {
	Windows []Full[O]
	Sort    gpusort.Quad
}

// Pack fills a Quad's channels from windows (at most gpusort.Channels).
func Pack[O any](windows []Full[O]) *Quad[O] {
	b := &Quad[O]{Windows: windows}
	for i, w := range windows {
		b.Sort.F32[i] = w.Buffer.F32
		b.Sort.F64[i] = w.Buffer.F64
	}
	return b
}

// Packer reads full windows from In and sends batches of up to four to
// Out. It sends a batch as soon as it has four windows, or when Linger has
// passed since its first window arrived, or at once when In is empty and
// Linger is zero.
type Packer[O any] struct {
	In     <-chan Full[O]
	Out    chan<- *Quad[O]
	Linger time.Duration
}

// Run packs until In is closed (sending what remains) or ctx ends.
func (p *Packer[O]) Run(ctx context.Context) error {
	defer close(p.Out)
	for {
		var first Full[O]
		select {
		case w, ok := <-p.In:
			if !ok {
				return nil
			}
			first = w
		case <-ctx.Done():
			return ctx.Err()
		}
		windows := []Full[O]{first}
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
