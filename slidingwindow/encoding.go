package slidingwindow

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"streamd/internal/codec"
	"streamd/lossy"
)

// Encoding (see streamd/internal/codec for the envelope: magic, version,
// payload, CRC-32C), magic "SWIN", version 3:
//
//	epsilon  float64 LE
//	capacity uvarint
//	pos      uvarint   values ever added
//	firstT   uvarint, lastT uvarint (zig-zag)
//	width    byte: 4 for a window of float32 values (NewFloat32), else 8
//	         (version 3; before, 8)
//	ring     uvarint count, then that many values, oldest first, float32
//	         LE if width is 4, else float64 LE
//	blocks   uvarint count, then per block, oldest first:
//	         level uvarint, start uvarint, size uvarint, first and last
//	         time (zig-zag uvarint), GK summary and lossy summary each as a
//	         length-prefixed encoding of its own package
//	marks    uvarint count, then per mark, oldest first: start uvarint,
//	         first and last time (zig-zag uvarint) (version 2; a version-1
//	         window gets marks made from firstT and lastT, its older times
//	         unknown: 0)
//
// The mode, s0 and the ring's capacity follow from epsilon and capacity.
//
// Version 4 (AppendBinarySince) is version 3 with only the ring's values
// added from a position on, the window's values before it being those of
// the window encoded at that position (UnmarshalBinaryAfter):
//
//	ring     width byte, since uvarint (the position of the first value
//	         encoded), uvarint count (pos − since), then the values
//
// A version-4 encoding of every value the ring holds (since = pos − its
// length) stands on its own; AppendBinarySince writes version 3 then.
const (
	magic         = "SWIN"
	formatVersion = 3
	sinceVersion  = 4
	maxCount      = math.MaxInt64 / 4
)

// AppendBinary appends w's encoding to dst.
func (w *Window) AppendBinary(dst []byte) ([]byte, error) {
	return w.appendBinary(dst, -1)
}

// AppendBinarySince appends w's encoding to dst as AppendBinary does, but
// with only the ring's values added from position since on, when some of
// the values it holds were added before since: UnmarshalBinaryAfter
// rebuilds w from it and w as it was at since. Its cost follows the values
// added since, not those w holds. A since at or before w's oldest raw
// value gives AppendBinary's encoding; one past w's position (Added) is an
// error.
func (w *Window) AppendBinarySince(dst []byte, since int64) ([]byte, error) {
	if since > w.pos {
		return nil, fmt.Errorf("slidingwindow: encode since position %d, past the window's %d", since, w.pos)
	}
	if since <= w.pos-w.ring.len() {
		since = -1
	}
	return w.appendBinary(dst, since)
}

// appendBinary appends w's encoding, version 3, or with since ≥ 0
// version 4 with the ring's values from since on.
func (w *Window) appendBinary(dst []byte, since int64) ([]byte, error) {
	start := len(dst)
	version := byte(formatVersion)
	if since >= 0 {
		version = sinceVersion
	}
	dst = codec.Begin(dst, magic, version)
	dst = codec.AppendFloat64(dst, w.eps)
	dst = binary.AppendUvarint(dst, uint64(w.capacity))
	dst = binary.AppendUvarint(dst, uint64(w.pos))
	dst = binary.AppendVarint(dst, w.firstT)
	dst = binary.AppendVarint(dst, w.lastT)
	dst = w.ring.appendEncoded(dst, w.pos, since)
	dst = binary.AppendUvarint(dst, uint64(len(w.blocks)))
	var err error
	for i := range w.blocks {
		b := &w.blocks[i]
		dst = binary.AppendUvarint(dst, uint64(b.level))
		dst = binary.AppendUvarint(dst, uint64(b.start))
		dst = binary.AppendUvarint(dst, uint64(b.size))
		dst = binary.AppendVarint(dst, b.first)
		dst = binary.AppendVarint(dst, b.last)
		if dst, err = appendNested(dst, b.q.AppendBinary); err != nil {
			return nil, err
		}
		if dst, err = appendNested(dst, b.f.AppendBinary); err != nil {
			return nil, err
		}
	}
	dst = binary.AppendUvarint(dst, uint64(len(w.marks)))
	for i, m := range w.marks {
		dst = binary.AppendUvarint(dst, uint64(m.start))
		dst = binary.AppendVarint(dst, m.first)
		dst = binary.AppendVarint(dst, w.markLast(i))
	}
	return codec.End(dst, start), nil
}

// appendNested appends a varint length and what enc appends.
func appendNested(dst []byte, enc func([]byte) ([]byte, error)) ([]byte, error) {
	b, err := enc(nil)
	if err != nil {
		return nil, err
	}
	return codec.AppendBytes(dst, b), nil
}

// MarshalBinary returns w's encoding.
func (w *Window) MarshalBinary() ([]byte, error) { return w.AppendBinary(nil) }

// UnmarshalBinary replaces w with the window encoded in data, checking its
// structure; bad input gives an error wrapping codec.ErrCorrupt, never a
// panic. An encoding of the values added since a position
// (AppendBinarySince) needs the window as it was then:
// UnmarshalBinaryAfter.
func (w *Window) UnmarshalBinary(data []byte) error {
	return w.UnmarshalBinaryAfter(data, nil)
}

// UnmarshalBinaryAfter replaces w with the window encoded in data, as
// UnmarshalBinary does; an encoding of the values added since a position
// (AppendBinarySince) takes the values before it from prev, the window as
// it was at that position, which must match it: the same ε, capacity and
// precision, and prev's position the one the encoding follows. Else, and
// without prev, it is an error wrapping codec.ErrCorrupt. w takes over
// prev's memory: decoding, whether it succeeds or fails, leaves prev as it
// was, but once w takes values, or another window is decoded after prev,
// prev must no longer be used.
func (w *Window) UnmarshalBinaryAfter(data []byte, prev *Window) error {
	p, version, err := codec.OpenVersions(data, magic, 1, sinceVersion)
	if err != nil {
		return fmt.Errorf("decode sliding window: %w", err)
	}
	r := codec.NewReader(p)
	eps := r.Float64()
	capacity := r.Int("capacity", maxCount)
	if err := r.Err(); err != nil {
		return fmt.Errorf("decode sliding window: %w", err)
	}
	d, err := New(eps, capacity)
	if err != nil {
		return fmt.Errorf("decode sliding window: %w: %w", codec.ErrCorrupt, err)
	}
	d.pos = r.Int("position", maxCount)
	d.firstT = readVarint(r)
	d.lastT = readVarint(r)
	width := int64(8)
	if version >= 3 {
		width = int64(r.Byte())
		if err := r.Err(); err != nil {
			return fmt.Errorf("decode sliding window: %w", err)
		}
		if width != 4 && width != 8 {
			return fmt.Errorf("decode sliding window: %w: values of %d bytes", codec.ErrCorrupt, width)
		}
	}
	since := int64(-1)
	if version == sinceVersion {
		since = r.Int("since", d.pos)
	}
	nr := r.Int("ring length", min(d.ring.capacity, int64(r.Remaining())/width))
	if err := r.Err(); err != nil {
		return fmt.Errorf("decode sliding window: %w", err)
	}
	if since >= 0 && since+nr != d.pos {
		return fmt.Errorf("decode sliding window: %w: %d values from position %d to %d", codec.ErrCorrupt, nr, since, d.pos)
	}
	if since >= 0 && nr < min(d.pos, d.ring.capacity) {
		if err := d.readAfter(r, nr, since, width, prev); err != nil {
			return err
		}
	} else if nr != min(d.pos, d.ring.capacity) {
		return fmt.Errorf("decode sliding window: %w: ring holds %d of %d values", codec.ErrCorrupt, nr, d.pos)
	} else if width == 4 {
		d.ring.float32 = true
		var tail [][]float32
		if d.ring.f32, tail, err = readRing[float32](r, nr, d.ring.capacity, d.pos); err != nil {
			return err
		}
		if tail != nil {
			d.ring.moreChunks().f32 = tail
		}
	} else {
		var tail [][]float64
		if d.ring.f64, tail, err = readRing[float64](r, nr, d.ring.capacity, d.pos); err != nil {
			return err
		}
		if tail != nil {
			d.ring.moreChunks().f64 = tail
		}
	}
	nb := r.Int("blocks", int64(r.Remaining()/8))
	var prevEnd int64 = -1
	for range nb {
		b := block{level: int(r.Int("level", 62)), start: r.Int("start", maxCount), size: r.Int("size", maxCount)}
		b.first, b.last = readVarint(r), readVarint(r)
		qb, fb := r.Bytes("gk summary", r.Remaining()), []byte(nil)
		if r.Err() == nil {
			if err := b.q.UnmarshalBinary(qb); err != nil {
				return fmt.Errorf("decode sliding window: block: %w", err)
			}
			fb = r.Bytes("lossy summary", r.Remaining())
		}
		if err := r.Err(); err != nil {
			return fmt.Errorf("decode sliding window: %w", err)
		}
		b.f = new(lossy.Summary)
		if err := b.f.UnmarshalBinary(fb); err != nil {
			return fmt.Errorf("decode sliding window: block: %w", err)
		}
		if err := checkBlock(d, &b, prevEnd); err != nil {
			return fmt.Errorf("decode sliding window: %w: %w", codec.ErrCorrupt, err)
		}
		prevEnd = b.end()
		d.blocks = append(d.blocks, b)
	}
	if version >= 2 {
		nm := r.Int("marks", int64(r.Remaining()/3))
		for range nm {
			d.marks = append(d.marks, mark{start: r.Int("mark", maxCount), first: readVarint(r), last: readVarint(r)})
		}
	} else {
		d.marks = version1Marks(d)
	}
	if k := len(d.marks); k > 0 {
		d.markStart = d.marks[k-1].start
	}
	if err := checkMarks(d); err != nil && r.Err() == nil {
		return fmt.Errorf("decode sliding window: %w: %w", codec.ErrCorrupt, err)
	}
	if err := r.Done(); err != nil {
		return fmt.Errorf("decode sliding window: %w", err)
	}
	*w = *d
	return nil
}

// readRing reads the n values, oldest first, of a ring of capacity values
// that holds the last of pos values, little-endian of E's width, into the
// chunks a ring that was pushed them would have: the newest at (pos−1) mod
// capacity. A value short leaves r failed, and zeros in the ring.
func readRing[E float32 | float64](r *codec.Reader, n, capacity, pos int64) ([]E, [][]E, error) {
	if r.Err() != nil || n == 0 {
		return nil, nil, nil
	}
	// Lay out the chunks as pushing n values would, a chunk of zeros at a
	// time, then read the values into them.
	var head []E
	var tail [][]E
	zeros := make([]E, min(n, chunkLen))
	for laid := int64(0); laid < n; {
		k := min(int64(len(zeros)), n-laid)
		head, tail, laid = pushTo(head, tail, capacity, laid, zeros[:k])
	}
	// No value kept is NaN or ±Inf: ingest rejects them, and an item's
	// fingerprint is a finite float. A stream's part that mirrors its
	// partial window here takes these values as its own, unchecked.
	finite, bulk := true, hostLittleEndian()
	eachOldestFirst(head, tail, capacity, n, pos, func(run []E) {
		if b := r.Next("values", len(run)*int(unsafe.Sizeof(run[0]))); b != nil {
			finite = readRun(run, b, bulk) && finite
		}
	})
	if !finite {
		return nil, nil, fmt.Errorf("decode sliding window: %w: NaN or ±Inf value", codec.ErrCorrupt)
	}
	return head, tail, nil
}

// readAfter reads the n values of d's ring added from position since on
// and puts them after the values of prev's ring, prev being the window d
// was at since; it leaves prev's values as they are.
func (d *Window) readAfter(r *codec.Reader, n, since, width int64, prev *Window) error {
	switch {
	case prev == nil:
		return fmt.Errorf("decode sliding window: %w: values added since position %d, without the window they follow", codec.ErrCorrupt, since)
	case prev.eps != d.eps || prev.capacity != d.capacity || prev.ring.valueBytes() != width:
		return fmt.Errorf("decode sliding window: %w: values added to another kind of window", codec.ErrCorrupt)
	case prev.pos != since:
		return fmt.Errorf("decode sliding window: %w: values added since position %d to a window at %d", codec.ErrCorrupt, since, prev.pos)
	}
	var err error
	if width == 4 {
		d.ring, err = readExtended[float32](r, &prev.ring, n, since)
	} else {
		d.ring, err = readExtended[float64](r, &prev.ring, n, since)
	}
	return err
}

// readExtended reads n values, little-endian of E's width, and returns a
// ring that holds prev's values and then them, pushed at position pos
// (extended).
func readExtended[E float32 | float64](r *codec.Reader, prev *ring, n, pos int64) (ring, error) {
	vals := make([]E, n)
	b := r.Next("values", len(vals)*int(unsafe.Sizeof(E(0))))
	if err := r.Err(); err != nil {
		return ring{}, fmt.Errorf("decode sliding window: %w", err)
	}
	if !readRun(vals, b, hostLittleEndian()) {
		return ring{}, fmt.Errorf("decode sliding window: %w: NaN or ±Inf value", codec.ErrCorrupt)
	}
	return extended(prev, pos, vals), nil
}

func readVarint(r *codec.Reader) int64 {
	u := r.Uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// checkBlock checks a decoded block against its window and predecessor.
func checkBlock(w *Window, b *block, prevEnd int64) error {
	switch {
	case w.mode != Blocks:
		return fmt.Errorf("block in an exact window")
	case b.size != w.s0<<b.level:
		return fmt.Errorf("block of level %d has %d values", b.level, b.size)
	case b.end() > w.pos || (prevEnd >= 0 && b.start != prevEnd):
		return fmt.Errorf("block [%d, %d) out of place", b.start, b.end())
	case b.q.Count() != b.size || b.f.Count() != b.size:
		return fmt.Errorf("block summaries count %d and %d of %d values", b.q.Count(), b.f.Count(), b.size)
	case b.f.Epsilon() != w.eps:
		return fmt.Errorf("block epsilon %v", b.f.Epsilon())
	}
	return nil
}

// version1Marks returns marks for a version-1 window, which kept only the
// arrival time of its newest value and of the first value not yet in a
// block (in Exact mode: of the current run of s0 values): the values
// before that run get arrival time 0, unknown.
func version1Marks(w *Window) []mark {
	if w.ring.len() == 0 {
		return nil
	}
	oldest := w.pos - w.ring.len()
	open := w.pos - w.pos%w.s0
	if open == w.pos {
		open -= w.s0
	}
	if open <= oldest {
		return []mark{{start: oldest, first: w.firstT, last: w.lastT}}
	}
	return []mark{{start: oldest, first: 0, last: w.firstT}, {start: open, first: w.firstT, last: w.lastT}}
}

// checkMarks checks a decoded window's marks: ascending, inside the ring,
// the first at or before its oldest value, times never going back, the
// last ending at the newest value's time.
func checkMarks(w *Window) error {
	if w.ring.len() == 0 {
		if len(w.marks) > 0 {
			return fmt.Errorf("marks in an empty window")
		}
		return nil
	}
	if len(w.marks) == 0 || w.marks[0].start > w.pos-w.ring.len() || w.marks[len(w.marks)-1].last != w.lastT {
		return fmt.Errorf("marks do not cover the ring")
	}
	for i, m := range w.marks {
		if m.first > m.last || m.start >= w.pos || (i > 0 && (m.start <= w.marks[i-1].start || m.first < w.marks[i-1].last)) {
			return fmt.Errorf("mark %d out of place", i)
		}
	}
	return nil
}
