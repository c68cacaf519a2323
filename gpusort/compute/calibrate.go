//go:build gpu

package compute

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/go-gl/gl/v4.5-core/gl"

	"streamd/gpusort"
	"streamd/gpusort/glctx"
)

// The measured choice between the bitonic and the radix sort: the first
// batch of each size class waits while both sorts run on random keys of
// that class, and the faster one sorts the class from then on.

// sizeClass is a key width and a window length rounded up to a power of
// two (the bitonic network's padded length, at least localKeys).
type sizeClass struct {
	key64 bool
	n     int
}

// Choice is the algorithm a Sorter chose for one size class, and
// the rates it measured: keys per second of each sort alone (four windows
// of N random keys, on the GPU, without transfers).
type Choice struct {
	Key64       bool
	N           int // window length (a power of two)
	Algorithm   Algorithm
	BitonicRate float64
	RadixRate   float64
	// Err, when not nil, is why the radix sort was not used: its result
	// differed from the bitonic sort's on the calibration batch.
	Err error
}

// calibrationReps is how many times each sort runs on the calibration
// batch; the fastest run counts.
const calibrationReps = 2

// Choices reports the measured choices made so far, by key width and size.
func (c *Sorter) Choices() []Choice {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Choice
	for _, ch := range c.choices {
		out = append(out, ch)
	}
	slices.SortFunc(out, func(a, b Choice) int {
		if a.Key64 != b.Key64 {
			return int(b2u(a.Key64)) - int(b2u(b.Key64))
		}
		return a.N - b.N
	})
	return out
}

// Calibrate makes the measured choice for windows of n keys (float64 ones
// when key64) now, if it is not made yet, so that the first batch of that
// size does not wait for it. It does nothing unless the algorithm is
// Measured, or for windows too large for the GPU (which go to the
// CPU).
func (c *Sorter) Calibrate(ctx context.Context, n int, key64 bool) error {
	if n <= 0 {
		return nil
	}
	v := keyView{key64: key64, lens: make([]int, gpusort.Channels)}
	v.lens[0] = n
	if !c.fits(v) {
		return nil
	}
	_, err := c.algorithm(ctx, v)
	return err
}

// algorithm returns the sort for v's windows: the configured one, or the
// measured choice for v's size class, calibrating first if it has none.
func (c *Sorter) algorithm(ctx context.Context, v keyView) (Algorithm, error) {
	if c.alg != Measured {
		return c.alg, nil
	}
	class := sizeClass{v.key64, v.padded()}
	c.mu.Lock()
	ch, ok := c.choices[class]
	c.mu.Unlock()
	if ok {
		return ch.Algorithm, nil
	}
	c.calMu.Lock()
	defer c.calMu.Unlock()
	c.mu.Lock()
	ch, ok = c.choices[class]
	c.mu.Unlock()
	if ok {
		return ch.Algorithm, nil
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := c.t.Do(func() error {
		var err error
		ch, err = c.calibrate(class)
		return err
	}); err != nil {
		return 0, fmt.Errorf("calibrate %d-bit keys, n=%d: %w", 32+32*b2u(class.key64), class.n, err)
	}
	c.mu.Lock()
	c.choices[class] = ch
	c.mu.Unlock()
	return ch.Algorithm, nil
}

// calibrate times both sorts on four windows of class.n random keys and
// checks that they agree. It runs on the GL thread; the batches in flight
// finish first (glFinish), so they do not count.
func (c *Sorter) calibrate(class sizeClass) (Choice, error) {
	gl.Finish()
	if !c.warm {
		// The first dispatches of a program may compile it: run both
		// sorts once on a small batch before timing anything.
		for _, key64 := range []bool{false, true} {
			if _, _, err := c.timeSorts(sizeClass{key64, localKeys}, 1); err != nil {
				return Choice{}, err
			}
		}
		c.warm = true
	}
	rates, agree, err := c.timeSorts(class, calibrationReps)
	if err != nil {
		return Choice{}, err
	}
	ch := Choice{Key64: class.key64, N: class.n, BitonicRate: rates[0], RadixRate: rates[1], Algorithm: Bitonic}
	switch {
	case !agree:
		ch.Err = fmt.Errorf("gpusort: the radix sort's result differs from the bitonic sort's on %s", c.t.Info())
	case rates[1] > rates[0]:
		ch.Algorithm = Radix
	}
	return ch, nil
}

// timeSorts fills four windows of class.n random keys on the GPU, sorts
// them reps times with each algorithm, and returns each one's best rate in
// keys per second and whether their results agree (on the first 2^20 keys
// of each window: enough to catch a broken sort). It runs on the GL thread
// with scratch buffers of its own.
func (c *Sorter) timeSorts(class sizeClass, reps int) (rates [2]float64, agree bool, err error) {
	p := c.progs[b2u(class.key64)]
	n := class.n
	ks := 4 + 4*int(b2u(class.key64))
	lens := []uint32{uint32(n), uint32(n), uint32(n), uint32(n)}
	var src, keys, segs glBuffer
	var rb radixBuffers
	defer func() {
		src.free()
		keys.free()
		segs.free()
		rb.free()
	}()
	src.ensure(gpusort.Channels * n * ks)
	keys.ensure(gpusort.Channels * n * ks)
	gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 0, src.id)
	bindSegments(&segs, segmentTable(lens))
	p.setCommon(p.fill, n)
	gl.Uniform1ui(p.uniform(p.fill, "seed"), uint32(n))
	dispatch((n+gatherSize-1)/gatherSize, len(lens))

	check := min(n, 1<<20)
	var sorted [2][]uint32
	for a, alg := range []Algorithm{Bitonic, Radix} {
		var best time.Duration
		for range reps {
			gl.BindBuffer(gl.COPY_READ_BUFFER, src.id)
			gl.BindBuffer(gl.COPY_WRITE_BUFFER, keys.id)
			gl.CopyBufferSubData(gl.COPY_READ_BUFFER, gl.COPY_WRITE_BUFFER, 0, 0, gpusort.Channels*n*ks)
			gl.BindBufferBase(gl.SHADER_STORAGE_BUFFER, 0, keys.id)
			gl.Finish()
			start := time.Now()
			if alg == Radix {
				sortRadix(p, &keys, nil, &rb, n, lens, class.key64, false, nil)
			} else {
				sortBitonic(p, n, len(lens), false)
			}
			gl.Finish()
			if d := time.Since(start); best == 0 || d < best {
				best = d
			}
		}
		if err := glctx.CheckError("calibrate " + alg.String()); err != nil {
			return rates, false, err
		}
		rates[a] = float64(gpusort.Channels*n) / max(best, time.Nanosecond).Seconds()
		sorted[a] = make([]uint32, gpusort.Channels*check*ks/4)
		gl.BindBuffer(gl.COPY_READ_BUFFER, keys.id)
		for i := range gpusort.Channels {
			gl.GetBufferSubData(gl.COPY_READ_BUFFER, i*n*ks, check*ks, gl.Ptr(sorted[a][i*check*ks/4:]))
		}
	}
	return rates, slices.Equal(sorted[0], sorted[1]), glctx.CheckError("calibrate")
}
