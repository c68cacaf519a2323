//go:build gpu

package gpusort

import "github.com/go-gl/gl/v4.5-core/gl"

// The LSD radix sort of the compute back-end: 8-bit digits, four passes for
// 32-bit keys and eight for 64-bit ones, each pass three kernels (count,
// scan, scatter; see compute_radix_glsl.go) over the four channels at once.
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
// Why no subgroup (ballot) ranking: the warp-level multisplit of CUB and
// Onesweep needs ballots, shuffles and a subgroup barrier. Mesa 22's
// llvmpipe (CI) offers GL_ARB_shader_ballot but not GL_KHR_shader_subgroup,
// whose subgroupBarrier is needed for warp-synchronous shared memory on
// GPUs without lockstep warps (NVIDIA since Volta), so a fast path there
// would never run in CI. The portable block-wide ranking (two 4-bit split
// steps in shared memory) is what both run.

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
}

func (b *radixBuffers) free() {
	b.alt.free()
	b.counts.free()
	b.hist.free()
}

// sortRadix sorts the channels of keys (n keys apart, lens long) with the
// radix programs of p, using rb as scratch. The keys start as float bits;
// with finish they end as floats again, else as keys. The result is back
// in keys, since the number of passes is even.
func sortRadix(p *computeProgs, keys *glBuffer, rb *radixBuffers, n int, lens [Channels]uint32, key64, finish bool) {
	ks := 4
	if key64 {
		ks = 8
	}
	passes := radixPasses(key64)
	tile := radixTile(key64)
	maxLen := int(max(lens[0], lens[1], lens[2], lens[3]))
	nt := max(1, (maxLen+tile-1)/tile)
	rb.alt.ensure(Channels * n * ks)
	rb.counts.ensure(Channels * 256 * nt * 4)
	rb.hist.ensure(Channels * passes * 256 * 4)
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, rb.hist.id)
	gl.ClearBufferSubData(gl.COPY_WRITE_BUFFER, gl.R32UI, 0, Channels*passes*256*4, gl.RED_INTEGER, gl.UNSIGNED_INT, nil)
	gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 2, rb.counts.id)
	gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 3, rb.hist.id)

	src, dst := keys, &rb.alt
	for pass := range passes {
		gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 0, src.id)
		gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 1, dst.id)
		for _, prog := range []uint32{p.radixCount, p.radixScan, p.radixScatter} {
			p.setCommon(prog, n, lens)
			gl.Uniform1ui(p.uniform(prog, "NT"), uint32(nt))
			gl.Uniform1ui(p.uniform(prog, "pass"), uint32(pass))
			gl.Uniform1ui(p.uniform(prog, "shift"), uint32(pass%4*8))
			gl.Uniform1ui(p.uniform(prog, "hiWord"), b2u(pass >= 4))
			gl.Uniform1ui(p.uniform(prog, "raw"), b2u(pass == 0))
			switch prog {
			case p.radixScan:
				// Few tiles: one work group per channel walks every
				// digit's row; many: one per digit and channel.
				rows := nt <= radixRowsMax
				gl.Uniform1ui(p.uniform(prog, "rows"), b2u(rows))
				if rows {
					gl.DispatchCompute(1, 1, Channels)
				} else {
					gl.DispatchCompute(256, 1, Channels)
				}
				gl.MemoryBarrier(gl.SHADER_STORAGE_BARRIER_BIT)
			case p.radixScatter:
				gl.Uniform1ui(p.uniform(prog, "finish"), b2u(finish && pass == passes-1))
				dispatch(nt)
			default:
				dispatch(nt)
			}
		}
		src, dst = dst, src
	}
	gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 0, keys.id)
}
