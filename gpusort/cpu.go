package gpusort

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"streamd/internal/radix"
	"streamd/summary"
)

// CPU is the CPU back-end: each window is sorted by an LSD radix sort
// (as SortFloat32 and SortFloat64 do) whose digit width, 8 or 11 bits, is
// measured at the first batch of each window size and key type: the
// faster one on this machine. The windows of a batch are sorted in
// parallel on up to Workers goroutines. A CPU is safe for concurrent use.
type CPU struct {
	workers  int
	radix    radix.Sorter
	pool32   sync.Pool // of *[]uint32 scratch buffers
	pool64   sync.Pool // of *[]uint64 scratch buffers
	pairs    sync.Pool // of *[]uint64 scratch buffers of SortPairs
	copies32 sync.Pool // of *[]float32: the sorted copies Digest digests
	copies64 sync.Pool // of *[]float64
	mu       sync.Mutex
	closed   bool
}

// NewCPU returns a CPU sorter that uses up to workers goroutines per batch;
// workers ≤ 0 means runtime.GOMAXPROCS(0).
func NewCPU(workers int) *CPU {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return &CPU{workers: workers}
}

// Name returns "cpu".
func (c *CPU) Name() string { return "cpu" }

// Workers reports how many goroutines a batch is sorted on at most.
func (c *CPU) Workers() int { return c.workers }

// Close marks c closed.
func (c *CPU) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return nil
}

// Sort sorts each window of b in place. Windows are sorted concurrently
// when c has more than one worker; each sort is O(n) with three to eight
// passes over the keys and allocates nothing once its scratch buffer has
// been pooled. The first batch with windows of a new size class also
// measures the digit widths: some milliseconds for windows of 2^16 keys,
// up to a quarter of a second for the largest (see radix.Sorter).
func (c *CPU) Sort(ctx context.Context, b *Quad) error {
	return c.SortWindows(ctx, b, func(int) bool { return true })
}

// SortWindows sorts in place, as Sort does, the non-empty windows i of b
// for which want(i) holds, and leaves the others as they are: for GPU
// back-ends that hand part of a batch to the CPU.
func (c *CPU) SortWindows(ctx context.Context, b *Quad, want func(int) bool) error {
	return c.each(ctx, "cpu sort", b, want, func(i int) {
		if w := b.F32[i]; len(w) > 1 {
			c.sort32(w)
		}
		if w := b.F64[i]; len(w) > 1 {
			c.sort64(w)
		}
	})
}

// DigestWindows digests the non-empty windows i of b for which want(i)
// holds into out[i], each from a sorted copy, leaving b and the other
// digests unchanged: for GPU back-ends that hand part of a batch to the
// CPU. Unlike Digest it neither checks specs (see CheckSpecs) nor empties
// the digests of empty windows (see EmptyDigests). The sort writes the
// copy (radix.Sorter.SortedFloat32s), so the window is not copied first.
func (c *CPU) DigestWindows(ctx context.Context, b *Quad, specs *[Channels]summary.WindowSpec, out *[Channels]summary.Digest, want func(int) bool) error {
	return c.each(ctx, "cpu digest", b, want, func(i int) {
		if w := b.F64[i]; len(w) > 0 {
			p, _ := c.copies64.Get().(*[]float64)
			if p == nil {
				p = new([]float64)
			}
			s := c.scratch64()
			*p, *s = c.radix.SortedFloat64s(*p, w, *s)
			summary.DigestSorted(*p, specs[i], &out[i])
			c.pool64.Put(s)
			c.copies64.Put(p)
			return
		}
		p, _ := c.copies32.Get().(*[]float32)
		if p == nil {
			p = new([]float32)
		}
		s := c.scratch32()
		*p, *s = c.radix.SortedFloat32s(*p, b.F32[i], *s)
		summary.DigestSorted(*p, specs[i], &out[i])
		c.pool32.Put(s)
		c.copies32.Put(p)
	})
}

// each runs job(i) for every non-empty window i of b with want(i), on up
// to c's workers at once.
func (c *CPU) each(ctx context.Context, op string, b *Quad, want func(int) bool, job func(i int)) error {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	var todo []int
	for i := range Channels {
		if len(b.F32[i])+len(b.F64[i]) > 0 && want(i) {
			todo = append(todo, i)
		}
	}
	if c.workers <= 1 || len(todo) <= 1 {
		for _, i := range todo {
			job(i)
		}
		return nil
	}
	sem := make(chan struct{}, c.workers)
	var wg sync.WaitGroup
	for _, i := range todo {
		sem <- struct{}{}
		wg.Go(func() {
			job(i)
			<-sem
		})
	}
	wg.Wait()
	return nil
}

func (c *CPU) sort32(w []float32) {
	p := c.scratch32()
	*p = c.radix.Float32s(w, *p)
	c.pool32.Put(p)
}

func (c *CPU) sort64(w []float64) {
	p := c.scratch64()
	*p = c.radix.Float64s(w, *p)
	c.pool64.Put(p)
}

// scratch32 returns a pooled scratch buffer (put it back in pool32).
func (c *CPU) scratch32() *[]uint32 {
	p, _ := c.pool32.Get().(*[]uint32)
	if p == nil {
		p = new([]uint32)
	}
	return p
}

// scratch64 returns a pooled scratch buffer (put it back in pool64).
func (c *CPU) scratch64() *[]uint64 {
	p, _ := c.pool64.Get().(*[]uint64)
	if p == nil {
		p = new([]uint64)
	}
	return p
}
