// Package gpusort sorts batches of four windows, the unit of work of the
// stream-mining pipeline of Govindaraju, Raghuvanshi and Manocha (SIGMOD
// 2005): four windows travel together as the four colour channels (RGBA) of
// one texture and are sorted at once.
//
// One interface, Sorter, has several back-ends. The CPU back-end (NewCPU) is
// an LSD radix sort through the order-preserving float-to-integer key
// transform; it is the default and the baseline. The GPU back-ends live
// behind the "gpu" build tag so that the default build is pure Go. The
// pipeline uses Digester (sort, then only each window's summary digest
// back) and, where a back-end offers it, Stager (window buffers in the
// memory the GPU uploads from, filled in place). Windows of pair streams,
// (x, y) values sorted by x with y carried along, are sorted one window at
// a time by PairSorter.
//
// This package holds the interfaces, the Quad, the CPU back-end and
// Auto (the GPU unless the CPU is far faster), and imports no GL. The rest
// is in subpackages, each importing this one:
//
//   - gpusort/registry lists the compiled-in back-ends by name (Lookup),
//     the way the daemon picks one;
//   - gpusort/compute is the compute-shader back-end ("compute");
//   - gpusort/fragment holds the papers' texture and blending sorts
//     ("pbsn", "bitonic");
//   - gpusort/glctx makes the OpenGL context (EGL or GLFW) and owns it on
//     a locked thread, for both GPU back-ends.
//
// # Keys
//
// Keys are float32 (the paper's textures) or float64. NaN never reaches a
// sorter: ingest rejects it, and a sorter's result is unspecified if one
// does. The CPU back-end orders −0 before +0 (their bit patterns differ); a
// GPU back-end comparing by blending treats them as equal and may leave them
// in either order. streamd's ingest turns −0 into +0, so the pipeline never
// sees the difference.
package gpusort

import (
	"context"
	"errors"
)

// Channels is the number of windows sorted together: the R, G, B and A
// channels of one texture.
const Channels = 4

// ErrClosed is returned by a Sorter used after Close.
var ErrClosed = errors.New("gpusort: sorter closed")

// Quad is up to four windows sorted together. A window may be nil or empty;
// windows need not have the same length. Exactly one of the two key widths
// is used by a batch: F32 for float32 streams, F64 for float64 streams.
type Quad struct {
	F32 [Channels][]float32
	F64 [Channels][]float64
}

// Len reports the total number of keys in b.
func (b *Quad) Len() int {
	n := 0
	for i := range Channels {
		n += len(b.F32[i]) + len(b.F64[i])
	}
	return n
}

// Sorter sorts every window of a batch in place in ascending order.
// Implementations are safe for concurrent use unless they say otherwise.
type Sorter interface {
	// Sort sorts each window of b in place. It returns an error wrapping
	// ctx.Err() if ctx ends first, in which case the windows' order is
	// unspecified but their contents are a permutation of the input.
	Sort(ctx context.Context, b *Quad) error
	// Name identifies the back-end ("cpu", "auto", "pbsn", "bitonic",
	// "compute", "compute-radix", "compute-bitonic").
	Name() string
	// Close releases the back-end's resources. Sort fails with ErrClosed
	// afterwards.
	Close() error
}

// Constructor makes a Sorter. The daemon picks one by name from the
// registry of back-ends (gpusort/registry).
type Constructor func() (Sorter, error)
