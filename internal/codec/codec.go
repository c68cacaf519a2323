// Package codec frames the binary encodings of streamd's summaries: a
// four-byte magic naming the type, a format version, the payload, and a
// CRC-32C of all that precedes it. Open rejects, with an error and never a
// panic, anything that is truncated, corrupt or of another type or version.
//
// Layout:
//
//	magic   [4]byte
//	version uint8
//	payload []byte
//	crc     uint32, little-endian, CRC-32C (Castagnoli) of magic|version|payload
package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// ErrCorrupt is wrapped by every decoding error caused by bad bytes.
var ErrCorrupt = errors.New("corrupt encoding")

// ErrVersion is returned, wrapped, by Open and OpenVersions for an
// envelope whose checksum is right but whose version the caller does not
// know: written by another version of the program, not damaged. It wraps
// ErrCorrupt, so callers that treat both alike need not tell them apart.
var ErrVersion = fmt.Errorf("%w: unknown version", ErrCorrupt)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Begin appends magic and version to dst: the start of an envelope whose
// payload the caller appends next and which End closes.
func Begin(dst []byte, magic string, version byte) []byte {
	if len(magic) != 4 {
		panic("codec: magic must be 4 bytes")
	}
	dst = append(dst, magic...)
	return append(dst, version)
}

// End appends the checksum of dst[start:], where start is len(dst) before
// the matching Begin.
func End(dst []byte, start int) []byte {
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

// Open checks data's magic, version and checksum and returns its payload.
func Open(data []byte, magic string, version byte) ([]byte, error) {
	p, _, err := OpenVersions(data, magic, version, version)
	return p, err
}

// OpenVersions is Open for a type whose decoder reads every version from
// oldest to newest: it returns the payload and its version.
func OpenVersions(data []byte, magic string, oldest, newest byte) ([]byte, byte, error) {
	if len(data) < 9 {
		return nil, 0, fmt.Errorf("%w: %d bytes is too short", ErrCorrupt, len(data))
	}
	if string(data[:4]) != magic {
		return nil, 0, fmt.Errorf("%w: magic %q, want %q", ErrCorrupt, data[:4], magic)
	}
	v := data[4]
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, 0, fmt.Errorf("%w: %s checksum mismatch", ErrCorrupt, magic)
	}
	if v < oldest || v > newest {
		if oldest == newest {
			return nil, 0, fmt.Errorf("%w: %s version %d, want %d", ErrVersion, magic, v, newest)
		}
		return nil, 0, fmt.Errorf("%w: %s version %d, want %d to %d", ErrVersion, magic, v, oldest, newest)
	}
	return body[5:], v, nil
}

// Reader reads the fields of a payload. The first error sticks: later reads
// return zero values, and Err reports it.
type Reader struct {
	b   []byte
	err error
}

// NewReader returns a Reader over payload.
func NewReader(payload []byte) *Reader { return &Reader{b: payload} }

// Err reports the first error met, or an error if unread bytes remain after
// a complete read (checked by Done).
func (r *Reader) Err() error { return r.err }

// Done reports r's error, or an error if bytes remain unread.
func (r *Reader) Done() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: %d trailing bytes", ErrCorrupt, len(r.b))
	}
	return r.err
}

func (r *Reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: truncated %s", ErrCorrupt, what)
	}
	r.b = nil
}

// Uvarint reads an unsigned varint.
func (r *Reader) Uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// Int reads an unsigned varint that must fit in [0, max].
func (r *Reader) Int(what string, max int64) int64 {
	v := r.Uvarint()
	if r.err == nil && v > uint64(max) {
		r.err = fmt.Errorf("%w: %s %d out of range [0, %d]", ErrCorrupt, what, v, max)
		r.b = nil
		return 0
	}
	return int64(v)
}

// Float64 reads a little-endian float64.
func (r *Reader) Float64() float64 {
	return math.Float64frombits(r.fixed64("float64"))
}

// Float32 reads a little-endian float32.
func (r *Reader) Float32() float32 {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 4 {
		r.fail("float32")
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return math.Float32frombits(v)
}

// Uint64 reads a little-endian uint64.
func (r *Reader) Uint64() uint64 { return r.fixed64("uint64") }

func (r *Reader) fixed64(what string) uint64 {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 8 {
		r.fail(what)
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

// Bytes reads a varint length then that many bytes (not copied).
func (r *Reader) Bytes(what string, max int) []byte {
	n := r.Int(what+" length", int64(max))
	if r.err != nil {
		return nil
	}
	if int64(len(r.b)) < n {
		r.fail(what)
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

// Next reads the next n bytes (not copied), n ≥ 0.
func (r *Reader) Next(what string, n int) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b) < n {
		r.fail(what)
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

// Remaining reports how many bytes are left.
func (r *Reader) Remaining() int { return len(r.b) }

// AppendFloat64 appends f little-endian.
func AppendFloat64(dst []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
}

// AppendBytes appends a varint length and b.
func AppendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// BeginLength starts a section of dst prefixed with its length, as
// AppendBytes writes one, for bytes appended in place rather than built
// apart: it appends room for the longest length and returns dst and where
// the section starts, for EndLength once the section's bytes follow.
func BeginLength(dst []byte) ([]byte, int) {
	var room [binary.MaxVarintLen64]byte
	return append(dst, room[:]...), len(dst)
}

// EndLength ends the section that BeginLength started at start, which runs
// to the end of dst: it writes the section's length and moves its bytes
// back over the room the length left.
func EndLength(dst []byte, start int) []byte {
	body := start + binary.MaxVarintLen64
	n := len(dst) - body
	k := len(binary.AppendUvarint(dst[start:start], uint64(n)))
	copy(dst[start+k:], dst[body:])
	return dst[:start+k+n]
}

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 1 {
		r.fail("byte")
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}
