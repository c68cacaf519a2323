package gpusort

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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

// Auto schedules batches between a GPU back-end and the CPU back-end, so
// that a daemon using it gets the GPU's lead where there is one and the
// CPU's where the GPU is of little use. Sorting on the CPU takes cores
// from the rest of the daemon (accepting values, the summaries), so the
// GPU takes every batch unless the CPU's rate for a batch alone is
// autoCPULead times the GPU's rate or more. On the H200, sending batches
// to the CPU whenever the GPU's queue was long, or whenever the CPU would
// finish them first, cost 16 fat streams up to two fifths of the gpu
// sorter's rate. Where the CPU leads by that much, each batch goes to the
// side expected to finish it first, given the keys queued there and that
// side's rate.
//
// The GPU's rate is the keys it finished per second of the time it had
// batches in flight (an exponentially weighted moving average over spans
// of autoSpan), not the keys of one batch over its latency: the compute
// back-end takes every batch waiting into one submission, so it finishes
// hundreds of batches in the round trip that one batch alone would take,
// and a rate per batch would rank it hundreds of times too slow (so did
// Auto once, and matched the cpu sorter where the compute back-end gave
// 1.6 times its rate). A span counts only if it held autoSpanPeak batches
// at once; until one has, the GPU takes what its rate so far would finish
// within autoDrain. The CPU's rate for a batch alone is measured on
// batches sent to it when it has none, again after autoCPUProbe idle; its
// rate while busy grows with the batches it is sent, and would keep
// sending it more. A GPU side left idle for autoProbe is sent the next
// batch, to measure it again; one that failed a batch (left to the
// caller's fallback) is sent none for autoProbe. Until both sides are
// measured, an idle side with no rate yet takes the next batch, and the
// CPU the batches that come while the GPU's first is out: Calibrate
// measures both before values come.
//
// Auto assumes many concurrent callers, as the daemon's 256 sort workers
// with a GPU sorter: with a few, a compute back-end does one small
// submission per round trip, and the CPU would have done more.
//
// With no GPU, Auto is the CPU back-end under another name.
type Auto struct {
	gpu    Digester // nil without a GPU
	gpuErr error
	cpu    *CPU

	mu      sync.Mutex
	sides   schedule // batches
	pairs   schedule // windows of pairs
	closed  bool
	pending sync.WaitGroup
}

// A schedule holds the queues and rates of Auto's two sides for one kind
// of work: 0 is the GPU, 1 the CPU.
type schedule [2]autoSide

// autoSide is one side's queue and measured rate.
type autoSide struct {
	queued  int     // keys sent and not yet done
	batches int     // batches sent and not yet done
	rate    float64 // keys per second while busy, EWMA; 0 until measured
	done    int64   // batches done

	// The span being measured: the keys finished in it, the time the side
	// was busy in it (had a batch or more in flight), and when a batch was
	// last sent to it or done.
	spanKeys int
	spanBusy time.Duration
	last     time.Time
	spanPeak int // the most batches in flight at once in the span

	// A batch alone: sent when the side had none in flight, and none sent
	// after it while it is; aloneRate is an EWMA of such batches' rates.
	alone      bool
	aloneSince time.Time
	aloneRate  float64

	failed  time.Time // when a batch last failed on it
	probe   bool      // the side was sent a batch to measure it again
	spanned bool      // its rate was measured over a span of autoSpanPeak batches at once
	due     bool      // the span is to close at the next event (settle)
}

// autoWeight is the EWMA weight of the newest span's rate.
const autoWeight = 0.25

// autoSpan is the busy time a side's rate is measured over after its
// first batch: long enough to take in several of the compute back-end's
// submissions.
const autoSpan = 10 * time.Millisecond

// autoCPULead is how many times the GPU's rate the CPU's rate for a batch
// sorted alone must be for batches to go to the CPU. A batch alone runs on
// idle cores; the CPU's rate at load grows with the batches it is sent, so
// compared with the GPU's it would keep sending the CPU more, and it is
// made on cores that the rest of the daemon would otherwise use. With the
// CPU's rate at load and a lead of 4, 16 fat streams on the H200's 16
// cores sent a share of their batches to the CPU and lost a fifth of their
// rate.
const autoCPULead = 16

// autoProbe is how long the GPU side may sit idle before it is sent a
// batch to measure it again: a rate measured once too low (a slow first
// batch) would otherwise keep batches from it, and so keep itself. It is
// also how long a GPU that failed a batch is sent none.
const autoProbe = 250 * time.Millisecond

// autoCPUProbe is how long the CPU side may sit idle before it is sent a
// batch, alone, to measure its rate for a batch alone again.
const autoCPUProbe = time.Second

// autoSpanPeak is how many batches at once, at least, a span must have
// held to measure the GPU: a compute back-end sent one batch at a time
// does one per round trip, however many more it could take together.
const autoSpanPeak = 4

// autoDrain bounds the batches a GPU not yet measured over a span of
// several batches is sent: those its rate so far would finish within it.
// Until then the GPU is left only when the CPU's rate is autoCPULead²
// times its rate so far (a first batch's, or one at a time's).
// It is long, since that rate is a first batch's, on a cold GPU: at 100 ms,
// 16 fat streams on the H200 sent a quarter to a third of their batches
// to the CPU before the GPU's rate was known, and lost 15% of their rate.
const autoDrain = time.Second

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

// pick chooses a side of s (a.sides, or a.pairs) for a batch of n keys and
// queues it there.
func (a *Auto) pick(s *schedule, n int) (side int, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return 0, ErrClosed
	}
	side = s.pick(n, a.gpu != nil, time.Now())
	a.pending.Add(1)
	return side, nil
}

// finish records that a batch of n keys sent to side of s is done, with
// err.
func (a *Auto) finish(s *schedule, side, n int, err error) {
	a.mu.Lock()
	s.finish(side, n, err, time.Now())
	a.mu.Unlock()
	a.pending.Done()
}

// pick chooses a side for a batch of n keys sent at now, the GPU only if
// there is one (gpu), and queues it there.
func (s *schedule) pick(n int, gpu bool, now time.Time) int {
	s[0].settle(now)
	s[1].settle(now)
	side := 1
	if gpu {
		g, c := &s[0], &s[1]
		cpu := c.aloneRate
		if cpu == 0 {
			cpu = c.rate // no batch has run alone yet
		}
		switch {
		case !g.failed.IsZero() && now.Sub(g.failed) < autoProbe:
			side = 1 // the GPU failed a batch lately: try it again later
		case g.rate == 0 && g.batches == 0:
			side = 0 // measure the GPU
		case c.aloneRate == 0 && c.batches == 0:
			side = 1 // measure the CPU, alone
		case g.batches == 0 && now.Sub(g.last) >= autoProbe:
			side = 0 // measure the GPU again, in case its rate is stale
			g.probe, g.spanned, g.due = true, false, false
			g.restartSpan()
		case c.batches == 0 && now.Sub(c.last) >= autoCPUProbe:
			side = 1 // measure the CPU alone again
		case g.rate > 0 && !g.spanned && cpu <= autoCPULead*autoCPULead*g.rate && float64(g.queued+n)/g.rate <= autoDrain.Seconds():
			side = 0 // until a span of several batches measures the GPU
		case g.rate > 0 && g.spanned && cpu <= autoCPULead*g.rate:
			side = 0 // the GPU is of use: leave the cores to the rest
		case g.rate > 0 && c.rate > 0:
			if float64(g.queued+n)/g.rate <= float64(c.queued+n)/c.rate {
				side = 0
			}
		case g.rate > 0:
			side = 0 // the CPU is still on its first batch
		}
	}
	x := &s[side]
	x.advance(now)
	x.alone = x.batches == 0
	x.aloneSince = now
	x.queued += n
	x.batches++
	x.spanPeak = max(x.spanPeak, x.batches)
	return side
}

// finish records that a batch of n keys sent to side is done at now, with
// err: a failed batch's time counts against the side's rate, its keys do
// not, and it keeps batches from a GPU side for autoProbe; a canceled one
// (the caller's context) counts neither way.
func (s *schedule) finish(side, n int, err error, now time.Time) {
	x := &s[side]
	x.settle(now)
	x.advance(now)
	x.queued -= n
	x.batches--
	alone := x.alone
	x.alone = false
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return
	case err != nil:
		x.failed = now
		return
	}
	x.done++
	if d := now.Sub(x.aloneSince); alone && d > 0 {
		r := float64(n) / d.Seconds()
		if x.aloneRate == 0 {
			x.aloneRate = r
		} else {
			x.aloneRate += autoWeight * (r - x.aloneRate)
		}
	}
	x.spanKeys += n
	x.due = x.spanBusy > 0 && (x.rate == 0 || x.probe || x.spanBusy >= autoSpan)
}

// settle closes the side's span if it is due — its busy time has reached
// autoSpan, or it measures a first or probing batch — and time has moved
// on since the batch that made it due, so that batches done together (a
// GPU submission's) count in one span.
func (x *autoSide) settle(now time.Time) {
	if !x.due || !now.After(x.last) {
		return
	}
	x.due = false
	r := float64(x.spanKeys) / x.spanBusy.Seconds()
	if x.rate == 0 || x.probe || !x.spanned {
		// A batch alone says little of a side that takes batches
		// together: the first span of several replaces its rate.
		x.rate, x.probe = r, false
	} else {
		x.rate += autoWeight * (r - x.rate)
	}
	x.spanned = x.spanned || (x.spanBusy >= autoSpan && x.spanPeak >= autoSpanPeak)
	x.restartSpan()
}

// restartSpan starts a new span: no keys done and no busy time in it yet,
// and as many batches at once as are in flight now.
func (x *autoSide) restartSpan() {
	x.spanKeys, x.spanBusy, x.spanPeak = 0, 0, x.batches
}

// advance adds the time since the side's last event to its busy time, if
// it had a batch in flight, and makes now its last event.
func (x *autoSide) advance(now time.Time) {
	if x.batches > 0 {
		x.spanBusy += now.Sub(x.last)
	}
	x.last = now
}

// Sort sorts b's windows on the side expected to finish first.
func (a *Auto) Sort(ctx context.Context, b *Quad) error {
	return a.run(ctx, b, func(d Digester) error { return d.Sort(ctx, b) })
}

// Digest digests b's windows (see Digester) on the side expected to finish
// first.
func (a *Auto) Digest(ctx context.Context, b *Quad, specs *[Channels]summary.WindowSpec, out *[Channels]summary.Digest) error {
	return a.run(ctx, b, func(d Digester) error { return d.Digest(ctx, b, specs, out) })
}

// run does work, Sort or Digest of b, on the side picked for b's keys.
func (a *Auto) run(ctx context.Context, b *Quad, work func(Digester) error) error {
	n := b.Len()
	side, err := a.pick(&a.sides, n)
	if err != nil {
		return err
	}
	if side == 0 {
		a.calibrate(ctx, b)
		err = work(a.gpu)
	} else {
		err = work(a.cpu)
	}
	a.finish(&a.sides, side, n, err)
	return err
}

// Calibrate lets the GPU side, if it measures something per window size
// (compute.Sorter: which of its sorts is faster), do it now for windows of n
// keys rather than on the first such batch. Then, if neither side has a
// rate yet, it sorts a batch of four windows of random keys (of n keys,
// at most 65,536) on each, alone, so that the first batches of values
// find both sides measured: without, those that come while the GPU's
// first batch is out all go to the CPU.
func (a *Auto) Calibrate(ctx context.Context, n int, key64 bool) error {
	var err error
	if c, ok := a.gpu.(Calibrator); ok {
		err = c.Calibrate(ctx, n, key64)
	}
	a.mu.Lock()
	measured := a.sides[0].rate > 0 || a.sides[1].rate > 0
	a.mu.Unlock()
	if a.gpu == nil || measured || n <= 0 {
		return err
	}
	n = min(n, 1<<16)
	r := rand.New(rand.NewPCG(uint64(n), 1))
	for range 2 { // the GPU's first batch, then the CPU's (pick)
		var b Quad
		for i := range Channels {
			if key64 {
				b.F64[i] = make([]float64, n)
				for j := range b.F64[i] {
					b.F64[i][j] = r.NormFloat64()
				}
			} else {
				b.F32[i] = make([]float32, n)
				for j := range b.F32[i] {
					b.F32[i][j] = float32(r.NormFloat64())
				}
			}
		}
		if e := a.Sort(ctx, &b); e != nil {
			return errors.Join(err, fmt.Errorf("measure the sides: %w", e))
		}
	}
	return err
}

// calibrate lets the GPU side make its per-size measurements for b's
// windows, a batch sent to it, and takes the time they took off the GPU's
// busy time, so that they do not count against its rate. An error is left
// for the batch itself to meet.
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
	start := time.Now()
	_ = c.Calibrate(ctx, n32, false)
	_ = c.Calibrate(ctx, n64, true)
	if d := time.Since(start); d >= time.Millisecond {
		// Batches waiting on one calibration each take it off: a span
		// left with no busy time starts again.
		a.mu.Lock()
		if g := &a.sides[0]; g.spanBusy > d {
			g.spanBusy -= d
		} else {
			g.restartSpan()
			g.due = false
		}
		a.mu.Unlock()
	}
}
