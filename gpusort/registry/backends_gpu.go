//go:build gpu

package registry

import (
	"streamd/gpusort"
	"streamd/gpusort/compute"
	"streamd/gpusort/fragment"
	"streamd/gpusort/glctx"
)

// Backends lists the back-ends compiled into this binary: in a build with
// the "gpu" tag, the CPU radix sort, the OpenGL back-ends and "auto".
// "compute" chooses between the bitonic and the radix compute sort by
// measuring both (see compute.Sorter); "compute-bitonic" and
// "compute-radix" force one; "pbsn" and "bitonic" are the fragment sorts
// (fragment.Sorter).
// Each GPU constructor makes its own GL context (about 70 ms), the way
// $STREAMD_GL says (see glctx.FromEnv; EGL when unset), and returns an
// error wrapping gpusort.ErrNoGPU when there is none to be had.
func Backends() []Backend {
	return []Backend{
		{Name: "cpu", New: func() (gpusort.Sorter, error) { return gpusort.NewCPU(0), nil }},
		{Name: "pbsn", New: withEnvContext(fragment.NewPBSNWith)},
		{Name: "bitonic", New: withEnvContext(fragment.NewBitonicWith)},
		{Name: "compute", New: withEnvContext(compute.NewWith)},
		{Name: "compute-bitonic", New: withEnvContext(computeWith(compute.Bitonic))},
		{Name: "compute-radix", New: withEnvContext(computeWith(compute.Radix))},
		{Name: "auto", New: func() (gpusort.Sorter, error) { return newAuto(), nil }},
	}
}

// withEnvContext makes a Constructor that calls newWith with the context
// kind that $STREAMD_GL names.
func withEnvContext[S gpusort.Sorter](newWith func(glctx.Kind) (S, error)) gpusort.Constructor {
	return func() (gpusort.Sorter, error) {
		kind, err := glctx.FromEnv()
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
func computeWith(alg compute.Algorithm) func(glctx.Kind) (*compute.Sorter, error) {
	return func(kind glctx.Kind) (*compute.Sorter, error) {
		return compute.NewWithConfig(compute.Config{Context: kind, Algorithm: alg})
	}
}

// newAuto schedules between the compute back-end and the CPU; without a GPU
// it is the CPU alone, and GPUErr says why.
func newAuto() *gpusort.Auto {
	kind, err := glctx.FromEnv()
	if err != nil {
		return gpusort.NewAuto(nil, err, gpusort.NewCPU(0))
	}
	c, err := compute.NewWith(kind)
	if err != nil {
		return gpusort.NewAuto(nil, err, gpusort.NewCPU(0))
	}
	return gpusort.NewAuto(c, nil, gpusort.NewCPU(0))
}
