//go:build gpu

package compute

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/go-gl/gl/v4.5-core/gl"

	"streamd/gksketch"
	"streamd/gpusort"
	"streamd/gpusort/glctx"
	"streamd/lossy"
	"streamd/summary"
)

// The window digests of the compute back-end, computed on the GPU over the
// sorted keys: the plan (which ranks to gather, which Known values to
// search, where each channel's runs go) is made on the host before the
// batch is submitted, the shaders write their small results into mapped
// memory, and the host assembles the digests once the batch's fence has
// signalled.

// runsMappedMax is the most run slots (16 bytes each) a submission may
// have for its runs to be written straight into mapped memory: 16 MiB, the
// runs of about a thousand windows of 4096 keys at ε = 0.001. A submission
// with more (a small lossy-counting threshold: up to one slot per key)
// writes them to GPU memory and reads back only the runs found, window by
// window, on the GL thread.
const runsMappedMax = 1 << 20

// digestPlan is what the digest shaders of one submission compute, and
// then their results: one entry per segment (window) of each slice.
type digestPlan struct {
	lens                  []uint32
	thr, runOff, runCap   []uint32
	qOff, qCnt            []uint32
	total                 uint32 // run slots of all segments
	ranks                 [][]int64
	gatherAt              []int    // where each window's sample starts in index
	index                 []uint32 // positions of the sample's keys
	queries               []uint32 // key words: one per 32-bit key, two per 64-bit key
	nq                    int      // Known-value queries
	ks                    int      // key size in bytes
	runsMapped            bool     // runs go straight to mapped memory
	totals                []uint32 // runs found per window
	runAt                 []int    // where each window's runs start in runs
	runs, found, gathered []uint32
}

// newDigestPlan plans the digests of v's windows under specs (one per
// window), with the segments n keys apart. ranks, if not nil, holds each
// window's sample ranks (gksketch.SampleRanks) made ahead.
func newDigestPlan(v *keyView, n int, specs []summary.WindowSpec, ranks [][]int64) *digestPlan {
	segs := len(v.lens)
	p := &digestPlan{ks: v.keySize()}
	words := make([]uint32, 7*segs)
	for _, x := range []*[]uint32{&p.lens, &p.thr, &p.runOff, &p.runCap, &p.qOff, &p.qCnt, &p.totals} {
		*x, words = words[:segs:segs], words[segs:]
	}
	p.ranks = ranks
	if p.ranks == nil {
		p.ranks = make([][]int64, segs)
	}
	places := make([]int, 2*segs)
	p.gatherAt, p.runAt = places[:segs:segs], places[segs:]
	sample, known := 0, 0
	for i := range segs {
		if ranks != nil {
			sample += len(ranks[i])
		} else if v.lens[i] > 0 {
			sample += sampleSize(int64(v.lens[i]), specs[i].Spacing)
		}
		known += len(specs[i].Known)
	}
	perQuery := 2 * p.ks / 4 // key words per query (lo, hi)
	p.index = make([]uint32, 0, sample)
	p.queries = make([]uint32, 0, known*perQuery)
	for i := range segs {
		l := int64(v.lens[i])
		p.lens[i] = uint32(l)
		if l == 0 {
			continue
		}
		t := max(specs[i].Threshold, 0)
		t = min(t, l)
		p.thr[i] = uint32(t)
		p.runOff[i] = p.total
		p.runCap[i] = uint32(l / (t + 1))
		p.total += p.runCap[i]
		if ranks == nil {
			p.ranks[i] = sampleRanks(l, specs[i].Spacing)
		}
		p.gatherAt[i] = len(p.index)
		base := uint32(i*n) - 1
		for _, r := range p.ranks[i] {
			p.index = append(p.index, base+uint32(r))
		}
		p.qOff[i] = uint32(len(p.queries) / perQuery)
		for _, kv := range specs[i].Known {
			lo, hi, ok := knownKeys(kv, v.key64)
			if !ok {
				continue
			}
			if v.key64 {
				p.queries = append(p.queries, uint32(lo), uint32(lo>>32), uint32(hi), uint32(hi>>32))
			} else {
				p.queries = append(p.queries, uint32(lo), uint32(hi))
			}
		}
		p.qCnt[i] = uint32(len(p.queries)/perQuery) - p.qOff[i]
	}
	p.nq = len(p.queries) / perQuery
	return p
}

// sampleRanks returns the ranks of the quantile sample of a window of l
// keys with sample spacing h.
func sampleRanks(l int64, h float64) []int64 {
	return slices.AppendSeq(make([]int64, 0, sampleSize(l, h)), gksketch.SampleRanks(l, h))
}

// sampleSize bounds the ranks sampleRanks returns: 1, ⌈h⌉, ⌈2h⌉, … below
// l, and l.
func sampleSize(l int64, h float64) int {
	if !(h >= 1) {
		h = 1 // NaN too
	}
	return int(min(float64(l), float64(l)/h+2))
}

// rankCacheMax bounds the window shapes a rankCache holds.
const rankCacheMax = 256

// rankShape is what a window's sample ranks depend on: its length and its
// sample spacing.
type rankShape struct {
	l int64
	h float64
}

// A rankCache holds the sample ranks of the window shapes met lately, so
// that the windows of one shape (the full windows of streams with one ε,
// which are most of them) share one slice instead of each making its
// own: the ranks are the same. The slices it returns must not be changed.
// It holds about rankCacheMax shapes: once it has met more, it forgets
// them all and starts over, so that partial windows' odd lengths (idle
// streams' flushes) cannot keep the common shapes out for good. It is
// safe for concurrent use.
type rankCache struct {
	shapes sync.Map // rankShape → []int64
	n      atomic.Int32
}

// get returns the sample ranks of a window of l keys with spacing h.
func (rc *rankCache) get(l int64, h float64) []int64 {
	k := rankShape{l, h}
	if r, ok := rc.shapes.Load(k); ok {
		return r.([]int64)
	}
	r := sampleRanks(l, h)
	if _, loaded := rc.shapes.LoadOrStore(k, r); !loaded && rc.n.Add(1) > rankCacheMax {
		rc.shapes.Clear()
		rc.n.Store(0)
	}
	return r
}

// table returns the segment table of the plan's windows: their lengths
// and digest parameters (the layout of Segs in glslPrelude).
func (plan *digestPlan) table() []uint32 {
	t := segmentTable(plan.lens)
	for i := range plan.lens {
		w := t[i*segWords:]
		w[1], w[2], w[3], w[4] = plan.thr[i], plan.runOff[i], plan.qOff[i], plan.qCnt[i]
	}
	return t
}

// resultBuffer is where one digest output goes: mapped memory that the
// host reads after the batch's fence, or without persistent mapping (or
// for too many runs) a GPU buffer read with glGetBufferSubData.
type resultBuffer struct {
	dev    glBuffer
	mapped mappedBuffer
}

// bind makes the chosen buffer hold n bytes and binds it at binding.
func (r *resultBuffer) bind(binding uint32, n int, mapped bool) {
	if mapped {
		r.mapped.ensure(max(n, 256), true)
		gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, binding, r.mapped.id)
		return
	}
	r.dev.ensure(n)
	gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, binding, r.dev.id)
}

// read copies n bytes at byte offset off into dst: from mapped memory, or
// on the GL thread from the GPU buffer.
func (r *resultBuffer) read(dst unsafe.Pointer, off, n int, mapped bool) {
	if n == 0 {
		return
	}
	if mapped {
		copy(unsafe.Slice((*byte)(dst), n), r.mapped.bytes[off:off+n])
		return
	}
	gl.BindBuffer(gl.COPY_READ_BUFFER, r.dev.id)
	gl.GetBufferSubData(gl.COPY_READ_BUFFER, off, n, dst)
}

func (r *resultBuffer) free() {
	r.dev.free()
	r.mapped.free()
}

// digestBuffers are a slot's digest buffers.
type digestBuffers struct {
	blocks, queries, index        glBuffer
	runs, totals, found, gathered resultBuffer
}

func (d *digestBuffers) free() {
	for _, b := range []*glBuffer{&d.blocks, &d.queries, &d.index} {
		b.free()
	}
	for _, r := range []*resultBuffer{&d.runs, &d.totals, &d.found, &d.gathered} {
		r.free()
	}
}

// dispatchDigest issues the digest shaders of plan over the sorted keys
// bound at binding 0 (n apart; the plan's segment table bound at binding
// 8), their results into mapped memory when mapped is set (persistent
// mapping), else into GPU buffers; the runs into mapped memory only if
// there are at most runsMax run slots.
func dispatchDigest(p *computeProgs, d *digestBuffers, n int, plan *digestPlan, mapped bool, runsMax int) {
	segs := len(plan.lens)
	plan.runsMapped = mapped && int(plan.total) <= runsMax
	nb := n / localSize
	d.blocks.ensure(segs * nb * 4)
	gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 1, d.blocks.id)
	d.runs.bind(2, int(plan.total)*16, plan.runsMapped)
	d.totals.bind(3, segs*4, mapped)

	p.setCommon(p.runs, n)
	gl.Uniform1ui(p.uniform(p.runs, "NB"), uint32(nb))
	gl.Uniform1ui(p.uniform(p.runs, "pass"), 0)
	dispatch(nb, segs)
	p.setCommon(p.scan, n)
	gl.Uniform1ui(p.uniform(p.scan, "NB"), uint32(nb))
	gl.DispatchCompute(1, 1, uint32(segs))
	gl.MemoryBarrier(gl.SHADER_STORAGE_BARRIER_BIT)
	gl.UseProgram(p.runs)
	gl.Uniform1ui(p.uniform(p.runs, "pass"), 1)
	dispatch(nb, segs)

	if plan.nq > 0 {
		d.queries.ensure(len(plan.queries) * 4)
		gl.BindBuffer(gl.COPY_WRITE_BUFFER, d.queries.id)
		gl.BufferSubData(gl.COPY_WRITE_BUFFER, 0, len(plan.queries)*4, gl.Ptr(plan.queries))
		gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 4, d.queries.id)
		d.found.bind(5, plan.nq*16, mapped)
		p.setCommon(p.search, n)
		dispatch((int(slices.Max(plan.qCnt))+searchSize-1)/searchSize, segs)
	}
	if len(plan.index) > 0 {
		d.index.ensure(len(plan.index) * 4)
		gl.BindBuffer(gl.COPY_WRITE_BUFFER, d.index.id)
		gl.BufferSubData(gl.COPY_WRITE_BUFFER, 0, len(plan.index)*4, gl.Ptr(plan.index))
		gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 6, d.index.id)
		d.gathered.bind(7, len(plan.index)*plan.ks, mapped)
		p.setCommon(p.gather, n)
		gl.Uniform1ui(p.uniform(p.gather, "count"), uint32(len(plan.index)))
		groups := (len(plan.index) + gatherSize - 1) / gatherSize
		gx := min(groups, 32768)
		gl.DispatchCompute(uint32(gx), uint32((groups+gx-1)/gx), 1)
	}
	gl.MemoryBarrier(gl.BUFFER_UPDATE_BARRIER_BIT | gl.SHADER_STORAGE_BARRIER_BIT)
}

// read copies plan's results into plan: from mapped memory where mapped
// (persistent mapping) says they are, and the runs from mapped memory if
// plan.runsMapped. Anything read from a GPU buffer needs the GL thread.
func (d *digestBuffers) read(plan *digestPlan, mapped bool) error {
	segs := len(plan.lens)
	d.totals.read(unsafe.Pointer(&plan.totals[0]), 0, segs*4, mapped)
	found := 0
	for i := range segs {
		if plan.totals[i] > plan.runCap[i] {
			return fmt.Errorf("read back digest: window %d: %d runs in room for %d", i, plan.totals[i], plan.runCap[i])
		}
		plan.runAt[i] = found
		found += int(plan.totals[i])
	}
	plan.runs = grow(plan.runs, 4*found)
	for i := range segs {
		if c := int(plan.totals[i]); c > 0 {
			d.runs.read(unsafe.Pointer(&plan.runs[4*plan.runAt[i]]), int(plan.runOff[i])*16, c*16, plan.runsMapped)
		}
	}
	plan.found = grow(plan.found, 4*plan.nq)
	if plan.nq > 0 {
		d.found.read(unsafe.Pointer(&plan.found[0]), 0, plan.nq*16, mapped)
	}
	plan.gathered = grow(plan.gathered, len(plan.index)*plan.ks/4)
	if len(plan.index) > 0 {
		d.gathered.read(unsafe.Pointer(&plan.gathered[0]), 0, len(plan.index)*plan.ks, mapped)
	}
	if !mapped || !plan.runsMapped {
		return glctx.CheckError("read back digest")
	}
	return nil
}

// grow returns x resliced (or reallocated) to length n.
func grow(x []uint32, n int) []uint32 {
	if cap(x) < n {
		return make([]uint32, n)
	}
	return x[:n]
}

// assemble fills out[i] from plan's results for each window first+i that
// is not empty: its sample, then its long runs (in order of start) merged
// with its Known values' runs (in order of value, so of start), duplicates
// dropped. The callers of one plan may assemble different windows at once.
func (plan *digestPlan) assemble(key64 bool, first int, out []*summary.Digest) {
	value := func(lo, hi uint32) float64 {
		if key64 {
			return gpusort.Float64(uint64(hi)<<32 | uint64(lo))
		}
		return float64(gpusort.Float32(lo))
	}
	for i := first; i < first+len(out); i++ {
		if plan.lens[i] == 0 {
			continue
		}
		d := out[i-first]
		g := plan.gatherAt[i]
		d.N = int64(plan.lens[i])
		d.Sample = d.Sample[:0]
		for _, r := range plan.ranks[i] {
			var x float64
			if key64 {
				x = value(plan.gathered[2*g], plan.gathered[2*g+1])
			} else {
				x = value(plan.gathered[g], 0)
			}
			g++
			d.Sample = append(d.Sample, gksketch.Tuple{Value: x, RMin: r, RMax: r})
		}
		d.Runs = d.Runs[:0]
		rs := plan.runs[4*plan.runAt[i] : 4*(plan.runAt[i]+int(plan.totals[i]))]
		kn := plan.found[4*plan.qOff[i] : 4*(plan.qOff[i]+plan.qCnt[i])]
		last := int64(-1)
		emit := func(r []uint32) {
			s := int64(r[0])
			if r[1] == 0 || s <= last {
				return
			}
			last = s
			d.Runs = append(d.Runs, lossy.Run{Value: value(r[2], r[3]), Count: int64(r[1])})
		}
		for len(rs) > 0 || len(kn) > 0 {
			if len(kn) == 0 || len(rs) > 0 && rs[0] <= kn[0] {
				emit(rs[:4])
				rs = rs[4:]
			} else {
				emit(kn[:4])
				kn = kn[4:]
			}
		}
	}
}

// knownKeys returns the key range of the floats equal to the Known value
// kv in a window of the given width: one key, or −0 … +0 for zero. It
// reports false when no such float exists (kv is NaN, or not a float32).
func knownKeys(kv float64, key64 bool) (lo, hi uint64, ok bool) {
	if math.IsNaN(kv) {
		return 0, 0, false
	}
	if key64 {
		if kv == 0 {
			return gpusort.Key64(math.Copysign(0, -1)), gpusort.Key64(0), true
		}
		return gpusort.Key64(kv), gpusort.Key64(kv), true
	}
	f := float32(kv)
	if float64(f) != kv {
		return 0, 0, false
	}
	if f == 0 {
		return uint64(gpusort.Key32(float32(math.Copysign(0, -1)))), uint64(gpusort.Key32(0)), true
	}
	return uint64(gpusort.Key32(f)), uint64(gpusort.Key32(f)), true
}
