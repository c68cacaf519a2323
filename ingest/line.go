package ingest

import (
	"bufio"
	"bytes"
	"io"
	"math"
	"strconv"

	"streamd/feed"
)

// A lineDecoder decodes the line protocol.
type lineDecoder struct {
	br  *bufio.Reader
	b   *batch
	max int // MaxLineBytes

	// long gathers a line longer than the read buffer, up to max+2 bytes
	// plus one buffer: beyond that the line is too long and skipped.
	long     []byte
	skipping bool // skip up to the next newline
}

// run decodes lines until the input ends.
func (d *lineDecoder) run() error {
	for {
		buf, _ := d.br.Peek(d.br.Buffered())
		i := bytes.IndexByte(buf, '\n')
		if i >= 0 && !d.skipping && len(d.long) == 0 {
			// The common case: a whole line in the buffer. The bytes
			// stay valid until the next read of br.
			err := d.line(buf[:i+1])
			d.br.Discard(i + 1)
			if err != nil {
				return err
			}
			continue
		}
		if i < 0 {
			// Hand over what was decoded before waiting for more
			// input.
			if err := d.b.flush(); err != nil {
				return err
			}
			// Meanwhile the stream may be created, or deleted and
			// created again, of the other kind: the next line looks
			// up whether it takes items.
			d.b.stream = ""
		}
		chunk, err := d.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			d.grow(chunk)
			continue
		}
		switch {
		case d.skipping:
			d.skipping = false
		case len(d.long) == 0 && len(chunk) == 0:
		case err == nil || err == io.EOF:
			line := chunk
			if len(d.long) > 0 {
				d.long = append(d.long, chunk...)
				line = d.long
			}
			if lerr := d.line(line); lerr != nil {
				return lerr
			}
		default:
			// A read error cut the line short: its last value may be
			// cut too, so none of it is used.
			d.b.count("", feed.ReasonMalformed, 1)
		}
		if cap(d.long) > 4*d.br.Size() {
			d.long = nil // do not keep a long line's memory
		}
		d.long = d.long[:0]
		if err != nil {
			return d.b.end(err)
		}
	}
}

// grow adds chunk, a part of a line that does not fit in the read buffer,
// to d.long, or skips the line if it is too long.
func (d *lineDecoder) grow(chunk []byte) {
	if d.skipping {
		return
	}
	d.long = append(d.long, chunk...)
	// With max+2 bytes and no newline, the line is longer than max even
	// if its last byte is the "\r" of a "\r\n".
	if len(d.long) >= d.max+2 {
		d.tooLong(d.long)
		d.skipping = true
		d.long = d.long[:0]
	}
}

// tooLong counts line, of more than max bytes, as too long.
func (d *lineDecoder) tooLong(line []byte) {
	prefix := line[:d.max+1]
	i := skipBlanks(prefix, 0)
	j := fieldEnd(prefix, i)
	stream := ""
	if j < len(prefix) && feed.IsValidName(prefix[i:j]) {
		stream = string(prefix[i:j])
	}
	d.b.rejectFor(stream, feed.ReasonLineTooLong, 1)
}

// line decodes one line, with or without its line ending.
func (d *lineDecoder) line(line []byte) error {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(line) > d.max {
		d.tooLong(line)
		return nil
	}
	i := skipBlanks(line, 0)
	if i == len(line) || line[i] == '#' {
		return nil
	}
	j := fieldEnd(line, i)
	if name := line[i:j]; string(name) != d.b.stream {
		if !feed.IsValidName(name) {
			n := 0
			for i = skipBlanks(line, j); i < len(line); i = skipBlanks(line, j) {
				j = fieldEnd(line, i)
				n++
			}
			d.b.count("", feed.ReasonBadStreamName, max(n, 1))
			return nil
		}
		if err := d.b.setStream(name); err != nil {
			return err
		}
		// Only a line says nothing of its kind: a frame's type does, so
		// the frame decoder does not look the stream up here.
		d.b.lineItems = d.b.sink.IsItemStream(d.b.stream)
	}
	if d.b.lineItems {
		return d.items(line, j)
	}
	if k := skipBlanks(line, j); k < len(line) && isPairToken(line[k:fieldEnd(line, k)]) {
		return d.pairs(line, j)
	}
	if len(d.b.px) > 0 {
		// The batch holds the pairs of an earlier line of the stream.
		if err := d.b.flush(); err != nil {
			return err
		}
	}
	good, bad := 0, 0
	for i = skipBlanks(line, j); i < len(line); i = skipBlanks(line, j) {
		j = fieldEnd(line, i)
		v, ok := parseFloat(line[i:j])
		if !ok {
			bad++
			continue
		}
		if d.b.room() == 0 {
			if err := d.b.flush(); err != nil {
				return err
			}
		}
		good++
		if v-v != 0 { // NaN or ±Inf: the value rule (feed.CleanValues)
			d.b.rejectNonFinite(nanOrInf(v))
			continue
		}
		d.b.vals = append(d.b.vals, v+0) // −0 becomes +0
	}
	if bad > 0 {
		d.b.reject(feed.ReasonMalformed, bad)
	}
	if good+bad == 0 {
		d.b.reject(feed.ReasonMalformed, 1)
	}
	return nil
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// skipBlanks returns the offset of the first byte of line at or after i that
// is not a blank, or len(line).
func skipBlanks(line []byte, i int) int {
	for i < len(line) && isBlank(line[i]) {
		i++
	}
	return i
}

// fieldEnd returns the offset of the first blank of line at or after i, or
// len(line).
func fieldEnd(line []byte, i int) int {
	for i < len(line) && !isBlank(line[i]) {
		i++
	}
	return i
}

// parseFloat parses the decimal number tok as strconv.ParseFloat(tok, 64)
// does, with the same result to the bit. ok is false if tok is not a
// decimal number (digit separators and hexadecimal are refused); a number
// too large for a float64 is ±Inf with ok true.
func parseFloat(tok []byte) (v float64, ok bool) {
	if v, ok := parseSimple(tok); ok {
		return v, true
	}
	// Values are decimal: ParseFloat also takes Go's digit separators
	// (1_000) and hexadecimal (0x1p-2).
	if bytes.ContainsAny(tok, "_xX") {
		return 0, false
	}
	// The conversion does not allocate for tokens of up to 32 bytes:
	// ParseFloat does not keep its argument.
	v, err := strconv.ParseFloat(string(tok), 64)
	return v, err == nil || math.IsInf(v, 0) // ±Inf is an out-of-range number
}

// parseSimple parses the most common numbers, [+-]ddd[.ddd] with at most 15
// digits, about twice as fast as strconv.ParseFloat. ok is false for
// anything else, which may or may not be a number.
//
// The digits make an integer m < 10^15 < 2^53 and the number is m/10^k with
// k ≤ 15; both are exact float64 values, so the one rounding of the
// division gives the correctly rounded result, as strconv does on this
// same fast path (Clinger, "How to read floating point numbers accurately",
// PLDI 1990).
func parseSimple(tok []byte) (v float64, ok bool) {
	neg := false
	if len(tok) > 0 && (tok[0] == '-' || tok[0] == '+') {
		neg = tok[0] == '-'
		tok = tok[1:]
	}
	if len(tok) == 0 || len(tok) > 16 {
		return 0, false
	}
	var m uint64
	scale := 1.0 // 10^(digits after the dot), exact
	digits, dot := 0, false
	for _, c := range tok {
		switch {
		case '0' <= c && c <= '9':
			m = m*10 + uint64(c-'0')
			digits++
			if dot {
				scale *= 10
			}
		case c == '.' && !dot:
			dot = true
		default:
			return 0, false
		}
	}
	if digits == 0 || digits > 15 {
		return 0, false
	}
	v = float64(m) / scale
	if neg {
		v = -v
	}
	return v, true
}

// items decodes the items of a line of an item stream, from offset i (see
// itemTokens). A line without items counts one "malformed".
func (d *lineDecoder) items(line []byte, i int) error {
	tokens := itemTokens(line, i, &d.b.list, func(r feed.Reason) { d.b.reject(r, 1) })
	if tokens == 0 {
		d.b.reject(feed.ReasonMalformed, 1)
	}
	if !d.b.itemRoom() {
		return d.b.flush()
	}
	return nil
}

// nanOrInf counts v, NaN or ±Inf, as CleanValues does: (1, 0) for NaN, (0,
// 1) for ±Inf.
func nanOrInf(v float64) (nan, inf int) {
	if v != v {
		return 1, 0
	}
	return 0, 1
}
