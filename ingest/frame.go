package ingest

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"

	"streamd/feed"
	"streamd/items"
)

// Magic starts a connection that speaks the framed protocol.
const Magic = "\x00SDB"

// The value types of a frame.
const (
	typeFloat32 = 1
	typeFloat64 = 2
	typeItems   = 3
)

// AppendFrame appends to dst a frame of the framed protocol that carries
// values for stream, as float32 if f32 is set (values outside the float32
// range become ±Inf and will be rejected), else as float64, and returns the
// extended buffer. It fails, returning dst unchanged, if stream is not a
// valid stream name or if the frame would be longer than MaxFrameLen (an
// error wrapping ErrFrameTooLarge): a frame holds at most about 4 Mi float32
// or 2 Mi float64 values. The connection must start with Magic.
func AppendFrame(dst []byte, stream string, values []float64, f32 bool) ([]byte, error) {
	if err := feed.ValidName(stream); err != nil {
		return dst, fmt.Errorf("append frame: %w", err)
	}
	size, typ := 8, byte(typeFloat64)
	if f32 {
		size, typ = 4, typeFloat32
	}
	if len(values) > MaxFrameValues(stream, size) {
		return dst, fmt.Errorf("append frame of %d values for stream %q: %w", len(values), stream, ErrFrameTooLarge)
	}
	dst = appendFrameHead(dst, FrameHeadLen(stream)-4+size*len(values), stream, typ)
	if f32 {
		for _, v := range values {
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(v)))
		}
	} else {
		for _, v := range values {
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
		}
	}
	return dst, nil
}

// FrameHeadLen returns the bytes of a frame of values for stream that
// come before its values: the frame's length, the stream's name and the
// values' type.
func FrameHeadLen(stream string) int { return 4 + 2 + len(stream) + 1 }

// MaxFrameValues returns the most values of size bytes (4 for float32, 8
// for float64) that a frame for stream holds.
func MaxFrameValues(stream string, size int) int {
	return (MaxFrameLen - (FrameHeadLen(stream) - 4)) / size
}

// appendFrameHead appends the length, stream name and type of a frame with
// a body of body bytes.
func appendFrameHead(dst []byte, body int, stream string, typ byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(body))
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(stream)))
	dst = append(dst, stream...)
	return append(dst, typ)
}

// A frameDecoder decodes the framed protocol, after the magic.
type frameDecoder struct {
	br  *bufio.Reader
	b   *batch
	max int // MaxFrameBytes

	// hints tells the sink, if it takes hints, the streams of the frames
	// buffered ahead (see prefetch).
	hints hinter
}

// run decodes frames until the input ends.
func (d *frameDecoder) run() error {
	for {
		if d.hints.due() {
			d.prefetch()
		}
		hdr, err := d.peek(4)
		if err != nil {
			if len(hdr) > 0 && d.b.err == nil {
				d.b.count("", feed.ReasonMalformed, 1)
			}
			return d.b.end(err)
		}
		n := binary.LittleEndian.Uint32(hdr)
		d.br.Discard(4)
		if int64(n) > int64(d.max) {
			d.b.count("", feed.ReasonFrameTooLarge, 1)
			if err := d.b.flush(); err != nil {
				return err
			}
			return fmt.Errorf("frame of %d bytes, limit %d: %w", n, d.max, ErrFrameTooLarge)
		}
		if err := d.frame(int(n)); err != nil {
			return d.b.end(err)
		}
	}
}

// prefetch tells the sink the streams of the frames from the next one
// on, as far as the buffer holds their heads and up to prefetchFrames of
// them (see hinter). The heads are only read here: the frames are checked
// as they are decoded.
func (d *frameDecoder) prefetch() {
	buf, _ := d.br.Peek(d.br.Buffered())
	frames := 0
	for frames < prefetchFrames && len(buf) >= 6 {
		n := int64(binary.LittleEndian.Uint32(buf))
		nameLen := int(binary.LittleEndian.Uint16(buf[4:]))
		if n < int64(2+nameLen+1) || len(buf) < 6+nameLen {
			break
		}
		d.hints.add(buf[6 : 6+nameLen])
		frames++
		if n > int64(len(buf)-4) {
			break
		}
		buf = buf[4+n:]
	}
	d.hints.tell(frames)
}

// peek returns the next n bytes of input, as bufio.Reader.Peek does, n ≤
// the buffer size. If they have not all arrived yet, it first hands the
// batch to the sink, so that no value waits for input that may be long to
// come. It returns the error of Accept, if any, before reading.
func (d *frameDecoder) peek(n int) ([]byte, error) {
	if d.br.Buffered() < n {
		if err := d.b.flush(); err != nil {
			return nil, err
		}
	}
	return d.br.Peek(n)
}

// frame decodes a frame body of n bytes, which is at most d.max. It returns
// the error that ended the input while reading the frame, or the error of
// Accept; a frame cut short is counted.
func (d *frameDecoder) frame(n int) error {
	if n < 3 {
		return d.skip(n, "", feed.ReasonMalformed)
	}
	hdr, err := d.peek(2)
	if err != nil {
		return d.cut("", err)
	}
	nameLen := int(binary.LittleEndian.Uint16(hdr))
	switch {
	case 2+nameLen+1 > n:
		return d.skip(n, "", feed.ReasonMalformed)
	case nameLen == 0 || nameLen > feed.MaxNameLen:
		return d.skip(n, "", feed.ReasonBadStreamName)
	}
	hdr, err = d.peek(2 + nameLen + 1)
	if err != nil {
		return d.cut("", err)
	}
	name, typ := hdr[2:2+nameLen], hdr[2+nameLen]
	if !feed.IsValidName(name) {
		return d.skip(n, "", feed.ReasonBadStreamName)
	}
	var size int
	switch typ {
	case typeFloat32:
		size = 4
	case typeFloat64:
		size = 8
	case typeItems:
		size = 1
	case typePairs64:
		size = pairSize
	default:
		return d.skip(n, string(name), feed.ReasonBadValueType)
	}
	left := n - (2 + nameLen + 1)
	if left%size != 0 {
		return d.skip(n, string(name), feed.ReasonMalformed)
	}
	if string(name) != d.b.stream {
		if err := d.b.setStream(name); err != nil {
			return err
		}
	}
	d.br.Discard(2 + nameLen + 1)
	switch typ {
	case typeItems:
		return d.items(left)
	case typePairs64:
		return d.pairs(left)
	}
	b := d.b
	if b.list.Len() > 0 || len(b.px) > 0 || size == 4 && len(b.vals) > 0 || size == 8 && len(b.f32) > 0 {
		// The batch holds items, pairs, or values of the other precision,
		// of a frame of the same stream.
		if err := b.flush(); err != nil {
			return err
		}
	}
	// Values are cleaned as they are decoded, and float32 values measured.
	if size == 8 {
		return d.chunks(left, size, func(buf []byte) {
			var nan, inf int
			b.vals, nan, inf = DecodeFloat64(b.vals, buf)
			b.rejectNonFinite(nan, inf)
		})
	}
	return d.chunks(left, size, func(buf []byte) {
		var m feed.Moments
		var nan, inf int
		b.f32, m, nan, inf = DecodeFloat32(b.f32, buf)
		b.moments = b.moments.Add(m)
		b.rejectNonFinite(nan, inf)
	})
}

// chunks hands decode the left bytes of a frame body of fixed-size
// records, size bytes each, straight from the read buffer: each call gets
// as many whole records as the buffer holds and the batch has room for,
// the batch flushed first when it is full. It returns the error of Accept,
// or the error that ended the input, the frame counted as cut.
func (d *frameDecoder) chunks(left, size int, decode func(buf []byte)) error {
	b := d.b
	for left > 0 {
		if b.room() == 0 {
			if err := b.flush(); err != nil {
				return err
			}
		}
		if _, err := d.peek(size); err != nil {
			return d.cut(b.stream, err)
		}
		k := min(d.br.Buffered(), left, b.room()*size)
		k -= k % size
		buf, _ := d.br.Peek(k)
		decode(buf)
		d.br.Discard(k)
		left -= k
	}
	return nil
}

// items decodes the items of a frame body, of which left bytes remain:
// items := (length:uint16 item:[length]byte)*. An item over items.MaxLen
// bytes, empty or not valid UTF-8 is counted and skipped on its own; an
// item that runs past the end of the frame counts one "malformed" and ends
// the frame. Items are decoded straight from the read buffer, as many at a
// time as it holds whole.
func (d *frameDecoder) items(left int) error {
	b := d.b
	if len(b.vals)+len(b.f32)+len(b.px) > 0 {
		if err := b.flush(); err != nil {
			return err
		}
	}
	for left > 0 {
		if !b.itemRoom() {
			if err := b.flush(); err != nil {
				return err
			}
		}
		buf, _ := d.br.Peek(min(d.br.Buffered(), left))
		used := 0
		for used+2 <= len(buf) && b.itemRoom() {
			if n, end := itemRun(buf[used:], batchLen-b.list.Len(), batchItemBytes-b.list.Size()); n > 0 {
				b.appendRun(buf[used : used+end])
				used += end
				continue
			}
			// The next item is empty, too long, or not in the buffer whole.
			k := int(buf[used]) | int(buf[used+1])<<8
			if used+2+k > len(buf) {
				break
			}
			item := buf[used+2 : used+2+k]
			if r := feed.ItemReason(item); r != "" {
				b.reject(r, 1)
			} else {
				b.list.Append(item)
			}
			used += 2 + k
		}
		if used > 0 {
			d.br.Discard(used)
			left -= used
			continue
		}
		// The next item is not in the buffer whole.
		if left < 2 {
			return d.skip(left, b.stream, feed.ReasonMalformed)
		}
		hdr, err := d.peek(2)
		if err != nil {
			return d.cut(b.stream, err)
		}
		k := int(binary.LittleEndian.Uint16(hdr))
		switch {
		case 2+k > left:
			return d.skip(left, b.stream, feed.ReasonMalformed)
		case k > items.MaxLen:
			if err := d.skip(2+k, b.stream, feed.ReasonItemTooLong); err != nil {
				return err
			}
			left -= 2 + k
		default:
			// Wait for the whole item; the next round decodes it.
			if _, err := d.peek(2 + k); err != nil {
				return d.cut(b.stream, err)
			}
		}
	}
	return nil
}

// itemRun returns the number n of whole items of 1 to items.MaxLen bytes
// at the start of buf, items := (length:uint16 item:[length]byte)*, that a
// batch with room for maxN more items and for more while it holds fewer
// than maxBytes more bytes takes, and the length of their encoding.
func itemRun(buf []byte, maxN, maxBytes int) (n, end int) {
	size := 0
	for end+2 <= len(buf) && n < maxN && size < maxBytes {
		k := int(buf[end]) | int(buf[end+1])<<8
		if k == 0 || k > items.MaxLen || end+2+k > len(buf) {
			break
		}
		end += 2 + k
		size += k
		n++
	}
	return n, end
}

// appendRun adds the items of run, a run of whole items of 1 to
// items.MaxLen bytes (itemRun), counting those not valid UTF-8 as rejects.
// A run all ASCII, lengths included, needs no check of each item.
func (b *batch) appendRun(run []byte) {
	ascii := items.ASCII(run)
	for i := 0; i < len(run); {
		k := int(run[i]) | int(run[i+1])<<8
		item := run[i+2 : i+2+k]
		i += 2 + k
		if !ascii && !utf8.Valid(item) {
			b.reject(feed.ReasonBadUTF8, 1)
			continue
		}
		b.list.Append(item)
	}
}

// skip counts a frame body of n bytes as rejected for reason and skips it.
func (d *frameDecoder) skip(n int, stream string, reason feed.Reason) error {
	d.b.rejectFor(stream, reason, 1)
	if d.br.Buffered() < n {
		if err := d.b.flush(); err != nil {
			return err
		}
	}
	_, err := d.br.Discard(n)
	return err
}

// cut counts a frame cut short by err, the error of a read or of Accept,
// and returns err.
func (d *frameDecoder) cut(stream string, err error) error {
	if d.b.err == nil {
		d.b.rejectFor(stream, feed.ReasonMalformed, 1)
	}
	return err
}

// DecodeFloat64 appends to dst the little-endian IEEE 754 float64 values
// of data (len(data) a multiple of 8) and applies the value rule
// (feed.CleanValues) in the same pass: NaN and ±Inf are left out and
// counted, −0 becomes +0. It allocates only when dst is too short.
func DecodeFloat64(dst []float64, data []byte) (_ []float64, nan, inf int) {
	n := len(dst)
	dst = slices.Grow(dst, len(data)/8)[:n+len(data)/8]
	out := dst[n:]
	j := 0
	// Blocks of decodeBlock values are decoded four at a time without a
	// branch per value for the rule, as DecodeFloat32 does: the exponent
	// bits of a value plus one in the lowest exponent bit carry into bit
	// 63 only when they are all ones (NaN or ±Inf). A block that holds
	// one is cleaned again, in place, by feed.CleanValues.
	for len(data) >= 8 {
		k := min(len(data)/8, decodeBlock)
		block, o := data[:8*k:8*k], out[j:j+k:j+k]
		var special uint64
		m := 0
		for ; m+4 <= k; m += 4 {
			b := block[8*m : 8*m+32 : 8*m+32]
			b0, b1 := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
			b2, b3 := binary.LittleEndian.Uint64(b[16:]), binary.LittleEndian.Uint64(b[24:])
			special |= (b0&expBits64 + expOne64) | (b1&expBits64 + expOne64) |
				(b2&expBits64 + expOne64) | (b3&expBits64 + expOne64)
			w := o[m : m+4 : m+4]
			w[0], w[1] = math.Float64frombits(b0)+0, math.Float64frombits(b1)+0
			w[2], w[3] = math.Float64frombits(b2)+0, math.Float64frombits(b3)+0
		}
		for ; m < k; m++ {
			b := binary.LittleEndian.Uint64(block[8*m:])
			special |= b&expBits64 + expOne64
			o[m] = math.Float64frombits(b) + 0
		}
		if special&(1<<63) == 0 {
			j += k
		} else {
			kept, bn, bi := feed.CleanValues(o)
			nan, inf, j = nan+bn, inf+bi, j+len(kept)
		}
		data = data[8*k:]
	}
	return dst[:n+j], nan, inf
}

// expBits64 are the exponent bits of a float64, expOne64 the lowest of
// them.
const (
	expBits64 = 0x7ff0000000000000
	expOne64  = 0x0010000000000000
)

// DecodeFloat32 appends to dst the little-endian IEEE 754 float32 values
// of data (len(data) a multiple of 4), converted to T, and applies the
// value rule in the same pass: NaN and ±Inf are left out and counted, −0
// becomes +0 (rounding cannot reject a float32 value). It also returns the
// moments of the values it appended, as feed.Measure would give them (the
// sum possibly added in another order). It is how the framed protocol's
// float32 values are decoded. It allocates only when dst is too short.
func DecodeFloat32[T float32 | float64](dst []T, data []byte) (_ []T, m feed.Moments, nan, inf int) {
	n := len(dst)
	dst = slices.Grow(dst, len(data)/4)[:n+len(data)/4]
	out := dst[n:]
	j := 0
	// Blocks of decodeBlock values are decoded and measured four at a time
	// without a branch per value for the rules: adding +0 turns −0 into
	// +0, and the exponent bits of a value plus one in the lowest exponent
	// bit carry into bit 31 only when they are all ones (NaN or ±Inf). A
	// block that holds one is decoded and measured again value by value.
	// Measuring as the values are decoded saves feed.Measure's second
	// pass over them, which cost as much as the decoding.
	var s0, s1, s2, s3 float64
	lo, hi := T(math.Inf(1)), T(math.Inf(-1))
	for len(data) >= 4 {
		k := min(len(data)/4, decodeBlock)
		block, o := data[:4*k:4*k], out[j:j+k:j+k]
		t0, t1, t2, t3, tlo, thi := s0, s1, s2, s3, lo, hi // to restore if the block holds NaN or ±Inf
		var special uint32
		m := 0
		for ; m+4 <= k; m += 4 {
			b := block[4*m : 4*m+16 : 4*m+16]
			b0, b1 := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:])
			b2, b3 := binary.LittleEndian.Uint32(b[8:]), binary.LittleEndian.Uint32(b[12:])
			special |= (b0&0x7f800000 + 0x00800000) | (b1&0x7f800000 + 0x00800000) |
				(b2&0x7f800000 + 0x00800000) | (b3&0x7f800000 + 0x00800000)
			v0, v1 := T(math.Float32frombits(b0))+0, T(math.Float32frombits(b1))+0
			v2, v3 := T(math.Float32frombits(b2))+0, T(math.Float32frombits(b3))+0
			w := o[m : m+4 : m+4]
			w[0], w[1], w[2], w[3] = v0, v1, v2, v3
			s0 += float64(v0)
			s1 += float64(v1)
			s2 += float64(v2)
			s3 += float64(v3)
			lo, hi = minMax(lo, hi, v0)
			lo, hi = minMax(lo, hi, v1)
			lo, hi = minMax(lo, hi, v2)
			lo, hi = minMax(lo, hi, v3)
		}
		for ; m < k; m++ {
			b := binary.LittleEndian.Uint32(block[4*m:])
			special |= b&0x7f800000 + 0x00800000
			v := T(math.Float32frombits(b)) + 0
			o[m] = v
			s0 += float64(v)
			lo, hi = minMax(lo, hi, v)
		}
		if special&0x80000000 == 0 {
			j += k
		} else {
			s0, s1, s2, s3, lo, hi = t0, t1, t2, t3, tlo, thi
			for i := 0; i < len(block); i += 4 {
				b := binary.LittleEndian.Uint32(block[i:])
				if b&0x7f800000 == 0x7f800000 {
					if b&0x007fffff != 0 {
						nan++
					} else {
						inf++
					}
					continue
				}
				v := T(math.Float32frombits(b)) + 0
				out[j] = v
				j++
				s0 += float64(v)
				lo, hi = minMax(lo, hi, v)
			}
		}
		data = data[4*k:]
	}
	if j == 0 {
		return dst[:n], feed.Moments{}, nan, inf
	}
	m = feed.Moments{Count: int64(j), Sum: (s0 + s1) + (s2 + s3), Min: float64(lo), Max: float64(hi)}
	return dst[:n+j], m, nan, inf
}

// minMax returns lo and hi widened to hold v, which is not NaN.
func minMax[T float32 | float64](lo, hi, v T) (T, T) {
	if v < lo {
		lo = v
	}
	if v > hi {
		hi = v
	}
	return lo, hi
}

// decodeBlock is the number of float32 values DecodeFloat32 checks for NaN
// and ±Inf at once.
const decodeBlock = 256
