package gpusort

import (
	"context"
	"fmt"

	"streamd/internal/radix"
)

// PairSorter is implemented by back-ends that sort windows of pairs: a
// pair stream's window of (x, y) values, sorted by x with each y carried
// along. The CPU back-end, Auto and compute.Sorter implement it.
type PairSorter interface {
	// SortPairs sorts x in ascending order, in the order of Key64 (−0
	// before +0; NaN must not occur), and permutes y with it: y[i] ends
	// next to the x it started next to. The sort is stable: pairs with
	// equal x keep their input order. It returns an error if len(x) !=
	// len(y), after Close (ErrClosed), or wrapping ctx.Err() if ctx ends
	// first, in which case x and y are unchanged or still a permutation of
	// the input pairs.
	SortPairs(ctx context.Context, x, y []float64) error
}

// SortPairs sorts x and moves y with it (see PairSorter) on the calling
// goroutine, by a key–value LSD radix sort (radix.Pairs64): O(len(x))
// time, allocating nothing once its scratch buffer (4·len(x) words) has
// been pooled.
func (c *CPU) SortPairs(ctx context.Context, x, y []float64) error {
	if err := checkPairs(ctx, "cpu sort pairs", x, y); err != nil {
		return err
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if len(x) < 2 {
		return nil
	}
	p, _ := c.pairs.Get().(*[]uint64)
	if p == nil {
		p = new([]uint64)
	}
	*p = radix.Pairs64(x, y, *p)
	c.pairs.Put(p)
	return nil
}

// checkPairs checks the arguments of a SortPairs: slices of equal
// lengths and a live context.
func checkPairs(ctx context.Context, op string, x, y []float64) error {
	if len(x) != len(y) {
		return fmt.Errorf("%s: %d keys and %d values", op, len(x), len(y))
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// SortPairs sorts x and moves y with it (see PairSorter) on the side
// expected to finish first, as Sort chooses for batches but by the rates
// measured on windows of pairs (see PairRates). Without a GPU side that
// is a PairSorter, it sorts on the CPU. The GPU side may itself hand
// windows too small or too large for the GPU to the CPU.
func (a *Auto) SortPairs(ctx context.Context, x, y []float64) error {
	g, ok := a.gpu.(PairSorter)
	if !ok {
		a.mu.Lock()
		if a.closed {
			a.mu.Unlock()
			return ErrClosed
		}
		a.pending.Add(1)
		a.mu.Unlock()
		defer a.pending.Done()
		return a.cpu.SortPairs(ctx, x, y)
	}
	n := len(x)
	side, err := a.pick(&a.pairs, n)
	if err != nil {
		return err
	}
	if side == 0 {
		err = g.SortPairs(ctx, x, y)
	} else {
		err = a.cpu.SortPairs(ctx, x, y)
	}
	a.finish(&a.pairs, side, n, err)
	return err
}

// PairRates reports the measured throughput of SortPairs on the GPU and
// CPU sides in pairs per second (0 until measured) and how many windows
// each has sorted.
func (a *Auto) PairRates() (gpu, cpu float64, gpuWindows, cpuWindows int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pairs[0].rate, a.pairs[1].rate, a.pairs[0].done, a.pairs[1].done
}

var (
	_ PairSorter = (*CPU)(nil)
	_ PairSorter = (*Auto)(nil)
)
