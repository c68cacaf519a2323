// Package radix sorts float32 and float64 keys by LSD radix sort through
// the order-preserving float-to-unsigned key transform. It is shared by the
// CPU sort back-end and the sliding-window summaries.
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

// Float32s sorts x in ascending order with an LSD radix sort of three
// passes (11, 11 and 10 bits), using scratch (grown if shorter than x) as
// the second buffer. It runs in O(len(x)) time, allocates only when scratch
// is too short, and returns the scratch buffer for reuse. −0 sorts before
// +0; NaNs go after +Inf or before −Inf by sign.
//
// The key transform is fused with the counting pass, and the inverse
// transform with the copy back that an odd number of passes needs, so the
// sort reads and writes the keys five times in all.
func Float32s(x []float32, scratch []uint32) []uint32 {
	if len(x) < 2 {
		return scratch
	}
	keys := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
	if cap(scratch) < len(x) {
		scratch = make([]uint32, len(x))
	}
	scratch = scratch[:len(x)]
	var c [3][2048]uint32
	for i, u := range keys {
		k := u ^ (uint32(int32(u)>>31) | 1<<31)
		keys[i] = k
		c[0][k&0x7ff]++
		c[1][k>>11&0x7ff]++
		c[2][k>>22]++
	}
	src := keys
	if len(keys) <= insertionMax {
		insertion32(keys)
	} else {
		src = lsd32(keys, scratch, &c)
	}
	for i, k := range src {
		keys[i] = k ^ (uint32(int32(^k)>>31) | 1<<31)
	}
	return scratch
}

// Float64s sorts x in ascending order with an LSD radix sort, like
// Float32s but on 64-bit keys.
func Float64s(x []float64, scratch []uint64) []uint64 {
	if len(x) < 2 {
		return scratch
	}
	keys := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
	for i, u := range keys {
		keys[i] = u ^ (uint64(int64(u)>>63) | 1<<63)
	}
	if cap(scratch) < len(x) {
		scratch = make([]uint64, len(x))
	}
	scratch = scratch[:len(x)]
	sortUint64(keys, scratch)
	for i, k := range keys {
		keys[i] = k ^ (uint64(int64(^k)>>63) | 1<<63)
	}
	return scratch
}

// Below this many keys a window is sorted by insertion sort.
const insertionMax = 48

// lsd32 sorts keys by all 32 bits in three passes of 11, 11 and 10 bits,
// whose digit counts are in c, skipping a pass whose digit is the same for
// every key, with buf as scratch. It returns the slice holding the result:
// keys or buf.
func lsd32(keys, buf []uint32, c *[3][2048]uint32) []uint32 {
	src, dst := keys, buf
	if scatter32(src, dst, c[0][:], 0, 0x7ff) {
		src, dst = dst, src
	}
	if scatter32(src, dst, c[1][:], 11, 0x7ff) {
		src, dst = dst, src
	}
	if scatter32(src, dst, c[2][:1024], 22, 0x3ff) {
		src = dst
	}
	return src
}

// scatter32 moves src into dst ordered by the digit (k>>shift)&mask, whose
// counts are in count (len(count) = mask+1), stably. It reports false,
// doing nothing, when every key has the same digit. The counts are turned
// into offsets in place.
func scatter32(src, dst []uint32, count []uint32, shift uint, mask uint32) bool {
	if count[(src[0]>>shift)&mask] == uint32(len(src)) {
		return false
	}
	var sum uint32
	for i, c := range count {
		count[i] = sum
		sum += c
	}
	for _, k := range src {
		d := (k >> shift) & mask
		dst[count[d]] = k
		count[d]++
	}
	return true
}

func insertion32(x []uint32) {
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

// sortUint64 sorts keys with buf as scratch by six 11-bit LSD passes,
// skipping passes whose digit is the same for every key (common: float64
// values that came from float32 or from small integers share their low
// bits). Its count tables live on the stack: nothing is allocated.
func sortUint64(keys, buf []uint64) {
	n := len(keys)
	if n <= insertionMax {
		for i := 1; i < n; i++ {
			v := keys[i]
			j := i
			for j > 0 && keys[j-1] > v {
				keys[j] = keys[j-1]
				j--
			}
			keys[j] = v
		}
		return
	}
	var count [6][2048]uint32
	for _, k := range keys {
		count[0][k&0x7ff]++
		count[1][k>>11&0x7ff]++
		count[2][k>>22&0x7ff]++
		count[3][k>>33&0x7ff]++
		count[4][k>>44&0x7ff]++
		count[5][k>>55]++
	}
	src, dst := keys, buf
	for p := range 6 {
		c := &count[p]
		shift := uint(11 * p)
		if c[(src[0]>>shift)&0x7ff] == uint32(n) {
			continue
		}
		var sum uint32
		for i, v := range c {
			c[i] = sum
			sum += v
		}
		for _, k := range src {
			d := (k >> shift) & 0x7ff
			dst[c[d]] = k
			c[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
}
