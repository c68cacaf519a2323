package gpusort

import (
	"context"
	"errors"
	"sync"
	"time"

	"streamd/summary"
)

// ErrNoGPU is returned, wrapped, by the GPU constructors (in builds with
// the "gpu" tag) when no OpenGL 4.3 core context can be had: no driver, no
// device, or an older GL.
var ErrNoGPU = errors.New("gpusort: no usable OpenGL context")

// ErrNotBuilt is the reason Auto has no GPU side in a build without the
// "gpu" tag.
var ErrNotBuilt = errors.New("gpusort: built without GPU support (the gpu build tag)")

// Auto schedules batches between a GPU back-end and the CPU back-end by
// their measured throughput, so that a daemon using it is never slower
// than the CPU alone: each batch goes to the side that is expected to
// finish it first, given the keys already queued there and that side's
// rate (an exponentially weighted moving average of keys per second over
// the batches it has done). Until both rates are known, an idle side with
// no rate yet takes the next batch. The GPU side runs one batch at a time;
// the CPU side sorts each batch on all cores.
//
// Auto helps only when batches arrive concurrently (several pipeline
// workers calling Sort or Digest): a single caller gets the faster side.
// With no GPU, Auto is the CPU back-end under another name.
type Auto struct {
	gpu    Digester // nil without a GPU
	gpuErr error
	cpu    *CPU

	mu      sync.Mutex
	sides   [2]autoSide // 0: GPU, 1: CPU
	pairs   [2]autoSide // the same for SortPairs, in pairs
	closed  bool
	pending sync.WaitGroup
}

// autoSide is one side's queue and measured rate.
type autoSide struct {
	queued int     // keys sent and not yet done
	rate   float64 // keys per second, EWMA; 0 until measured
	done   int64   // batches done
}

// autoWeight is the EWMA weight of the newest batch's rate.
const autoWeight = 0.25

// NewAuto returns a scheduler over gpu (which may be nil) and cpu. gpuErr,
// when not nil, is why there is no GPU side: Auto reports it with GPUErr.
func NewAuto(gpu Digester, gpuErr error, cpu *CPU) *Auto {
	return &Auto{gpu: gpu, gpuErr: gpuErr, cpu: cpu}
}

// Name returns "auto".
func (a *Auto) Name() string { return "auto" }

// GPUErr reports why Auto has no GPU side, or nil if it has one.
func (a *Auto) GPUErr() error { return a.gpuErr }

// Info describes the GPU back-end in use as its Info method does, or is
// empty without a GPU.
func (a *Auto) Info() string {
	if in, ok := a.gpu.(interface{ Info() string }); ok {
		return in.Info()
	}
	return ""
}

// Rates reports the measured throughput of the GPU and CPU sides in keys
// per second (0 until measured) and how many batches each has done.
func (a *Auto) Rates() (gpu, cpu float64, gpuBatches, cpuBatches int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sides[0].rate, a.sides[1].rate, a.sides[0].done, a.sides[1].done
}

// Close waits for the batches in flight, then closes both sides.
func (a *Auto) Close() error {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.pending.Wait()
	var err error
	if a.gpu != nil {
		err = a.gpu.Close()
	}
	return errors.Join(err, a.cpu.Close())
}

// pick chooses a side of sides (a.sides, or a.pairs) for a batch of n
// keys and queues it there.
func (a *Auto) pick(sides *[2]autoSide, n int) (side int, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return 0, ErrClosed
	}
	side = 1
	if a.gpu != nil {
		g, c := &sides[0], &sides[1]
		switch {
		case g.rate == 0 && g.queued == 0:
			side = 0 // measure the GPU
		case c.rate == 0 && c.queued == 0:
			side = 1 // measure the CPU
		case g.rate > 0 && c.rate > 0:
			if float64(g.queued+n)/g.rate <= float64(c.queued+n)/c.rate {
				side = 0
			}
		case g.rate > 0:
			side = 0 // the CPU is still on its first batch
		}
	}
	sides[side].queued += n
	a.pending.Add(1)
	return side, nil
}

// finish records that a batch of n keys took d on side of sides.
func (a *Auto) finish(sides *[2]autoSide, side, n int, d time.Duration, ok bool) {
	a.mu.Lock()
	s := &sides[side]
	s.queued -= n
	if ok && n > 0 && d > 0 {
		r := float64(n) / d.Seconds()
		if s.rate == 0 {
			s.rate = r
		} else {
			s.rate += autoWeight * (r - s.rate)
		}
		s.done++
	}
	a.mu.Unlock()
	a.pending.Done()
}

// Sort sorts b's windows on the side expected to finish first.
func (a *Auto) Sort(ctx context.Context, b *Quad) error {
	n := b.Len()
	side, err := a.pick(&a.sides, n)
	if err != nil {
		return err
	}
	if side == 0 {
		a.calibrate(ctx, b)
	}
	start := time.Now()
	if side == 0 {
		err = a.gpu.Sort(ctx, b)
	} else {
		err = a.cpu.Sort(ctx, b)
	}
	a.finish(&a.sides, side, n, time.Since(start), err == nil)
	return err
}

// Digest digests b's windows (see Digester) on the side expected to finish
// first.
func (a *Auto) Digest(ctx context.Context, b *Quad, specs *[Channels]summary.WindowSpec, out *[Channels]summary.Digest) error {
	n := b.Len()
	side, err := a.pick(&a.sides, n)
	if err != nil {
		return err
	}
	if side == 0 {
		a.calibrate(ctx, b)
	}
	start := time.Now()
	if side == 0 {
		err = a.gpu.Digest(ctx, b, specs, out)
	} else {
		err = a.cpu.Digest(ctx, b, specs, out)
	}
	a.finish(&a.sides, side, n, time.Since(start), err == nil)
	return err
}

// Calibrate lets the GPU side, if it measures something per window size
// (compute.Sorter: which of its sorts is faster), do it now for windows of n
// keys rather than on the first such batch.
func (a *Auto) Calibrate(ctx context.Context, n int, key64 bool) error {
	if c, ok := a.gpu.(Calibrator); ok {
		return c.Calibrate(ctx, n, key64)
	}
	return nil
}

// calibrate lets the GPU side make its per-size measurements for b's
// windows before the batch is timed, so that they do not count against the
// GPU's rate. An error is left for the batch itself to meet.
func (a *Auto) calibrate(ctx context.Context, b *Quad) {
	c, ok := a.gpu.(Calibrator)
	if !ok {
		return
	}
	var n32, n64 int
	for i := range Channels {
		n32 = max(n32, len(b.F32[i]))
		n64 = max(n64, len(b.F64[i]))
	}
	_ = c.Calibrate(ctx, n32, false)
	_ = c.Calibrate(ctx, n64, true)
}
