package gpusort

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"streamd/internal/radix"
)

// CPU is the CPU back-end: each window is sorted by an LSD radix sort
// (as SortFloat32 and SortFloat64 do) whose digit width, 8 or 11 bits, is
// measured at the first batch of each window size and key type: the
// faster one on this machine. The windows of a batch are sorted in
// parallel on up to Workers goroutines. A CPU is safe for concurrent use.
type CPU struct {
	workers int
	radix   radix.Sorter
	pool32  sync.Pool // of *[]uint32 scratch buffers
	pool64  sync.Pool // of *[]uint64 scratch buffers
	mu      sync.Mutex
	closed  bool
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
func (c *CPU) Sort(ctx context.Context, b *Batch) error {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("cpu sort: %w", err)
	}
	var jobs []func()
	for i := range Channels {
		if w := b.F32[i]; len(w) > 1 {
			jobs = append(jobs, func() { c.sort32(w) })
		}
		if w := b.F64[i]; len(w) > 1 {
			jobs = append(jobs, func() { c.sort64(w) })
		}
	}
	if c.workers <= 1 || len(jobs) <= 1 {
		for _, j := range jobs {
			j()
		}
		return nil
	}
	sem := make(chan struct{}, c.workers)
	var wg sync.WaitGroup
	for _, j := range jobs {
		sem <- struct{}{}
		wg.Go(func() {
			j()
			<-sem
		})
	}
	wg.Wait()
	return nil
}

func (c *CPU) sort32(w []float32) {
	p, _ := c.pool32.Get().(*[]uint32)
	if p == nil {
		p = new([]uint32)
	}
	*p = c.radix.Float32s(w, *p)
	c.pool32.Put(p)
}

func (c *CPU) sort64(w []float64) {
	p, _ := c.pool64.Get().(*[]uint64)
	if p == nil {
		p = new([]uint64)
	}
	*p = c.radix.Float64s(w, *p)
	c.pool64.Put(p)
}
