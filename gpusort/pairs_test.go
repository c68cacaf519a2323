package gpusort_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"streamd/gpusort"
	"streamd/gpusort/internal/sorttest"
	"streamd/summary"
)

// fakeGPU is a GPU side for Auto whose methods are function fields; those
// left nil fail the test.
type fakeGPU struct {
	t         *testing.T
	sortPairs func(ctx context.Context, x, y []float64) error
}

func (f *fakeGPU) Name() string { return "fake" }
func (f *fakeGPU) Close() error { return nil }
func (f *fakeGPU) Sort(context.Context, *gpusort.Quad) error {
	f.t.Error("unexpected Sort")
	return errors.New("unexpected")
}
func (f *fakeGPU) Digest(context.Context, *gpusort.Quad, *[gpusort.Channels]summary.WindowSpec, *[gpusort.Channels]summary.Digest) error {
	f.t.Error("unexpected Digest")
	return errors.New("unexpected")
}

// pairGPU is a fakeGPU that also sorts pairs.
type pairGPU struct{ fakeGPU }

func (f *pairGPU) SortPairs(ctx context.Context, x, y []float64) error { return f.sortPairs(ctx, x, y) }

// TestAutoPairsGPU checks that Auto hands pairs to a GPU side that sorts
// pairs, and to the CPU when the GPU side does not.
func TestAutoPairsGPU(t *testing.T) {
	calls := 0
	g := &pairGPU{fakeGPU{t: t, sortPairs: func(ctx context.Context, x, y []float64) error {
		calls++
		return gpusort.NewCPU(1).SortPairs(ctx, x, y)
	}}}
	a := gpusort.NewAuto(g, nil, gpusort.NewCPU(0))
	x, y := []float64{3, -1, 2, -1}, []float64{30, -10, 20, -11}
	if err := a.SortPairs(context.Background(), x, y); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("GPU side sorted %d windows of pairs, want 1", calls)
	}
	if !slices.Equal(x, []float64{-1, -1, 2, 3}) || !slices.Equal(y, []float64{-10, -11, 20, 30}) {
		t.Errorf("sorted pairs: x %v, y %v", x, y)
	}
	a.Close()
	if err := a.SortPairs(context.Background(), x, y); !errors.Is(err, gpusort.ErrClosed) {
		t.Errorf("SortPairs after Close: %v, want ErrClosed", err)
	}

	a = gpusort.NewAuto(&fakeGPU{t: t}, nil, gpusort.NewCPU(0))
	defer a.Close()
	x, y = []float64{2, 1}, []float64{20, 10}
	if err := a.SortPairs(context.Background(), x, y); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x, []float64{1, 2}) || !slices.Equal(y, []float64{10, 20}) {
		t.Errorf("sorted pairs on the CPU: x %v, y %v", x, y)
	}
}

// TestAutoPairsRates checks that Auto measures both sides on windows of
// pairs and then sends them to the faster: a GPU side that takes over a
// second per window of 4096 pairs loses to the CPU's radix sort (some ten
// microseconds) by five orders of magnitude. It takes longer than Auto
// drains a side's queue in (autoDrain), so that no rule that keeps a GPU
// side of use while its rate is measured over a span applies, however
// slowly a loaded machine runs the CPU's sort: a GPU side of a tenth of a
// second a window was sent the next windows too when the CPU's first
// took over 0.4 ms.
func TestAutoPairsRates(t *testing.T) {
	var sides []string
	g := &pairGPU{fakeGPU{t: t, sortPairs: func(ctx context.Context, x, y []float64) error {
		sides = append(sides, "gpu")
		time.Sleep(1100 * time.Millisecond)
		return gpusort.NewCPU(1).SortPairs(ctx, x, y)
	}}}
	a := gpusort.NewAuto(g, nil, gpusort.NewCPU(0))
	defer a.Close()
	r := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		x, y := make([]float64, 4096), make([]float64, 4096)
		for i := range x {
			x[i], y[i] = r.NormFloat64(), float64(i)
		}
		if err := a.SortPairs(context.Background(), x, y); err != nil {
			t.Fatal(err)
		}
		if !slices.IsSorted(x) {
			t.Fatal("x not sorted")
		}
	}
	gpuRate, cpuRate, gpuWindows, cpuWindows := a.PairRates()
	if !slices.Equal(sides, []string{"gpu"}) || gpuWindows != 1 || cpuWindows != 4 {
		t.Errorf("GPU side calls %v, windows GPU %d, CPU %d; want one call, 1 and 4", sides, gpuWindows, cpuWindows)
	}
	if !(gpuRate > 0 && cpuRate > gpuRate) {
		t.Errorf("pair rates GPU %v, CPU %v; want both measured, the CPU's higher", gpuRate, cpuRate)
	}
	if g, c, _, _ := a.Rates(); g != 0 || c != 0 {
		t.Errorf("batch rates %v, %v after sorting pairs only, want 0", g, c)
	}
}

// BenchmarkSortPairs sorts windows of random pairs on the CPU back-end and
// reports nanoseconds per pair (each sort includes copying the unsorted
// window in).
func BenchmarkSortPairs(b *testing.B) {
	sorttest.BenchmarkPairs(b, gpusort.NewCPU(0))
}
