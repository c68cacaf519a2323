package feed

import (
	"math"
	"slices"
)

// The value rule: NaN and ±Inf are rejected (ReasonNaN, ReasonInf), −0
// becomes +0, and a float32 stream keeps each value rounded to float32, a
// finite value beyond float32's range rounding to ±Inf and being rejected
// as one (ReasonInf). The decoders apply it once to every value they
// decode (CleanValues, or the same checks in their own decoding loops);
// the pipeline applies only the rounding, once, when a float32 stream
// takes float64 values (AppendFloat32).

// CleanValues applies the value rule to vals in place: it leaves out NaN
// and ±Inf, counting them, and turns −0 into +0. It returns the values
// kept, a prefix of vals in their original order, and how many NaN and
// ±Inf it left out. It makes one pass over vals and allocates nothing.
func CleanValues(vals []float64) (kept []float64, nan, inf int) {
	j := 0
	for _, v := range vals {
		if v-v != 0 { // true for NaN and ±Inf only
			if v != v {
				nan++
			} else {
				inf++
			}
			continue
		}
		vals[j] = v + 0 // −0 becomes +0
		j++
	}
	return vals[:j], nan, inf
}

// MaxPair is the largest magnitude of x or y in a pair that a pair stream
// keeps, 2^960 (about 9.7·10^288). A pair stream sums x, |y| and the
// positive and negative y of up to 2^63 pairs, in any order; below this
// bound none of those sums can overflow, so a window of pairs once
// accepted is always summarised.
const MaxPair = 0x1p960

// CleanPairs applies the value rule to the pairs (x[i], y[i]) in place: it
// leaves out a pair with a NaN in x or y, counting it as nan, and one with
// a ±Inf, or a magnitude above MaxPair, and no NaN, counting it as inf, and
// turns −0 into +0. It returns the pairs kept, prefixes of x and y in their
// original order. It makes one pass and allocates nothing. It panics if x
// and y differ in length.
func CleanPairs(x, y []float64) (kx, ky []float64, nan, inf int) {
	if len(x) != len(y) {
		panic("feed: CleanPairs of x and y of different lengths")
	}
	j := 0
	for i, a := range x {
		b := y[i]
		if !(math.Abs(a) <= MaxPair && math.Abs(b) <= MaxPair) { // NaN, ±Inf or too large
			if a != a || b != b {
				nan++
			} else {
				inf++
			}
			continue
		}
		x[j], y[j] = a+0, b+0 // −0 becomes +0
		j++
	}
	return x[:j], y[:j], nan, inf
}

// Float32 returns v, a clean value (CleanValues), rounded to float32 as a
// float32 stream keeps it: +0 for a value that rounds to zero, and ok
// false for a value beyond float32's range, which rounds to ±Inf and is
// rejected as ReasonInf.
func Float32(v float64) (_ float32, ok bool) {
	r := float32(v) + 0
	return r, r-r == 0
}

// AppendFloat32 appends clean values (CleanValues) rounded to float32
// (Float32) to dst, leaving out those beyond float32's range, and returns
// the extended slice, the moments of the values it appended (as Measure
// gives them, the sum possibly added in another order) and how many it
// left out. It allocates only when dst is too short.
func AppendFloat32(dst []float32, vals []float64) (_ []float32, m Moments, inf int) {
	n := len(dst)
	dst = slices.Grow(dst, len(vals))[:n+len(vals)]
	out := dst[n:]
	j := 0
	// Blocks of roundBlock values are rounded and measured four at a time
	// without a branch per value: the exponent bits of a rounded value
	// plus one in the lowest exponent bit carry into bit 31 only when
	// they are all ones (±Inf, as a clean value rounds to no NaN). A
	// block that holds one is rounded and measured again value by value.
	// Measuring as the values are rounded saves Measure's second pass.
	var s0, s1, s2, s3 float64
	lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
	for len(vals) > 0 {
		k := min(len(vals), roundBlock)
		block, o := vals[:k:k], out[j:j+k:j+k]
		t0, t1, t2, t3, tlo, thi := s0, s1, s2, s3, lo, hi // to restore if the block rounds to ±Inf
		var special uint32
		i := 0
		for ; i+4 <= k; i += 4 {
			v := block[i : i+4 : i+4]
			r0, r1, r2, r3 := float32(v[0])+0, float32(v[1])+0, float32(v[2])+0, float32(v[3])+0
			special |= (math.Float32bits(r0)&expBits32 + expOne32) | (math.Float32bits(r1)&expBits32 + expOne32) |
				(math.Float32bits(r2)&expBits32 + expOne32) | (math.Float32bits(r3)&expBits32 + expOne32)
			w := o[i : i+4 : i+4]
			w[0], w[1], w[2], w[3] = r0, r1, r2, r3
			s0 += float64(r0)
			s1 += float64(r1)
			s2 += float64(r2)
			s3 += float64(r3)
			lo, hi = widen(lo, hi, r0)
			lo, hi = widen(lo, hi, r1)
			lo, hi = widen(lo, hi, r2)
			lo, hi = widen(lo, hi, r3)
		}
		for ; i < k; i++ {
			r := float32(block[i]) + 0
			special |= math.Float32bits(r)&expBits32 + expOne32
			o[i] = r
			s0 += float64(r)
			lo, hi = widen(lo, hi, r)
		}
		if special&(1<<31) == 0 {
			j += k
		} else {
			s0, s1, s2, s3, lo, hi = t0, t1, t2, t3, tlo, thi
			for _, v := range block {
				r, ok := Float32(v)
				if !ok {
					inf++
					continue
				}
				out[j] = r
				j++
				s0 += float64(r)
				lo, hi = widen(lo, hi, r)
			}
		}
		vals = vals[k:]
	}
	if j == 0 {
		return dst[:n], Moments{}, inf
	}
	m = Moments{Count: int64(j), Sum: (s0 + s1) + (s2 + s3), Min: float64(lo), Max: float64(hi)}
	return dst[:n+j], m, inf
}

// roundBlock is the number of values AppendFloat32 checks for ±Inf at
// once; expBits32 are the exponent bits of a float32, expOne32 the lowest
// of them.
const (
	roundBlock = 256
	expBits32  = 0x7f800000
	expOne32   = 0x00800000
)

// widen returns lo and hi widened to hold v, which is not NaN.
func widen(lo, hi, v float32) (float32, float32) {
	if v < lo {
		lo = v
	}
	if v > hi {
		hi = v
	}
	return lo, hi
}

// KeptFloat32 returns how many of vals, clean values (CleanValues), a
// float32 stream keeps (Float32), and how many it rejects as ±Inf.
func KeptFloat32(vals []float64) (kept, inf int) {
	for _, v := range vals {
		if _, ok := Float32(v); ok {
			kept++
		} else {
			inf++
		}
	}
	return kept, inf
}

// Moments are the count, sum, min and max of some values.
type Moments struct {
	Count         int64
	Sum, Min, Max float64
}

// Add returns the moments of the values of m and o together.
func (m Moments) Add(o Moments) Moments {
	switch {
	case o.Count == 0:
		return m
	case m.Count == 0:
		return o
	}
	return Moments{Count: m.Count + o.Count, Sum: m.Sum + o.Sum, Min: min(m.Min, o.Min), Max: max(m.Max, o.Max)}
}

// Measure returns the moments of values; Min and Max are 0 when there are
// none. Values must not be NaN.
func Measure[T float32 | float64](values []T) Moments {
	if len(values) == 0 {
		return Moments{}
	}
	// Four partial sums break the chain of dependent additions, and plain
	// comparisons avoid the NaN handling of the min and max builtins.
	var sum [4]float64
	lo, hi := values[0], values[0]
	i := 0
	for ; i+4 <= len(values); i += 4 {
		v := values[i : i+4 : i+4]
		sum[0] += float64(v[0])
		sum[1] += float64(v[1])
		sum[2] += float64(v[2])
		sum[3] += float64(v[3])
		for _, x := range v {
			if x < lo {
				lo = x
			}
			if x > hi {
				hi = x
			}
		}
	}
	for _, x := range values[i:] {
		sum[0] += float64(x)
		if x < lo {
			lo = x
		}
		if x > hi {
			hi = x
		}
	}
	return Moments{
		Count: int64(len(values)),
		Sum:   (sum[0] + sum[1]) + (sum[2] + sum[3]),
		Min:   float64(lo), Max: float64(hi),
	}
}
