//go:build gpu

package gpusort

// Backends lists the back-ends compiled into this binary: in a build with
// the "gpu" tag, the CPU radix sort, the three OpenGL back-ends and "auto".
// Each GPU constructor makes its own GL context (about 70 ms) and returns
// an error wrapping ErrNoGPU when there is none to be had.
func Backends() []Backend {
	return []Backend{
		{Name: "cpu", New: func() (Sorter, error) { return NewCPU(0), nil }},
		{Name: "pbsn", New: func() (Sorter, error) { return NewPBSN() }},
		{Name: "bitonic", New: func() (Sorter, error) { return NewBitonic() }},
		{Name: "compute", New: func() (Sorter, error) { return NewCompute() }},
		{Name: "auto", New: func() (Sorter, error) { return newAuto(), nil }},
	}
}

// newAuto schedules between the compute back-end and the CPU; without a GPU
// it is the CPU alone, and GPUErr says why.
func newAuto() *Auto {
	c, err := NewCompute()
	if err != nil {
		return NewAuto(nil, err, NewCPU(0))
	}
	return NewAuto(c, nil, NewCPU(0))
}
