package gpusort

import (
	"context"
	"fmt"
	"math"
	"time"

	"streamd/summary"
)

// Digester sorts a batch and computes each window's summary digest next to
// it, reading back only the digests. Every back-end of this package is a
// Digester; the daemon's pipeline uses Digest alone.
type Digester interface {
	Sorter
	// Digest sorts b's windows and fills out[i] with the digest of window
	// i under specs[i], exactly as summary.DigestSorted would from the
	// sorted window, reusing out's slices. Window i is b.F64[i] if that is
	// not empty, else b.F32[i]; an empty window gets an empty digest.
	// Digest only reads the windows: they keep their values and order, so
	// that others may read them while it runs (the pipeline's queries
	// count the windows in flight from them).
	Digest(ctx context.Context, b *Quad, specs *[Channels]summary.WindowSpec, out *[Channels]summary.Digest) error
}

// Phases is how long the parts of one batch took on a GPU back-end, each
// measured on the wall clock after waiting for the GPU (glFinish).
type Phases struct {
	Upload   time.Duration // host memory to GPU buffers or textures
	Sort     time.Duration // the sorting network
	Digest   time.Duration // samples and runs, on the GPU (Digest only)
	Readback time.Duration // sorted windows or digests back to host memory
}

// Profiler is implemented by the GPU back-ends: with profiling on, each
// batch waits for the GPU between phases and records their times.
type Profiler interface {
	SetProfile(on bool)
	LastPhases() Phases
}

// A Calibrator is a sorter that measures something once per window size
// (compute.Sorter: which of its sorts is faster) and can do it ahead, for
// windows of n keys of 64 bits if key64, rather than on the first such batch.
type Calibrator interface {
	Calibrate(ctx context.Context, n int, key64 bool) error
}

// Digest sorts a copy of each window of b and runs summary.DigestSorted on
// it, the windows of a batch in parallel (up to c's workers); b is left as
// it was.
func (c *CPU) Digest(ctx context.Context, b *Quad, specs *[Channels]summary.WindowSpec, out *[Channels]summary.Digest) error {
	if err := CheckSpecs(b, specs); err != nil {
		return err
	}
	if err := c.DigestWindows(ctx, b, specs, out, func(int) bool { return true }); err != nil {
		return err
	}
	EmptyDigests(b, out)
	return nil
}

// EmptyDigests empties out[i] for each empty window i of b, as Digest
// leaves them.
func EmptyDigests(b *Quad, out *[Channels]summary.Digest) {
	for i := range Channels {
		if len(b.F32[i]) == 0 && len(b.F64[i]) == 0 {
			out[i].N = 0
			out[i].Sample = out[i].Sample[:0]
			out[i].Runs = out[i].Runs[:0]
		}
	}
}

// CheckSpecs rejects a sample spacing that summary.DigestSorted would panic
// on (or loop forever on) for any non-empty window of b. A Digest checks
// its specs with it before it digests anything.
func CheckSpecs(b *Quad, specs *[Channels]summary.WindowSpec) error {
	for i := range Channels {
		if len(b.F32[i]) == 0 && len(b.F64[i]) == 0 {
			continue
		}
		if h := specs[i].Spacing; !(h >= 1) || math.IsInf(h, 1) {
			return fmt.Errorf("gpusort: digest window %d: invalid sample spacing %v", i, h)
		}
	}
	return nil
}
