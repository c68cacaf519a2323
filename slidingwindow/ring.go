package slidingwindow

import (
	"encoding/binary"
	"math"
)

// ring holds a window's newest values raw: the last len() of them, the
// newest at index (pos−1) mod capacity once it is full. A window of
// float32 values keeps them as float32, in half the memory.
type ring struct {
	f64      []float64
	f32      []float32
	float32  bool
	capacity int64
}

// len reports how many values the ring holds.
func (r *ring) len() int64 { return int64(len(r.f64) + len(r.f32)) }

// bytes reports the memory the ring holds.
func (r *ring) bytes() int { return 8*cap(r.f64) + 4*cap(r.f32) }

// growth returns how many bytes more the ring holds once it keeps n more
// values, pushed at once: it doubles (at least to what they need, at most
// to its capacity) when they do not fit, and starts at the size of the
// first values, so that a stream of a few values holds only those.
func (r *ring) growth(n int64) int64 {
	l, c := r.len(), int64(cap(r.f64)+cap(r.f32))
	need := min(l+n, r.capacity)
	if need <= c {
		return 0
	}
	v := int64(8)
	if r.float32 {
		v = 4
	}
	return (min(r.capacity, max(need, 2*c)) - c) * v
}

// push appends vals, the values at positions pos, pos+1, … of the window,
// and returns the position after them.
func push[T float32 | float64](r *ring, pos int64, vals []T) int64 {
	if r.float32 {
		r.f32, pos = pushTo(r.f32, r.capacity, pos, vals)
	} else {
		r.f64, pos = pushTo(r.f64, r.capacity, pos, vals)
	}
	return pos
}

func pushTo[E, T float32 | float64](buf []E, capacity, pos int64, vals []T) ([]E, int64) {
	for len(vals) > 0 {
		if int64(len(buf)) < capacity {
			k := min(int64(len(vals)), capacity-int64(len(buf)))
			if need := int64(len(buf)) + k; need > int64(cap(buf)) {
				// Double (append grows large slices by only 1.25×, copying
				// the ring many more times on its way to the capacity).
				grown := make([]E, len(buf), min(capacity, max(need, 2*int64(cap(buf)))))
				copy(grown, buf)
				buf = grown
			}
			n := int64(len(buf))
			buf = buf[:n+k]
			convert(buf[n:], vals[:k])
			vals = vals[k:]
			pos += k
			continue
		}
		i := pos % capacity
		k := min(int64(len(vals)), capacity-i)
		convert(buf[i:i+k], vals[:k])
		vals = vals[k:]
		pos += k
	}
	return buf, pos
}

// convert copies src into dst, which is as long, converting each value.
func convert[E, T float32 | float64](dst []E, src []T) {
	switch s := any(src).(type) {
	case []float64:
		if d, ok := any(dst).([]float64); ok {
			copy(d, s)
			return
		}
	case []float32:
		if d, ok := any(dst).([]float32); ok {
			copy(d, s)
			return
		}
	}
	for i, v := range src {
		dst[i] = E(v)
	}
}

// last appends the newest n values (n ≤ len()) to dst, oldest first; pos
// is the window's position.
func (r *ring) last(dst []float64, n, pos int64) []float64 {
	if r.float32 {
		return lastOf(dst, r.f32, r.capacity, n, pos)
	}
	return lastOf(dst, r.f64, r.capacity, n, pos)
}

func lastOf[E float32 | float64](dst []float64, buf []E, capacity, n, pos int64) []float64 {
	if int64(len(buf)) < capacity {
		return appendWide(dst, buf[int64(len(buf))-n:])
	}
	start := (pos - n) % capacity
	if start+n <= capacity {
		return appendWide(dst, buf[start:start+n])
	}
	dst = appendWide(dst, buf[start:])
	return appendWide(dst, buf[:start+n-capacity])
}

// appendWide appends src, widened to float64, to dst.
func appendWide[E float32 | float64](dst []float64, src []E) []float64 {
	if s, ok := any(src).([]float64); ok {
		return append(dst, s...)
	}
	n := len(dst)
	dst = append(dst, make([]float64, len(src))...)
	convert(dst[n:], src)
	return dst
}

// appendEncoded appends the width of the ring's values (4 or 8 bytes), its
// length as a uvarint and its values, oldest first, little-endian at their
// precision, for a window at position pos (the encoding's width and ring).
func (r *ring) appendEncoded(dst []byte, pos int64) []byte {
	if r.float32 {
		dst = append(dst, 4)
		dst = binary.AppendUvarint(dst, uint64(len(r.f32)))
		for _, run := range oldestFirst(r.f32, r.capacity, pos) {
			for _, v := range run {
				dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
			}
		}
		return dst
	}
	dst = append(dst, 8)
	dst = binary.AppendUvarint(dst, uint64(len(r.f64)))
	for _, run := range oldestFirst(r.f64, r.capacity, pos) {
		for _, v := range run {
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
		}
	}
	return dst
}

// oldestFirst returns the values of buf, a ring of capacity values at
// position pos, as two runs, oldest first.
func oldestFirst[E float32 | float64](buf []E, capacity, pos int64) [2][]E {
	if int64(len(buf)) < capacity || capacity == 0 {
		return [2][]E{buf, nil}
	}
	start := pos % capacity
	return [2][]E{buf[start:], buf[:start]}
}

// keepFloat32 turns a ring of float64 values that are all float32 values
// into one that keeps them as float32.
func (r *ring) keepFloat32() {
	if r.float32 {
		return
	}
	r.f32 = make([]float32, len(r.f64), cap(r.f64))
	convert(r.f32, r.f64)
	r.f64 = nil
	r.float32 = true
}
