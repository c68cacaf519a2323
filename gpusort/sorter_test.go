package gpusort_test

import (
	"testing"

	"streamd/gpusort"
	"streamd/gpusort/internal/sorttest"
)

func TestCPU(t *testing.T) {
	sorttest.Sorter(t, func() (gpusort.Sorter, error) { return gpusort.NewCPU(0), nil })
}

func TestCPUDigest(t *testing.T) {
	sorttest.Digester(t, func() (gpusort.Sorter, error) { return gpusort.NewCPU(0), nil })
}

func TestAutoCPU(t *testing.T) {
	sorttest.Sorter(t, func() (gpusort.Sorter, error) { return gpusort.NewAuto(nil, nil, gpusort.NewCPU(0)), nil })
}

func TestAutoCPUDigest(t *testing.T) {
	sorttest.Digester(t, func() (gpusort.Sorter, error) { return gpusort.NewAuto(nil, nil, gpusort.NewCPU(0)), nil })
}

func TestAutoConcurrentCPU(t *testing.T) {
	a := gpusort.NewAuto(nil, nil, gpusort.NewCPU(0))
	defer a.Close()
	if info := a.Info(); info != "" {
		t.Errorf("Info without a GPU = %q, want empty", info)
	}
	sorttest.AutoConcurrent(t, a)
}

func TestCPUPairs(t *testing.T) {
	sorttest.PairSorter(t, func() (gpusort.Sorter, error) { return gpusort.NewCPU(0), nil }, sorttest.PairSizes())
}

func TestAutoCPUPairs(t *testing.T) {
	sorttest.PairSorter(t, func() (gpusort.Sorter, error) { return gpusort.NewAuto(nil, nil, gpusort.NewCPU(0)), nil }, sorttest.PairSizes())
}
