package ingest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/segmentio/kafka-go"

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

// pairs decodes the pairs of a line whose first token after the stream
// name, which ends at i, is written as a pair: each token x:y is a pair,
// and one that is not (not two numbers, or no ':') is counted as
// malformed on its own.
func (d *lineDecoder) pairs(line []byte, i int) error {
	b := d.b
	if len(b.vals)+len(b.f32)+b.list.Len() > 0 {
		// The batch holds the values of an earlier line of the stream.
		if err := b.flush(); err != nil {
			return err
		}
	}
	bad := 0
	for i = skipBlanks(line, i); i < len(line); i = skipBlanks(line, i) {
		j := fieldEnd(line, i)
		x, y, ok := parsePair(line[i:j])
		i = j
		if !ok {
			bad++
			continue
		}
		if b.room() == 0 {
			if err := b.flush(); err != nil {
				return err
			}
		}
		b.px, b.py = append(b.px, x), append(b.py, y)
	}
	if bad > 0 {
		b.reject(feed.ReasonMalformed, bad)
	}
	return nil
}

// pairs decodes the pairs of a frame body of type typePairs64, of which
// left bytes (a multiple of pairSize) remain, straight from the read
// buffer, as many at a time as it holds and the batch takes, for flush to
// clean.
func (d *frameDecoder) pairs(left int) error {
	b := d.b
	if len(b.vals)+len(b.f32)+b.list.Len() > 0 {
		// The batch holds values or items of a frame of the same stream.
		if err := b.flush(); err != nil {
			return err
		}
	}
	return d.chunks(left, pairSize, func(buf []byte) {
		b.px, b.py = appendPairs64(b.px, b.py, buf)
	})
}

// pairs appends the pairs of m, a message of stream name in a pairs
// format, to the unit, cleaned (feed.CleanPairs), counting its rejects as
// a message of values counts them: a FormatPairs64 value cut short, or a
// message without any pair, counts one "malformed" and none of it is
// used; in text, each token that is not a pair counts one "malformed". It
// reports whether it appended any pair.
func (p *partitionConsumer) pairs(name string, m *kafka.Message, format Format) bool {
	n := len(p.px)
	bad := 0
	if format == FormatPairs64 {
		if len(m.Value) == 0 || len(m.Value)%pairSize != 0 {
			bad = 1
		} else {
			p.px, p.py = appendPairs64(p.px, p.py, m.Value)
		}
	} else {
		var tokens int
		p.px, p.py, tokens, bad = appendPairsText(p.px, p.py, m.Value)
		if tokens == 0 {
			bad = 1
		}
	}
	x, _, nan, inf := feed.CleanPairs(p.px[n:], p.py[n:])
	p.px, p.py = p.px[:n+len(x)], p.py[:n+len(x)]
	p.rejectMessage(name, nan, inf, bad)
	return len(p.px) > n
}
