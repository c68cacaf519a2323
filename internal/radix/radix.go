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
// passes (11, 11 and 10 bits), using scratch (grown if shorter than x) as
// the second buffer. It runs in O(len(x)) time, allocates only when scratch
// is too short, and returns the scratch buffer for reuse. −0 sorts before
// +0; NaNs go after +Inf or before −Inf by sign.
//
// The key transform is fused with the counting pass, and the inverse
// transform with the final copy back into x, so the sort reads and writes
// the keys five times in all. A pass whose digit is the same for every key
// is skipped. x itself holds the keys during the sort.
func Float32s(x []float32, scratch []uint32) []uint32 {
	return float32s(x, scratch, Width11)
}

// Float64s sorts x in ascending order with an LSD radix sort, like
// Float32s but on 64-bit keys: six passes of 11 bits up to 2^19 keys, and
// eight of 8 bits above, where the 2048 buckets of wide digits scatter
// out of cache.
func Float64s(x []float64, scratch []uint64) []uint64 {
	w := Width11
	if len(x) > 1<<19 {
		w = Width8
	}
	return float64s(x, scratch, w)
}

// Below this many keys a window is sorted by insertion sort.
const insertionMax = 48

func float32s(x []float32, scratch []uint32, w Width) []uint32 {
	if len(x) < 2 {
		return scratch
	}
	keys := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
	if cap(scratch) < len(x) {
		scratch = make([]uint32, len(x))
	}
	scratch = scratch[:len(x)]
	var src []uint32
	switch {
	case len(keys) <= insertionMax:
		for i, u := range keys {
			keys[i] = u ^ (uint32(int32(u)>>31) | 1<<31)
		}
		insertion(keys)
		src = keys
	case w == Width8:
		src = lsd32x8(keys, scratch)
	default:
		src = lsd32x11(keys, scratch)
	}
	for i, k := range src {
		keys[i] = k ^ (uint32(int32(^k)>>31) | 1<<31)
	}
	return scratch
}

func float64s(x []float64, scratch []uint64, w Width) []uint64 {
	if len(x) < 2 {
		return scratch
	}
	keys := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
	if cap(scratch) < len(x) {
		scratch = make([]uint64, len(x))
	}
	scratch = scratch[:len(x)]
	var src []uint64
	switch {
	case len(keys) <= insertionMax:
		for i, u := range keys {
			keys[i] = u ^ (uint64(int64(u)>>63) | 1<<63)
		}
		insertion(keys)
		src = keys
	case w == Width8:
		src = lsd64x8(keys, scratch)
	default:
		src = lsd64x11(keys, scratch)
	}
	for i, k := range src {
		keys[i] = k ^ (uint64(int64(^k)>>63) | 1<<63)
	}
	return scratch
}

// lsd32x11 transforms the float32 bits in keys into keys and sorts them
// in three passes of 11, 11 and 10 bits, with buf as scratch. It returns
// the slice holding the result: keys or buf.
func lsd32x11(keys, buf []uint32) []uint32 {
	var c [3][2048]uint32
	for i, u := range keys {
		k := u ^ (uint32(int32(u)>>31) | 1<<31)
		keys[i] = k
		c[0][k&0x7ff]++
		c[1][k>>11&0x7ff]++
		c[2][k>>22]++
	}
	src, dst := keys, buf
	for p := range c {
		if scatter11(src, dst, &c[p], uint(11*p)) {
			src, dst = dst, src
		}
	}
	return src
}

// lsd32x8 is lsd32x11 in four passes of 8 bits.
func lsd32x8(keys, buf []uint32) []uint32 {
	var c [4][256]uint32
	for i, u := range keys {
		k := u ^ (uint32(int32(u)>>31) | 1<<31)
		keys[i] = k
		c[0][k&0xff]++
		c[1][k>>8&0xff]++
		c[2][k>>16&0xff]++
		c[3][k>>24]++
	}
	src, dst := keys, buf
	for p := range c {
		if scatter8(src, dst, &c[p], uint(8*p)) {
			src, dst = dst, src
		}
	}
	return src
}

// lsd64x11 transforms the float64 bits in keys into keys and sorts them
// in six passes of 11 bits (the last of 9), with buf as scratch. It
// returns the slice holding the result: keys or buf.
func lsd64x11(keys, buf []uint64) []uint64 {
	var c [6][2048]uint32
	for i, u := range keys {
		k := u ^ (uint64(int64(u)>>63) | 1<<63)
		keys[i] = k
		c[0][k&0x7ff]++
		c[1][k>>11&0x7ff]++
		c[2][k>>22&0x7ff]++
		c[3][k>>33&0x7ff]++
		c[4][k>>44&0x7ff]++
		c[5][k>>55]++
	}
	src, dst := keys, buf
	for p := range c {
		if scatter11(src, dst, &c[p], uint(11*p)) {
			src, dst = dst, src
		}
	}
	return src
}

// lsd64x8 is lsd64x11 in eight passes of 8 bits.
func lsd64x8(keys, buf []uint64) []uint64 {
	var c [8][256]uint32
	for i, u := range keys {
		k := u ^ (uint64(int64(u)>>63) | 1<<63)
		keys[i] = k
		c[0][k&0xff]++
		c[1][k>>8&0xff]++
		c[2][k>>16&0xff]++
		c[3][k>>24&0xff]++
		c[4][k>>32&0xff]++
		c[5][k>>40&0xff]++
		c[6][k>>48&0xff]++
		c[7][k>>56]++
	}
	src, dst := keys, buf
	for p := range c {
		if scatter8(src, dst, &c[p], uint(8*p)) {
			src, dst = dst, src
		}
	}
	return src
}

// scatter11 moves src into dst ordered by the 11-bit digit
// (k>>shift)&0x7ff, whose counts are in count, stably. It reports false,
// doing nothing, when every key has the same digit: such a pass (common
// for floats that came from float32 or small integers, and for the top
// digits of values of one magnitude) is skipped. The counts are turned
// into offsets in place.
func scatter11[K uint32 | uint64](src, dst []K, count *[2048]uint32, shift uint) bool {
	if count[(src[0]>>shift)&0x7ff] == uint32(len(src)) {
		return false
	}
	var sum uint32
	for i, c := range count {
		count[i] = sum
		sum += c
	}
	for _, k := range src {
		d := (k >> shift) & 0x7ff
		dst[count[d]] = k
		count[d]++
	}
	return true
}

// scatter8 is scatter11 for the 8-bit digit uint8(k>>shift).
func scatter8[K uint32 | uint64](src, dst []K, count *[256]uint32, shift uint) bool {
	if count[uint8(src[0]>>shift)] == uint32(len(src)) {
		return false
	}
	var sum uint32
	for i, c := range count {
		count[i] = sum
		sum += c
	}
	for _, k := range src {
		d := uint8(k >> shift)
		dst[count[d]] = k
		count[d]++
	}
	return true
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
