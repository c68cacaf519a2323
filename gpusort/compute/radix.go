//go:build gpu

package compute

import (
	"slices"
	"strings"

	"github.com/go-gl/gl/v4.5-core/gl"
)

// The LSD radix sort of the compute back-end: 8-bit digits, four passes for
// 32-bit keys and eight for 64-bit ones, each pass three kernels (count,
// scan, scatter; see radix_glsl.go) over the four channels at once.
//
// Why reduce-then-scan and not Onesweep's single pass with decoupled
// look-back: look-back makes a work group spin on a flag that an earlier
// work group sets, which is only safe if the earlier one is guaranteed to
// be scheduled, and OpenGL promises no forward progress between work
// groups (llvmpipe runs them in any order on a few threads). Three kernels
// read the keys twice per pass instead of once; on an H100 a pass over 4 ×
// 2^22 float32 keys moves 3 × 64 MiB, about 0.07 ms at 3 TB/s, so the four
// passes stay well under a millisecond of memory traffic.
//
// How a tile's keys are ranked by their digit: on NVIDIA GPUs that offer
// subgroups of 32 with ballots, by the subgroup
// multisplit of Onesweep (srcRadixScatterSubgroup): one step per 8-bit
// digit. Elsewhere, and on llvmpipe (CI), which offers no
// GL_KHR_shader_subgroup, by two 4-bit split steps in shared memory
// (srcRadixScatter), each with a scan over the work group. Both are tested
// against the CPU's sort on a GPU that has subgroups
// (TestComputeRadixRankings).

// GL_KHR_shader_subgroup's queries and feature bits (not in the 4.5 core
// bindings).
const (
	glSubgroupSize              = 0x9532
	glSubgroupSupportedStages   = 0x9533
	glSubgroupSupportedFeatures = 0x9534
	glSubgroupFeatureBasic      = 0x1
	glSubgroupFeatureArithmetic = 0x4
	glSubgroupFeatureBallot     = 0x8
	glSubgroupFeatureShuffle    = 0x10
)

// radixSubgroups reports, on the GL thread, whether the context can run
// srcRadixScatterSubgroup: an NVIDIA GPU (whose warps of 32 run in
// lockstep, which the kernel relies on) with subgroups of 32 invocations
// in compute shaders and the basic, ballot, arithmetic and shuffle
// operations.
func radixSubgroups() bool {
	if !strings.Contains(gl.GoStr(gl.GetString(gl.VENDOR)), "NVIDIA") {
		return false
	}
	var n int32
	gl.GetIntegerv(gl.NUM_EXTENSIONS, &n)
	found := false
	for i := range uint32(n) {
		found = found || gl.GoStr(gl.GetStringi(gl.EXTENSIONS, i)) == "GL_KHR_shader_subgroup"
	}
	if !found {
		return false
	}
	var size, stages, features int32
	gl.GetIntegerv(glSubgroupSize, &size)
	gl.GetIntegerv(glSubgroupSupportedStages, &stages)
	gl.GetIntegerv(glSubgroupSupportedFeatures, &features)
	const need = glSubgroupFeatureBasic | glSubgroupFeatureArithmetic | glSubgroupFeatureBallot | glSubgroupFeatureShuffle
	return size == 32 && stages&gl.COMPUTE_SHADER_BIT != 0 && features&need == need
}

// radixRowsMax is the most tiles per channel for which the scan kernel
// runs one work group per channel, each thread walking one digit's tiles.
const radixRowsMax = 32

// radixPasses returns the number of passes for the key width.
func radixPasses(key64 bool) int {
	if key64 {
		return 8
	}
	return 4
}

// radixBuffers are the radix sort's scratch buffers.
type radixBuffers struct {
	alt    glBuffer // the second key buffer: passes alternate between the two
	counts glBuffer // per-tile digit counts, then destinations: [ch][256][tiles]
	hist   glBuffer // per-channel digit totals of every pass: [ch][pass][256]
	valAlt glBuffer // the second value buffer of a sort of pairs
}

func (b *radixBuffers) free() {
	b.alt.free()
	b.counts.free()
	b.hist.free()
	b.valAlt.free()
}

// radixExtent returns the keys from the start of the first segment to the
// end of the last window that is not empty, segments n keys apart: what a
// buffer of the sort must hold.
func radixExtent(n int, lens []uint32) int {
	for i := len(lens) - 1; i >= 0; i-- {
		if lens[i] > 0 {
			return i*n + int(lens[i])
		}
	}
	return 0
}

// radixTimes, passed to sortRadix, adds up the GPU time of each of the
// three kernels (count, scan, scatter) with timer queries, waiting for
// each: for benchmarks only.
type radixTimes struct {
	queries [3]uint32
	ns      [3]uint64
}

func newRadixTimes() *radixTimes {
	t := new(radixTimes)
	gl.GenQueries(3, &t.queries[0])
	return t
}

func (t *radixTimes) free() { gl.DeleteQueries(3, &t.queries[0]) }

// sortRadix sorts the segments of keys (n keys apart, lens long, as the
// segment table bound at binding 8 says too) with the radix programs of p,
// using rb as scratch. The keys start as float bits;
// with finish they end as floats again, else as keys. With vals not nil
// (64-bit keys only) each pass moves the 64-bit value at the same place
// of vals with each key. The result is back in keys (and vals), since the
// number of passes is even. With times not nil it times each kernel.
func sortRadix(p *computeProgs, keys, vals *glBuffer, rb *radixBuffers, n int, lens []uint32, key64, finish bool, times *radixTimes) {
	ks := 4
	if key64 {
		ks = 8
	}
	passes := radixPasses(key64)
	tile := radixTile(key64)
	segs := len(lens)
	maxLen := int(slices.Max(lens))
	nt := max(1, (maxLen+tile-1)/tile)
	rb.alt.ensure(radixExtent(n, lens) * ks)
	rb.counts.ensure(segs * 256 * nt * 4)
	rb.hist.ensure(segs * passes * 256 * 4)
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, rb.hist.id)
	gl.ClearBufferSubData(gl.COPY_WRITE_BUFFER, gl.R32UI, 0, segs*passes*256*4, gl.RED_INTEGER, gl.UNSIGNED_INT, nil)
	gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 2, rb.counts.id)
	gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 3, rb.hist.id)

	scatter := p.radixScatter
	vsrc, vdst := vals, &rb.valAlt
	if vals != nil {
		scatter = p.radixPairs
		rb.valAlt.ensure(radixExtent(n, lens) * 8)
	}
	src, dst := keys, &rb.alt
	for pass := range passes {
		gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 0, src.id)
		gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 1, dst.id)
		if vals != nil {
			gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 4, vsrc.id)
			gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 5, vdst.id)
			vsrc, vdst = vdst, vsrc
		}
		for kernel, prog := range []uint32{p.radixCount, p.radixScan, scatter} {
			if times != nil {
				gl.BeginQuery(gl.TIME_ELAPSED, times.queries[kernel])
			}
			p.setCommon(prog, n)
			gl.Uniform1ui(p.uniform(prog, "NT"), uint32(nt))
			gl.Uniform1ui(p.uniform(prog, "pass"), uint32(pass))
			gl.Uniform1ui(p.uniform(prog, "shift"), uint32(pass%4*8))
			gl.Uniform1ui(p.uniform(prog, "hiWord"), b2u(pass >= 4))
			gl.Uniform1ui(p.uniform(prog, "raw"), b2u(pass == 0))
			switch prog {
			case p.radixScan:
				// Few tiles: one work group per segment walks every
				// digit's row; many: one per digit and segment.
				rows := nt <= radixRowsMax
				gl.Uniform1ui(p.uniform(prog, "rows"), b2u(rows))
				if rows {
					gl.DispatchCompute(1, 1, uint32(segs))
				} else {
					gl.DispatchCompute(256, 1, uint32(segs))
				}
				gl.MemoryBarrier(gl.SHADER_STORAGE_BARRIER_BIT)
			case scatter:
				gl.Uniform1ui(p.uniform(prog, "finish"), b2u(finish && pass == passes-1))
				dispatch(nt, segs)
			default:
				dispatch(nt, segs)
			}
			if times != nil {
				gl.EndQuery(gl.TIME_ELAPSED)
				var ns uint64
				gl.GetQueryObjectui64v(times.queries[kernel], gl.QUERY_RESULT, &ns)
				times.ns[kernel] += ns
			}
		}
		src, dst = dst, src
	}
	gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 0, keys.id)
}
