//go:build gpu

package registry

import "streamd/gpusort"

// Backends lists the back-ends compiled into this binary: in a build with
// the "gpu" tag, the CPU radix sort, the OpenGL back-ends and "auto".
// "compute" chooses between the bitonic and the radix compute sort by
// measuring both (see gpusort.Compute); "compute-bitonic" and "compute-radix"
// force one.
// Each GPU constructor makes its own GL context (about 70 ms), the way
// $STREAMD_GL says (see gpusort.ContextFromEnv; EGL when unset), and returns an
// error wrapping gpusort.ErrNoGPU when there is none to be had.
func Backends() []Backend {
	return []Backend{
		{Name: "cpu", New: func() (gpusort.Sorter, error) { return gpusort.NewCPU(0), nil }},
		{Name: "pbsn", New: withEnvContext(gpusort.NewPBSNWith)},
		{Name: "bitonic", New: withEnvContext(gpusort.NewBitonicWith)},
		{Name: "compute", New: withEnvContext(gpusort.NewComputeWith)},
		{Name: "compute-bitonic", New: withEnvContext(computeWith(gpusort.ComputeBitonic))},
		{Name: "compute-radix", New: withEnvContext(computeWith(gpusort.ComputeRadix))},
		{Name: "auto", New: func() (gpusort.Sorter, error) { return newAuto(), nil }},
	}
}

// withEnvContext makes a Constructor that calls newWith with the context
// kind that $STREAMD_GL names.
func withEnvContext[S gpusort.Sorter](newWith func(gpusort.GLContext) (S, error)) gpusort.Constructor {
	return func() (gpusort.Sorter, error) {
		kind, err := gpusort.ContextFromEnv()
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
func computeWith(alg gpusort.ComputeAlgorithm) func(gpusort.GLContext) (*gpusort.Compute, error) {
	return func(kind gpusort.GLContext) (*gpusort.Compute, error) {
		return gpusort.NewComputeConfig(gpusort.ComputeConfig{Context: kind, Algorithm: alg})
	}
}

// newAuto schedules between the compute back-end and the CPU; without a GPU
// it is the CPU alone, and GPUErr says why.
func newAuto() *gpusort.Auto {
	kind, err := gpusort.ContextFromEnv()
	if err != nil {
		return gpusort.NewAuto(nil, err, gpusort.NewCPU(0))
	}
	c, err := gpusort.NewComputeWith(kind)
	if err != nil {
		return gpusort.NewAuto(nil, err, gpusort.NewCPU(0))
	}
	return gpusort.NewAuto(c, nil, gpusort.NewCPU(0))
}
