// Package sorttest is the table of cases that every gpusort back-end's
// tests run: Sorter and Digester check a back-end against the CPU's
// reference order and summary.DigestSorted, on every size and Pattern,
// batches of windows of different lengths, float64 batches and the
// Bentley–McIlroy grid of Go's sort tests.
package sorttest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"streamd/gpusort"
	"streamd/summary"
)

// A Pattern fills a window of float32 values: one of the arrival orders
// and value mixes of the shared table.
type Pattern struct {
	Name string
	Fill func(r *rand.Rand, x []float32)
}

var denormal = math.Float32frombits(0x00012345)

// Patterns returns the patterns of the shared table: random, sorted,
// reverse, equal, two-valued, duplicates, infinities, zeros (±0 and
// denormals), magnitudes, negative and denormals.
func Patterns() []Pattern {
	return []Pattern{
		{"random", func(r *rand.Rand, x []float32) {
			for i := range x {
				x[i] = float32(r.NormFloat64() * 1000)
			}
		}},
		{"sorted", func(r *rand.Rand, x []float32) {
			for i := range x {
				x[i] = float32(i) - float32(len(x)/3)
			}
		}},
		{"reverse", func(r *rand.Rand, x []float32) {
			for i := range x {
				x[i] = float32(len(x) - i)
			}
		}},
		{"equal", func(r *rand.Rand, x []float32) {
			for i := range x {
				x[i] = 42.5
			}
		}},
		{"two-valued", func(r *rand.Rand, x []float32) {
			for i := range x {
				x[i] = float32(r.IntN(2)) * 3
			}
		}},
		{"duplicates", func(r *rand.Rand, x []float32) {
			for i := range x {
				x[i] = float32(r.IntN(17) - 8)
			}
		}},
		{"infinities", func(r *rand.Rand, x []float32) {
			v := []float32{float32(math.Inf(1)), float32(math.Inf(-1)), 0, 1, -1}
			for i := range x {
				x[i] = v[r.IntN(len(v))]
			}
		}},
		{"zeros", func(r *rand.Rand, x []float32) {
			negz := float32(math.Copysign(0, -1))
			v := []float32{0, negz, negz, 0, 1, -1, denormal, -denormal}
			for i := range x {
				x[i] = v[r.IntN(len(v))]
			}
		}},
		{"magnitudes", func(r *rand.Rand, x []float32) {
			v := []float32{math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32,
				-math.SmallestNonzeroFloat32, 1e30, -1e-30, 1.17549435e-38, -1.17549435e-38, 0}
			for i := range x {
				x[i] = v[r.IntN(len(v))] * float32(1+r.IntN(3))
			}
		}},
		{"negative", func(r *rand.Rand, x []float32) {
			for i := range x {
				x[i] = -float32(r.ExpFloat64() * 1e5)
			}
		}},
		{"denormals", func(r *rand.Rand, x []float32) {
			for i := range x {
				b := uint32(r.IntN(1 << 23))
				if r.IntN(2) == 0 {
					b |= 1 << 31
				}
				x[i] = math.Float32frombits(b)
			}
		}},
	}
}

// Sizes are the window lengths of the shared table; the largest only
// without -short.
func Sizes() []int {
	s := []int{0, 1, 2, 3, 5, 21, 1000, 1 << 16}
	if !testing.Short() {
		s = append(s, 1<<18)
	}
	return s
}

// KeyOrder sorts x as the CPU back-end does: by Key32, so −0 before +0.
func KeyOrder(x []float32) {
	slices.SortFunc(x, func(a, b float32) int {
		ka, kb := gpusort.Key32(a), gpusort.Key32(b)
		switch {
		case ka < kb:
			return -1
		case ka > kb:
			return 1
		}
		return 0
	})
}

// KeyOrder64 sorts x as the CPU back-end does: by Key64.
func KeyOrder64(x []float64) {
	slices.SortFunc(x, func(a, b float64) int {
		ka, kb := gpusort.Key64(a), gpusort.Key64(b)
		switch {
		case ka < kb:
			return -1
		case ka > kb:
			return 1
		}
		return 0
	})
}

// CheckSorted compares got with want bit for bit, and with slices.Sort.
func CheckSorted(t *testing.T, name string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: length %d, want %d", name, len(got), len(want))
	}
	ref := slices.Clone(want)
	slices.Sort(ref)
	for i := range got {
		if got[i] != ref[i] {
			t.Fatalf("%s: [%d] = %v, slices.Sort has %v", name, i, got[i], ref[i])
		}
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: [%d] = %v (%#x), want %v (%#x)", name, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// SortBatch sorts b with s and checks every window against the reference.
func SortBatch(t *testing.T, s gpusort.Sorter, name string, b *gpusort.Quad) {
	t.Helper()
	var want32 [gpusort.Channels][]float32
	var want64 [gpusort.Channels][]float64
	for i := range gpusort.Channels {
		want32[i] = slices.Clone(b.F32[i])
		KeyOrder(want32[i])
		want64[i] = slices.Clone(b.F64[i])
		KeyOrder64(want64[i])
	}
	if err := s.Sort(context.Background(), b); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for i := range gpusort.Channels {
		CheckSorted(t, fmt.Sprintf("%s/ch%d", name, i), b.F32[i], want32[i])
		for j := range b.F64[i] {
			if math.Float64bits(b.F64[i][j]) != math.Float64bits(want64[i][j]) {
				t.Fatalf("%s/ch%d f64: [%d] = %v, want %v", name, i, j, b.F64[i][j], want64[i][j])
			}
		}
	}
}

// Sorter runs the shared table on a back-end: every size and pattern,
// the four windows of a batch of different lengths, float64 batches, and
// the Bentley–McIlroy grid of sort/sort_test.go.
func Sorter(t *testing.T, newSorter func() (gpusort.Sorter, error)) {
	patterns := Patterns()
	s, err := newSorter()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range Sizes() {
		for pi, p := range patterns {
			if n > 1<<16 && pi%3 != 0 && p.Name != "zeros" && p.Name != "denormals" {
				continue // keep the largest size quick
			}
			var b gpusort.Quad
			lens := [gpusort.Channels]int{n, max(n-1, 0), n / 2, n/3 + 1}
			for i := range gpusort.Channels {
				b.F32[i] = make([]float32, lens[i])
				patterns[(pi+i)%len(patterns)].Fill(r, b.F32[i])
			}
			SortBatch(t, s, fmt.Sprintf("%s/n=%d", p.Name, n), &b)
		}
	}
	t.Run("float64", func(t *testing.T) {
		var b gpusort.Quad
		for i := range gpusort.Channels {
			n := []int{1000, 0, 5, 4097}[i]
			b.F64[i] = make([]float64, n)
			for j := range b.F64[i] {
				b.F64[i][j] = r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
				if j%7 == 0 {
					b.F64[i][j] = []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), 5e-324, -5e-324, 1}[j%7]
				}
			}
		}
		SortBatch(t, s, "float64", &b)
	})
	t.Run("closed", func(t *testing.T) {
		s, err := newSorter()
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		b := gpusort.Quad{F32: [gpusort.Channels][]float32{{2, 1}}}
		if err := s.Sort(context.Background(), &b); err == nil {
			t.Fatal("Sort after Close succeeded")
		}
	})
	t.Run("canceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		b := gpusort.Quad{F32: [gpusort.Channels][]float32{{3, 1, 2}}}
		if err := s.Sort(ctx, &b); err == nil {
			t.Fatal("Sort with a canceled context succeeded")
		}
		got := slices.Clone(b.F32[0])
		slices.Sort(got)
		if !slices.Equal(got, []float32{1, 2, 3}) {
			t.Fatalf("canceled sort lost keys: %v", b.F32[0])
		}
	})
	t.Run("bentley-mcilroy", func(t *testing.T) { BentleyMcIlroy(t, s) })
}

// BentleyMcIlroy sorts the distributions × modes grid of Go's
// sort/sort_test.go, four arrays to a batch.
func BentleyMcIlroy(t *testing.T, s gpusort.Sorter) {
	ns := []int{100, 1023, 1024, 1025}
	if testing.Short() {
		ns = []int{100, 1025}
	}
	const (
		sawtooth = iota
		random
		stagger
		plateau
		shuffle
		nDist
	)
	const (
		copyMode = iota
		reverse
		reverseFirstHalf
		reverseSecondHalf
		sorted
		dither
		nMode
	)
	r := rand.New(rand.NewPCG(3, 4))
	var b gpusort.Quad
	nb := 0
	var names [gpusort.Channels]string
	flush := func() {
		if nb == 0 {
			return
		}
		SortBatch(t, s, fmt.Sprint(names), &b)
		b, nb = gpusort.Quad{}, 0
	}
	for _, n := range ns {
		for m := 1; m < 2*n; m *= 2 {
			for dist := range nDist {
				data := make([]float32, n)
				j, k := 0, 1
				for i := range data {
					switch dist {
					case sawtooth:
						data[i] = float32(i % m)
					case random:
						data[i] = float32(r.IntN(m))
					case stagger:
						data[i] = float32((i*m + i) % n)
					case plateau:
						data[i] = float32(min(i, m))
					case shuffle:
						if r.IntN(m) != 0 {
							j += 2
							data[i] = float32(j)
						} else {
							k += 2
							data[i] = float32(k)
						}
					}
				}
				for mode := range nMode {
					x := slices.Clone(data)
					switch mode {
					case reverse:
						slices.Reverse(x)
					case reverseFirstHalf:
						slices.Reverse(x[:n/2])
					case reverseSecondHalf:
						slices.Reverse(x[n/2:])
					case sorted:
						slices.Sort(x)
					case dither:
						for i := range x {
							x[i] += float32(i % 5)
						}
					}
					b.F32[nb] = x
					names[nb] = fmt.Sprintf("n=%d,m=%d,dist=%d,mode=%d", n, m, dist, mode)
					nb++
					if nb == gpusort.Channels {
						flush()
					}
				}
			}
		}
	}
	flush()
}

// Digester checks that a back-end's Digest equals summary.DigestSorted
// on the CPU-sorted windows, for several spacings, thresholds and Known
// lists, float32 and float64.
func Digester(t *testing.T, newSorter func() (gpusort.Sorter, error)) {
	patterns := Patterns()
	s, err := newSorter()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d, ok := s.(gpusort.Digester)
	if !ok {
		t.Fatalf("%s is not a Digester", s.Name())
	}
	r := rand.New(rand.NewPCG(5, 6))
	sizes := []int{0, 1, 2, 3, 21, 1000, 5000}
	if !testing.Short() {
		sizes = append(sizes, 1<<16)
	}
	negz := math.Copysign(0, -1)
	knowns := [][]float64{
		nil,
		{-3, negz, 0.1, 2, 7, 1e9},
		{-8, -8, 0, 1, 1.5, 4},
		{math.Inf(-1), 0, math.Inf(1)},
	}
	specsOf := func(k int, n int) [gpusort.Channels]summary.WindowSpec {
		var sp [gpusort.Channels]summary.WindowSpec
		for i := range gpusort.Channels {
			sp[i] = summary.WindowSpec{
				Spacing:   []float64{1, 2.5, summary.SampleSpacing(0.01, n), 100, 7.75}[(k+i)%5],
				Threshold: []int64{-1, 0, 1, 5, int64(n / 10), 1 << 40}[(k+2*i)%6],
				Known:     knowns[(k+i)%len(knowns)],
			}
		}
		return sp
	}
	var out [gpusort.Channels]summary.Digest
	k := 0
	for _, n := range sizes {
		for pi, p := range patterns {
			for _, key64 := range []bool{false, true} {
				k++
				var b, ref gpusort.Quad
				lens := [gpusort.Channels]int{n, n / 2, max(n-3, 0), n/5 + 1}
				for i := range gpusort.Channels {
					x := make([]float32, lens[i])
					patterns[(pi+i)%len(patterns)].Fill(r, x)
					if key64 {
						b.F64[i] = make([]float64, len(x))
						for j, v := range x {
							b.F64[i][j] = float64(v)
							if j%3 == 0 && v != 0 && !math.IsInf(float64(v), 0) {
								b.F64[i][j] += float64(v) * 1e-12 // not a float32
							}
						}
						ref.F64[i] = slices.Clone(b.F64[i])
						KeyOrder64(ref.F64[i])
					} else {
						b.F32[i] = x
						ref.F32[i] = slices.Clone(x)
						KeyOrder(ref.F32[i])
					}
				}
				specs := specsOf(k, n)
				var orig gpusort.Quad
				for i := range gpusort.Channels {
					orig.F32[i], orig.F64[i] = slices.Clone(b.F32[i]), slices.Clone(b.F64[i])
				}
				if err := d.Digest(context.Background(), &b, &specs, &out); err != nil {
					t.Fatalf("n=%d %s: %v", n, p.Name, err)
				}
				for i := range gpusort.Channels {
					same32 := slices.EqualFunc(b.F32[i], orig.F32[i], func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
					same64 := slices.EqualFunc(b.F64[i], orig.F64[i], func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
					if !same32 || !same64 {
						t.Fatalf("n=%d %s f64=%v: Digest changed window %d", n, p.Name, key64, i)
					}
				}
				for i := range gpusort.Channels {
					var want summary.Digest
					if key64 {
						summary.DigestSorted(ref.F64[i], specs[i], &want)
					} else {
						summary.DigestSorted(ref.F32[i], specs[i], &want)
					}
					CheckDigest(t, fmt.Sprintf("n=%d %s f64=%v ch%d spec=%+v", n, p.Name, key64, i, specs[i]), &out[i], &want)
				}
			}
		}
	}
}

// CheckDigest fails t unless got equals want (summary.DiffDigests).
func CheckDigest(t *testing.T, name string, got, want *summary.Digest) {
	t.Helper()
	if d := summary.DiffDigests(got, want); d != "" {
		t.Fatalf("%s: got %s; runs %v, want %v", name, d, head(got.Runs), head(want.Runs))
	}
}

func head[T any](x []T) []T { return x[:min(len(x), 8)] }

// AutoConcurrent sends batches to a from several goroutines and checks
// every one, and that both sides did some when a has a GPU side.
func AutoConcurrent(t *testing.T, a *gpusort.Auto) {
	patterns := Patterns()
	t.Helper()
	const workers, batches = 4, 12
	errc := make(chan error, workers)
	for w := range workers {
		go func() {
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for range batches {
				var b gpusort.Quad
				var want [gpusort.Channels][]float32
				for i := range gpusort.Channels {
					b.F32[i] = make([]float32, 1<<14+i)
					patterns[0].Fill(r, b.F32[i])
					want[i] = slices.Clone(b.F32[i])
					KeyOrder(want[i])
				}
				if err := a.Sort(context.Background(), &b); err != nil {
					errc <- err
					return
				}
				for i := range gpusort.Channels {
					if !slices.Equal(b.F32[i], want[i]) {
						errc <- fmt.Errorf("worker %d: window %d not sorted", w, i)
						return
					}
				}
			}
			errc <- nil
		}()
	}
	for range workers {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	g, c, gn, cn := a.Rates()
	t.Logf("gpu %.3g keys/s over %d batches, cpu %.3g keys/s over %d batches", g, gn, c, cn)
	if gn+cn != workers*batches {
		t.Fatalf("%d+%d batches done, want %d", gn, cn, workers*batches)
	}
}
