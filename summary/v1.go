package summary

import (
	"fmt"

	"streamd/internal/codec"
	"streamd/slidingwindow"
)

// Compatibility with version 1 encodings (see encoding.go), written when a
// History kept its stream's sliding window too. Nothing writes them any
// more; they are read so that old checkpoints still restore.

// DecodeV1 decodes a version 1 encoding of a stream: its all-history
// summaries as a History, and its sliding window apart, made as
// NewSlidingWindow makes it. Bad input gives an error wrapping
// codec.ErrCorrupt, never a panic.
func DecodeV1(data []byte) (*History, *slidingwindow.Window, error) {
	p, err := codec.Open(data, streamMagic, 1)
	if err != nil {
		return nil, nil, fmt.Errorf("decode version 1 stream: %w", err)
	}
	h, b, err := decodeHistory(p, 1)
	if err != nil {
		return nil, nil, fmt.Errorf("decode version 1 stream: %w", err)
	}
	cfg := h.Config()
	recent := new(slidingwindow.Window)
	if err := recent.UnmarshalBinary(b); err != nil {
		return nil, nil, fmt.Errorf("decode version 1 stream: %w", err)
	}
	switch {
	case recent.Epsilon() != cfg.Epsilon:
		return nil, nil, fmt.Errorf("decode version 1 stream: %w: parts disagree on epsilon", codec.ErrCorrupt)
	case recent.Capacity() != cfg.SlidingWindow:
		return nil, nil, fmt.Errorf("decode version 1 stream: %w: sliding window capacity %d, config %d", codec.ErrCorrupt, recent.Capacity(), cfg.SlidingWindow)
	}
	if !cfg.Float64 {
		recent.KeepFloat32() // as NewSlidingWindow makes it
	}
	return h, recent, nil
}
