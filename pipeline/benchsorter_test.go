package pipeline

import (
	"os"
	"testing"

	"streamd/gpusort"
	"streamd/gpusort/registry"
)

// benchSorter returns the sorter the benchmarks of many streams, hierarchy
// streams and pair streams use: the back-end named by the environment
// variable STREAMD_BENCH_SORTER ("compute" in a build with -tags gpu, to
// measure the GPU), or the CPU radix sort on every core. It is closed
// with the benchmark.
func benchSorter(b testing.TB) gpusort.Digester {
	name := os.Getenv("STREAMD_BENCH_SORTER")
	if name == "" || name == "cpu" {
		return gpusort.NewCPU(0)
	}
	newSorter, err := registry.Lookup(name)
	if err != nil {
		b.Fatal(err)
	}
	s, err := newSorter()
	if err != nil {
		b.Fatalf("open sorter %s: %v", name, err)
	}
	b.Cleanup(func() { s.Close() })
	dg, ok := s.(gpusort.Digester)
	if !ok {
		b.Fatalf("sorter %s does not digest windows", name)
	}
	return dg
}
