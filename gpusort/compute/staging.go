//go:build gpu

package compute

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/go-gl/gl/v4.5-core/gl"

	"streamd/gpusort/glctx"
)

// mappedBuffer is a buffer object persistently and coherently mapped into
// host memory (GL 4.4): the host fills or reads it directly, and the GPU
// moves its contents with glCopyBufferSubData at DMA speed or its shaders
// write to it. On an H200 a 64 MiB window costs about 1.4 ms this way
// against 10–13 ms through glBufferSubData, whose single-threaded host copy
// is the bottleneck.
type mappedBuffer struct {
	id    uint32
	bytes []byte
}

// ensure makes b at least n bytes long, mapped for reading (read) or for
// writing, dropping its contents if it grows.
func (b *mappedBuffer) ensure(n int, read bool) {
	if len(b.bytes) >= n && b.id != 0 {
		return
	}
	access := uint32(gl.MAP_WRITE_BIT)
	if read {
		access = gl.MAP_READ_BIT
	}
	b.mapAccess(n, access)
}

// mapAccess replaces b by a buffer of n bytes mapped with access (read,
// write or both) besides persistent and coherent.
func (b *mappedBuffer) mapAccess(n int, access uint32) {
	b.free()
	access |= gl.MAP_PERSISTENT_BIT | gl.MAP_COHERENT_BIT
	gl.GenBuffers(1, &b.id)
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, b.id)
	gl.BufferStorage(gl.COPY_WRITE_BUFFER, n, nil, access)
	p := gl.MapBufferRange(gl.COPY_WRITE_BUFFER, 0, n, access)
	if p == nil {
		gl.DeleteBuffers(1, &b.id)
		b.id = 0
		return
	}
	b.bytes = unsafe.Slice((*byte)(p), n)
}

func (b *mappedBuffer) free() {
	if b.id == 0 {
		return
	}
	if b.bytes != nil {
		gl.BindBuffer(gl.COPY_WRITE_BUFFER, b.id)
		gl.UnmapBuffer(gl.COPY_WRITE_BUFFER)
	}
	gl.DeleteBuffers(1, &b.id)
	b.id, b.bytes = 0, nil
}

// copyJob copies src into dst (as many bytes as the shorter holds).
type copyJob struct{ dst, src []byte }

// parallelCopy runs the copies on all cores, each core taking a share of
// at least copyShare bytes (one core copies only 6–7 GB/s): a share
// may be part of a large copy or several small ones, so that a
// submission of many small windows starts a goroutine per core, not per
// window. The last share is copied on the calling goroutine.
func parallelCopy(jobs []copyJob) {
	total := 0
	for i, j := range jobs {
		n := min(len(j.dst), len(j.src))
		jobs[i] = copyJob{j.dst[:n], j.src[:n]}
		total += n
	}
	workers := runtime.GOMAXPROCS(0)
	size := max(copyShare, (total+workers-1)/workers)
	var (
		wg    sync.WaitGroup
		share []copyJob
		bytes int
	)
	for _, j := range jobs {
		for off := 0; off < len(j.src); {
			end := min(off+size-bytes, len(j.src))
			share = append(share, copyJob{j.dst[off:end], j.src[off:end]})
			bytes += end - off
			off = end
			if bytes == size {
				full := share
				wg.Go(func() { copyAll(full) })
				share, bytes = nil, 0
			}
		}
	}
	copyAll(share)
	wg.Wait()
}

// copyShare is the fewest bytes parallelCopy gives a goroutine.
const copyShare = 256 << 10

// copyAll runs the copies jobs in turn.
func copyAll(jobs []copyJob) {
	for _, j := range jobs {
		copy(j.dst, j.src)
	}
}

// Staging memory: windows that ingest fills in place in persistently mapped
// memory, so that a batch's upload is one GPU copy per window.

const (
	// stagingSegmentBytes is the size of one mapped buffer of a staging
	// pool (or a window's size, when larger).
	stagingSegmentBytes = 64 << 20
	// stagingAlign aligns every lent buffer.
	stagingAlign = 256
)

// stagingPool lends window buffers carved out of persistently mapped
// buffer objects (segments), at most limit bytes of them in all. A
// segment is mapped for reading and writing, so that the host reads
// staged windows at the speed of ordinary memory (queries and a CPU
// fallback do). Each segment keeps its free ranges sorted by offset: a
// buffer is cut from the first range that holds it, and a returned one
// merges with its free neighbours, so that windows of any mix of sizes
// reuse the memory. Segments are unmapped only with the pool.
type stagingPool struct {
	t     *glctx.Thread
	limit int

	mu     sync.Mutex
	closed bool
	mapped int // bytes in segments, or being mapped
	segs   []*stagingSegment
	lent   map[uintptr]stagingSpan // by address

	// mappedSegs is segs as of its last change, for locate to read
	// without the lock: segments are only ever added, and a segment's
	// buffer does not change once it is in segs.
	mappedSegs atomic.Pointer[[]*stagingSegment]
}

type stagingSegment struct {
	buf  mappedBuffer
	free []stagingRange // sorted by offset, disjoint and not touching
}

// stagingRange is a range of bytes of a segment.
type stagingRange struct{ off, size int }

// stagingSpan is a lent range and its segment.
type stagingSpan struct {
	seg *stagingSegment
	stagingRange
}

func newStagingPool(t *glctx.Thread, limit int) *stagingPool {
	return &stagingPool{t: t, limit: limit, lent: make(map[uintptr]stagingSpan)}
}

// stage lends n bytes of staging memory, or returns nil when the pool has
// no room left (or n is 0, or the pool is closed).
func (p *stagingPool) stage(n int) []byte {
	if n <= 0 || p.limit == 0 {
		return nil
	}
	size := (n + stagingAlign - 1) / stagingAlign * stagingAlign
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	if s, ok := p.take(size); ok {
		defer p.mu.Unlock()
		return p.lend(s, n)
	}
	segBytes := min(max(stagingSegmentBytes, size), p.limit-p.mapped)
	if segBytes < size {
		p.mu.Unlock()
		return nil
	}
	p.mapped += segBytes
	p.mu.Unlock()

	// Map a new segment on the GL thread, without holding the lock.
	seg := &stagingSegment{free: []stagingRange{{0, segBytes}}}
	err := p.t.Do(func() error {
		seg.buf.mapAccess(segBytes, gl.MAP_READ_BIT|gl.MAP_WRITE_BIT)
		return glctx.CheckError("map staging memory")
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil || seg.buf.bytes == nil {
		p.mapped -= segBytes
		return nil
	}
	p.segs = append(p.segs, seg) // unmapped with the pool, even if closed meanwhile
	segs := p.segs
	p.mappedSegs.Store(&segs)
	if p.closed {
		return nil
	}
	s, ok := p.take(size)
	if !ok {
		return nil
	}
	return p.lend(s, n)
}

// take cuts size bytes from the first free range that holds them. p.mu
// must be held.
func (p *stagingPool) take(size int) (stagingSpan, bool) {
	for _, seg := range p.segs {
		for i, r := range seg.free {
			if r.size < size {
				continue
			}
			if r.size == size {
				seg.free = slices.Delete(seg.free, i, i+1)
			} else {
				seg.free[i] = stagingRange{r.off + size, r.size - size}
			}
			return stagingSpan{seg, stagingRange{r.off, size}}, true
		}
	}
	return stagingSpan{}, false
}

// lend records s as lent and returns its first n bytes. p.mu must be held.
func (p *stagingPool) lend(s stagingSpan, n int) []byte {
	b := s.seg.buf.bytes[s.off : s.off+n : s.off+n]
	p.lent[uintptr(unsafe.Pointer(&b[0]))] = s
	return b
}

// unstage takes back the buffer that starts at ptr, if the pool lent it,
// merging its range with the free ranges next to it.
func (p *stagingPool) unstage(ptr unsafe.Pointer) {
	if ptr == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.lent[uintptr(ptr)]
	if !ok {
		return
	}
	delete(p.lent, uintptr(ptr))
	free := s.seg.free
	i, _ := slices.BinarySearchFunc(free, s.off, func(r stagingRange, off int) int { return r.off - off })
	r := s.stagingRange
	if i < len(free) && r.off+r.size == free[i].off {
		r.size += free[i].size
		free = slices.Delete(free, i, i+1)
	}
	if i > 0 && free[i-1].off+free[i-1].size == r.off {
		free[i-1].size += r.size
	} else {
		free = slices.Insert(free, i, r)
	}
	s.seg.free = free
}

// locate reports the buffer object and offset of b if b lies in the pool's
// staging memory.
func (p *stagingPool) locate(b []byte) (buf uint32, off int, ok bool) {
	if len(b) == 0 {
		return 0, 0, false
	}
	segs := p.mappedSegs.Load()
	if segs == nil {
		return 0, 0, false
	}
	addr := uintptr(unsafe.Pointer(&b[0]))
	for _, seg := range *segs {
		base := uintptr(unsafe.Pointer(&seg.buf.bytes[0]))
		if addr >= base && addr+uintptr(len(b)) <= base+uintptr(len(seg.buf.bytes)) {
			return seg.buf.id, int(addr - base), true
		}
	}
	return 0, 0, false
}

// lentBytes reports the bytes lent and not yet returned, and the bytes
// mapped.
func (p *stagingPool) lentBytes() (lent, mapped int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.lent {
		lent += s.size
	}
	return lent, p.mapped
}

// close makes stage return nil from now on.
func (p *stagingPool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
}

// release unmaps the segments; it runs on the GL thread, after close.
func (p *stagingPool) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mappedSegs.Store(nil)
	for _, seg := range p.segs {
		seg.buf.free()
	}
	p.segs = nil
	p.lent = make(map[uintptr]stagingSpan)
}

// StageF32 lends a window buffer of n float32 values inside the staging
// memory that the GPU uploads from: ingest fills it in place, and Digest
// or Sort then upload it with one GPU copy instead of a host copy and a
// GPU copy. It returns nil for a window under stagedCopyMin bytes, which
// Digest and Sort copy on the host anyway (staging it would only cost
// the pool's lock), when the staging memory is used up (the bound is
// Config.StagingBytes), after Close, or without persistent mapping
// (GL < 4.4): the caller then uses ordinary memory, which works the same,
// one host copy slower.
//
// The buffer is the caller's until it hands it back with UnstageF32: it
// may fill it, put it in batches, and reuse it for another window once
// the Digest or Sort of its batch has returned. The buffer must not be
// used after UnstageF32, nor after Close (which unmaps the memory).
func (c *Sorter) StageF32(n int) []float32 {
	b := c.lendStaging(n * 4)
	if b == nil {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n)
}

// StageF64 is StageF32 for float64 windows.
func (c *Sorter) StageF64(n int) []float64 {
	b := c.lendStaging(n * 8)
	if b == nil {
		return nil
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(&b[0])), n)
}

// lendStaging lends n bytes of staging memory for a window, or returns nil (see
// StageF32).
func (c *Sorter) lendStaging(n int) []byte {
	if n < stagedCopyMin {
		return nil
	}
	return c.pool.stage(n)
}

// UnstageF32 hands back a buffer that StageF32 lent, given as the slice it
// returned or any slice of it that starts at its first element. A slice
// that StageF32 did not lend is ignored, so windows in ordinary memory may
// be passed too.
func (c *Sorter) UnstageF32(w []float32) { c.pool.unstage(unsafe.Pointer(unsafe.SliceData(w))) }

// UnstageF64 is UnstageF32 for float64 windows.
func (c *Sorter) UnstageF64(w []float64) { c.pool.unstage(unsafe.Pointer(unsafe.SliceData(w))) }

// Staged reports the staging memory lent and not yet handed back, and the
// staging memory mapped, in bytes.
func (c *Sorter) Staged() (lent, mapped int) { return c.pool.lentBytes() }
