//go:build gpu

package gpusort

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"time"
	"unsafe"

	"github.com/go-gl/gl/v4.5-core/gl"

	"streamd/gksketch"
	"streamd/lossy"
	"streamd/summary"
)

// Compute is the compute-shader back-end: a bitonic sorting network on
// shader storage buffers, its short strides in shared memory, sorting the
// order-preserving keys of Key32 or Key64 (a float64 key is two 32-bit
// channels compared high word first). The key transform and its inverse
// run on the GPU. Each window is padded to a power of two of at least 2048
// keys (N); the four windows of a batch are sorted by the same dispatches.
//
// Compute orders −0 before +0, like the CPU back-end: the two keys differ.
// Its Digest computes the quantile sample and the lossy-counting runs on
// the GPU and reads back only those (see Digest).
//
// A batch whose buffer would exceed the GPU's shader storage block limit
// (128 MiB on llvmpipe, 2 GiB on NVIDIA) is sorted on the CPU instead.
// A Compute is safe for concurrent use: its batches run one at a time on
// the thread that owns its GL context.
type Compute struct {
	t   *glThread
	cpu *CPU
	// The fields below belong to the GL thread.
	progs      [2]*computeProgs // by key width: 32, 64 bits
	bufs       computeBuffers
	maxStorage int
	persistent bool // GL 4.4 buffer storage: upload and read back through mapped memory
	up, down   mappedBuffer
	profile    bool
	phases     Phases
}

type computeProgs struct {
	local, step, runs, scan, search, gather uint32
	loc                                     map[uint32]map[string]int32
}

// uniform returns the location of a uniform of p's program prog.
func (p *computeProgs) uniform(prog uint32, name string) int32 {
	m := p.loc[prog]
	if m == nil {
		m = make(map[string]int32)
		p.loc[prog] = m
	}
	if l, ok := m[name]; ok {
		return l
	}
	l := gl.GetUniformLocation(prog, gl.Str(name+"\x00"))
	m[name] = l
	return l
}

// glBuffer is a GL buffer object that grows on demand.
type glBuffer struct {
	id   uint32
	size int
}

// ensure makes b hold at least n bytes, dropping its contents if it grows.
func (b *glBuffer) ensure(n int) {
	if n <= b.size && b.id != 0 {
		return
	}
	if b.id != 0 {
		gl.DeleteBuffers(1, &b.id)
	}
	n = max(n, 256)
	gl.GenBuffers(1, &b.id)
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, b.id)
	gl.BufferData(gl.COPY_WRITE_BUFFER, n, nil, gl.DYNAMIC_COPY)
	b.size = n
}

func (b *glBuffer) free() {
	if b.id != 0 {
		gl.DeleteBuffers(1, &b.id)
		b.id, b.size = 0, 0
	}
}

type computeBuffers struct {
	keys, blocks, runs, totals, queries, found, index, gathered glBuffer
}

// NewCompute starts a GL context on a thread of its own and compiles the
// shaders. It returns an error wrapping ErrNoGPU when there is no OpenGL
// 4.3 core context to be had. The context comes from EGL, without a
// display; NewComputeWith chooses another way.
func NewCompute() (*Compute, error) { return NewComputeWith(ContextEGL) }

// NewComputeWith is NewCompute with the context made the way kind says.
func NewComputeWith(kind GLContext) (*Compute, error) {
	c := &Compute{cpu: NewCPU(0)}
	t, err := newGLThread(kind, func() error {
		var n int32
		gl.GetIntegerv(gl.MAX_SHADER_STORAGE_BLOCK_SIZE, &n)
		c.maxStorage = int(uint32(n))
		var major, minor int32
		gl.GetIntegerv(gl.MAJOR_VERSION, &major)
		gl.GetIntegerv(gl.MINOR_VERSION, &minor)
		c.persistent = major > 4 || major == 4 && minor >= 4
		for w := range 2 {
			p, err := compileCompute(w == 1)
			if err != nil {
				return fmt.Errorf("compute sorter: %w", err)
			}
			c.progs[w] = p
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.t = t
	return c, nil
}

func compileCompute(key64 bool) (*computeProgs, error) {
	p := &computeProgs{loc: make(map[uint32]map[string]int32)}
	for _, s := range []struct {
		dst  *uint32
		name string
		body string
	}{
		{&p.local, "local", srcLocal},
		{&p.step, "step", srcStep},
		{&p.runs, "runs", srcRunFlags},
		{&p.scan, "scan", srcScan},
		{&p.search, "search", srcSearch},
		{&p.gather, "gather", srcGather},
	} {
		prog, err := compileProgram(s.name, shaderSource{gl.COMPUTE_SHADER, computeSource(s.body, key64)})
		if err != nil {
			return nil, err
		}
		*s.dst = prog
	}
	return p, nil
}

// Name returns "compute".
func (c *Compute) Name() string { return "compute" }

// Info describes the GL renderer and version in use.
func (c *Compute) Info() string { return c.t.info }

// Close releases the GL context. Sort fails with ErrClosed afterwards.
func (c *Compute) Close() error {
	c.t.close(func() {
		for _, p := range c.progs {
			if p != nil {
				for _, prog := range []uint32{p.local, p.step, p.runs, p.scan, p.search, p.gather} {
					gl.DeleteProgram(prog)
				}
			}
		}
		c.up.free()
		c.down.free()
		b := &c.bufs
		for _, x := range []*glBuffer{&b.keys, &b.blocks, &b.runs, &b.totals, &b.queries, &b.found, &b.index, &b.gathered} {
			x.free()
		}
	})
	return nil
}

// SetProfile turns phase timing on or off: when on, the GL thread waits
// for the GPU (glFinish) after each phase so that LastPhases is exact,
// which costs a little throughput.
func (c *Compute) SetProfile(on bool) {
	_ = c.t.do(func() error { c.profile = on; return nil })
}

// LastPhases reports the phase times of the last batch (zero unless
// profiling is on).
func (c *Compute) LastPhases() Phases {
	var p Phases
	_ = c.t.do(func() error { p = c.phases; return nil })
	return p
}

// Sort sorts each window of b in place on the GPU.
func (c *Compute) Sort(ctx context.Context, b *Batch) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("compute sort: %w", err)
	}
	for w := range 2 {
		v := view(b, w == 1)
		if v.empty() {
			continue
		}
		if !c.fits(v) {
			if err := c.cpu.Sort(ctx, b); err != nil {
				return err
			}
			continue
		}
		if err := c.t.do(func() error { return c.run(ctx, v, nil, nil) }); err != nil {
			return fmt.Errorf("compute sort: %w", err)
		}
	}
	return nil
}

// Digest sorts each window of b on the GPU, computes there each window's
// quantile sample and lossy-counting runs as specs asks, and reads back
// only those into out: b is left as it was.
// The result is identical to summary.DigestSorted on the sorted window.
// Samples take one gather; runs longer than the threshold are found by
// marking run starts (key i ≠ key i−1 and key i = key i+T), a prefix sum
// over the marks and a binary search for each run's end; the runs of the
// Known values by one binary search each.
func (c *Compute) Digest(ctx context.Context, b *Batch, specs *[Channels]summary.WindowSpec, out *[Channels]summary.Digest) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("compute digest: %w", err)
	}
	if err := checkSpecs(b, specs); err != nil {
		return err
	}
	for w := range 2 {
		v := view(b, w == 1)
		if v.empty() {
			continue
		}
		if !c.fits(v) {
			key64 := w == 1
			if err := c.cpu.digest(ctx, b, specs, out, func(i int) bool { return (len(b.F64[i]) > 0) == key64 }); err != nil {
				return err
			}
			continue
		}
		if err := c.t.do(func() error { return c.run(ctx, v, specs, out) }); err != nil {
			return fmt.Errorf("compute digest: %w", err)
		}
	}
	emptyDigests(b, out)
	return nil
}

// keyView is the windows of one key width of a batch, as raw bytes.
type keyView struct {
	key64 bool
	lens  [Channels]int
	data  [Channels]unsafe.Pointer
	f32   *[Channels][]float32
	f64   *[Channels][]float64
}

func view(b *Batch, key64 bool) keyView {
	v := keyView{key64: key64, f32: &b.F32, f64: &b.F64}
	for i := range Channels {
		if key64 {
			if w := b.F64[i]; len(w) > 0 {
				v.lens[i], v.data[i] = len(w), unsafe.Pointer(&w[0])
			}
		} else if w := b.F32[i]; len(w) > 0 {
			v.lens[i], v.data[i] = len(w), unsafe.Pointer(&w[0])
		}
	}
	return v
}

func (v *keyView) empty() bool { return v.maxLen() == 0 }

func (v *keyView) maxLen() int { return max(v.lens[0], v.lens[1], v.lens[2], v.lens[3]) }

func (v *keyView) keySize() int {
	if v.key64 {
		return 8
	}
	return 4
}

// padded returns N, the keys per channel: a power of two ≥ localKeys.
func (v *keyView) padded() int {
	n := v.maxLen()
	if n <= localKeys {
		return localKeys
	}
	return 1 << bits.Len(uint(n-1))
}

// fits reports whether v's windows fit one shader storage block.
func (c *Compute) fits(v keyView) bool {
	n := v.padded()
	return n <= 1<<31 && Channels*n*v.keySize() <= c.maxStorage
}

// dispatch runs groups work groups per channel, folding them into a 2-D
// grid when there are more than 32768 (llvmpipe allows 65535 in x). The
// shaders recover the index with groupIndex.
func dispatch(groups int) {
	if groups <= 0 {
		return
	}
	gx := min(groups, 32768)
	gy := (groups + gx - 1) / gx
	gl.DispatchCompute(uint32(gx), uint32(gy), Channels)
	gl.MemoryBarrier(gl.SHADER_STORAGE_BARRIER_BIT)
}

// run sorts v's windows on the GPU. With specs nil it reads the sorted
// windows back; otherwise it computes and reads back the digests.
func (c *Compute) run(ctx context.Context, v keyView, specs *[Channels]summary.WindowSpec, out *[Channels]summary.Digest) error {
	w := 0
	if v.key64 {
		w = 1
	}
	p := c.progs[w]
	ks := v.keySize()
	n := v.padded()
	var lens [Channels]uint32
	for i := range Channels {
		lens[i] = uint32(v.lens[i])
	}
	start := time.Now()
	mark := func(d *time.Duration) {
		if c.profile {
			gl.Finish()
			now := time.Now()
			*d = now.Sub(start)
			start = now
		}
	}
	c.phases = Phases{}

	c.bufs.keys.ensure(Channels * n * ks)
	if c.persistent {
		// Copy the windows into persistently mapped staging memory on all
		// cores, then let the GPU's copy engine move them.
		c.up.ensure(Channels*n*ks, false)
		var jobs []copyJob
		for i := range Channels {
			if lens[i] > 0 {
				jobs = append(jobs, copyJob{c.up.bytes[i*n*ks:], unsafe.Slice((*byte)(v.data[i]), int(lens[i])*ks)})
			}
		}
		parallelCopy(jobs)
		gl.BindBuffer(gl.COPY_READ_BUFFER, c.up.id)
		gl.BindBuffer(gl.COPY_WRITE_BUFFER, c.bufs.keys.id)
		for i := range Channels {
			if lens[i] > 0 {
				gl.CopyBufferSubData(gl.COPY_READ_BUFFER, gl.COPY_WRITE_BUFFER, i*n*ks, i*n*ks, int(lens[i])*ks)
			}
		}
	} else {
		gl.BindBuffer(gl.COPY_WRITE_BUFFER, c.bufs.keys.id)
		for i := range Channels {
			if lens[i] > 0 {
				gl.BufferSubData(gl.COPY_WRITE_BUFFER, i*n*ks, int(lens[i])*ks, v.data[i])
			}
		}
	}
	gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 0, c.bufs.keys.id)
	mark(&c.phases.Upload)

	finish := specs == nil
	setCommon := func(prog uint32) {
		gl.UseProgram(prog)
		gl.Uniform1ui(p.uniform(prog, "N"), uint32(n))
		gl.Uniform4ui(p.uniform(prog, "lens"), lens[0], lens[1], lens[2], lens[3])
	}
	setCommon(p.local)
	gl.Uniform1ui(p.uniform(p.local, "stage"), 0)
	gl.Uniform1ui(p.uniform(p.local, "finish"), b2u(finish && n == localKeys))
	dispatch(n / localKeys)
	for size := 2 * localKeys; size <= n; size *= 2 {
		// The global steps of this stage: the mirror step, then strides
		// size/4 … localKeys, fused two by two.
		setCommon(p.step)
		gl.Uniform1ui(p.uniform(p.step, "size"), uint32(size))
		j := size / 4
		if j >= localKeys {
			gl.Uniform1ui(p.uniform(p.step, "mode"), 2)
			dispatch(n / 4 / stepSize)
			j /= 2
		} else {
			gl.Uniform1ui(p.uniform(p.step, "mode"), 0)
			dispatch(n / 2 / stepSize)
		}
		for ; j >= localKeys; j /= 4 {
			gl.Uniform1ui(p.uniform(p.step, "j"), uint32(j))
			if j/2 >= localKeys {
				gl.Uniform1ui(p.uniform(p.step, "mode"), 3)
				dispatch(n / 4 / stepSize)
			} else {
				gl.Uniform1ui(p.uniform(p.step, "mode"), 1)
				dispatch(n / 2 / stepSize)
			}
		}
		setCommon(p.local)
		gl.Uniform1ui(p.uniform(p.local, "stage"), 1)
		gl.Uniform1ui(p.uniform(p.local, "finish"), b2u(finish && size == n))
		dispatch(n / localKeys)
	}
	if err := glError("sort"); err != nil {
		return err
	}
	mark(&c.phases.Sort)

	if err := ctx.Err(); err != nil {
		// The windows still hold their input: nothing was read back.
		return err
	}
	if specs == nil {
		gl.BindBuffer(gl.COPY_READ_BUFFER, c.bufs.keys.id)
		if !c.persistent {
			for i := range Channels {
				if lens[i] > 0 {
					gl.GetBufferSubData(gl.COPY_READ_BUFFER, i*n*ks, int(lens[i])*ks, v.data[i])
				}
			}
			mark(&c.phases.Readback)
			return glError("read back")
		}
		c.down.ensure(Channels*n*ks, true)
		gl.BindBuffer(gl.COPY_WRITE_BUFFER, c.down.id)
		for i := range Channels {
			if lens[i] > 0 {
				gl.CopyBufferSubData(gl.COPY_READ_BUFFER, gl.COPY_WRITE_BUFFER, i*n*ks, i*n*ks, int(lens[i])*ks)
			}
		}
		gl.MemoryBarrier(gl.CLIENT_MAPPED_BUFFER_BARRIER_BIT)
		if err := waitGPU(); err != nil {
			return err
		}
		var jobs []copyJob
		for i := range Channels {
			if lens[i] > 0 {
				jobs = append(jobs, copyJob{unsafe.Slice((*byte)(v.data[i]), int(lens[i])*ks), c.down.bytes[i*n*ks:]})
			}
		}
		parallelCopy(jobs)
		mark(&c.phases.Readback)
		return glError("read back")
	}
	return c.digest(v, p, n, lens, specs, out, setCommon, mark)
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// digest runs the digest shaders over the sorted keys and reads back the
// digests.
func (c *Compute) digest(v keyView, p *computeProgs, n int, lens [Channels]uint32, specs *[Channels]summary.WindowSpec,
	out *[Channels]summary.Digest, setCommon func(uint32), mark func(*time.Duration)) error {
	ks := v.keySize()
	var thr, runOff, runCap, qOff, qCnt [Channels]uint32
	var ranks [Channels][]int64
	var index []uint32
	var queries []uint32 // key words: one per 32-bit key, two per 64-bit key
	total := uint32(0)
	for i := range Channels {
		l := int64(lens[i])
		if l == 0 {
			continue
		}
		t := max(specs[i].Threshold, 0)
		t = min(t, l)
		thr[i] = uint32(t)
		runOff[i] = total
		runCap[i] = uint32(l / (t + 1))
		total += runCap[i]
		ranks[i] = sampleRanks(ranks[i], l, specs[i].Spacing)
		for _, r := range ranks[i] {
			index = append(index, uint32(i*n)+uint32(r-1))
		}
		qOff[i] = uint32(len(queries) / (2 * ks / 4))
		for _, kv := range specs[i].Known {
			lo, hi, ok := knownKeys(kv, v.key64)
			if !ok {
				continue
			}
			if v.key64 {
				queries = append(queries, uint32(lo), uint32(lo>>32), uint32(hi), uint32(hi>>32))
			} else {
				queries = append(queries, uint32(lo), uint32(hi))
			}
		}
		qCnt[i] = uint32(len(queries)/(2*ks/4)) - qOff[i]
	}
	nq := len(queries) / (2 * ks / 4)

	b := &c.bufs
	nb := n / localSize
	b.blocks.ensure(Channels * nb * 4)
	b.runs.ensure(int(total) * 16)
	b.totals.ensure(Channels * 4)
	gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 1, b.blocks.id)
	gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 2, b.runs.id)
	gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 3, b.totals.id)

	setCommon(p.runs)
	gl.Uniform4ui(p.uniform(p.runs, "thr"), thr[0], thr[1], thr[2], thr[3])
	gl.Uniform4ui(p.uniform(p.runs, "runOff"), runOff[0], runOff[1], runOff[2], runOff[3])
	gl.Uniform1ui(p.uniform(p.runs, "NB"), uint32(nb))
	gl.Uniform1ui(p.uniform(p.runs, "pass"), 0)
	dispatch(nb)
	setCommon(p.scan)
	gl.Uniform1ui(p.uniform(p.scan, "NB"), uint32(nb))
	gl.DispatchCompute(1, 1, Channels)
	gl.MemoryBarrier(gl.SHADER_STORAGE_BARRIER_BIT)
	gl.UseProgram(p.runs)
	gl.Uniform1ui(p.uniform(p.runs, "pass"), 1)
	dispatch(nb)

	if nq > 0 {
		b.queries.ensure(len(queries) * 4)
		b.found.ensure(nq * 16)
		gl.BindBuffer(gl.COPY_WRITE_BUFFER, b.queries.id)
		gl.BufferSubData(gl.COPY_WRITE_BUFFER, 0, len(queries)*4, gl.Ptr(queries))
		gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 4, b.queries.id)
		gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 5, b.found.id)
		setCommon(p.search)
		gl.Uniform4ui(p.uniform(p.search, "qOff"), qOff[0], qOff[1], qOff[2], qOff[3])
		gl.Uniform4ui(p.uniform(p.search, "qCnt"), qCnt[0], qCnt[1], qCnt[2], qCnt[3])
		dispatch((int(max(qCnt[0], qCnt[1], qCnt[2], qCnt[3])) + searchSize - 1) / searchSize)
	}
	if len(index) > 0 {
		b.index.ensure(len(index) * 4)
		b.gathered.ensure(len(index) * ks)
		gl.BindBuffer(gl.COPY_WRITE_BUFFER, b.index.id)
		gl.BufferSubData(gl.COPY_WRITE_BUFFER, 0, len(index)*4, gl.Ptr(index))
		gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 6, b.index.id)
		gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 7, b.gathered.id)
		setCommon(p.gather)
		gl.Uniform1ui(p.uniform(p.gather, "count"), uint32(len(index)))
		groups := (len(index) + gatherSize - 1) / gatherSize
		gx := min(groups, 32768)
		gl.DispatchCompute(uint32(gx), uint32((groups+gx-1)/gx), 1)
	}
	gl.MemoryBarrier(gl.BUFFER_UPDATE_BARRIER_BIT | gl.SHADER_STORAGE_BARRIER_BIT)
	if err := glError("digest"); err != nil {
		return err
	}
	mark(&c.phases.Digest)

	var totals [Channels]uint32
	gl.BindBuffer(gl.COPY_READ_BUFFER, b.totals.id)
	gl.GetBufferSubData(gl.COPY_READ_BUFFER, 0, Channels*4, gl.Ptr(&totals[0]))
	runs := make([]uint32, 4*total)
	gl.BindBuffer(gl.COPY_READ_BUFFER, b.runs.id)
	for i := range Channels {
		if totals[i] > 0 {
			off := int(runOff[i]) * 4
			gl.GetBufferSubData(gl.COPY_READ_BUFFER, off*4, int(totals[i])*16, gl.Ptr(&runs[off]))
		}
	}
	found := make([]uint32, 4*nq)
	if nq > 0 {
		gl.BindBuffer(gl.COPY_READ_BUFFER, b.found.id)
		gl.GetBufferSubData(gl.COPY_READ_BUFFER, 0, nq*16, gl.Ptr(found))
	}
	gathered := make([]uint32, len(index)*ks/4)
	if len(index) > 0 {
		gl.BindBuffer(gl.COPY_READ_BUFFER, b.gathered.id)
		gl.GetBufferSubData(gl.COPY_READ_BUFFER, 0, len(index)*ks, gl.Ptr(gathered))
	}
	if err := glError("read back digest"); err != nil {
		return err
	}
	value := func(lo, hi uint32) float64 {
		if v.key64 {
			return Float64(uint64(hi)<<32 | uint64(lo))
		}
		return float64(Float32(lo))
	}
	g := 0
	for i := range Channels {
		if lens[i] == 0 {
			continue
		}
		d := &out[i]
		d.N = int64(lens[i])
		d.Sample = d.Sample[:0]
		for _, r := range ranks[i] {
			var x float64
			if v.key64 {
				x = value(gathered[2*g], gathered[2*g+1])
			} else {
				x = value(gathered[g], 0)
			}
			g++
			d.Sample = append(d.Sample, gksketch.Tuple{Value: x, RMin: r, RMax: r})
		}
		// Merge the long runs (in order of start) with the Known values'
		// runs (in order of value, so of start), dropping duplicates.
		d.Runs = d.Runs[:0]
		rs := runs[4*runOff[i] : 4*(runOff[i]+totals[i])]
		kn := found[4*qOff[i] : 4*(qOff[i]+qCnt[i])]
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
	mark(&c.phases.Readback)
	return nil
}

// sampleRanks appends to dst the 1-based ranks that gksketch.AppendSample
// keeps from a sorted window of w values with spacing h: 1, ⌈h⌉, ⌈2h⌉, …,
// w, each once.
func sampleRanks(dst []int64, w int64, h float64) []int64 {
	dst = dst[:0]
	if w == 0 {
		return dst
	}
	dst = append(dst, 1)
	for i := 1.0; ; i++ {
		r := int64(math.Ceil(i * h))
		if r >= w {
			break
		}
		if r > dst[len(dst)-1] {
			dst = append(dst, r)
		}
	}
	if w > 1 {
		dst = append(dst, w)
	}
	return dst
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
			return Key64(math.Copysign(0, -1)), Key64(0), true
		}
		return Key64(kv), Key64(kv), true
	}
	f := float32(kv)
	if float64(f) != kv {
		return 0, 0, false
	}
	if f == 0 {
		return uint64(Key32(float32(math.Copysign(0, -1)))), uint64(Key32(0)), true
	}
	return uint64(Key32(f)), uint64(Key32(f)), true
}
