// Package radix sorts float32 and float64 keys by LSD radix sort, in place
// ([Float32s], [Float64s]) or into a destination, leaving the source
// unchanged ([SortedFloat32s], [SortedFloat64s]). Its passes sort the
// floats' bits as unsigned integers and put the negative floats, whose
// order that reverses, right in the last pass, so they never transform
// the keys; [Key32] and [Key64] give the order it sorts by. It is shared
// by the CPU sort back-end and the sliding-window summaries.
//
// The sort takes digits of 8 or 11 bits (see [Width]). Which is faster
// depends on the machine more than on the keys: a [Sorter] measures both
// at first use of each size and keeps the faster; the functions
// [Float32s] and [Float64s] choose by size alone, as measured on the
// development machine (see BENCHMARKS.md).
package radix

import (
	"math"
	"slices"
	"unsafe"
)

// Key transforms. A float's bits, read as an unsigned integer, order
// non-negative floats correctly and negative floats backwards. Flipping the
// sign bit of non-negative floats and every bit of negative ones gives an
// unsigned key whose order is the floats' order, with −0 just below +0.

// Key32 returns the order-preserving unsigned key of f.
func Key32(f float32) uint32 { return key(math.Float32bits(f)) }

// FromKey32 inverts Key32.
func FromKey32(k uint32) float32 { return math.Float32frombits(unkey(k)) }

// Key64 returns the order-preserving unsigned key of f.
func Key64(f float64) uint64 { return key(math.Float64bits(f)) }

// FromKey64 inverts Key64.
func FromKey64(k uint64) float64 { return math.Float64frombits(unkey(k)) }

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
// It is SortedFloat32s(x, x, scratch), plus a copy back into x when the
// number of scatter passes is odd.
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
// The sort reads src in a counting pass, then runs one scatter pass per
// 11-bit digit that is not the same for every key, the first reading src,
// alternating between dst and scratch so that the last one writes into
// dst; it never transforms the keys (see lsd32x11). When every key is
// equal, the sort is the count and a copy. src must hold fewer than 2^31
// values.
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

// Up to insertionMax keys a window is sorted by insertion sort, and up to
// pdqMax32 float32 or pdqMax64 float64 keys by pattern-defeating quicksort
// (slices.Sort) of the keys: an LSD sort costs a fixed 2 µs (float32) or
// 4 µs (float64) to clear and sum its counts, which is most of its time
// below these sizes, where the comparison sort is faster (BenchmarkSortSmall:
// 4× at 100 keys). Both give the order of the LSD sort, bit for bit.
const (
	insertionMax = 48
	pdqMax32     = 384
	pdqMax64     = 768
)

func sorted32(dst, src []float32, scratch []uint32, w Width) ([]float32, []uint32) {
	dst = target(dst, src)
	d, s := bits32(dst), bits32(src)
	switch {
	case len(s) <= insertionMax:
		insertionSorted(d, s)
	case len(s) <= pdqMax32:
		pdqSorted(d, s)
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
	case len(s) <= pdqMax64:
		pdqSorted(d, s)
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
	if n > math.MaxInt32 {
		panic("radix: more than 2^31-1 keys")
	}
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

// pdqSorted writes the float bits of src, sorted, into dst, which is src
// or does not overlap it, by slices.Sort of their keys.
func pdqSorted[K uint32 | uint64](dst, src []K) {
	for i, u := range src {
		dst[i] = key(u)
	}
	slices.Sort(dst)
	for i, k := range dst {
		dst[i] = unkey(k)
	}
}

// The LSD sort orders the float bits as unsigned integers, digit by
// digit, and needs no key transform: that order is the floats' order for
// non-negative floats, and the reverse of it for negative ones, which all
// sort above them. The last scatter pass puts both right. If it is the
// pass of the top digit (which holds the sign bit), it lays out the
// buckets of negative digits first, in descending order of digit, and
// fills each from its end backwards, so that the negative floats come out
// reversed, then the buckets of non-negative digits as usual. If the top
// digit is the same for every key, every key has the same sign, and the
// last pass, whichever digit it sorts by, fills all its buckets backwards
// in descending order of digit when that sign is negative. Keys with equal
// bits come out in reverse order of arrival where a pass reverses them,
// which no one can tell. This puts −0 just below +0 and NaNs after +Inf or
// before −Inf by sign, as the keys of Key32 and Key64 do.

// lsd32x11 writes the float32 bits of src, sorted, into dst (src itself or
// a slice of the same length that does not overlap it) by three digits of
// 11, 11 and 10 bits, with scratch (grown if needed) as the second buffer,
// and returns scratch.
func lsd32x11(dst, src, scratch []uint32) []uint32 {
	var c [3][2048]uint32
	for _, u := range src {
		c[0][u&0x7ff]++
		c[1][u>>11&0x7ff]++
		c[2][u>>22]++
	}
	var digits [3]int
	u0, m := src[0], 0
	for p := range c {
		if c[p][u0>>(11*p)&0x7ff] != uint32(len(src)) {
			digits[m] = p
			m++
		}
	}
	return scatterAll(dst, src, scratch, m, func(j int, from, to []uint32) {
		p, neg := digits[j], len(c[0])
		if j == m-1 {
			neg = lastNeg(p == len(c)-1, 1<<9, int32(u0) < 0, neg)
		}
		scatter11(&c[p], uint(11*p), neg, from, to)
	})
}

// lsd32x8 is lsd32x11 with four digits of 8 bits.
func lsd32x8(dst, src, scratch []uint32) []uint32 {
	var c [4][256]uint32
	for _, u := range src {
		c[0][u&0xff]++
		c[1][u>>8&0xff]++
		c[2][u>>16&0xff]++
		c[3][u>>24]++
	}
	var digits [4]int
	u0, m := src[0], 0
	for p := range c {
		if c[p][uint8(u0>>(8*p))] != uint32(len(src)) {
			digits[m] = p
			m++
		}
	}
	return scatterAll(dst, src, scratch, m, func(j int, from, to []uint32) {
		p, neg := digits[j], len(c[0])
		if j == m-1 {
			neg = lastNeg(p == len(c)-1, 1<<7, int32(u0) < 0, neg)
		}
		scatter8(&c[p], uint(8*p), neg, from, to)
	})
}

// lsd64x11 is lsd32x11 for float64 bits, with six digits of 11 bits (the
// last of 9).
func lsd64x11(dst, src, scratch []uint64) []uint64 {
	var c [6][2048]uint32
	for _, u := range src {
		c[0][u&0x7ff]++
		c[1][u>>11&0x7ff]++
		c[2][u>>22&0x7ff]++
		c[3][u>>33&0x7ff]++
		c[4][u>>44&0x7ff]++
		c[5][u>>55]++
	}
	var digits [6]int
	u0, m := src[0], 0
	for p := range c {
		if c[p][u0>>(11*p)&0x7ff] != uint32(len(src)) {
			digits[m] = p
			m++
		}
	}
	return scatterAll(dst, src, scratch, m, func(j int, from, to []uint64) {
		p, neg := digits[j], len(c[0])
		if j == m-1 {
			neg = lastNeg(p == len(c)-1, 1<<8, int64(u0) < 0, neg)
		}
		scatter11(&c[p], uint(11*p), neg, from, to)
	})
}

// lsd64x8 is lsd64x11 with eight digits of 8 bits.
func lsd64x8(dst, src, scratch []uint64) []uint64 {
	var c [8][256]uint32
	for _, u := range src {
		c[0][u&0xff]++
		c[1][u>>8&0xff]++
		c[2][u>>16&0xff]++
		c[3][u>>24&0xff]++
		c[4][u>>32&0xff]++
		c[5][u>>40&0xff]++
		c[6][u>>48&0xff]++
		c[7][u>>56]++
	}
	var digits [8]int
	u0, m := src[0], 0
	for p := range c {
		if c[p][uint8(u0>>(8*p))] != uint32(len(src)) {
			digits[m] = p
			m++
		}
	}
	return scatterAll(dst, src, scratch, m, func(j int, from, to []uint64) {
		p, neg := digits[j], len(c[0])
		if j == m-1 {
			neg = lastNeg(p == len(c)-1, 1<<7, int64(u0) < 0, neg)
		}
		scatter8(&c[p], uint(8*p), neg, from, to)
	})
}

// lastNeg returns the neg argument of scatter11 or scatter8 for the last
// pass of a sort, with digits of size values: the sign digit (the least
// top digit whose keys are negative) if the pass is that of the top digit;
// otherwise 0 if every key is negative, and size if none is.
func lastNeg(top bool, signDigit int, negative bool, size int) int {
	switch {
	case top:
		return signDigit
	case negative:
		return 0
	}
	return size
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
// turning the counts into positions. The buckets of digits from neg up
// come first, in descending order of digit, each filled backwards; then
// the others, in ascending order, filled forwards (see lsd32x11); neg is
// len(count) for an ascending pass. The caller skips a pass whose digit is
// the same for every key (common for floats that came from float32 or
// small integers, and for the top digits of values of one magnitude).
//
// The order of the arguments leaves the shift in CX on amd64, where SHR
// needs it, and masking it (a no-op) and loading count before the loops
// let the compiler keep the checks of both out of them: the loops are
// the cost of the sort.
func scatter11[K uint32 | uint64](count *[2048]uint32, shift uint, neg int, src, dst []K) {
	shift &= 8*uint(unsafe.Sizeof(src[0])) - 1
	_ = count[0]
	if positions(count[:], neg) {
		for _, k := range src {
			d := (k >> shift) & 0x7ff
			dst[count[d]] = k
			count[d]++
		}
		return
	}
	for _, k := range src {
		d := (k >> shift) & 0x7ff
		q := count[d] // a position, or the complement of a backward one
		dst[q^uint32(int32(q)>>31)] = k
		count[d] = q + 1
	}
}

// scatter8 is scatter11 for the 8-bit digit uint8(k>>shift).
func scatter8[K uint32 | uint64](count *[256]uint32, shift uint, neg int, src, dst []K) {
	shift &= 8*uint(unsafe.Sizeof(src[0])) - 1
	_ = count[0]
	if positions(count[:], neg) {
		for _, k := range src {
			d := uint8(k >> shift)
			dst[count[d]] = k
			count[d]++
		}
		return
	}
	for _, k := range src {
		d := uint8(k >> shift)
		q := count[d]
		dst[q^uint32(int32(q)>>31)] = k
		count[d] = q + 1
	}
}

// positions turns the counts of the digits into the positions of the
// next key of each digit: for the digits from neg up, whose buckets come
// first in descending order of digit and fill backwards, the bitwise
// complement of the position (a negative number, q, whose position is
// q^q>>31, and q+1 that of the key before it); for the others, which
// follow in ascending order, the position itself. It reports whether
// every bucket fills forwards: then the positions are all non-negative.
func positions(count []uint32, neg int) (forward bool) {
	var start uint32
	for d := len(count) - 1; d >= neg; d-- {
		start += count[d]
		count[d] = ^(start - 1)
	}
	backward := start
	for d, c := range count[:neg] {
		count[d] = start
		start += c
	}
	return backward == 0
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
