//go:build gpu

package compute

import (
	"github.com/go-gl/gl/v4.5-core/gl"
)

// sortBitonic sorts the segs segments of the keys bound at binding 0 (n
// keys apart, n a power of two ≥ localKeys, as long as the segment table
// bound at binding 8 says) with the bitonic network
// of srcLocal and srcStep. The keys start as float bits; with finish they
// end as floats again, else as keys. Past a window's end the first pass
// reads the largest key, so the padding sorts last.
func sortBitonic(p *computeProgs, n, segs int, finish bool) {
	p.setCommon(p.local, n)
	gl.Uniform1ui(p.uniform(p.local, "stage"), 0)
	gl.Uniform1ui(p.uniform(p.local, "finish"), b2u(finish && n == localKeys))
	dispatch(n/localKeys, segs)
	for size := 2 * localKeys; size <= n; size *= 2 {
		// The global steps of this stage: the mirror step, then strides
		// size/4 … localKeys, fused two by two.
		p.setCommon(p.step, n)
		gl.Uniform1ui(p.uniform(p.step, "size"), uint32(size))
		j := size / 4
		if j >= localKeys {
			gl.Uniform1ui(p.uniform(p.step, "mode"), 2)
			dispatch(n/4/stepSize, segs)
			j /= 2
		} else {
			gl.Uniform1ui(p.uniform(p.step, "mode"), 0)
			dispatch(n/2/stepSize, segs)
		}
		for ; j >= localKeys; j /= 4 {
			gl.Uniform1ui(p.uniform(p.step, "j"), uint32(j))
			if j/2 >= localKeys {
				gl.Uniform1ui(p.uniform(p.step, "mode"), 3)
				dispatch(n/4/stepSize, segs)
			} else {
				gl.Uniform1ui(p.uniform(p.step, "mode"), 1)
				dispatch(n/2/stepSize, segs)
			}
		}
		p.setCommon(p.local, n)
		gl.Uniform1ui(p.uniform(p.local, "stage"), 1)
		gl.Uniform1ui(p.uniform(p.local, "finish"), b2u(finish && size == n))
		dispatch(n/localKeys, segs)
	}
}
