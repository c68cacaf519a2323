package radix

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"
)

func TestKeys(t *testing.T) {
	vals := []float32{float32(math.Inf(-1)), -math.MaxFloat32, -1, -math.SmallestNonzeroFloat32, float32(math.Copysign(0, -1)), 0, math.SmallestNonzeroFloat32, 1, math.MaxFloat32, float32(math.Inf(1))}
	for i := 1; i < len(vals); i++ {
		if Key32(vals[i-1]) >= Key32(vals[i]) {
			t.Errorf("Key32(%v) ≥ Key32(%v)", vals[i-1], vals[i])
		}
		if FromKey32(Key32(vals[i])) != vals[i] || Key64(float64(vals[i-1])) >= Key64(float64(vals[i])) {
			t.Errorf("round trip or 64-bit order broken at %v", vals[i])
		}
	}
}

// sorters are every way of sorting the package offers: the functions,
// each fixed width, and a measuring Sorter.
func sorters() []struct {
	name string
	f32  func([]float32, []uint32) []uint32
	f64  func([]float64, []uint64) []uint64
} {
	s8, s11, auto := NewSorterWidth(Width8), NewSorterWidth(Width11), NewSorter()
	return []struct {
		name string
		f32  func([]float32, []uint32) []uint32
		f64  func([]float64, []uint64) []uint64
	}{
		{"func", Float32s, Float64s},
		{"8", s8.Float32s, s8.Float64s},
		{"11", s11.Float32s, s11.Float64s},
		{"auto", auto.Float32s, auto.Float64s},
	}
}

// kinds are the inputs of TestSort.
var kinds = []string{"random", "dups", "negative", "signed", "zeros", "equal", "sorted", "reverse", "special", "f32in64", "ints"}

// input returns n values of a kind, as float64; float32 inputs are these
// rounded.
func input(rng *rand.Rand, kind string, n int) []float64 {
	x := make([]float64, n)
	special := []float64{math.Inf(-1), -math.MaxFloat64, -1, -math.SmallestNonzeroFloat64, math.Copysign(0, -1), 0,
		math.SmallestNonzeroFloat64, 1, math.MaxFloat64, math.Inf(1)}
	for i := range x {
		switch kind {
		case "random":
			x[i] = rng.NormFloat64() * 1e6
		case "dups":
			x[i] = float64(rng.IntN(10))
		case "negative":
			x[i] = -rng.ExpFloat64()
		case "signed":
			x[i] = math.Ldexp(rng.NormFloat64(), rng.IntN(200)-100)
		case "zeros":
			x[i] = math.Copysign(0, float64(rng.IntN(2))-0.5)
		case "equal":
			x[i] = 3
		case "sorted", "reverse":
			x[i] = float64(i) - float64(n)/2
		case "special":
			x[i] = special[rng.IntN(len(special))]
		case "f32in64":
			x[i] = float64(float32(rng.NormFloat64()))
		case "ints":
			x[i] = float64(rng.IntN(1 << 20))
		}
	}
	if kind == "reverse" {
		slices.Reverse(x)
	}
	return x
}

// cmp32 orders float32 values as the sort must: by key, so −0 < +0.
// Equal keys are equal bits, so any sort by key gives one result.
func cmp32(a, b float32) int {
	ka, kb := Key32(a), Key32(b)
	switch {
	case ka < kb:
		return -1
	case ka > kb:
		return 1
	}
	return 0
}

func cmp64(a, b float64) int {
	ka, kb := Key64(a), Key64(b)
	switch {
	case ka < kb:
		return -1
	case ka > kb:
		return 1
	}
	return 0
}

// TestSort compares every sorter with slices.SortFunc on the keys, bit
// for bit (so −0 must come before +0), across sizes that take every path
// (insertion, pdqsort, LSD, skipped passes) and inputs with negative values, −0,
// infinities and many duplicates.
func TestSort(t *testing.T) {
	sizes := []int{0, 1, 2, 3, 47, 48, 49, 255, 256, 257, pdqMax32, pdqMax32 + 1, pdqMax64, pdqMax64 + 1, 1000, 2047, 2048, 2049, 1 << 12, 1<<12 + 1, 1 << 14, 1 << 17, 1<<17 + 1, 1 << 20}
	if testing.Short() {
		sizes = sizes[:len(sizes)-3]
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range sizes {
		for _, kind := range kinds {
			x64 := input(rng, kind, n)
			want64 := slices.Clone(x64)
			slices.SortFunc(want64, cmp64)
			x32 := make([]float32, n)
			for i, v := range x64 {
				x32[i] = float32(v)
			}
			want32 := slices.Clone(x32)
			slices.SortFunc(want32, cmp32)
			for _, s := range sorters() {
				got32 := slices.Clone(x32)
				s.f32(got32, nil)
				if !equalBits32(got32, want32) {
					t.Fatalf("sorter %s, n=%d %s: float32 sort differs", s.name, n, kind)
				}
				got64 := slices.Clone(x64)
				s.f64(got64, nil)
				if !equalBits64(got64, want64) {
					t.Fatalf("sorter %s, n=%d %s: float64 sort differs", s.name, n, kind)
				}
			}
		}
	}
}

func equalBits32(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

func equalBits64(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// TestScratch checks that a short scratch buffer is grown and a long one
// reused, for both widths.
func TestScratch(t *testing.T) {
	for _, w := range []Width{Width8, Width11} {
		s := NewSorterWidth(w)
		x := []float32{3, 1, 2}
		x = slices.Repeat(x, 1000) // past pdqMax32: an LSD sort
		sc := s.Float32s(x, make([]uint32, 10))
		if len(sc) < len(x) || !slices.IsSorted(x) {
			t.Fatalf("width %d: scratch %d for %d keys, sorted %v", w, len(sc), len(x), slices.IsSorted(x))
		}
		big := make([]uint64, 3000)
		y := slices.Repeat([]float64{3, -1, 2}, 1000)
		if sc := s.Float64s(y, big); &sc[0] != &big[0] || !slices.IsSorted(y) {
			t.Fatalf("width %d: scratch not reused or not sorted", w)
		}
	}
}

func TestNegativeZero(t *testing.T) {
	for _, s := range sorters() {
		x := []float32{0, float32(math.Copysign(0, -1)), 0, float32(math.Copysign(0, -1))}
		s.f32(x, nil)
		y := []float64{0, math.Copysign(0, -1), 0, math.Copysign(0, -1)}
		s.f64(y, nil)
		for i := range x {
			if neg := math.Signbit(float64(x[i])); neg != (i < 2) {
				t.Fatalf("%s: −0 must sort before +0: %v", s.name, x)
			}
			if neg := math.Signbit(y[i]); neg != (i < 2) {
				t.Fatalf("%s: −0 must sort before +0: %v", s.name, y)
			}
		}
	}
}

func TestSizeClass(t *testing.T) {
	for _, tc := range []struct{ n, class int }{{1, 0}, {2, 1}, {3, 2}, {4, 2}, {5, 3}, {1 << 16, 16}, {1<<16 + 1, 17}} {
		if got := sizeClass(tc.n); got != tc.class {
			t.Errorf("sizeClass(%d) = %d, want %d", tc.n, got, tc.class)
		}
	}
	if got := measureSize(1 << 30); got != maxMeasured {
		t.Errorf("measureSize(2^30) = %d, want %d", got, maxMeasured)
	}
}

// TestSorterWidth checks that a measuring Sorter chooses one of the two
// widths, the same one every time for a class, and that a fixed Sorter
// keeps its width.
func TestSorterWidth(t *testing.T) {
	s := NewSorter()
	for _, n := range []int{100, 1000, 1 << 12} {
		w := s.Width32(n)
		if w != Width8 && w != Width11 {
			t.Fatalf("Width32(%d) = %d", n, w)
		}
		if s.Width32(n-1) != w && sizeClass(n-1) == sizeClass(n) {
			t.Fatalf("Width32 changed within the class of %d", n)
		}
		if w := s.Width64(n); w != Width8 && w != Width11 {
			t.Fatalf("Width64(%d) = %d", n, w)
		}
	}
	if w := NewSorterWidth(Width8).Width64(1 << 20); w != Width8 {
		t.Fatalf("fixed sorter: width %d", w)
	}
}

var (
	sink32 []float32
	sink64 []float64
)

// threadCPU locks the benchmark to its thread until it ends and returns a
// clock of the thread's CPU time from now on (on Linux; elsewhere the wall
// clock): on a shared machine it leaves out the time other processes take
// the core, which the ns/key of the wall clock includes.
func threadCPU(b *testing.B) func() time.Duration {
	runtime.LockOSThread()
	b.Cleanup(runtime.UnlockOSThread)
	now := newClock()
	start := now()
	return func() time.Duration { return now() - start }
}

// BenchmarkSort compares the radix sort at each digit width, as a
// measuring Sorter chooses (its choice is reported as the "bits" metric),
// and slices.Sort on uniform random float32 windows, one core. radix* and
// slices.Sort copy the input and sort the copy in place (see the copy
// baseline); sorted* sort it into a destination with SortedFloat32s,
// leaving it unchanged. cpu-ns/key counts the thread's CPU time only.
func BenchmarkSort(b *testing.B) {
	auto := NewSorter()
	for shift := 12; shift <= 22; shift += 2 {
		n := 1 << shift
		src := make([]float32, n)
		rng := rand.New(rand.NewPCG(uint64(n), 2))
		for i := range src {
			src[i] = rng.Float32()
		}
		x := make([]float32, n)
		scratch := make([]uint32, n)
		for _, s := range []struct {
			name   string
			sorter *Sorter
		}{{"radix8", NewSorterWidth(Width8)}, {"radix11", NewSorterWidth(Width11)}, {"auto", auto}} {
			b.Run(fmt.Sprintf("%s/n=%d", s.name, n), func(b *testing.B) {
				s.sorter.Width32(n) // measure outside the timed loop
				cpu := threadCPU(b)
				b.ReportAllocs()
				for b.Loop() {
					copy(x, src)
					scratch = s.sorter.Float32s(x, scratch)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
				b.ReportMetric(float64(cpu())/float64(b.N)/float64(n), "cpu-ns/key")
				b.ReportMetric(float64(s.sorter.Width32(n)), "bits")
				sink32 = x
			})
		}
		for _, s := range []struct {
			name   string
			sorter *Sorter
		}{{"sorted8", NewSorterWidth(Width8)}, {"sorted11", NewSorterWidth(Width11)}, {"sortedauto", auto}} {
			b.Run(fmt.Sprintf("%s/n=%d", s.name, n), func(b *testing.B) {
				s.sorter.Width32(n)
				cpu := threadCPU(b)
				b.ReportAllocs()
				for b.Loop() {
					x, scratch = s.sorter.SortedFloat32s(x, src, scratch)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
				b.ReportMetric(float64(cpu())/float64(b.N)/float64(n), "cpu-ns/key")
				b.ReportMetric(float64(s.sorter.Width32(n)), "bits")
				sink32 = x
			})
		}
		b.Run(fmt.Sprintf("copy/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				copy(x, src)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
			sink32 = x
		})
		b.Run(fmt.Sprintf("slices.Sort/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				copy(x, src)
				slices.Sort(x)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
			sink32 = x
		})
	}
}

// BenchmarkSort64 is BenchmarkSort for float64 keys (normal values, all
// eight bytes significant), without slices.Sort.
func BenchmarkSort64(b *testing.B) {
	auto := NewSorter()
	for shift := 12; shift <= 22; shift += 2 {
		n := 1 << shift
		src := make([]float64, n)
		rng := rand.New(rand.NewPCG(uint64(n), 3))
		for i := range src {
			src[i] = rng.NormFloat64()
		}
		x := make([]float64, n)
		scratch := make([]uint64, n)
		for _, s := range []struct {
			name   string
			sorter *Sorter
		}{{"radix8", NewSorterWidth(Width8)}, {"radix11", NewSorterWidth(Width11)}, {"auto", auto}} {
			b.Run(fmt.Sprintf("%s/n=%d", s.name, n), func(b *testing.B) {
				s.sorter.Width64(n) // measure outside the timed loop
				cpu := threadCPU(b)
				b.ReportAllocs()
				for b.Loop() {
					copy(x, src)
					scratch = s.sorter.Float64s(x, scratch)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
				b.ReportMetric(float64(cpu())/float64(b.N)/float64(n), "cpu-ns/key")
				b.ReportMetric(float64(s.sorter.Width64(n)), "bits")
				sink64 = x
			})
		}
		for _, s := range []struct {
			name   string
			sorter *Sorter
		}{{"sorted8", NewSorterWidth(Width8)}, {"sorted11", NewSorterWidth(Width11)}, {"sortedauto", auto}} {
			b.Run(fmt.Sprintf("%s/n=%d", s.name, n), func(b *testing.B) {
				s.sorter.Width64(n)
				cpu := threadCPU(b)
				b.ReportAllocs()
				for b.Loop() {
					x, scratch = s.sorter.SortedFloat64s(x, src, scratch)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
				b.ReportMetric(float64(cpu())/float64(b.N)/float64(n), "cpu-ns/key")
				b.ReportMetric(float64(s.sorter.Width64(n)), "bits")
				sink64 = x
			})
		}
	}
}
