//go:build gpu

package compute

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"streamd/gpusort"
	"streamd/gpusort/internal/sorttest"
)

func newPairs(cfg Config) func() (gpusort.Sorter, error) {
	return func() (gpusort.Sorter, error) { return NewWithConfig(cfg) }
}

// smallPairSizes are the sizes of the pair table up to 2^16: the variants
// below run those, to keep the tests short.
func smallPairSizes() []int {
	var s []int
	for _, n := range sorttest.PairSizes() {
		if n <= 1<<16 {
			s = append(s, n)
		}
	}
	return s
}

// The pair table with every window on the GPU (pairsMin 1), through
// mapped memory and without it, and with the default threshold (small
// windows on the CPU).
func TestComputePairs(t *testing.T) {
	sorttest.PairSorter(t, newPairs(Config{pairsMin: 1}), sorttest.PairSizes())
}
func TestComputePairsUnmapped(t *testing.T) {
	sorttest.PairSorter(t, newPairs(Config{pairsMin: 1, unmapped: true}), smallPairSizes())
}
func TestComputePairsDefault(t *testing.T) {
	sorttest.PairSorter(t, newPairs(Config{}), smallPairSizes())
}

// TestComputePairsAuto runs the pair table on Auto over a compute
// back-end.
func TestComputePairsAuto(t *testing.T) {
	sorttest.PairSorter(t, func() (gpusort.Sorter, error) {
		c, err := NewWithConfig(Config{pairsMin: 1})
		if err != nil {
			return nil, err
		}
		return gpusort.NewAuto(c, nil, gpusort.NewCPU(0)), nil
	}, smallPairSizes())
}

// TestComputePairsRankings compares the pair sort whose scatter ranks keys
// with subgroup operations against the one that ranks them in shared
// memory, on a GPU that offers subgroups (skipped elsewhere).
func TestComputePairsRankings(t *testing.T) {
	sg, err := NewWithConfig(Config{pairsMin: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer sg.Close()
	if !sg.subgroups {
		t.Skip("no subgroup ranking on ", sg.Info())
	}
	sorttest.PairSorter(t, newPairs(Config{pairsMin: 1}), sorttest.PairSizes())
	sorttest.PairSorter(t, newPairs(Config{pairsMin: 1, noSubgroups: true}), sorttest.PairSizes())
}

// TestComputePairsStaged sorts windows of pairs whose keys, values or both
// lie in staging memory (StageF64), uploaded by a GPU copy alone.
func TestComputePairsStaged(t *testing.T) {
	c, err := NewWithConfig(Config{pairsMin: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !c.persistent {
		t.Skip("no persistent mapping on ", c.Info())
	}
	r := rand.New(rand.NewPCG(11, 12))
	if c.StageF64(stagedCopyMin/8-1) != nil {
		t.Fatal("lent staging memory for a window under stagedCopyMin")
	}
	for _, n := range []int{stagedCopyMin / 8, stagedCopyMin/8 + 1, 1 << 16} {
		for which := range 3 { // 0: x staged, 1: y staged, 2: both
			x, y := make([]float64, n), make([]float64, n)
			if which != 1 {
				x = c.StageF64(n)
			}
			if which != 0 {
				y = c.StageF64(n)
			}
			if x == nil || y == nil {
				t.Fatal("StageF64 lent nothing")
			}
			for i := range x {
				x[i] = r.NormFloat64()
				y[i] = math.Float64frombits(r.Uint64())
			}
			sorttest.SortPairs(t, c, fmt.Sprintf("n=%d/staged=%d", n, which), x, y)
			c.UnstageF64(x)
			c.UnstageF64(y)
		}
	}
}
