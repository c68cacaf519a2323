package summary

import (
	"encoding/binary"
	"fmt"
	"math"

	"streamd/gksketch"
	"streamd/internal/codec"
	"streamd/lossy"
)

// Encoding of a History (see streamd/internal/codec for the envelope),
// magic "STRM", version 2:
//
//	epsilon float64, window size uvarint, sliding window uvarint,
//	flags uint8 (1: float64, 2: items, 4: pairs; version 1 has only 1),
//	count uvarint, sum float64, min float64, max float64,
//	then the GK sketch, the lossy summary and a sliding window, each as
//	a length-prefixed encoding of its own package; the sliding window's is
//	always empty.
//
// Version 1 is the same, always with the stream's sliding window: DecodeV1
// (v1.go) reads it.
const (
	streamMagic   = "STRM"
	streamVersion = 2
	flagFloat64   = 1
	flagItems     = 2
	flagPairs     = 4
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
	if s.cfg.Pairs {
		flags |= flagPairs
	}
	dst = append(dst, flags)
	dst = binary.AppendUvarint(dst, uint64(s.count))
	dst = codec.AppendFloat64(dst, s.sum)
	dst = codec.AppendFloat64(dst, s.min)
	dst = codec.AppendFloat64(dst, s.max)
	// The summaries, each prefixed with its length, encoded in place, and
	// before the first window as empty ones made on the stack: a
	// checkpoint encodes every stream changed, most of a million of them
	// with no summary yet.
	sketch, counts := s.history, s.counts
	if sketch == nil {
		sketch, _ = gksketch.NewSketch(s.cfg.Epsilon) // the config was validated
	}
	if counts == nil {
		counts, _ = lossy.New(s.cfg.Epsilon)
	}
	dst, at := codec.BeginLength(dst)
	dst, err := sketch.AppendBinary(dst)
	if err != nil {
		return nil, fmt.Errorf("encode stream: %w", err)
	}
	dst, at = codec.BeginLength(codec.EndLength(dst, at))
	if dst, err = counts.AppendBinary(dst); err != nil {
		return nil, fmt.Errorf("encode stream: %w", err)
	}
	dst = codec.EndLength(dst, at)
	dst = codec.AppendBytes(dst, nil) // no sliding window
	return codec.End(dst, start), nil
}

// MarshalBinary returns s's encoding.
func (s *History) MarshalBinary() ([]byte, error) { return s.AppendBinary(nil) }

// UnmarshalBinary replaces s with the history encoded in data, checking
// every part; bad input, a sliding window among them included, gives an
// error wrapping codec.ErrCorrupt, never a panic. A version 1 encoding,
// which holds a sliding window, fails with codec.ErrVersion: DecodeV1
// reads it.
func (s *History) UnmarshalBinary(data []byte) error {
	p, err := codec.Open(data, streamMagic, streamVersion)
	if err != nil {
		return fmt.Errorf("decode stream: %w", err)
	}
	d, recent, err := decodeHistory(p, streamVersion)
	if err != nil {
		return fmt.Errorf("decode stream: %w", err)
	}
	if len(recent) > 0 {
		return fmt.Errorf("decode stream: %w: a sliding window in a history", codec.ErrCorrupt)
	}
	*s = *d
	return nil
}

// decodeHistory decodes the payload p of a version's encoding: the history
// it holds, and the encoding of the sliding window that follows it,
// undecoded.
func decodeHistory(p []byte, version byte) (*History, []byte, error) {
	r := codec.NewReader(p)
	var cfg Config
	cfg.Epsilon = r.Float64()
	cfg.WindowSize = int(r.Int("window size", MaxWindowSize))
	cfg.SlidingWindow = r.Int("sliding window", MaxSlidingWindow)
	flags := r.Byte()
	known := byte(flagFloat64 | flagItems | flagPairs)
	if version == 1 {
		known = flagFloat64
	}
	if flags&^known != 0 || (flags&(flagItems|flagPairs) != 0 && flags&flagFloat64 == 0) {
		return nil, nil, fmt.Errorf("%w: bad flags %#x", codec.ErrCorrupt, flags)
	}
	cfg.Float64 = flags&flagFloat64 != 0
	cfg.Items = flags&flagItems != 0
	cfg.Pairs = flags&flagPairs != 0
	if err := r.Err(); err != nil {
		return nil, nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", codec.ErrCorrupt, err)
	}
	h := &historyOf{cfg: cfg}
	d := &h.History
	d.cfg, d.history, d.counts = &h.cfg, new(gksketch.Sketch), new(lossy.Summary)
	d.count = r.Int("count", math.MaxInt64/4)
	d.sum, d.min, d.max = r.Float64(), r.Float64(), r.Float64()
	for _, dec := range []func([]byte) error{d.history.UnmarshalBinary, d.counts.UnmarshalBinary} {
		b := r.Bytes("part", r.Remaining())
		if err := r.Err(); err != nil {
			return nil, nil, err
		}
		if err := dec(b); err != nil {
			return nil, nil, err
		}
	}
	recent := r.Bytes("part", r.Remaining())
	if err := r.Done(); err != nil {
		return nil, nil, err
	}
	switch {
	case d.history.Epsilon() != cfg.Epsilon || d.counts.Epsilon() != cfg.Epsilon:
		return nil, nil, fmt.Errorf("%w: parts disagree on epsilon", codec.ErrCorrupt)
	case d.history.Count() != d.counts.Count() || d.history.Count() > d.count:
		return nil, nil, fmt.Errorf("%w: summaries count %d and %d of %d values", codec.ErrCorrupt, d.history.Count(), d.counts.Count(), d.count)
	}
	if d.history.Count() == 0 {
		// As before its first window: a history makes its summaries then.
		d.history, d.counts = nil, nil
	}
	return d, recent, nil
}
