package radix

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// sortedSorters are every way of sorting into a destination the package
// offers: the functions, each fixed width, and a measuring Sorter.
func sortedSorters() []struct {
	name string
	f32  func(dst, src []float32, scratch []uint32) ([]float32, []uint32)
	f64  func(dst, src []float64, scratch []uint64) ([]float64, []uint64)
} {
	s8, s11, auto := NewSorterWidth(Width8), NewSorterWidth(Width11), NewSorter()
	return []struct {
		name string
		f32  func(dst, src []float32, scratch []uint32) ([]float32, []uint32)
		f64  func(dst, src []float64, scratch []uint64) ([]float64, []uint64)
	}{
		{"func", SortedFloat32s, SortedFloat64s},
		{"8", s8.SortedFloat32s, s8.SortedFloat64s},
		{"11", s11.SortedFloat32s, s11.SortedFloat64s},
		{"auto", auto.SortedFloat32s, auto.SortedFloat64s},
	}
}

// destinations are the dst arguments a sort into a destination is tried
// with, for n values: none, too short, long enough and full of other
// values, and the source itself (an in-place sort).
var destinations = []string{"nil", "short", "reused", "in-place"}

func destination32(kind string, src []float32) []float32 {
	switch kind {
	case "short":
		return make([]float32, len(src)/2, len(src)/2+len(src)/4)
	case "reused":
		dst := make([]float32, len(src)+7)
		for i := range dst {
			dst[i] = float32(i) * -1.5
		}
		return dst[:3]
	case "in-place":
		return src
	}
	return nil
}

func destination64(kind string, src []float64) []float64 {
	switch kind {
	case "short":
		return make([]float64, len(src)/2, len(src)/2+len(src)/4)
	case "reused":
		dst := make([]float64, len(src)+7)
		for i := range dst {
			dst[i] = float64(i) * -1.5
		}
		return dst[:3]
	case "in-place":
		return src
	}
	return nil
}

// checkSorted32 sorts x with sort into each kind of destination and fails
// the test unless the result is slices.SortFunc's bit for bit, src is
// unchanged (unless it was the destination), and a reused destination
// was reused.
func checkSorted32(t *testing.T, name string, sort func(dst, src []float32, scratch []uint32) ([]float32, []uint32), x []float32) {
	t.Helper()
	want := slices.Clone(x)
	slices.SortFunc(want, cmp32)
	for _, kind := range destinations {
		for _, scratch := range [][]uint32{nil, make([]uint32, len(x))} {
			src := slices.Clone(x)
			dst := destination32(kind, src)
			got, _ := sort(dst, src, scratch)
			if !equalBits32(got, want) {
				t.Fatalf("%s, n=%d, dst %s: sort differs", name, len(x), kind)
			}
			if kind == "reused" && len(x) > 0 && &got[0] != &dst[:1][0] {
				t.Fatalf("%s, n=%d: dst with room not reused", name, len(x))
			}
			if kind != "in-place" && !equalBits32(src, x) {
				t.Fatalf("%s, n=%d, dst %s: src changed", name, len(x), kind)
			}
		}
	}
}

func checkSorted64(t *testing.T, name string, sort func(dst, src []float64, scratch []uint64) ([]float64, []uint64), x []float64) {
	t.Helper()
	want := slices.Clone(x)
	slices.SortFunc(want, cmp64)
	for _, kind := range destinations {
		for _, scratch := range [][]uint64{nil, make([]uint64, len(x))} {
			src := slices.Clone(x)
			dst := destination64(kind, src)
			got, _ := sort(dst, src, scratch)
			if !equalBits64(got, want) {
				t.Fatalf("%s, n=%d, dst %s: sort differs", name, len(x), kind)
			}
			if kind == "reused" && len(x) > 0 && &got[0] != &dst[:1][0] {
				t.Fatalf("%s, n=%d: dst with room not reused", name, len(x))
			}
			if kind != "in-place" && !equalBits64(src, x) {
				t.Fatalf("%s, n=%d, dst %s: src changed", name, len(x), kind)
			}
		}
	}
}

// TestSorted compares every sort into a destination with slices.SortFunc
// on the keys, bit for bit, on the inputs of TestSort and a few-distinct
// one, for every kind of destination, and checks that the source is left
// unchanged.
func TestSorted(t *testing.T) {
	sizes := []int{0, 1, 2, 3, 47, 48, 49, 255, 256, 257, pdqMax32 + 1, pdqMax64 + 1, 2049, 1<<12 + 1, 1 << 16}
	if testing.Short() {
		sizes = sizes[:len(sizes)-1]
	}
	rng := rand.New(rand.NewPCG(2, 2))
	for _, n := range sizes {
		for _, kind := range append(kinds, "few") {
			var x64 []float64
			if kind == "few" {
				vals := []float64{-7.25, 0.5, 1e9, 3}
				x64 = make([]float64, n)
				for i := range x64 {
					x64[i] = vals[rng.IntN(len(vals))]
				}
			} else {
				x64 = input(rng, kind, n)
			}
			x32 := make([]float32, n)
			for i, v := range x64 {
				x32[i] = float32(v)
			}
			for _, s := range sortedSorters() {
				checkSorted32(t, fmt.Sprintf("sorter %s, %s", s.name, kind), s.f32, x32)
				checkSorted64(t, fmt.Sprintf("sorter %s, %s", s.name, kind), s.f64, x64)
			}
		}
	}
}

// TestSortedPasses runs the sorts on keys that differ only in a chosen
// set of digits, for every set of the digits of each width, so that every
// combination of skipped and run scatter passes occurs: none (every key
// equal), one, two, an odd and an even number, the first or the last
// skipped. Each key is a random base key with random bits in the chosen
// digits, so the floats include NaNs, infinities and both zeros.
func TestSortedPasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	sizes := []int{pdqMax64 + 1, 1000}
	for _, w := range []Width{Width8, Width11} {
		s := NewSorterWidth(w)
		digits32, digits64 := (32+int(w)-1)/int(w), (64+int(w)-1)/int(w)
		for set := range 1 << digits32 {
			var mask uint32
			for d := range digits32 {
				if set&(1<<d) != 0 {
					mask |= (1<<w - 1) << (int(w) * d)
				}
			}
			for _, n := range sizes {
				base := rng.Uint32()
				x := make([]float32, n)
				for i := range x {
					x[i] = FromKey32(base ^ rng.Uint32()&mask)
				}
				checkSorted32(t, fmt.Sprintf("width %d, digits %b", w, set), s.SortedFloat32s, x)
			}
		}
		for set := range 1 << digits64 {
			var mask uint64
			for d := range digits64 {
				if set&(1<<d) != 0 {
					mask |= (1<<w - 1) << (int(w) * d)
				}
			}
			for _, n := range sizes {
				base := rng.Uint64()
				x := make([]float64, n)
				for i := range x {
					x[i] = FromKey64(base ^ rng.Uint64()&mask)
				}
				checkSorted64(t, fmt.Sprintf("width %d, digits %b", w, set), s.SortedFloat64s, x)
			}
		}
	}
}

// TestSortedOverlap checks that a destination that overlaps the source
// without being it is refused.
func TestSortedOverlap(t *testing.T) {
	x := make([]float32, 100)
	for _, dst := range [][]float32{x[1:], x[10:10:80], x[30:30]} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("dst %p overlapping src %p: no panic", dst, x)
				}
			}()
			SortedFloat32s(dst, x[20:90], nil)
		}()
	}
	// Disjoint halves of one array are fine.
	if got, _ := SortedFloat32s(x[50:50], x[:50], nil); len(got) != 50 {
		t.Fatalf("disjoint dst: len %d", len(got))
	}
}

// FuzzSorted sorts the float32 and float64 values of the input, repeated
// to reach the radix passes when the input is short, with both widths,
// into a new destination and in place, and compares with slices.SortFunc.
func FuzzSorted(f *testing.F) {
	f.Add([]byte{}, uint8(0))
	f.Add([]byte{0, 0, 0x80, 0x7f, 0, 0, 0x80, 0xff, 0, 0, 0, 0x80, 0, 0, 0, 0}, uint8(7))
	f.Add(binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.NaN())), uint8(100))
	f.Add([]byte("a few bytes of text, sorted as floats"), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, repeat uint8) {
		if len(data) > 1<<16 {
			return
		}
		data = slices.Repeat(data, 1+int(repeat%64))
		x32 := make([]float32, len(data)/4)
		for i := range x32 {
			x32[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		x64 := make([]float64, len(data)/8)
		for i := range x64 {
			x64[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:]))
		}
		for _, w := range []Width{Width8, Width11} {
			s := NewSorterWidth(w)
			checkSorted32(t, fmt.Sprintf("width %d", w), s.SortedFloat32s, x32)
			checkSorted64(t, fmt.Sprintf("width %d", w), s.SortedFloat64s, x64)
		}
	})
}
