package ingest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"streamd/feed"
)

// typePairs64 is the value type of a frame of pairs: x and y as binary64,
// little-endian, pair after pair.
const typePairs64 = 4

// pairSize is the size of a pair in a frame of type typePairs64, and in
// a Kafka message of FormatPairs64.
const pairSize = 16

// AppendPairsFrame appends to dst a frame of the framed protocol that
// carries the pairs (x[i], y[i]) for the pair stream stream, each as x
// then y, binary64 little-endian, and returns the extended buffer. It
// fails, returning dst unchanged, if stream is not a valid stream name, if
// x and y differ in length, or if the frame would be longer than
// MaxFrameLen (an error wrapping ErrFrameTooLarge): a frame holds at most
// about 1 Mi pairs. The connection must start with Magic.
func AppendPairsFrame(dst []byte, stream string, x, y []float64) ([]byte, error) {
	if err := feed.ValidName(stream); err != nil {
		return dst, fmt.Errorf("append pairs frame: %w", err)
	}
	if len(x) != len(y) {
		return dst, fmt.Errorf("append pairs frame: %d x and %d y", len(x), len(y))
	}
	head := 2 + len(stream) + 1
	if len(x) > (MaxFrameLen-head)/pairSize {
		return dst, fmt.Errorf("append pairs frame of %d pairs for stream %q: %w", len(x), stream, ErrFrameTooLarge)
	}
	dst = appendFrameHead(dst, head+pairSize*len(x), stream, typePairs64)
	return appendPairBytes(dst, x, y), nil
}

// appendPairBytes appends the pairs (x[i], y[i]) as binary64
// little-endian, x then y.
func appendPairBytes(dst []byte, x, y []float64) []byte {
	dst = slices.Grow(dst, pairSize*len(x))
	for i, v := range x {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(y[i]))
	}
	return dst
}

// appendPairs64 appends the pairs of data, pairs of binary64 little-endian
// numbers x then y (len(data) a multiple of pairSize), to px and py, as
// they are: the caller cleans them (feed.CleanPairs).
func appendPairs64(px, py []float64, data []byte) ([]float64, []float64) {
	n := len(data) / pairSize
	px, py = slices.Grow(px, n), slices.Grow(py, n)
	for i := range n {
		px = append(px, math.Float64frombits(binary.LittleEndian.Uint64(data[pairSize*i:])))
		py = append(py, math.Float64frombits(binary.LittleEndian.Uint64(data[pairSize*i+8:])))
	}
	return px, py
}

// isPairToken reports whether tok is written as a pair, x:y: whether it
// holds a ':'. No number does.
func isPairToken(tok []byte) bool { return bytes.IndexByte(tok, ':') >= 0 }

// parsePair parses the token "x:y" of two decimal numbers, each as
// parseFloat does. ok is false unless tok holds exactly one ':' between
// two numbers; a number too large for a float64 is ±Inf with ok true.
func parsePair(tok []byte) (x, y float64, ok bool) {
	i := bytes.IndexByte(tok, ':')
	if i < 0 {
		return 0, 0, false
	}
	x, okx := parseFloat(tok[:i])
	y, oky := parseFloat(tok[i+1:])
	return x, y, okx && oky
}

// appendPairsText appends the pairs of b, in FormatPairsText, to px and
// py. It returns the number of tokens of b and of those that are not
// pairs, which are skipped.
func appendPairsText(px, py []float64, b []byte) (_, _ []float64, tokens, bad int) {
	i := 0
	for {
		for i < len(b) && isTextSep(b[i]) {
			i++
		}
		if i == len(b) {
			return px, py, tokens, bad
		}
		j := i
		for j < len(b) && !isTextSep(b[j]) {
			j++
		}
		tokens++
		if x, y, ok := parsePair(b[i:j]); ok {
			px, py = append(px, x), append(py, y)
		} else {
			bad++
		}
		i = j
	}
}
