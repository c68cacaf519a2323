package pipeline

import (
	"context"
	"os"
	"testing"

	"streamd/gpusort"
	"streamd/internal/exact"
)

// fixtureValues is the sequence the version-1 snapshot fixture
// (testdata/snapshot-v1.bin) was made from: stream "exact" (ε 0.01, W 1000,
// N 2^12, float32) took values 0..50332 of it, stream "blocks" (ε 0.1,
// W 512, N 2^22, float64, sliding window in Blocks mode) values 7..100006;
// "exact" had 3 values rejected as "nan".
func fixtureValues(start, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64((start+i)*7919%10007) / 8
	}
	return out
}

// TestRestoreVersion1 checks that a snapshot of format version 1, written
// before item streams and time windows, still restores: every value
// counted, answers within ε, pending windows summarised after Open.
func TestRestoreVersion1(t *testing.T) {
	data, err := os.ReadFile("testdata/snapshot-v1.bin")
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{Sorter: gpusort.NewCPU(0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Restore(data); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := p.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	for _, c := range []struct {
		name        string
		start, n    int
		eps         float64
		float32     bool
		rejectedNaN uint64
	}{
		{"exact", 0, 50333, 0.01, true, 3},
		{"blocks", 7, 100000, 0.1, false, 0},
	} {
		s, err := p.Stream(c.name)
		if err != nil {
			t.Fatal(err)
		}
		values := fixtureValues(c.start, c.n)
		if c.float32 {
			for i, v := range values {
				values[i] = float64(float32(v))
			}
		}
		checkAnswers(t, s, values, c.eps)
		if got := s.Stats().Rejected["nan"]; got != c.rejectedNaN {
			t.Errorf("%s: %d nan rejects, want %d", c.name, got, c.rejectedNaN)
		}
		last := min(int64(c.n), s.Config().SlidingWindow, 3000)
		snap, err := s.Last(last)
		if err != nil {
			t.Fatal(err)
		}
		key := exact.New(values[len(values)-int(last):])
		v, lo, hi := snap.Quantile(0.5)
		if err := key.CheckQuantile(0.5, v, c.eps, lo, hi); err != nil {
			t.Errorf("%s: last %d: %v", c.name, last, err)
		}
	}
}

// checkAnswers checks s's all-history quantiles and heavy hitters against
// values, given at the stream's precision.
func checkAnswers(t *testing.T, s *Stream, values []float64, eps float64) {
	t.Helper()
	key := exact.New(values)
	v := s.View(true)
	if v.Count() != key.N() {
		t.Fatalf("%s: view counts %d, want %d", s.Name(), v.Count(), key.N())
	}
	for _, phi := range []float64{0, 0.01, 0.5, 0.99, 1} {
		x, lo, hi := v.Quantile(phi)
		if err := key.CheckQuantile(phi, x, eps, lo, hi); err != nil {
			t.Fatalf("%s: %v", s.Name(), err)
		}
	}
	support := 2 * eps
	var hh []float64
	for _, e := range v.HeavyHitters(support) {
		hh = append(hh, e.Value)
	}
	if err := key.CheckHeavyHitters(support, eps, hh); err != nil {
		t.Fatalf("%s: %v", s.Name(), err)
	}
}
