package loadgen

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"streamd/feed"
	"streamd/ingest"
	"streamd/synth"
)

// DefaultFrameValues is the default number of values in a frame of a
// Payload: 256 KiB of float32 values.
const DefaultFrameValues = 1 << 16

// A Payload is the values of one stream rendered once as frames of the
// framed protocol (package ingest), so that a FrameRunner can send them
// over and over at the cost of the writes alone. Every frame but the last
// holds the same number of values. A Payload does not change once made and
// is safe for concurrent use.
type Payload struct {
	stream  string
	f32     bool
	n       int    // values
	per     int    // values per frame
	size    int    // bytes per value
	head    int    // bytes of a frame before its values
	stride  int    // bytes of a full frame
	frames  []byte // the frames, back to back
	skipped skipCount
}

// NewPayload renders values for stream as frames of frameValues values
// (DefaultFrameValues if ≤ 0), as float32 if f32 is set, else as float64,
// on all cores. As a Runner does, it leaves out values that are NaN or
// ±Inf (for float32 frames, also those that overflow float32), counting
// them in Skipped, and sends −0 as +0. values is not modified or kept.
func NewPayload(stream string, values []float64, f32 bool, frameValues int) (*Payload, error) {
	return newPayload(stream, slices.Clone(values), f32, frameValues)
}

// newPayload is NewPayload for values it may modify.
func newPayload(stream string, values []float64, f32 bool, frameValues int) (*Payload, error) {
	if err := feed.ValidName(stream); err != nil {
		return nil, fmt.Errorf("payload: %w", err)
	}
	p := &Payload{stream: stream, f32: f32, per: frameValues, size: 8, skipped: make(skipCount)}
	if p.per <= 0 {
		p.per = DefaultFrameValues
	}
	if f32 {
		p.size = 4
	}
	p.head = ingest.FrameHeadLen(stream)
	if p.per > ingest.MaxFrameValues(stream, p.size) {
		return nil, fmt.Errorf("payload: %d values per frame: %w", p.per, ingest.ErrFrameTooLarge)
	}
	p.stride = p.head + p.size*p.per
	values = cleanValues(values, f32, p.skipped.add)
	p.n = len(values)
	nf := p.frameCount()
	if nf == 0 {
		return p, nil
	}
	p.frames = make([]byte, p.offset(nf))
	errs := make([]error, nf)
	parallel(nf, func(k int) {
		lo, hi := p.offset(k), p.offset(k+1)
		b, err := ingest.AppendFrame(p.frames[lo:lo:hi], stream, values[k*p.per:min((k+1)*p.per, p.n)], f32)
		if err == nil && len(b) != hi-lo {
			err = fmt.Errorf("frame %d is %d bytes, not %d", k, len(b), hi-lo)
		}
		errs[k] = err
	})
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("payload: %w", err)
	}
	return p, nil
}

// SynthPayload draws n values of spec for stream on all cores, arranges
// them in spec.Order and renders them as NewPayload does. The values are
// drawn in blocks of 2^16, block b from its own source seeded with spec.Seed
// and b, so they do not depend on the number of cores (and differ from
// those of synth.Generate with the same spec).
func SynthPayload(spec synth.Spec, stream string, n int, f32 bool, frameValues int) (*Payload, error) {
	if _, err := synth.NewSource(spec); err != nil {
		return nil, err
	}
	if err := synth.Arrange(nil, spec.Order, 0); err != nil {
		return nil, err
	}
	values := make([]float64, n)
	const block = 1 << 16
	parallel((n+block-1)/block, func(b int) {
		s := spec
		s.Seed = blockSeed(spec.Seed, uint64(b))
		src, _ := synth.NewSource(s) // valid: checked above
		for i := range values[b*block : min((b+1)*block, n)] {
			values[b*block+i] = src.Next()
		}
	})
	if err := synth.Arrange(values, spec.Order, spec.Period); err != nil {
		return nil, err
	}
	return newPayload(stream, values, f32, frameValues)
}

// blockSeed mixes a seed and a block number into the seed of the block
// (SplitMix64's finaliser), so that nearby seeds and blocks give unrelated
// sources.
func blockSeed(seed, b uint64) uint64 {
	z := seed + (b+1)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// parallel calls fn(i) for every i in [0, n), on up to GOMAXPROCS
// goroutines, and returns when all calls have.
func parallel(n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// Stream returns the payload's stream name.
func (p *Payload) Stream() string { return p.stream }

// Len returns the number of values of the payload.
func (p *Payload) Len() int { return p.n }

// Float32 reports whether the frames carry float32 values.
func (p *Payload) Float32() bool { return p.f32 }

// Bytes returns the size of the rendered frames.
func (p *Payload) Bytes() int { return len(p.frames) }

// Skipped returns the values left out, by reason.
func (p *Payload) Skipped() map[feed.Reason]int64 { return p.skipped }

// Values returns the payload's values decoded from its frames, in order:
// exactly the values it sends (as float64).
func (p *Payload) Values() []float64 {
	out := make([]float64, p.n)
	parallel(p.frameCount(), func(k int) {
		b := p.frames[p.offset(k)+p.head : p.offset(k+1)]
		dst := out[k*p.per:]
		if p.f32 {
			for i := range len(b) / 4 {
				dst[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
			}
			return
		}
		for i := range len(b) / 8 {
			dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
	})
	return out
}

// frameCount returns the number of frames.
func (p *Payload) frameCount() int { return (p.n + p.per - 1) / p.per }

// offset returns where frame k starts in p.frames, for k ≤ frameCount():
// offset(frameCount()) is the end.
func (p *Payload) offset(k int) int {
	if v := k * p.per; v > p.n {
		// Past the last frame, which holds the rest of the values.
		full := p.n / p.per
		return full*p.stride + p.head + p.size*(p.n-full*p.per)
	}
	return k * p.stride
}

// cut returns frame k cut to its first m values, m > 0: a new frame of
// the same stream and type whose values are the first m of frame k.
func (p *Payload) cut(k, m int) []byte {
	lo := p.offset(k)
	body := p.head - 4 + p.size*m
	b := binary.LittleEndian.AppendUint32(make([]byte, 0, 4+body), uint32(body))
	return append(b, p.frames[lo+4:lo+4+body]...)
}
