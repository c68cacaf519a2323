//go:build !gpu

package registry

import "streamd/gpusort"

// Backends lists the back-ends compiled into this binary: in a build without
// the "gpu" tag, the CPU radix sort, and "auto", which is the same CPU sort
// here (its GPUErr is gpusort.ErrNotBuilt).
func Backends() []Backend {
	return []Backend{
		{Name: "cpu", New: func() (gpusort.Sorter, error) { return gpusort.NewCPU(0), nil }},
		{Name: "auto", New: func() (gpusort.Sorter, error) {
			return gpusort.NewAuto(nil, gpusort.ErrNotBuilt, gpusort.NewCPU(0)), nil
		}},
	}
}
