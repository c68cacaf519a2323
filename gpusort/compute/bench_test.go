//go:build gpu

package compute

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

	"github.com/go-gl/gl/v4.5-core/gl"

	"streamd/gpusort"
	"streamd/gpusort/glctx"
	"streamd/gpusort/internal/sorttest"
	"streamd/summary"
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

// BenchmarkComputeSubmission digests one coalesced submission of windows
// of 4096 random float32 keys (staged, as the pipeline stages them) at
// several sizes, with profiling on, so that each phase waits for the GPU,
// and reports each phase's time per submission and the keys per second
// of the GPU's part (sort and digest). Its ns/op includes queueing the
// batches (see queueAll), which sleeps: read the phases, not ns/op.
//
//	go test -tags gpu -run '^$' -bench ComputeSubmission ./gpusort/compute/
func BenchmarkComputeSubmission(b *testing.B) {
	const w = 4096
	for _, alg := range []Algorithm{Radix, Bitonic} {
		c, err := NewWithConfig(Config{Algorithm: alg})
		if err != nil {
			b.Fatal(err)
		}
		c.SetProfile(true)
		for _, windows := range []int{64, 256, 1024} {
			r := rand.New(rand.NewPCG(uint64(windows), 9))
			cases := make([]*digestCase, windows/gpusort.Channels)
			for k := range cases {
				cases[k] = newDigestCase(r, [gpusort.Channels]int{w, w, w, w}, false, 2, c.StageF32, c.StageF64)
			}
			outs := make([][gpusort.Channels]summary.Digest, len(cases))
			digest := func(k int) error {
				return c.Digest(context.Background(), &cases[k].b, &cases[k].specs, &outs[k])
			}
			b.Run(fmt.Sprintf("%s/windows=%d", alg, windows), func(b *testing.B) {
				var sum gpusort.Phases
				for b.Loop() {
					queueAll(b, c, len(cases), digest)
					p := c.LastPhases()
					sum.Upload += p.Upload
					sum.Sort += p.Sort
					sum.Digest += p.Digest
					sum.Readback += p.Readback
				}
				per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
				b.ReportMetric(per(sum.Upload), "upload-µs")
				b.ReportMetric(per(sum.Sort), "sort-µs")
				b.ReportMetric(per(sum.Digest), "digest-µs")
				b.ReportMetric(per(sum.Readback), "readback-µs")
				if gpu := sum.Sort + sum.Digest; gpu > 0 {
					b.ReportMetric(float64(windows*w*b.N)/gpu.Seconds()/1e6, "gpu-Mkeys/s")
				}
			})
			for _, dc := range cases {
				for i := range gpusort.Channels {
					c.UnstageF32(dc.b.F32[i])
				}
			}
		}
		c.Close()
	}
}

// BenchmarkDigestPlan plans the digests of one submission of windows of
// 4096 float32 keys at ε = 0.01, the work a submission does on the host
// before its commands: the sample ranks come from the Sorter's cache, as
// in Digest.
//
//	go test -tags gpu -run '^$' -bench DigestPlan ./gpusort/compute/
func BenchmarkDigestPlan(b *testing.B) {
	const w = 4096
	for _, windows := range []int{64, 1024} {
		b.Run(fmt.Sprintf("windows=%d", windows), func(b *testing.B) {
			var rc rankCache
			v := keyView{lens: make([]int, windows), data: make([]unsafe.Pointer, windows)}
			specs := make([]summary.WindowSpec, windows)
			ranks := make([][]int64, windows)
			for i := range windows {
				v.lens[i] = w
				specs[i] = summary.WindowSpec{Spacing: summary.SampleSpacing(0.01, w), Threshold: 2}
			}
			for b.Loop() {
				for i := range ranks {
					ranks[i] = rc.get(w, specs[i].Spacing)
				}
				newDigestPlan(&v, w, specs, ranks)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*windows), "ns/window")
		})
	}
}
