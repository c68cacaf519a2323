// Package radix sorts float32 and float64 keys by LSD radix sort through
// the order-preserving float-to-unsigned key transform. It is shared by the
// CPU sort back-end and the sliding-window summaries.
package radix

import (
	"math"
	"math/bits"
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

// Float32s sorts x in ascending order with a radix sort, using scratch
// (grown if shorter than x) as the second buffer. It runs in O(len(x))
// time, allocates only when scratch is too short, and returns the scratch
// buffer for reuse. −0 sorts before +0; NaNs go after +Inf or before −Inf
// by sign.
func Float32s(x []float32, scratch []uint32) []uint32 {
	if len(x) < 2 {
		return scratch
	}
	keys := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
	if cap(scratch) < len(x) {
		scratch = make([]uint32, len(x))
	}
	scratch = scratch[:len(x)]
	sortKeys32(keys, scratch)
	for i, k := range keys {
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

// Below this many keys a bucket is sorted by insertion sort.
const insertionMax = 48

// Up to this many keys the LSD passes run straight over the keys: they and
// their scratch stay in the L2 cache. Larger inputs are first split by
// their most significant 8 bits still undecided (MSD), recursively, so that
// every bucket is sorted in cache. A fixed top byte would not do: float
// keys share their sign and exponent bits, and uniform values in [0, 1)
// put half of all keys in one top-byte bucket.
const lsdMax = 1 << 16

// sortKeys32 turns the float bits in keys into order-preserving keys while
// counting the first digits, then sorts them, with buf as scratch.
func sortKeys32(keys, buf []uint32) {
	if len(keys) <= lsdMax {
		var c [3][2048]uint32
		for i, u := range keys {
			k := u ^ (uint32(int32(u)>>31) | 1<<31)
			keys[i] = k
			c[0][k&0x7ff]++
			c[1][k>>11&0x7ff]++
			c[2][k>>22]++
		}
		if len(keys) <= insertionMax {
			insertion32(keys)
			return
		}
		lsd32(keys, buf, &c)
		return
	}
	lo, hi := ^uint32(0), uint32(0)
	for i, u := range keys {
		k := u ^ (uint32(int32(u)>>31) | 1<<31)
		keys[i] = k
		lo, hi = min(lo, k), max(hi, k)
	}
	// Only the bits below the keys' common prefix decide the order.
	msdInPlace(keys, buf, uint(bits.Len32(lo^hi)))
}

// msdInPlace sorts keys, which agree on all but their low `bits` bits,
// leaving the result in keys, with buf as scratch. Buckets alternate
// between the two buffers from one level to the next (msdFrom), so no
// bucket is copied back.
func msdInPlace(keys, buf []uint32, bits uint) {
	if len(keys) <= lsdMax || bits <= 8 {
		if lsdBits(keys, buf, bits) {
			copy(keys, buf)
		}
		return
	}
	shift := bits - 8
	start := split(keys, buf, shift)
	for d := range 256 {
		lo, hi := start[d], start[d+1]
		msdFrom(buf[lo:hi], keys[lo:hi], shift)
	}
}

// msdFrom sorts src, which agree on all but their low `bits` bits, into
// dst, using src as scratch.
func msdFrom(src, dst []uint32, bits uint) {
	if len(src) <= lsdMax || bits <= 8 {
		if !lsdBits(src, dst, bits) {
			copy(dst, src)
		}
		return
	}
	shift := bits - 8
	start := split(src, dst, shift)
	for d := range 256 {
		lo, hi := start[d], start[d+1]
		msdInPlace(dst[lo:hi], src[lo:hi], shift)
	}
}

// split moves src into dst grouped by the 8-bit digit at shift, stably,
// and returns where each digit's bucket starts.
func split(src, dst []uint32, shift uint) *[257]uint32 {
	var count [256]uint32
	for _, k := range src {
		count[k>>shift&0xff]++
	}
	start := new([257]uint32)
	for i := range 256 {
		start[i+1] = start[i] + count[i]
	}
	next := *start
	for _, k := range src {
		d := k >> shift & 0xff
		dst[next[d]] = k
		next[d]++
	}
	return start
}

// lsdBits sorts keys by their low `width` bits in LSD passes, skipping
// passes whose digit is the same for every key, with buf as scratch. It
// reports whether the result is in buf. Buckets of 4096 keys or more take
// 11-bit digits (fewer passes); smaller ones 8-bit digits, whose count
// tables cost less to clear.
func lsdBits(keys, buf []uint32, width uint) bool {
	if len(keys) <= insertionMax {
		insertion32(keys)
		return false
	}
	digit, mask := uint(8), uint32(0xff)
	if len(keys) >= 1<<12 {
		digit, mask = 11, 0x7ff
	}
	// Callers pass at most 24 bits (or 8, unsplit), so three digits do.
	passes := min((width+digit-1)/digit, 3)
	var c [3][2048]uint32
	for _, k := range keys {
		c[0][k&mask]++
		c[1][k>>digit&mask]++
		c[2][k>>(2*digit)&mask]++
	}
	src, dst := keys, buf
	inBuf := false
	for p := range passes {
		if scatter32(src, dst, c[p][:mask+1], digit*p, mask) {
			src, dst = dst, src
			inBuf = !inBuf
		}
	}
	return inBuf
}

// lsd32 sorts keys by all 32 bits in three passes of 11, 11 and 10 bits,
// whose digit counts are in c, skipping a pass whose digit is the same for
// every key. The result ends in keys.
func lsd32(keys, buf []uint32, c *[3][2048]uint32) {
	src, dst := keys, buf
	if scatter32(src, dst, c[0][:], 0, 0x7ff) {
		src, dst = dst, src
	}
	if scatter32(src, dst, c[1][:], 11, 0x7ff) {
		src, dst = dst, src
	}
	if scatter32(src, dst, c[2][:1024], 22, 0x3ff) {
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
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

// sortUint64 sorts keys with buf as scratch by 16-bit LSD passes, skipping
// passes whose digit is the same for every key (common: float64 values that
// came from float32 or from small integers share their low bits).
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
	count := make([]int, 4<<16)
	for _, k := range keys {
		count[k&0xffff]++
		count[1<<16+int(k>>16&0xffff)]++
		count[2<<16+int(k>>32&0xffff)]++
		count[3<<16+int(k>>48)]++
	}
	src, dst := keys, buf
	for p := range 4 {
		c := count[p<<16 : (p+1)<<16]
		shift := uint(16 * p)
		if c[(src[0]>>shift)&0xffff] == n {
			continue
		}
		sum := 0
		for i, v := range c {
			c[i] = sum
			sum += v
		}
		for _, k := range src {
			d := (k >> shift) & 0xffff
			dst[c[d]] = k
			c[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
}
