package feed

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestCleanValues(t *testing.T) {
	negZero := math.Copysign(0, -1)
	in := []float64{1, math.NaN(), negZero, math.Inf(1), -2.5, math.Inf(-1), 0, math.NaN(), math.MaxFloat64, math.SmallestNonzeroFloat64}
	got, nan, inf := CleanValues(in)
	want := []float64{1, 0, -2.5, 0, math.MaxFloat64, math.SmallestNonzeroFloat64}
	if !slices.Equal(got, want) || slices.ContainsFunc(got, func(v float64) bool { return v == 0 && math.Signbit(v) }) {
		t.Errorf("CleanValues = %v, want %v", got, want)
	}
	if nan != 2 || inf != 2 {
		t.Errorf("CleanValues counted %d NaN, %d Inf; want 2, 2", nan, inf)
	}
	if &got[0] != &in[0] {
		t.Error("CleanValues did not work in place")
	}
	if n := testing.AllocsPerRun(100, func() { CleanValues(in) }); n != 0 {
		t.Errorf("CleanValues allocates %v times", n)
	}
}

// TestAppendFloat32: values round to float32 as a float32 stream keeps
// them, those beyond its range are left out and counted, −0 and values
// that round to zero become +0, and the moments are those of the values
// kept.
func TestAppendFloat32(t *testing.T) {
	in := []float64{0.1, 3.5e38, -3.5e38, math.MaxFloat32, -1e-50, 1e-50, 16777217, -2.5, 1e300,
		math.Nextafter(math.MaxFloat32, math.Inf(1))}
	got, m, inf := AppendFloat32([]float32{7}, in)
	want := []float32{7, 0.1, math.MaxFloat32, 0, 0, 16777216, -2.5, math.MaxFloat32}
	if !slices.Equal(got, want) || slices.ContainsFunc(got, func(v float32) bool { return v == 0 && math.Signbit(float64(v)) }) {
		t.Errorf("AppendFloat32 = %v, want %v", got, want)
	}
	if inf != 3 {
		t.Errorf("AppendFloat32 left out %d, want 3", inf)
	}
	checkMoments(t, "AppendFloat32", want[1:], m)
	if kept, inf := KeptFloat32(in); kept != len(want)-1 || inf != 3 {
		t.Errorf("KeptFloat32 = %d, %d; want %d, 3", kept, inf, len(want)-1)
	}
}

func TestMomentsAdd(t *testing.T) {
	a, b := Measure([]float64{1, 5}), Measure([]float64{-2, 3, 4})
	if got, want := a.Add(b), Measure([]float64{1, 5, -2, 3, 4}); got != want {
		t.Errorf("Add = %+v, want %+v", got, want)
	}
	if got := a.Add(Moments{}); got != a {
		t.Errorf("Add of none = %+v, want %+v", got, a)
	}
	if got := (Moments{}).Add(b); got != b {
		t.Errorf("none Add = %+v, want %+v", got, b)
	}
}

// TestCleanPairs: a pair with a NaN anywhere counts as nan, one with a
// ±Inf and no NaN as inf, −0 becomes +0 in x and y, and the pairs kept
// stay together, in order, in place.
func TestCleanPairs(t *testing.T) {
	nan, inf, negZero := math.NaN(), math.Inf(1), math.Copysign(0, -1)
	x := []float64{1, nan, 2, inf, -inf, negZero, 3, 5}
	y := []float64{10, 1, nan, nan, 1, negZero, inf, -50}
	kx, ky, n, i := CleanPairs(x, y)
	if !slices.Equal(kx, []float64{1, 0, 5}) || !slices.Equal(ky, []float64{10, 0, -50}) || n != 3 || i != 2 {
		t.Fatalf("CleanPairs = %v %v, %d NaN, %d Inf", kx, ky, n, i)
	}
	if math.Signbit(kx[1]) || math.Signbit(ky[1]) {
		t.Error("−0 kept")
	}
	if &kx[0] != &x[0] || &ky[0] != &y[0] {
		t.Error("CleanPairs did not work in place")
	}
	if n := testing.AllocsPerRun(100, func() { CleanPairs(x, y) }); n != 0 {
		t.Errorf("CleanPairs allocates %v times", n)
	}
}

// TestCleanPairsBound: pairs beyond MaxPair, in x or y, are rejected as
// inf; MaxPair itself is kept.
func TestCleanPairsBound(t *testing.T) {
	big := math.Nextafter(MaxPair, math.Inf(1))
	x := []float64{MaxPair, -MaxPair, big, 1, -big, math.MaxFloat64}
	y := []float64{-MaxPair, 1, 1, big, 2, 3}
	kx, ky, nan, inf := CleanPairs(x, y)
	if !slices.Equal(kx, []float64{MaxPair, -MaxPair}) || !slices.Equal(ky, []float64{-MaxPair, 1}) || nan != 0 || inf != 4 {
		t.Fatalf("CleanPairs = %v %v, %d NaN, %d Inf", kx, ky, nan, inf)
	}
}

// checkMoments checks m against Measure(vals): the count, min and max
// exactly, the sum to within rounding, as a sum added in another order.
func checkMoments(t *testing.T, name string, vals []float32, m Moments) {
	t.Helper()
	want := Measure(vals)
	var abs float64
	for _, v := range vals {
		abs += math.Abs(float64(v))
	}
	if m.Count != want.Count || m.Min != want.Min || m.Max != want.Max || math.Abs(m.Sum-want.Sum) > 1e-12*abs {
		t.Errorf("%s: moments %+v, want %+v", name, m, want)
	}
}

// appendFloat32ByValue is AppendFloat32 a value at a time.
func appendFloat32ByValue(dst []float32, vals []float64) ([]float32, int) {
	inf := 0
	for _, v := range vals {
		if r, ok := Float32(v); ok {
			dst = append(dst, r)
		} else {
			inf++
		}
	}
	return dst, inf
}

// TestAppendFloat32Blocks holds AppendFloat32 to rounding a value at a
// time, for runs that end inside, at and past a block, with values
// beyond float32's range in one value in three, one in a thousand, or
// none: blocks rounded at once and blocks rounded again value by value.
func TestAppendFloat32Blocks(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	specials := []float64{3.5e38, -3.5e38, 1e300, -1e300, math.Nextafter(math.MaxFloat32, math.Inf(1)) * 1.0000001,
		math.MaxFloat32, -1e-50, 1e-50, math.SmallestNonzeroFloat64, 0}
	for _, every := range []int{3, 1000, 0} {
		var in []float64
		for range 3*roundBlock + 7 {
			if every > 0 && r.IntN(every) == 0 {
				in = append(in, specials[r.IntN(len(specials))])
			} else {
				in = append(in, r.NormFloat64()*1e6)
			}
		}
		for _, n := range []int{0, 1, 3, 4, roundBlock - 1, roundBlock, roundBlock + 5, len(in)} {
			got, m, inf := AppendFloat32([]float32{7}, in[:n])
			want, wantInf := appendFloat32ByValue([]float32{7}, in[:n])
			if !slices.Equal(got, want) || inf != wantInf {
				t.Fatalf("one in %d special, %d values: %d kept, %d left out; want %d, %d", every, n, len(got)-1, inf, len(want)-1, wantInf)
			}
			if slices.ContainsFunc(got, func(v float32) bool { return v == 0 && math.Signbit(float64(v)) }) {
				t.Fatalf("one in %d special, %d values: a -0 kept", every, n)
			}
			checkMoments(t, "AppendFloat32", got[1:], m)
		}
	}
}

// FuzzAppendFloat32 holds AppendFloat32 to rounding a value at a time,
// for the clean values (CleanValues) of any bytes.
func FuzzAppendFloat32(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0xf0, 0x47, 0, 0, 0, 0, 0, 0, 0, 0x80})
	f.Fuzz(func(t *testing.T, data []byte) {
		var in []float64
		for i := 0; i+8 <= len(data); i += 8 {
			in = append(in, math.Float64frombits(binary.LittleEndian.Uint64(data[i:])))
		}
		in, _, _ = CleanValues(in)
		got, m, inf := AppendFloat32(nil, in)
		want, wantInf := appendFloat32ByValue(nil, in)
		if !slices.Equal(got, want) || inf != wantInf {
			t.Fatalf("AppendFloat32(%v) = %v, %d left out; want %v, %d", in, got, inf, want, wantInf)
		}
		checkMoments(t, "AppendFloat32", got, m)
	})
}

// BenchmarkAppendFloat32 rounds and measures 65,536 clean float64 values,
// as the pipeline does when a float32 stream takes float64 values.
func BenchmarkAppendFloat32(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	in := make([]float64, 65536)
	for i := range in {
		in[i] = r.NormFloat64() * 1e3
	}
	dst := make([]float32, 0, len(in))
	b.SetBytes(int64(8 * len(in)))
	for b.Loop() {
		dst, _, _ = AppendFloat32(dst[:0], in)
	}
}
