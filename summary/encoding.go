package summary

import (
	"encoding/binary"
	"fmt"
	"math"

	"streamd/gksketch"
	"streamd/internal/codec"
	"streamd/lossy"
	"streamd/slidingwindow"
)

// Encoding of a Stream (see streamd/internal/codec for the envelope), magic
// "STRM", version 2:
//
//	epsilon float64, window size uvarint, sliding window uvarint,
//	flags uint8 (1: float64, 2: items; version 1 has only 1),
//	count uvarint, sum float64, min float64, max float64,
//	then the GK sketch, the lossy summary and the sliding window, each as
//	a length-prefixed encoding of its own package; the sliding window's is
//	empty for a history-only stream (NewHistory).
//
// Version 1 is the same, always with a sliding window; it still decodes.
const (
	streamMagic   = "STRM"
	streamVersion = 2
	flagFloat64   = 1
	flagItems     = 2
)

// AppendBinary appends s's encoding to dst.
func (s *History) AppendBinary(dst []byte) ([]byte, error) {
	start := len(dst)
	dst = codec.Begin(dst, streamMagic, streamVersion)
	dst = codec.AppendFloat64(dst, s.cfg.Epsilon)
	dst = binary.AppendUvarint(dst, uint64(s.cfg.WindowSize))
	dst = binary.AppendUvarint(dst, uint64(s.cfg.SlidingWindow))
	var flags byte
	if s.cfg.Float64 {
		flags |= flagFloat64
	}
	if s.cfg.Items {
		flags |= flagItems
	}
	dst = append(dst, flags)
	dst = binary.AppendUvarint(dst, uint64(s.count))
	dst = codec.AppendFloat64(dst, s.sum)
	dst = codec.AppendFloat64(dst, s.min)
	dst = codec.AppendFloat64(dst, s.max)
	encs := []func([]byte) ([]byte, error){s.history.AppendBinary, s.counts.AppendBinary, noRecent}
	if s.recent != nil {
		encs[2] = s.recent.AppendBinary
	}
	for _, enc := range encs {
		b, err := enc(nil)
		if err != nil {
			return nil, fmt.Errorf("encode stream: %w", err)
		}
		dst = codec.AppendBytes(dst, b)
	}
	return codec.End(dst, start), nil
}

// noRecent encodes a missing sliding window: nothing.
func noRecent(dst []byte) ([]byte, error) { return dst, nil }

// MarshalBinary returns s's encoding.
func (s *History) MarshalBinary() ([]byte, error) { return s.AppendBinary(nil) }

// UnmarshalBinary replaces s with the stream encoded in data, checking
// every part; bad input gives an error wrapping codec.ErrCorrupt, never a
// panic.
func (s *History) UnmarshalBinary(data []byte) error {
	p, version, err := codec.OpenVersions(data, streamMagic, 1, streamVersion)
	if err != nil {
		return fmt.Errorf("decode stream: %w", err)
	}
	r := codec.NewReader(p)
	var cfg Config
	cfg.Epsilon = r.Float64()
	cfg.WindowSize = int(r.Int("window size", MaxWindowSize))
	cfg.SlidingWindow = r.Int("sliding window", MaxSlidingWindow)
	flags := r.Byte()
	known := byte(flagFloat64 | flagItems)
	if version == 1 {
		known = flagFloat64
	}
	if flags&^known != 0 || (flags&flagItems != 0 && flags&flagFloat64 == 0) {
		return fmt.Errorf("decode stream: %w: bad flags %#x", codec.ErrCorrupt, flags)
	}
	cfg.Float64 = flags&flagFloat64 != 0
	cfg.Items = flags&flagItems != 0
	if err := r.Err(); err != nil {
		return fmt.Errorf("decode stream: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("decode stream: %w: %w", codec.ErrCorrupt, err)
	}
	d := History{cfg: cfg, history: new(gksketch.Sketch), counts: new(lossy.Summary), recent: new(slidingwindow.Window)}
	d.count = r.Int("count", math.MaxInt64/4)
	d.sum, d.min, d.max = r.Float64(), r.Float64(), r.Float64()
	for i, dec := range []func([]byte) error{d.history.UnmarshalBinary, d.counts.UnmarshalBinary, d.recent.UnmarshalBinary} {
		b := r.Bytes("part", r.Remaining())
		if err := r.Err(); err != nil {
			return fmt.Errorf("decode stream: %w", err)
		}
		if i == 2 && len(b) == 0 && version >= 2 {
			d.recent = nil // a history-only stream
			continue
		}
		if err := dec(b); err != nil {
			return fmt.Errorf("decode stream: %w", err)
		}
	}
	if err := r.Done(); err != nil {
		return fmt.Errorf("decode stream: %w", err)
	}
	switch {
	case d.history.Epsilon() != cfg.Epsilon || d.counts.Epsilon() != cfg.Epsilon || (d.recent != nil && d.recent.Epsilon() != cfg.Epsilon):
		return fmt.Errorf("decode stream: %w: parts disagree on epsilon", codec.ErrCorrupt)
	case d.recent != nil && d.recent.Capacity() != cfg.SlidingWindow:
		return fmt.Errorf("decode stream: %w: sliding window capacity %d, config %d", codec.ErrCorrupt, d.recent.Capacity(), cfg.SlidingWindow)
	case d.history.Count() != d.counts.Count() || d.history.Count() > d.count:
		return fmt.Errorf("decode stream: %w: summaries count %d and %d of %d values", codec.ErrCorrupt, d.history.Count(), d.counts.Count(), d.count)
	}
	if !cfg.Float64 && d.recent != nil {
		d.recent.KeepFloat32() // as NewSlidingWindow makes it
	}
	*s = d
	return nil
}
