//go:build gpu

package compute

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/go-gl/gl/v4.5-core/gl"

	"streamd/gpusort"
	"streamd/gpusort/glctx"
)

// pairsMinGPU is the fewest pairs that SortPairs sorts on the GPU; smaller
// windows go to the CPU. A sort on the GPU has a fixed cost, whatever its
// size: 24 dispatches (8 passes of 3 kernels), a fence and the hand-offs to
// and from the GL thread, estimated at some hundreds of microseconds (not
// measured yet: BenchmarkSortPairs on a GPU measures it); the CPU sorts
// 2^15 pairs in about half a millisecond (BenchmarkSortPairs in gpusort:
// 14 ns a pair at 2^16 on one core of an AMD EPYC).
const pairsMinGPU = 1 << 15

// SortPairs sorts x in ascending order and moves y with it (see
// gpusort.PairSorter) with the radix sort on the GPU: eight passes of 8-bit
// digits over the 64-bit keys, whose scatter moves each y (its 64 bits,
// untouched) with its key, from a second pair of buffers. Like the radix
// sort of the keys alone it is stable. The window takes one slot (see
// Sorter): x and y are copied into mapped memory on all cores (or
// uploaded by a GPU copy alone from staging memory), sorted, and copied
// back. Windows of fewer than 2^15 pairs, where the GPU's fixed cost
// outweighs the CPU's sort, and windows too large for a shader storage
// block are sorted on the CPU instead (gpusort.CPU.SortPairs).
func (c *Sorter) SortPairs(ctx context.Context, x, y []float64) error {
	const op = "compute sort pairs"
	if len(x) != len(y) {
		return fmt.Errorf("%s: %d keys and %d values", op, len(x), len(y))
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return gpusort.ErrClosed
	}
	n := len(x)
	if n < 2 {
		return nil
	}
	if n < c.pairsMin || n > 1<<31 || n*8 > c.maxStorage {
		return c.cpu.SortPairs(ctx, x, y)
	}
	s, err := c.acquire(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer func() { c.slots <- s }()

	// The keys, then the values: where each is uploaded from.
	size := n * 8
	win := [2][]byte{
		unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), size),
		unsafe.Slice((*byte)(unsafe.Pointer(&y[0])), size),
	}
	var src [2]uploadSource
	if c.persistent {
		var jobs []copyJob
		for i, b := range win {
			if buf, off, ok := c.pool.locate(b); ok {
				src[i] = uploadSource{buf, off}
				continue
			}
			if len(s.up.bytes) < 2*size {
				if err := c.t.Do(func() error { s.up.ensure(2*size, false); return glctx.CheckError("map upload buffer") }); err != nil {
					return fmt.Errorf("%s: %w", op, err)
				}
			}
			src[i] = uploadSource{s.up.id, i * size}
			jobs = append(jobs, copyJob{s.up.bytes[i*size:], b})
		}
		parallelCopy(jobs)
	}
	if err := c.t.Do(func() error { return c.submitPairs(s, win, src) }); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := <-s.done; err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if c.persistent {
		parallelCopy([]copyJob{{win[0], s.down.bytes}, {win[1], s.down.bytes[size:]}})
	}
	return nil
}

// submitPairs issues a window of pairs' commands on the GL thread: the
// upload of the keys into s.keys and the values into s.vals, the sort, and
// the sorted keys and values into s.down (keys, then values) and a fence
// that reports on s.done. Without persistent mapping it reads them back
// into win instead, synchronously.
func (c *Sorter) submitPairs(s *slot, win [2][]byte, src [2]uploadSource) error {
	size := len(win[0])
	n := size / 8
	s.keys.ensure(size)
	s.vals.ensure(size)
	for i, dst := range []*glBuffer{&s.keys, &s.vals} {
		gl.BindBuffer(gl.COPY_WRITE_BUFFER, dst.id)
		if src[i].buf == 0 {
			gl.BufferSubData(gl.COPY_WRITE_BUFFER, 0, size, unsafe.Pointer(&win[i][0]))
			continue
		}
		gl.BindBuffer(gl.COPY_READ_BUFFER, src[i].buf)
		gl.CopyBufferSubData(gl.COPY_READ_BUFFER, gl.COPY_WRITE_BUFFER, src[i].off, 0, size)
	}
	lens := []uint32{uint32(n)}
	bindSegments(&s.segs, segmentTable(lens))
	sortRadix(c.progs[1], &s.keys, &s.vals, &s.radix, n, lens, true, true, nil)
	if err := glctx.CheckError("sort pairs"); err != nil {
		return err
	}
	if !c.persistent {
		for i, b := range []*glBuffer{&s.keys, &s.vals} {
			gl.BindBuffer(gl.COPY_READ_BUFFER, b.id)
			gl.GetBufferSubData(gl.COPY_READ_BUFFER, 0, size, unsafe.Pointer(&win[i][0]))
		}
		s.done <- glctx.CheckError("read back pairs")
		return nil
	}
	s.down.ensure(2*size, true)
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, s.down.id)
	for i, b := range []*glBuffer{&s.keys, &s.vals} {
		gl.BindBuffer(gl.COPY_READ_BUFFER, b.id)
		gl.CopyBufferSubData(gl.COPY_READ_BUFFER, gl.COPY_WRITE_BUFFER, 0, i*size, size)
	}
	gl.MemoryBarrier(gl.CLIENT_MAPPED_BUFFER_BARRIER_BIT)
	if err := glctx.CheckError("read back pairs"); err != nil {
		return err
	}
	c.t.Await(func(err error) { s.done <- err })
	return nil
}

var _ gpusort.PairSorter = (*Sorter)(nil)
