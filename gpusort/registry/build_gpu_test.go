//go:build gpu

package registry

// gpuBuild reports whether the test runs in a build with the gpu tag.
const gpuBuild = true
