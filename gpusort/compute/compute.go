//go:build gpu

package compute

import (
	"context"
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/go-gl/gl/v4.5-core/gl"

	"streamd/gpusort"
	"streamd/gpusort/glctx"
	"streamd/summary"
)

// Sorter is the compute-shader back-end. It sorts the order-preserving keys
// of gpusort.Key32 or Key64 (a float64 key is two 32-bit words, compared high
// word first) on shader storage buffers with one of two algorithms:
//
//   - a bitonic sorting network (bitonic.go), its short strides in
//     shared memory: O(n log² n) work, each window padded to a power of
//     two;
//   - an LSD radix sort (radix.go) of 8-bit digits, four passes
//     for float32 and eight for float64, each a count, a scan and a stable
//     scatter: O(n) work.
//
// Measured, the default ("compute"), times both on a batch of random
// keys the first time it meets a size class (a key width and a window
// length rounded up to a power of two) and then uses the faster one for
// that class; Choices reports what it measured. Bitonic
// ("compute-bitonic") and Radix ("compute-radix") force one. The
// key transform and its inverse run on the GPU. The four windows of a
// batch are sorted by the same dispatches, and so are those of the other
// batches waiting at the time (see Coalescing).
//
// Sorter orders −0 before +0, like the CPU back-end: the two keys differ.
// Its Digest computes the quantile sample and the lossy-counting runs on
// the GPU and reads back only those (see Digest).
//
// # Batches in flight
//
// A Sorter has computeSlots (4) batch slots, each with its own GPU
// buffers and mapped memory. The GL context belongs to one locked OS
// thread, which only issues commands and polls fences; the rest of a
// submission happens on the goroutine that got its slot: copying windows
// into mapped staging memory (on all cores), and, once its fence has
// signalled, reading the digests or the sorted windows from mapped memory.
// So goroutines calling Digest at once keep the GPU busy: while the GPU
// sorts one submission, the others' windows are copied in, and their
// commands queue behind. A caller beyond the slots queues its batch for
// the next submission (see Coalescing). (On an H100 with 16 cores, four
// slots took the daemon from 739 to 909 M values/s over two.)
//
// # Coalescing
//
// Batches that wait for a slot are queued, and the goroutine that gets one
// submits every queued batch of its kind (key width, sort, Digest or Sort,
// and for the bitonic sort the size class), up to 32 MiB of keys and 1024
// windows: their windows are the segments of one buffer, and one set of
// dispatches sorts and digests them all, with one fence. The GL thread's
// cost per submission (commands, uploads, a fence, a wake-up) is then
// paid once for many windows, which is what keeps the GPU busy with small
// windows: many goroutines calling Digest at once (pipeline workers) fill
// the queue while the slots are busy. A lone caller is submitted at once,
// alone. Stats counts the submissions and the windows they carried.
//
// # Staging
//
// Sorter is a gpusort.Stager: StageF32 and StageF64 lend window buffers of
// stagedCopyMin bytes or more inside persistently mapped staging memory,
// bounded by Config.StagingBytes. Digest and Sort upload a window that
// lies there with a GPU copy alone (about 1.4 ms per 64 MiB on an H200)
// instead of a host copy first. Smaller windows are copied on the host
// into the slot's up buffer, side by side, and uploaded in one GPU copy:
// a GPU copy of its own for each small window costs the GPU more than the
// bytes do.
//
// A batch whose buffer would exceed the GPU's shader storage block limit
// (128 MiB on llvmpipe, 2 GiB on NVIDIA) is sorted on the CPU instead.
// A Sorter is safe for concurrent use.
type Sorter struct {
	t     *glctx.Thread
	cpu   *gpusort.CPU
	alg   Algorithm
	pool  *stagingPool
	slots chan *slot

	calMu sync.Mutex // one calibration at a time

	pairsMin int // the fewest pairs SortPairs sorts on the GPU
	runsMax  int // the most run slots of a submission in mapped memory

	mu      sync.Mutex
	closed  bool
	closing chan struct{} // closed by Close
	pending []*request    // batches waiting for a submission, oldest first
	stats   Stats
	choices map[sizeClass]Choice
	ranks   rankCache // the sample ranks of the window shapes met most
	profile bool
	last    gpusort.Phases

	// The fields below belong to the GL thread.
	progs      [2]*computeProgs // by key width: 32, 64 bits
	maxStorage int
	persistent bool // GL 4.4 buffer storage: upload and read back through mapped memory
	subgroups  bool // the radix sort ranks keys with subgroup operations
	warm       bool // both algorithms have run once (calibration)
}

// Algorithm selects the sort of a Sorter back-end.
type Algorithm int

const (
	// Measured times both sorts per size class and uses the faster.
	Measured Algorithm = iota
	// Bitonic is the bitonic sorting network.
	Bitonic
	// Radix is the LSD radix sort.
	Radix
)

// String returns "measured", "bitonic" or "radix".
func (a Algorithm) String() string {
	switch a {
	case Measured:
		return "measured"
	case Bitonic:
		return "bitonic"
	case Radix:
		return "radix"
	}
	return fmt.Sprintf("Algorithm(%d)", int(a))
}

// DefaultStagingBytes is the staging memory a Sorter lends at most when
// Config.StagingBytes is 0. It is mapped in segments of up to 64
// MiB as windows are staged, not up front.
const DefaultStagingBytes = 512 << 20

// Config configures NewWithConfig. The zero value is the default:
// an EGL context, the measured choice of sort, DefaultStagingBytes.
type Config struct {
	// Context is how the GL context is made (glctx.EGL when empty).
	Context glctx.Kind
	// Algorithm is the sort to use.
	Algorithm Algorithm
	// StagingBytes bounds the staging memory that StageF32 and StageF64
	// lend: 0 means DefaultStagingBytes, a negative value none.
	StagingBytes int

	// unmapped makes the back-end work as without GL 4.4's persistent
	// mapping (tests of that path).
	unmapped bool
	// noSubgroups makes the radix sort rank keys in shared memory even
	// where the GPU offers subgroup operations.
	noSubgroups bool
	// pairsMin, when positive, replaces pairsMinGPU: tests sort windows
	// of every size on the GPU.
	pairsMin int
	// runsMax, when positive, replaces runsMappedMax: tests read runs
	// from GPU memory with smaller windows.
	runsMax int
}

// computeSlots is the number of batches a Sorter has in flight at most.
const computeSlots = 4

type computeProgs struct {
	local, step, runs, scan, search, gather, fill uint32
	radixCount, radixScan, radixScatter           uint32
	loc                                           map[uint32]map[string]int32

	// radixPairs is the radix scatter that moves a 64-bit value with each
	// key (SortPairs): built for 64-bit keys only, ranking keys as
	// radixScatter does.
	radixPairs uint32
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

// setCommon makes prog current and sets the uniform that every compute
// shader has: the segment stride n. The segments' lengths are in the
// segment table (bindSegments).
func (p *computeProgs) setCommon(prog uint32, n int) {
	gl.UseProgram(prog)
	gl.Uniform1ui(p.uniform(prog, "N"), uint32(n))
}

// segWords is the number of words per segment of the segment table, and
// segBinding its shader storage binding (SEGW and Segs in glslPrelude).
const (
	segWords   = 8
	segBinding = 8
)

// segmentTable returns a segment table for windows lens long, with no
// digest parameters.
func segmentTable(lens []uint32) []uint32 {
	t := make([]uint32, len(lens)*segWords)
	for i, l := range lens {
		t[i*segWords] = l
	}
	return t
}

// bindSegments uploads the segment table t into buf and binds it where
// the shaders read it.
func bindSegments(buf *glBuffer, t []uint32) {
	buf.ensure(len(t) * 4)
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, buf.id)
	gl.BufferSubData(gl.COPY_WRITE_BUFFER, 0, len(t)*4, gl.Ptr(t))
	gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, segBinding, buf.id)
}

func (p *computeProgs) delete() {
	for _, prog := range []uint32{p.local, p.step, p.runs, p.scan, p.search, p.gather, p.fill, p.radixCount, p.radixScan, p.radixScatter} {
		gl.DeleteProgram(prog)
	}
	gl.DeleteProgram(p.radixPairs)
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

// slot is the GPU side of one batch in flight: its buffers, and the
// channel its fence reports on. A slot belongs to the goroutine that
// acquired it until it is released; its GL objects are touched only on
// the GL thread, in jobs that goroutine sends.
type slot struct {
	keys   glBuffer     // the windows' keys, n apart
	segs   glBuffer     // the segment table
	vals   glBuffer     // the values of a window of pairs (SortPairs)
	radix  radixBuffers // the radix sort's scratch
	digest digestBuffers
	up     mappedBuffer // windows copied in on the host (write)
	down   mappedBuffer // sorted windows (Sort; read)
	done   chan error   // the batch's fence has signalled
}

func (s *slot) free() {
	s.keys.free()
	s.segs.free()
	s.vals.free()
	s.radix.free()
	s.digest.free()
	s.up.free()
	s.down.free()
}

// New starts a GL context on a thread of its own and compiles the shaders. It
// returns an error wrapping gpusort.ErrNoGPU when there is no OpenGL
// 4.3 core context to be had. The context comes from EGL, without a
// display; NewWith chooses another way, NewWithConfig more.
func New() (*Sorter, error) { return NewWithConfig(Config{}) }

// NewWith is New with the context made the way kind says.
func NewWith(kind glctx.Kind) (*Sorter, error) {
	return NewWithConfig(Config{Context: kind})
}

// NewWithConfig is New configured by cfg.
func NewWithConfig(cfg Config) (*Sorter, error) {
	if cfg.Algorithm < Measured || cfg.Algorithm > Radix {
		return nil, fmt.Errorf("gpusort: unknown compute algorithm %d", int(cfg.Algorithm))
	}
	c := &Sorter{
		cpu:     gpusort.NewCPU(0),
		alg:     cfg.Algorithm,
		slots:   make(chan *slot, computeSlots),
		closing: make(chan struct{}),
		choices: make(map[sizeClass]Choice),
	}
	c.pairsMin = pairsMinGPU
	if cfg.pairsMin > 0 {
		c.pairsMin = cfg.pairsMin
	}
	c.runsMax = runsMappedMax
	if cfg.runsMax > 0 {
		c.runsMax = cfg.runsMax
	}
	for range computeSlots {
		c.slots <- &slot{done: make(chan error, 1)}
	}
	t, err := glctx.NewThread(cfg.Context, func() error {
		var n int32
		gl.GetIntegerv(gl.MAX_SHADER_STORAGE_BLOCK_SIZE, &n)
		c.maxStorage = int(uint32(n))
		gl.GetIntegerv(gl.MAX_SHADER_STORAGE_BUFFER_BINDINGS, &n)
		if n <= segBinding {
			return fmt.Errorf("compute sorter: %d shader storage bindings, need %d: %w", n, segBinding+1, gpusort.ErrNoGPU)
		}
		var major, minor int32
		gl.GetIntegerv(gl.MAJOR_VERSION, &major)
		gl.GetIntegerv(gl.MINOR_VERSION, &minor)
		c.persistent = (major > 4 || major == 4 && minor >= 4) && !cfg.unmapped
		subgroups := radixSubgroups() && !cfg.noSubgroups
		c.subgroups = subgroups
		for w := range 2 {
			p, ranked, err := compileCompute(w == 1, subgroups)
			if err != nil {
				for _, q := range c.progs[:w] {
					q.delete()
				}
				return fmt.Errorf("compute sorter: %w", err)
			}
			c.progs[w] = p
			c.subgroups = c.subgroups && ranked
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.t = t
	limit := cfg.StagingBytes
	if limit == 0 {
		limit = DefaultStagingBytes
	}
	if !c.persistent {
		limit = 0
	}
	c.pool = newStagingPool(t, max(limit, 0))
	return c, nil
}

// compileCompute builds the programs of one key width. With subgroups it
// builds the radix scatter that ranks keys with subgroup operations, and
// reports whether it did: if the driver claims the extensions but will not
// build that shader, the scatter ranks in shared memory instead.
func compileCompute(key64, subgroups bool) (_ *computeProgs, ranked bool, _ error) {
	p := &computeProgs{loc: make(map[uint32]map[string]int32)}
	for _, s := range []struct {
		dst  *uint32
		name string
		src  string
	}{
		{&p.local, "local", computeSource(srcLocal, key64)},
		{&p.step, "step", computeSource(srcStep, key64)},
		{&p.runs, "runs", computeSource(srcRunFlags, key64)},
		{&p.scan, "scan", computeSource(srcScan, key64)},
		{&p.search, "search", computeSource(srcSearch, key64)},
		{&p.gather, "gather", computeSource(srcGather, key64)},
		{&p.fill, "fill", computeSource(srcFill, key64)},
		{&p.radixCount, "radix count", radixSource("", srcRadixCount, key64, false)},
		{&p.radixScan, "radix scan", radixSource("", srcRadixScan, key64, false)},
	} {
		prog, err := glctx.CompileProgram(s.name, glctx.Shader{Kind: gl.COMPUTE_SHADER, Src: s.src})
		if err != nil {
			p.delete()
			return nil, false, err
		}
		*s.dst = prog
	}
	prog, ranked, err := compileScatter(key64, subgroups, false)
	if err != nil {
		p.delete()
		return nil, false, err
	}
	p.radixScatter = prog
	if key64 {
		if p.radixPairs, _, err = compileScatter(key64, ranked, true); err != nil {
			p.delete()
			return nil, false, err
		}
	}
	return p, ranked, nil
}

// compileScatter builds a radix scatter program, one that moves values
// with the keys if pairs. With subgroups it tries the one that ranks keys
// with subgroup operations first, and reports whether it built that one.
func compileScatter(key64, subgroups, pairs bool) (_ uint32, ranked bool, _ error) {
	name := "radix scatter"
	if pairs {
		name = "radix pair scatter"
	}
	if subgroups {
		src := radixSource(radixSubgroupExtensions, srcRadixScatterSubgroup, key64, pairs)
		if prog, err := glctx.CompileProgram(name, glctx.Shader{Kind: gl.COMPUTE_SHADER, Src: src}); err == nil {
			return prog, true, nil
		}
	}
	prog, err := glctx.CompileProgram(name, glctx.Shader{Kind: gl.COMPUTE_SHADER, Src: radixSource("", srcRadixScatter, key64, pairs)})
	return prog, false, err
}

// Name returns "compute", "compute-bitonic" or "compute-radix", after the
// configured algorithm.
func (c *Sorter) Name() string {
	if c.alg == Measured {
		return "compute"
	}
	return "compute-" + c.alg.String()
}

// Info describes the GL renderer and version in use, and, unless the
// back-end sorts with the bitonic network only, how the radix sort ranks
// keys: with subgroup operations on NVIDIA GPUs that offer them, in
// shared memory elsewhere.
func (c *Sorter) Info() string {
	if c.alg == Bitonic {
		return c.t.Info()
	}
	if c.subgroups {
		return c.t.Info() + ", radix ranking by subgroups"
	}
	return c.t.Info() + ", radix ranking in shared memory"
}

// Close waits for the batches in flight, then releases the GL context and
// the staging memory: buffers that StageF32 or StageF64 lent must not be
// used afterwards. Sort and Digest fail with gpusort.ErrClosed after Close.
func (c *Sorter) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.closing)
	c.mu.Unlock()
	var slots []*slot
	for range computeSlots {
		slots = append(slots, <-c.slots)
	}
	c.pool.close()
	c.t.Close(func() {
		for _, p := range c.progs {
			if p != nil {
				p.delete()
			}
		}
		for _, s := range slots {
			s.free()
		}
		c.pool.release()
	})
	return nil
}

// SetProfile turns phase timing on or off: when on, each batch waits for
// the GPU (glFinish) after each phase so that LastPhases is exact, which
// costs throughput and serializes the batches.
func (c *Sorter) SetProfile(on bool) {
	c.mu.Lock()
	c.profile = on
	c.mu.Unlock()
}

// LastPhases reports the phase times of the last batch done (zero unless
// profiling was on for it).
func (c *Sorter) LastPhases() gpusort.Phases {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// Sort sorts each window of b in place on the GPU.
func (c *Sorter) Sort(ctx context.Context, b *gpusort.Quad) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("compute sort: %w", err)
	}
	for w := range 2 {
		v := view(b, w == 1)
		if v.empty() {
			continue
		}
		if !c.fits(v) {
			if err := c.cpu.SortWindows(ctx, b, keyWidth(b, w == 1)); err != nil {
				return err
			}
			continue
		}
		if err := c.batch(ctx, v, nil, nil); err != nil {
			return fmt.Errorf("compute sort: %w", err)
		}
	}
	return nil
}

// keyWidth selects the windows of b of 64-bit keys if key64, else those of
// 32-bit keys: the part of a batch that does not fit the GPU goes to the
// CPU alone.
func keyWidth(b *gpusort.Quad, key64 bool) func(int) bool {
	return func(i int) bool { return (len(b.F64[i]) > 0) == key64 }
}

// Digest sorts each window of b on the GPU, computes there each window's
// quantile sample and lossy-counting runs as specs asks, and reads back
// only those into out: b is left as it was (the sort happens in GPU
// memory), so others may read its windows meanwhile. The result is
// identical to summary.DigestSorted on the sorted window. Samples take one
// gather; runs longer than the threshold are found by marking run starts
// (key i ≠ key i−1 and key i = key i+T), a prefix sum over the marks and a
// binary search for each run's end; the runs of the Known values by one
// binary search each.
func (c *Sorter) Digest(ctx context.Context, b *gpusort.Quad, specs *[gpusort.Channels]summary.WindowSpec, out *[gpusort.Channels]summary.Digest) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("compute digest: %w", err)
	}
	if err := gpusort.CheckSpecs(b, specs); err != nil {
		return err
	}
	for w := range 2 {
		v := view(b, w == 1)
		if v.empty() {
			continue
		}
		if !c.fits(v) {
			if err := c.cpu.DigestWindows(ctx, b, specs, out, keyWidth(b, w == 1)); err != nil {
				return err
			}
			continue
		}
		if err := c.batch(ctx, v, specs, out); err != nil {
			return fmt.Errorf("compute digest: %w", err)
		}
	}
	gpusort.EmptyDigests(b, out)
	return nil
}

// keyView is windows of one key width, as raw bytes: the four of a batch,
// or the segments of a submission.
type keyView struct {
	key64 bool
	lens  []int
	data  []unsafe.Pointer
}

func view(b *gpusort.Quad, key64 bool) keyView {
	v := keyView{key64: key64, lens: make([]int, gpusort.Channels), data: make([]unsafe.Pointer, gpusort.Channels)}
	for i := range gpusort.Channels {
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

func (v *keyView) maxLen() int { return slices.Max(v.lens) }

func (v *keyView) keySize() int {
	if v.key64 {
		return 8
	}
	return 4
}

// bytes returns window i as bytes.
func (v *keyView) bytes(i int) []byte {
	return unsafe.Slice((*byte)(v.data[i]), v.lens[i]*v.keySize())
}

// padded returns the keys per segment of the bitonic sort: a power of two
// ≥ localKeys.
func (v *keyView) padded() int {
	n := v.maxLen()
	if n <= localKeys {
		return localKeys
	}
	return 1 << bits.Len(uint(n-1))
}

// stride returns the keys per segment for algorithm alg: the bitonic
// network's power of two, or for the radix sort the longest window rounded
// up to a multiple of localKeys (the digest shaders' block).
func (v *keyView) stride(alg Algorithm) int {
	if alg == Bitonic {
		return v.padded()
	}
	return (v.maxLen() + localKeys - 1) / localKeys * localKeys
}

// fits reports whether v's windows fit one shader storage block.
func (c *Sorter) fits(v keyView) bool {
	n := v.padded()
	return n <= 1<<31 && len(v.lens)*n*v.keySize() <= c.maxStorage
}

// dispatch runs groups work groups per segment for segs segments, folding
// them into a 2-D grid when there are more than 32768 (llvmpipe allows
// 65535 in x). The shaders recover the index with groupIndex and skip the
// grid's excess.
func dispatch(groups, segs int) {
	if groups <= 0 {
		return
	}
	gx := min(groups, 32768)
	gy := (groups + gx - 1) / gx
	gl.DispatchCompute(uint32(gx), uint32(gy), uint32(segs))
	gl.MemoryBarrier(gl.SHADER_STORAGE_BARRIER_BIT)
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// acquire takes a free slot, waiting for one while ctx lasts.
func (c *Sorter) acquire(ctx context.Context) (*slot, error) {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return nil, gpusort.ErrClosed
	}
	select {
	case s := <-c.slots:
		return s, nil
	case <-c.closing:
		return nil, gpusort.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Submissions are coalesced: a Sort or Digest call queues its batch as a
// request and waits for a slot; whoever gets one takes every queued
// request of the same kind (its own first, if no one took it yet) up to
// maxGroupBytes and maxGroupSegments, lays their windows out as the
// segments of one buffer, and sorts and digests them all with one set of
// dispatches and one fence. So while the slots are busy, batches pile up
// and the next submission carries them all: the GL thread's cost per
// submission (commands, uploads, a fence) is paid once for many windows.

// maxGroupBytes bounds the keys of one coalesced submission, padding
// included; a single batch larger than that is submitted alone.
const maxGroupBytes = 32 << 20

// maxGroupSegments bounds the windows of one coalesced submission.
const maxGroupSegments = 1024

// groupKind is what the requests of one submission share: the key width,
// the sort, whether it digests, and for the bitonic sort the size class
// (the longest window rounded up to a power of two), since the network
// sorts every segment's padding too. The radix sort and the digest shaders
// skip past a window's end, so windows of any lengths go together there.
type groupKind struct {
	key64  bool
	alg    Algorithm
	digest bool
	n      int // 0 for the radix sort
}

// request is one Sort or Digest call's windows of one key width, waiting
// to be submitted, alone or with others of its kind.
type request struct {
	v     keyView
	kind  groupKind
	specs *[gpusort.Channels]summary.WindowSpec // nil for Sort
	out   *[gpusort.Channels]summary.Digest
	ranks [gpusort.Channels][]int64 // the windows' sample ranks (Digest)
	taken bool                      // a submission has it (under Sorter.mu)
	done  chan error                // the submission's result

	// Set by a submission of digests that succeeded, before done: the
	// plan that holds the results and the request's first window in it.
	plan *digestPlan
	seg  int
}

// finish returns the error that came on r.done; for digests without one,
// it first assembles r's digests from the submission's plan. The owners of
// a submission's requests assemble theirs at once, each on its own
// goroutine.
func (r *request) finish(err error) error {
	if err != nil || r.plan == nil {
		return err
	}
	var outs [gpusort.Channels]*summary.Digest
	for i := range outs {
		outs[i] = &r.out[i]
	}
	r.plan.assemble(r.v.key64, r.seg, outs[:len(r.v.lens)])
	return nil
}

// Stats counts what a Sorter has submitted to the GPU.
type Stats struct {
	// Submissions is the number of GL submissions of batches: each one
	// set of sort and digest dispatches, and one fence.
	Submissions int64
	// Batches and Windows are the batches (Sort or Digest calls, per key
	// width) and the windows that are not empty that those submissions
	// sorted.
	Batches, Windows int64
}

// Stats reports what c has submitted so far.
func (c *Sorter) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// batch sorts one key width of a batch on the GPU, in a submission of its
// own or coalesced with other batches queued meanwhile. With specs nil it
// sorts the windows in place; otherwise it fills out's digests. It returns
// only once no submission reads v's windows any more.
func (c *Sorter) batch(ctx context.Context, v keyView, specs *[gpusort.Channels]summary.WindowSpec, out *[gpusort.Channels]summary.Digest) error {
	alg, err := c.algorithm(ctx, v)
	if err != nil {
		return err
	}
	kind := groupKind{key64: v.key64, alg: alg, digest: specs != nil}
	if alg == Bitonic {
		kind.n = v.padded()
	}
	r := &request{v: v, kind: kind, specs: specs, out: out, done: make(chan error, 1)}
	if specs != nil {
		for i, l := range v.lens {
			if l > 0 {
				r.ranks[i] = c.ranks.get(int64(l), specs[i].Spacing)
			}
		}
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return gpusort.ErrClosed
	}
	c.pending = append(c.pending, r)
	c.mu.Unlock()
	for {
		select {
		case err := <-r.done:
			return r.finish(err)
		case s := <-c.slots:
			g := c.takeGroup(r)
			if g != nil {
				c.submitGroup(s, g)
			}
			c.slots <- s
			if g == nil || slices.Contains(g, r) {
				// r is done, or another submission has it and none
				// is queued.
				return r.finish(<-r.done)
			}
		case <-c.closing:
			if c.withdraw(r) {
				return gpusort.ErrClosed
			}
			return r.finish(<-r.done)
		case <-ctx.Done():
			if c.withdraw(r) {
				return ctx.Err()
			}
			return r.finish(<-r.done)
		}
	}
}

// withdraw takes r out of the queue, unless a submission has it already.
func (c *Sorter) withdraw(r *request) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.taken {
		return false
	}
	c.pending = slices.DeleteFunc(c.pending, func(q *request) bool { return q == r })
	return true
}

// takeGroup takes the requests of one submission out of the queue: r and
// those of its kind, or if a submission has r already, the oldest queued
// request and those of its kind; nil if none is queued.
func (c *Sorter) takeGroup(r *request) []*request {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pending) == 0 {
		return nil
	}
	first := r
	if r.taken {
		first = c.pending[0]
	}
	k := first.kind
	first.taken = true
	g := []*request{first}
	segs, n := len(first.v.lens), first.v.padded()
	c.pending = slices.DeleteFunc(c.pending, func(q *request) bool {
		if q == first {
			return true
		}
		more, qn := segs+len(q.v.lens), max(n, q.v.padded())
		if q.kind != k || more > maxGroupSegments || more*qn*q.v.keySize() > min(maxGroupBytes, c.maxStorage) {
			return false
		}
		q.taken = true
		segs, n = more, qn
		g = append(g, q)
		return true
	})
	return g
}

// batchJob is one submission on its way through a slot: the windows of
// one or more batches of one key width, as segments.
type batchJob struct {
	reqs    []*request
	v       keyView
	alg     Algorithm
	n       int            // keys per segment
	lens    []uint32       // the windows' lengths
	src     []uploadSource // where each window is uploaded from
	plan    *digestPlan    // nil for Sort
	profile bool           // wait for the GPU after each phase
	phases  gpusort.Phases // filled when profiling
	start   time.Time      // of the current phase
}

// uploadSource is where a window's bytes are copied to the GPU from: a
// mapped buffer (staging memory, or the slot's up buffer) at an offset, or
// with buf 0 the window's own memory through glBufferSubData.
type uploadSource struct {
	buf uint32
	off int
}

// mark ends a phase: with profiling on, it waits for the GPU and records
// the phase's time in d.
func (j *batchJob) mark(d *time.Duration) {
	if j.profile {
		gl.Finish()
		now := time.Now()
		*d += now.Sub(j.start)
		j.start = now
	}
}

// submitGroup runs the requests g through slot s as one submission and
// sends each request its result.
func (c *Sorter) submitGroup(s *slot, g []*request) {
	err := c.runGroup(s, g)
	for _, r := range g {
		r.done <- err
	}
}

// runGroup runs the requests g through slot s as one submission: on this
// goroutine the host copy, on the GL thread the upload, the sort and the
// digests (or the sorted windows) into mapped memory and a fence, then
// here again the results out of mapped memory once the fence has
// signalled.
func (c *Sorter) runGroup(s *slot, g []*request) error {
	k := g[0].kind
	v := keyView{key64: k.key64}
	var specs []summary.WindowSpec
	var ranks [][]int64
	for _, r := range g {
		v.lens = append(v.lens, r.v.lens...)
		v.data = append(v.data, r.v.data...)
		if k.digest {
			specs = append(specs, r.specs[:]...)
			ranks = append(ranks, r.ranks[:]...)
		}
	}
	c.mu.Lock()
	j := &batchJob{reqs: g, v: v, alg: k.alg, n: v.stride(k.alg), profile: c.profile, start: time.Now()}
	c.stats.Submissions++
	c.stats.Batches += int64(len(g))
	for _, l := range v.lens {
		c.stats.Windows += int64(b2u(l > 0))
	}
	c.mu.Unlock()
	j.lens = make([]uint32, len(v.lens))
	for i, l := range v.lens {
		j.lens[i] = uint32(l)
	}
	j.src = make([]uploadSource, len(v.lens))
	if k.digest {
		j.plan = newDigestPlan(&v, j.n, specs, ranks)
	}

	if err := c.stage(s, j); err != nil {
		return err
	}
	if err := c.t.Do(func() error { return c.submit(s, j) }); err != nil {
		return err
	}
	if err := <-s.done; err != nil {
		return err
	}
	start := time.Now()
	if j.plan != nil {
		if err := c.readDigests(s, j); err != nil {
			return err
		}
		seg := 0
		for _, r := range g {
			r.plan, r.seg = j.plan, seg
			seg += len(r.v.lens)
		}
	} else if c.persistent {
		var jobs []copyJob
		ks := v.keySize()
		for i := range v.lens {
			if v.lens[i] > 0 {
				jobs = append(jobs, copyJob{v.bytes(i), s.down.bytes[i*j.n*ks:]})
			}
		}
		parallelCopy(jobs)
	}
	if j.profile {
		j.phases.Readback += time.Since(start)
		c.mu.Lock()
		c.last = j.phases
		c.mu.Unlock()
	}
	return nil
}

// stagedCopyMin is the smallest window that StageF32 and StageF64 lend
// staging memory for, and that stage uploads from there with a GPU copy
// of its own. A smaller one is copied on the host into the slot's up
// buffer with the others, which the GPU then uploads in one copy: a GPU
// copy costs about a microsecond besides its bytes, more than a window of
// 4096 float32 keys takes to cross (measured on an H200 with 100,000 thin
// streams: the upload took 2.0 µs a window from staging memory, 1.2 µs
// through the up buffer). A window shorter than the staged buffer it lies
// in (a partial window flushed) is measured by its own length.
const stagedCopyMin = 64 << 10

// stage decides where each window is uploaded from, and copies the windows
// that are not in staging memory (or are smaller than stagedCopyMin) into
// s's mapped up buffer on all cores.
func (c *Sorter) stage(s *slot, j *batchJob) error {
	if !c.persistent {
		return nil // glBufferSubData from the windows themselves
	}
	start := time.Now()
	ks := j.v.keySize()
	var jobs []copyJob
	for i := range j.lens {
		if j.lens[i] == 0 {
			continue
		}
		b := j.v.bytes(i)
		if len(b) >= stagedCopyMin {
			if buf, off, ok := c.pool.locate(b); ok {
				j.src[i] = uploadSource{buf, off}
				continue
			}
		}
		if need := len(j.lens) * j.n * ks; len(s.up.bytes) < need {
			if err := c.t.Do(func() error { s.up.ensure(need, false); return glctx.CheckError("map upload buffer") }); err != nil {
				return err
			}
		}
		j.src[i] = uploadSource{s.up.id, i * j.n * ks}
		jobs = append(jobs, copyJob{s.up.bytes[i*j.n*ks:], b})
	}
	parallelCopy(jobs)
	j.phases.Upload = time.Since(start)
	return nil
}

// submit issues a submission's commands on the GL thread: the segment
// table, the upload, the sort, then the digests or the sorted windows into
// mapped memory, and a fence that reports on s.done. Without persistent
// mapping it also reads the results back, synchronously.
func (c *Sorter) submit(s *slot, j *batchJob) error {
	p := c.progs[b2u(j.v.key64)]
	ks := j.v.keySize()
	segs := len(j.lens)
	j.start = time.Now()
	if j.plan != nil {
		bindSegments(&s.segs, j.plan.table())
	} else {
		bindSegments(&s.segs, segmentTable(j.lens))
	}
	s.keys.ensure(segs * j.n * ks)
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, s.keys.id)
	for i := 0; i < segs; {
		if j.lens[i] == 0 {
			i++
			continue
		}
		src := j.src[i]
		if src.buf == 0 {
			gl.BufferSubData(gl.COPY_WRITE_BUFFER, i*j.n*ks, int(j.lens[i])*ks, j.v.data[i])
			i++
			continue
		}
		// One copy for the windows that follow in the same buffer as far
		// apart as in keys (the slot's up buffer): the padding between
		// them is never read.
		at, end := i*j.n*ks, i*j.n*ks+int(j.lens[i])*ks
		for i++; i < segs; i++ {
			if j.lens[i] == 0 {
				continue
			}
			if next := j.src[i]; next.buf != src.buf || next.off-src.off != i*j.n*ks-at {
				break
			}
			end = i*j.n*ks + int(j.lens[i])*ks
		}
		gl.BindBuffer(gl.COPY_READ_BUFFER, src.buf)
		gl.CopyBufferSubData(gl.COPY_READ_BUFFER, gl.COPY_WRITE_BUFFER, src.off, at, end-at)
	}
	gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 0, s.keys.id)
	j.mark(&j.phases.Upload)

	finish := j.plan == nil
	if j.alg == Radix {
		sortRadix(p, &s.keys, nil, &s.radix, j.n, j.lens, j.v.key64, finish, nil)
	} else {
		sortBitonic(p, j.n, segs, finish)
	}
	if err := glctx.CheckError("sort"); err != nil {
		return err
	}
	j.mark(&j.phases.Sort)

	if j.plan != nil {
		dispatchDigest(p, &s.digest, j.n, j.plan, c.persistent, c.runsMax)
		if err := glctx.CheckError("digest"); err != nil {
			return err
		}
		j.mark(&j.phases.Digest)
		if !c.persistent {
			err := s.digest.read(j.plan, false)
			j.mark(&j.phases.Readback)
			s.done <- err
			return nil
		}
	} else {
		gl.BindBuffer(gl.COPY_READ_BUFFER, s.keys.id)
		if !c.persistent {
			for i := range segs {
				if j.lens[i] > 0 {
					gl.GetBufferSubData(gl.COPY_READ_BUFFER, i*j.n*ks, int(j.lens[i])*ks, j.v.data[i])
				}
			}
			j.mark(&j.phases.Readback)
			s.done <- glctx.CheckError("read back")
			return nil
		}
		s.down.ensure(segs*j.n*ks, true)
		gl.BindBuffer(gl.COPY_WRITE_BUFFER, s.down.id)
		gl.CopyBufferSubData(gl.COPY_READ_BUFFER, gl.COPY_WRITE_BUFFER, 0, 0, radixExtent(j.n, j.lens)*ks)
		j.mark(&j.phases.Readback)
	}
	gl.MemoryBarrier(gl.CLIENT_MAPPED_BUFFER_BARRIER_BIT)
	if err := glctx.CheckError("read back"); err != nil {
		return err
	}
	c.t.Await(func(err error) { s.done <- err })
	return nil
}

// readDigests reads a digest submission's results into its plan, from
// mapped memory or, for runs that did not fit there, in a GL job.
func (c *Sorter) readDigests(s *slot, j *batchJob) error {
	read := func() error { return s.digest.read(j.plan, true) }
	var err error
	switch {
	case !c.persistent:
		// submit read them already.
	case j.plan.runsMapped:
		err = read()
	default:
		err = c.t.Do(read)
	}
	return err
}

var (
	_ gpusort.Digester = (*Sorter)(nil)
	_ gpusort.Stager   = (*Sorter)(nil)
	_ gpusort.Profiler = (*Sorter)(nil)
)
