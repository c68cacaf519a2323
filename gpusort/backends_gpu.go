//go:build gpu

package gpusort

// Backends lists the back-ends compiled into this binary: in a build with
// the "gpu" tag, the CPU radix sort, the OpenGL back-ends and "auto".
// "compute" chooses between the bitonic and the radix compute sort by
// measuring both (see Compute); "compute-bitonic" and "compute-radix"
// force one.
// Each GPU constructor makes its own GL context (about 70 ms), the way
// $STREAMD_GL says (see ContextFromEnv; EGL when unset), and returns an
// error wrapping ErrNoGPU when there is none to be had.
func Backends() []Backend {
	return []Backend{
		{Name: "cpu", New: func() (Sorter, error) { return NewCPU(0), nil }},
		{Name: "pbsn", New: withEnvContext(NewPBSNWith)},
		{Name: "bitonic", New: withEnvContext(NewBitonicWith)},
		{Name: "compute", New: withEnvContext(NewComputeWith)},
		{Name: "compute-bitonic", New: withEnvContext(computeWith(ComputeBitonic))},
		{Name: "compute-radix", New: withEnvContext(computeWith(ComputeRadix))},
		{Name: "auto", New: func() (Sorter, error) { return newAuto(), nil }},
	}
}

// withEnvContext makes a Constructor that calls newWith with the context
// kind that $STREAMD_GL names.
func withEnvContext[S Sorter](newWith func(GLContext) (S, error)) Constructor {
	return func() (Sorter, error) {
		kind, err := ContextFromEnv()
		if err != nil {
			return nil, err
		}
		s, err := newWith(kind)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}

// computeWith returns a constructor of compute back-ends forced to alg.
func computeWith(alg ComputeAlgorithm) func(GLContext) (*Compute, error) {
	return func(kind GLContext) (*Compute, error) {
		return NewComputeConfig(ComputeConfig{Context: kind, Algorithm: alg})
	}
}

// newAuto schedules between the compute back-end and the CPU; without a GPU
// it is the CPU alone, and GPUErr says why.
func newAuto() *Auto {
	kind, err := ContextFromEnv()
	if err != nil {
		return NewAuto(nil, err, NewCPU(0))
	}
	c, err := NewComputeWith(kind)
	if err != nil {
		return NewAuto(nil, err, NewCPU(0))
	}
	return NewAuto(c, nil, NewCPU(0))
}
