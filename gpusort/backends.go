//go:build !gpu

package gpusort

// Backends lists the back-ends compiled into this binary: in a build without
// the "gpu" tag, the CPU radix sort, and "auto", which is the same CPU sort
// here (its GPUErr is ErrNotBuilt).
func Backends() []Backend {
	return []Backend{
		{Name: "cpu", New: func() (Sorter, error) { return NewCPU(0), nil }},
		{Name: "auto", New: func() (Sorter, error) { return NewAuto(nil, ErrNotBuilt, NewCPU(0)), nil }},
	}
}
