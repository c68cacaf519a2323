// Package compute is the compute-shader back-end of gpusort (Sorter,
// "compute" in the registry): a bitonic network and an LSD radix sort of
// the order-preserving keys on shader storage buffers, the measured
// choice between them, the digests (quantile sample and lossy-counting
// runs) computed on the GPU, and the persistently mapped staging memory
// that it lends as window buffers (gpusort.Stager). The GLSL sources are
// in glsl.go and radix_glsl.go.
//
// It implements gpusort's Sorter, Digester, Stager, Profiler, Calibrator
// and PairSorter on a GL context of package glctx, and hands batches too
// large for the GPU (and windows of pairs too small for it) to gpusort's
// CPU back-end. Everything but this comment is
// built only with the "gpu" build tag.
package compute
