package slidingwindow

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRingRandom drives rings of many capacities — around each chunk
// boundary, inside the doubling chunks, and random ones — through batches
// of random sizes, mostly small, some of several chunks, against a plain
// slice of every value added. After every batch the ring holds the newest
// min(added, capacity) values, reads back any newest n of them, as its
// encoding decoded does; Growth said exactly what the batch added to the
// ring's bytes, and says so for other batches too (pushed on a copy); the
// ring's spare room is less than the chunk it fills, and past headLen
// values it holds at most twice its values besides its list of chunks.
// Some windows turn float32 midway (KeepFloat32), and some go on as their
// decoded copy.
func TestRingRandom(t *testing.T) {
	rnd := rand.New(rand.NewPCG(18, 8))
	capacities := []int64{1, 2, 3, 100, 200, 255, 256, 257, 300, 511, 512, 513, 700, 1023, 1024, 1025,
		2047, 2049, 3000, 4095, 4096, 4097, 4096 + 257, 3*4096 + 5}
	for range 4 {
		capacities = append(capacities, 1+rnd.Int64N(headLen), 1+rnd.Int64N(40000))
	}
	for _, capacity := range capacities {
		for _, kind := range []string{"float64", "float32", "keep32"} {
			name := fmt.Sprintf("%s capacity=%d", kind, capacity)
			randomRing(t, rnd, name, kind, capacity)
		}
	}
}

// randomRing runs TestRingRandom's checks on one window.
func randomRing(t *testing.T, rnd *rand.Rand, name, kind string, capacity int64) {
	var w *Window
	var err error
	if kind == "float32" {
		w, err = NewFloat32(0.01, capacity)
	} else {
		w, err = New(0.01, capacity)
	}
	if err != nil {
		t.Fatal(err)
	}
	if w.Mode() != Exact || w.ring.capacity != capacity {
		t.Fatalf("%s: mode %v, ring of %d", name, w.Mode(), w.ring.capacity)
	}
	keepAt := rnd.IntN(40)
	var all []float64
	for step := 0; step < 120 || int64(len(all)) < 3*capacity; step++ {
		if kind == "keep32" && step == keepAt {
			before, room := w.ring.bytes(), w.ring.room()
			w.KeepFloat32()
			if b := w.ring.bytes(); !w.ring.float32 || int64(b) != int64(before)-4*room {
				t.Fatalf("%s: KeepFloat32 took the ring from %d to %d bytes", name, before, b)
			}
			checkRing(t, name+" narrowed", w, all)
		}
		if rnd.IntN(15) == 0 {
			enc, err := w.AppendBinary(nil)
			if err != nil {
				t.Fatal(err)
			}
			d := new(Window)
			if err := d.UnmarshalBinary(enc); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if w.ring.float32 {
				d.KeepFloat32()
			}
			w = d
			checkRing(t, name+" decoded", w, all)
		}
		n := randomBatch(rnd)
		for _, m := range []int64{1, n, w.ring.room() - w.ring.len() + 1, 1 + rnd.Int64N(capacity+2*chunkLen)} {
			if m < 1 {
				continue
			}
			c := cloneRing(&w.ring)
			before, grow := c.bytes(), c.growth(m)
			pushRandom(c, w.pos, m, rnd)
			if got := int64(c.bytes() - before); got != grow {
				t.Fatalf("%s: after %d values, %d more grew a copy of the ring by %d bytes, growth said %d", name, len(all), m, got, grow)
			}
		}
		vals := make([]float64, n)
		for i := range vals {
			if w.ring.float32 || kind == "keep32" || rnd.IntN(2) == 0 {
				vals[i] = float64(float32(rnd.NormFloat64() * 1000))
			} else {
				vals[i] = rnd.NormFloat64() * 1000
			}
		}
		before, grow := w.ring.bytes(), w.Growth(n)
		if w.ring.float32 && rnd.IntN(2) == 0 {
			f := make([]float32, n)
			for i, v := range vals {
				f[i] = float32(v)
			}
			w.AddFloat32(int64(step), f)
		} else {
			w.Add(int64(step), vals...)
		}
		all = append(all, vals...)
		if got := int64(w.ring.bytes() - before); got != grow {
			t.Fatalf("%s: after %d values, %d more grew the ring by %d bytes, Growth said %d", name, len(all)-len(vals), n, got, grow)
		}
		checkRing(t, name, w, all)
	}
}

// randomBatch returns a batch size from 1 to 3·chunkLen, mostly small.
func randomBatch(rnd *rand.Rand) int64 {
	switch k := rnd.IntN(20); {
	case k < 10:
		return 1 + rnd.Int64N(8)
	case k < 15:
		return 1 + rnd.Int64N(300)
	case k < 18:
		return 1 + rnd.Int64N(chunkLen)
	}
	return 1 + rnd.Int64N(3*chunkLen)
}

// pushRandom pushes n values, float32 ones, to r at position pos.
func pushRandom(r *ring, pos, n int64, rnd *rand.Rand) {
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = float32(rnd.NormFloat64())
	}
	push(r, pos, vals)
}

// cloneRing returns a deep copy of r, its slices of the same lengths and
// capacities.
func cloneRing(r *ring) *ring {
	c := *r
	c.f64 = cloneChunk(r.f64)
	c.f32 = cloneChunk(r.f32)
	if r.more != nil {
		c.more = &moreChunks{f64: cloneChunks(r.more.f64), f32: cloneChunks(r.more.f32)}
	}
	return &c
}

func cloneChunk[E float32 | float64](s []E) []E {
	if s == nil {
		return nil
	}
	c := make([]E, len(s), cap(s))
	copy(c, s)
	return c
}

func cloneChunks[E float32 | float64](s [][]E) [][]E {
	if s == nil {
		return nil
	}
	c := make([][]E, len(s), cap(s))
	for i := range s {
		c[i] = cloneChunk(s[i])
	}
	return c
}

// checkRing checks w's ring against all, every value added to w.
func checkRing(t *testing.T, name string, w *Window, all []float64) {
	t.Helper()
	r := &w.ring
	capacity := r.capacity
	l, room := r.len(), r.room()
	if want := min(int64(len(all)), capacity); l != want || w.pos != int64(len(all)) {
		t.Fatalf("%s: ring holds %d values at position %d after %d, want %d", name, l, w.pos, len(all), want)
	}
	if room < l || room > capacity {
		t.Fatalf("%s: room for %d values, holds %d, capacity %d", name, room, l, capacity)
	}
	// The chunk being filled: the first, or the last past it.
	size := int64(cap(r.f64) + cap(r.f32))
	if r.more != nil {
		k := int64(len(r.more.f64) + len(r.more.f32))
		if k < 1 || k > maxTail(capacity) || int64(cap(r.more.f64)+cap(r.more.f32)) > maxTail(capacity) {
			t.Fatalf("%s: %d chunks past the first in a list of %d, at most %d", name, k, cap(r.more.f64)+cap(r.more.f32), maxTail(capacity))
		}
		size = chunkStart(k+1) - chunkStart(k)
	}
	if l > 0 && room-l >= size {
		t.Fatalf("%s: room for %d values, holds %d, filling a chunk of %d", name, room, l, size)
	}
	v := r.valueBytes()
	if b := int64(r.bytes()); b > v*capacity+maxOverhead(capacity) || (l > headLen && b > 2*v*l+maxOverhead(capacity)) {
		t.Fatalf("%s: %d bytes for %d values, capacity %d", name, b, l, capacity)
	}
	if w.Mode() == Exact && int64(w.Bytes()) > w.Footprint() {
		t.Fatalf("%s: %d bytes, footprint %d", name, w.Bytes(), w.Footprint())
	}
	for _, n := range []int64{1, l / 2, l - 1, l} {
		if n <= 0 || n > l {
			continue
		}
		if got, want := w.AppendNewest(nil, n), all[int64(len(all))-n:]; !slices.Equal(got, want) {
			t.Fatalf("%s: the newest %d values after %d differ", name, n, len(all))
		}
	}
	enc, err := w.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	var d Window
	if err := d.UnmarshalBinary(enc); err != nil {
		t.Fatalf("%s: decode: %v", name, err)
	}
	if d.ring.len() != l || d.pos != w.pos || d.ring.float32 != w.ring.float32 {
		t.Fatalf("%s: decoded ring holds %d values at %d, float32 %v", name, d.ring.len(), d.pos, d.ring.float32)
	}
	if got := d.AppendNewest(nil, l); !slices.Equal(got, all[int64(len(all))-l:]) {
		t.Fatalf("%s: decoded, the newest %d values after %d differ", name, l, len(all))
	}
}
