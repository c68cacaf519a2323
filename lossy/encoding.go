package lossy

import (
	"encoding/binary"
	"fmt"
	"math"

	"streamd/internal/codec"
)

// Encoding (see streamd/internal/codec for the envelope: magic, version,
// payload, CRC-32C), magic "LOSS", version 1:
//
//	epsilon float64 LE
//	n       uvarint   values counted
//	absent  uvarint   bound on the count of a value without an entry
//	len     uvarint   entries
//	len ×   value float64 LE, count uvarint, delta uvarint  (ascending value)
const (
	magic         = "LOSS"
	formatVersion = 1
	maxCount      = math.MaxInt64 / 4
	minEntryBytes = 10
)

// AppendBinary appends s's encoding to dst.
func (s *Summary) AppendBinary(dst []byte) ([]byte, error) {
	start := len(dst)
	dst = codec.Begin(dst, magic, formatVersion)
	dst = codec.AppendFloat64(dst, s.eps)
	dst = binary.AppendUvarint(dst, uint64(s.n))
	dst = binary.AppendUvarint(dst, uint64(s.absent))
	dst = binary.AppendUvarint(dst, uint64(len(s.entries)))
	for _, e := range s.entries {
		dst = codec.AppendFloat64(dst, e.Value)
		dst = binary.AppendUvarint(dst, uint64(e.Count))
		dst = binary.AppendUvarint(dst, uint64(e.Delta))
	}
	return codec.End(dst, start), nil
}

// MarshalBinary returns s's encoding.
func (s *Summary) MarshalBinary() ([]byte, error) { return s.AppendBinary(nil) }

// UnmarshalBinary replaces s with the summary encoded in data. Bad input
// gives an error wrapping codec.ErrCorrupt, never a panic.
func (s *Summary) UnmarshalBinary(data []byte) error {
	p, err := codec.Open(data, magic, formatVersion)
	if err != nil {
		return fmt.Errorf("decode lossy summary: %w", err)
	}
	r := codec.NewReader(p)
	d := Summary{eps: r.Float64()}
	d.n = r.Int("count", maxCount)
	d.absent = r.Int("absent", maxCount)
	m := r.Int("entries", int64(r.Remaining()/minEntryBytes))
	if r.Err() == nil && !(d.eps > 0 && d.eps < 1) {
		return fmt.Errorf("decode lossy summary: %w: epsilon %v", codec.ErrCorrupt, d.eps)
	}
	if r.Err() == nil {
		d.entries = make([]Entry, 0, m)
	}
	for range m {
		e := Entry{Value: r.Float64(), Count: r.Int("count", maxCount), Delta: r.Int("delta", maxCount)}
		if r.Err() != nil {
			break
		}
		d.entries = append(d.entries, e)
	}
	if err := r.Done(); err != nil {
		return fmt.Errorf("decode lossy summary: %w", err)
	}
	if err := d.Valid(); err != nil {
		return fmt.Errorf("decode lossy summary: %w: %w", codec.ErrCorrupt, err)
	}
	*s = d
	return nil
}
