package feed

import "math"

// The value rule: NaN and ±Inf are rejected (ReasonNaN, ReasonInf), −0
// becomes +0, and a float32 stream keeps each value rounded to float32, a
// finite value beyond float32's range rounding to ±Inf and being rejected
// as one (ReasonInf). The decoders apply it once to every value they
// decode (CleanValues, or their own decoding of float32 values, where
// rounding cannot reject); the pipeline applies only the rounding, once,
// when a float32 stream takes float64 values (AppendFloat32).

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
// gives them) and how many it left out. It allocates only when dst is too
// short.
func AppendFloat32(dst []float32, vals []float64) (_ []float32, m Moments, inf int) {
	n := len(dst)
	for _, v := range vals {
		r, ok := Float32(v)
		if !ok {
			inf++
			continue
		}
		dst = append(dst, r)
	}
	return dst, Measure(dst[n:]), inf
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
