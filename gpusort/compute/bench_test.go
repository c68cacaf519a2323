//go:build gpu

package compute

import (
	"fmt"
	"testing"

	"github.com/go-gl/gl/v4.5-core/gl"

	"streamd/gpusort"
	"streamd/gpusort/glctx"
	"streamd/gpusort/internal/sorttest"
)

// BenchmarkComputeRadixKernels times the radix sort's kernels on the GPU
// (timer queries) over four windows of n random 32-bit keys, with the
// ranking the GPU offers (subgroups or shared memory) and, where it offers
// subgroups, with the shared-memory one too. It reports the GPU time per
// sort of each kernel and the keys sorted per second. On llvmpipe, whose
// timer queries return 0 for compute, it reports nothing useful.
//
//	go test -tags gpu -run '^$' -bench ComputeRadixKernels ./gpusort/
func BenchmarkComputeRadixKernels(b *testing.B) {
	for _, noSubgroups := range []bool{false, true} {
		c, err := NewWithConfig(Config{Algorithm: Radix, noSubgroups: noSubgroups})
		if err != nil {
			b.Fatal(err)
		}
		ranking := "shared"
		if c.subgroups {
			ranking = "subgroups"
		}
		for _, lg := range []int{20, 22, 24} {
			b.Run(fmt.Sprintf("%s/n=2^%d", ranking, lg), func(b *testing.B) {
				times, err := c.timeRadixKernels(1<<lg, b.N)
				if err != nil {
					b.Fatal(err)
				}
				per := func(ns uint64) float64 { return float64(ns) / 1e6 / float64(b.N) }
				b.ReportMetric(per(times[0]), "count-ms")
				b.ReportMetric(per(times[1]), "scan-ms")
				b.ReportMetric(per(times[2]), "scatter-ms")
				if sum := times[0] + times[1] + times[2]; sum > 0 {
					b.ReportMetric(float64(gpusort.Channels*b.N<<lg)/float64(sum)*1e3, "Mkeys/s")
				}
			})
		}
		done := !c.subgroups // no second ranking to compare with
		c.Close()
		if done {
			return
		}
	}
}

// timeRadixKernels sorts four windows of n random 32-bit keys reps times
// with c's radix programs and returns the GPU time of each kernel, in
// nanoseconds summed over the sorts.
func (c *Sorter) timeRadixKernels(n, reps int) (ns [3]uint64, err error) {
	err = c.t.Do(func() error {
		p := c.progs[0]
		lens := []uint32{uint32(n), uint32(n), uint32(n), uint32(n)}
		var src, keys, segs glBuffer
		var rb radixBuffers
		times := newRadixTimes()
		defer func() {
			src.free()
			keys.free()
			segs.free()
			rb.free()
			times.free()
		}()
		src.ensure(gpusort.Channels * n * 4)
		keys.ensure(gpusort.Channels * n * 4)
		gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 0, src.id)
		bindSegments(&segs, segmentTable(lens))
		p.setCommon(p.fill, n)
		gl.Uniform1ui(p.uniform(p.fill, "seed"), uint32(n))
		dispatch((n+gatherSize-1)/gatherSize, len(lens))
		for rep := -1; rep < reps; rep++ {
			gl.BindBuffer(gl.COPY_READ_BUFFER, src.id)
			gl.BindBuffer(gl.COPY_WRITE_BUFFER, keys.id)
			gl.CopyBufferSubData(gl.COPY_READ_BUFFER, gl.COPY_WRITE_BUFFER, 0, 0, gpusort.Channels*n*4)
			gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 0, keys.id)
			gl.Finish()
			if rep < 0 {
				sortRadix(p, &keys, nil, &rb, n, lens, false, false, nil) // warm-up
				continue
			}
			sortRadix(p, &keys, nil, &rb, n, lens, false, false, times)
		}
		ns = times.ns
		return glctx.CheckError("time radix kernels")
	})
	return ns, err
}

// BenchmarkSortPairs sorts windows of random pairs on the GPU (SortPairs,
// transfers included) and reports nanoseconds per pair; compare with
// BenchmarkSortPairs of gpusort, the CPU's.
//
//	go test -tags gpu -run '^$' -bench SortPairs ./gpusort/...
func BenchmarkSortPairs(b *testing.B) {
	c, err := NewWithConfig(Config{pairsMin: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	sorttest.BenchmarkPairs(b, c)
}
