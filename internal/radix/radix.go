// Package radix sorts float32 and float64 keys by LSD radix sort through
// the order-preserving float-to-unsigned key transform. It is shared by the
// CPU sort back-end and the sliding-window summaries.
//
// The sort takes digits of 8 or 11 bits (see [Width]). Which is faster
// depends on the machine more than on the keys: a [Sorter] measures both
// at first use of each size and keeps the faster; the functions
// [Float32s] and [Float64s] choose by size alone, as measured on the
// development machine (see BENCHMARKS.md).
package radix

import (
	"math"
	"unsafe"
)

// Key transforms. A float's bits, read as an unsigned integer, order
// non-negative floats correctly and negative floats backwards. Flipping the
// sign bit of non-negative floats and every bit of negative ones gives an
// unsigned key whose order is the floats' order, with −0 just below +0.

// Key32 returns the order-preserving unsigned key of f.
func Key32(f float32) uint32 {
	u := math.Float32bits(f)
	return u ^ (uint32(int32(u)>>31) | 1<<31)
}

// FromKey32 inverts Key32.
func FromKey32(k uint32) float32 {
	return math.Float32frombits(k ^ (uint32(int32(^k)>>31) | 1<<31))
}

// Key64 returns the order-preserving unsigned key of f.
func Key64(f float64) uint64 {
	u := math.Float64bits(f)
	return u ^ (uint64(int64(u)>>63) | 1<<63)
}

// FromKey64 inverts Key64.
func FromKey64(k uint64) float64 {
	return math.Float64frombits(k ^ (uint64(int64(^k)>>63) | 1<<63))
}

// Width is the number of bits of a digit of the LSD radix sort. Each pass
// moves every key once, to the bucket of its digit: wider digits take
// fewer passes but scatter into more buckets, which costs more per key on
// cores with fewer or slower write-combining resources.
type Width uint8

// The digit widths.
const (
	Width8  Width = 8  // 256 buckets: 4 passes over 32-bit keys, 8 over 64-bit keys
	Width11 Width = 11 // 2048 buckets: 3 passes over 32-bit keys (11, 11, 10 bits), 6 over 64-bit keys
)

// Float32s sorts x in ascending order with an LSD radix sort of three
// passes (11, 11 and 10 bits), using scratch (grown when the sort needs it
// and it is shorter than x) as the second buffer. It runs in O(len(x))
// time, allocates only when scratch is too short, and returns the scratch
// buffer for reuse. −0 sorts before +0; NaNs go after +Inf or before −Inf
// by sign.
//
// It is SortedFloat32s(x, x, scratch): a counting pass that only reads x,
// then one scatter pass per digit that is not the same for every key, the
// first fused with the key transform and the last with its inverse, plus
// a copy back into x when the number of scatter passes is odd.
func Float32s(x []float32, scratch []uint32) []uint32 {
	_, scratch = sorted32(x, x, scratch, Width11)
	return scratch
}

// Float64s sorts x in ascending order with an LSD radix sort, like
// Float32s but on 64-bit keys: six passes of 11 bits up to 2^19 keys, and
// eight of 8 bits above, where the 2048 buckets of wide digits scatter
// out of cache.
func Float64s(x []float64, scratch []uint64) []uint64 {
	_, scratch = sorted64(x, x, scratch, width64(len(x)))
	return scratch
}

// SortedFloat32s writes the values of src in ascending order into dst and
// leaves src unchanged. It returns dst resliced to len(src), or a new
// slice if cap(dst) < len(src), and the scratch buffer, grown when the
// sort needs it and it is shorter than src, for reuse. dst must not
// overlap src, unless it is src itself: then src is sorted in place, as
// Float32s does. The order is that of Float32s.
//
// The sort reads and writes the keys fewer times than copying src and
// sorting the copy in place: a counting pass that only reads src (the key
// transform computed on the fly), then one scatter pass per 11-bit digit
// that is not the same for every key, alternating between dst and
// scratch so that the last one writes into dst. The first scatter reads
// src and applies the key transform as it moves each key, the last applies
// the inverse transform as it writes. When every key is equal, the sort
// is the count and a copy.
func SortedFloat32s(dst, src []float32, scratch []uint32) ([]float32, []uint32) {
	return sorted32(dst, src, scratch, Width11)
}

// SortedFloat64s is SortedFloat32s for float64 values, with the digit
// widths of Float64s.
func SortedFloat64s(dst, src []float64, scratch []uint64) ([]float64, []uint64) {
	return sorted64(dst, src, scratch, width64(len(src)))
}

// width64 is the digit width the package functions sort n float64 keys
// with.
func width64(n int) Width {
	if n > 1<<19 {
		return Width8
	}
	return Width11
}

// Below this many keys a window is sorted by insertion sort.
const insertionMax = 48

func sorted32(dst, src []float32, scratch []uint32, w Width) ([]float32, []uint32) {
	dst = target(dst, src)
	d, s := bits32(dst), bits32(src)
	switch {
	case len(s) <= insertionMax:
		insertionSorted(d, s)
	case w == Width8:
		scratch = lsd32x8(d, s, scratch)
	default:
		scratch = lsd32x11(d, s, scratch)
	}
	return dst, scratch
}

func sorted64(dst, src []float64, scratch []uint64, w Width) ([]float64, []uint64) {
	dst = target(dst, src)
	d, s := bits64(dst), bits64(src)
	switch {
	case len(s) <= insertionMax:
		insertionSorted(d, s)
	case w == Width8:
		scratch = lsd64x8(d, s, scratch)
	default:
		scratch = lsd64x11(d, s, scratch)
	}
	return dst, scratch
}

// target returns dst resliced to len(src), or a new slice if it is too
// short. It panics if dst overlaps src without being src.
func target[E float32 | float64](dst, src []E) []E {
	n := len(src)
	if cap(dst) < n {
		return make([]E, n)
	}
	dst = dst[:n]
	if n == 0 || &dst[0] == &src[0] {
		return dst
	}
	size := uintptr(n) * unsafe.Sizeof(src[0])
	d, s := uintptr(unsafe.Pointer(&dst[0])), uintptr(unsafe.Pointer(&src[0]))
	if d < s+size && s < d+size {
		panic("radix: dst overlaps src")
	}
	return dst
}

// bits32 returns the bits of x, in place.
func bits32(x []float32) []uint32 {
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
}

// bits64 returns the bits of x, in place.
func bits64(x []float64) []uint64 {
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
}

// key returns the order-preserving key of the float bits u (Key32 and
// Key64 for either width).
func key[K uint32 | uint64](u K) K {
	top := 8*unsafe.Sizeof(u) - 1 // the sign bit; a constant of each instance
	return u ^ (-(u >> top) | 1<<top)
}

// unkey inverts key.
func unkey[K uint32 | uint64](k K) K {
	top := 8*unsafe.Sizeof(k) - 1
	return k ^ (-(^k >> top) | 1<<top)
}

// insertionSorted writes the float bits of src, sorted, into dst, which
// is src or does not overlap it.
func insertionSorted[K uint32 | uint64](dst, src []K) {
	for i, u := range src {
		dst[i] = key(u)
	}
	insertion(dst)
	for i, k := range dst {
		dst[i] = unkey(k)
	}
}

// lsd32x11 writes the float32 bits of src, sorted, into dst (src itself or
// a slice of the same length that does not overlap it) by keys of three
// digits of 11, 11 and 10 bits, with scratch (grown if needed) as the
// second buffer, and returns scratch.
func lsd32x11(dst, src, scratch []uint32) []uint32 {
	var c [3][2048]uint32
	for _, u := range src {
		k := key(u)
		c[0][k&0x7ff]++
		c[1][k>>11&0x7ff]++
		c[2][k>>22]++
	}
	var digits [3]int
	k0, m := key(src[0]), 0
	for p := range c {
		if c[p][k0>>(11*p)&0x7ff] != uint32(len(src)) {
			digits[m] = p
			m++
		}
	}
	return scatterAll(dst, src, scratch, m, func(j int, from, to []uint32) {
		p := digits[j]
		scatter11(from, to, &c[p], uint(11*p), j == 0, j == m-1)
	})
}

// lsd32x8 is lsd32x11 with four digits of 8 bits.
func lsd32x8(dst, src, scratch []uint32) []uint32 {
	var c [4][256]uint32
	for _, u := range src {
		k := key(u)
		c[0][k&0xff]++
		c[1][k>>8&0xff]++
		c[2][k>>16&0xff]++
		c[3][k>>24]++
	}
	var digits [4]int
	k0, m := key(src[0]), 0
	for p := range c {
		if c[p][uint8(k0>>(8*p))] != uint32(len(src)) {
			digits[m] = p
			m++
		}
	}
	return scatterAll(dst, src, scratch, m, func(j int, from, to []uint32) {
		p := digits[j]
		scatter8(from, to, &c[p], uint(8*p), j == 0, j == m-1)
	})
}

// lsd64x11 is lsd32x11 for float64 bits, with six digits of 11 bits (the
// last of 9).
func lsd64x11(dst, src, scratch []uint64) []uint64 {
	var c [6][2048]uint32
	for _, u := range src {
		k := key(u)
		c[0][k&0x7ff]++
		c[1][k>>11&0x7ff]++
		c[2][k>>22&0x7ff]++
		c[3][k>>33&0x7ff]++
		c[4][k>>44&0x7ff]++
		c[5][k>>55]++
	}
	var digits [6]int
	k0, m := key(src[0]), 0
	for p := range c {
		if c[p][k0>>(11*p)&0x7ff] != uint32(len(src)) {
			digits[m] = p
			m++
		}
	}
	return scatterAll(dst, src, scratch, m, func(j int, from, to []uint64) {
		p := digits[j]
		scatter11(from, to, &c[p], uint(11*p), j == 0, j == m-1)
	})
}

// lsd64x8 is lsd64x11 with eight digits of 8 bits.
func lsd64x8(dst, src, scratch []uint64) []uint64 {
	var c [8][256]uint32
	for _, u := range src {
		k := key(u)
		c[0][k&0xff]++
		c[1][k>>8&0xff]++
		c[2][k>>16&0xff]++
		c[3][k>>24&0xff]++
		c[4][k>>32&0xff]++
		c[5][k>>40&0xff]++
		c[6][k>>48&0xff]++
		c[7][k>>56]++
	}
	var digits [8]int
	k0, m := key(src[0]), 0
	for p := range c {
		if c[p][uint8(k0>>(8*p))] != uint32(len(src)) {
			digits[m] = p
			m++
		}
	}
	return scatterAll(dst, src, scratch, m, func(j int, from, to []uint64) {
		p := digits[j]
		scatter8(from, to, &c[p], uint(8*p), j == 0, j == m-1)
	})
}

// scatterAll runs the m scatter passes of an LSD sort of src into dst
// (src itself or a slice of its length that does not overlap it), with
// scratch as the second buffer, and returns scratch, grown if it was too
// short. scatter(j, from, to) runs pass j, reading from and writing to:
// pass 0 reads src, pass j > 0 what pass j−1 wrote.
//
// The passes write to dst and scratch in turns, ending with dst: pass j
// writes to dst when m−1−j is even. When dst is src and m is odd, pass 0
// would overwrite src as it reads it; then the passes end with scratch
// instead, which is copied into dst. No pass (every key equal) is a copy.
func scatterAll[K uint32 | uint64](dst, src, scratch []K, m int, scatter func(j int, from, to []K)) []K {
	inPlace := &dst[0] == &src[0]
	if m == 0 {
		if !inPlace {
			copy(dst, src)
		}
		return scratch
	}
	if m > 1 || inPlace {
		if cap(scratch) < len(src) {
			scratch = make([]K, len(src))
		}
		scratch = scratch[:len(src)]
	}
	last, other := dst, scratch
	if inPlace && m%2 == 1 {
		last, other = scratch, dst
	}
	from := src
	for j := range m {
		to := last
		if (m-1-j)%2 == 1 {
			to = other
		}
		scatter(j, from, to)
		from = to
	}
	if inPlace && m%2 == 1 {
		copy(dst, scratch)
	}
	return scratch
}

// scatter11 moves src into dst ordered by the 11-bit digit
// (k>>shift)&0x7ff of each key k, whose counts are in count, stably,
// turning the counts into offsets. With in, src holds float bits and the
// digit is that of their key; with out, dst receives the float bits of
// each key; with both, float bits move and their keys only choose where.
// The caller skips a pass whose digit is the same for every key (common
// for floats that came from float32 or small integers, and for the top
// digits of values of one magnitude).
func scatter11[K uint32 | uint64](src, dst []K, count *[2048]uint32, shift uint, in, out bool) {
	var sum uint32
	for i, c := range count {
		count[i] = sum
		sum += c
	}
	switch {
	case in && out:
		for _, u := range src {
			d := (key(u) >> shift) & 0x7ff
			dst[count[d]] = u
			count[d]++
		}
	case in:
		for _, u := range src {
			k := key(u)
			d := (k >> shift) & 0x7ff
			dst[count[d]] = k
			count[d]++
		}
	case out:
		for _, k := range src {
			d := (k >> shift) & 0x7ff
			dst[count[d]] = unkey(k)
			count[d]++
		}
	default:
		for _, k := range src {
			d := (k >> shift) & 0x7ff
			dst[count[d]] = k
			count[d]++
		}
	}
}

// scatter8 is scatter11 for the 8-bit digit uint8(k>>shift).
func scatter8[K uint32 | uint64](src, dst []K, count *[256]uint32, shift uint, in, out bool) {
	var sum uint32
	for i, c := range count {
		count[i] = sum
		sum += c
	}
	switch {
	case in && out:
		for _, u := range src {
			d := uint8(key(u) >> shift)
			dst[count[d]] = u
			count[d]++
		}
	case in:
		for _, u := range src {
			k := key(u)
			d := uint8(k >> shift)
			dst[count[d]] = k
			count[d]++
		}
	case out:
		for _, k := range src {
			d := uint8(k >> shift)
			dst[count[d]] = unkey(k)
			count[d]++
		}
	default:
		for _, k := range src {
			d := uint8(k >> shift)
			dst[count[d]] = k
			count[d]++
		}
	}
}

func insertion[K uint32 | uint64](x []K) {
	for i := 1; i < len(x); i++ {
		v := x[i]
		j := i
		for j > 0 && x[j-1] > v {
			x[j] = x[j-1]
			j--
		}
		x[j] = v
	}
}
