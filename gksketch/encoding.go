package gksketch

import (
	"encoding/binary"
	"fmt"
	"math"

	"streamd/internal/codec"
)

// Encodings (see streamd/internal/codec for the envelope: magic, version,
// payload, CRC-32C).
//
// Summary, magic "GKSU", version 1:
//
//	n       uvarint
//	len     uvarint            number of tuples
//	len ×   value float64 LE, rmin − previous rmin uvarint, rmax − rmin uvarint
//
// Sketch, magic "GKEH", version 1:
//
//	epsilon float64 LE
//	buckets uvarint
//	buckets × id uvarint, summary payload (as above, without envelope)
const (
	summaryMagic   = "GKSU"
	sketchMagic    = "GKEH"
	formatVersion  = 1
	maxCount       = math.MaxInt64 / 4
	minTupleBytes  = 10
	maxBucketCount = 128
)

// AppendBinary appends s's encoding to dst.
func (s *Summary) AppendBinary(dst []byte) ([]byte, error) {
	start := len(dst)
	dst = codec.Begin(dst, summaryMagic, formatVersion)
	dst = s.appendPayload(dst)
	return codec.End(dst, start), nil
}

// MarshalBinary returns s's encoding.
func (s *Summary) MarshalBinary() ([]byte, error) { return s.AppendBinary(nil) }

// UnmarshalBinary replaces s with the summary encoded in data. It returns
// an error wrapping codec.ErrCorrupt or ErrInvalid, never panicking, if data
// is not a valid encoding.
func (s *Summary) UnmarshalBinary(data []byte) error {
	p, err := codec.Open(data, summaryMagic, formatVersion)
	if err != nil {
		return fmt.Errorf("decode gk summary: %w", err)
	}
	r := codec.NewReader(p)
	d, err := readSummary(r)
	if err == nil {
		err = r.Done()
	}
	if err != nil {
		return fmt.Errorf("decode gk summary: %w", err)
	}
	*s = d
	return nil
}

func (s *Summary) appendPayload(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(s.n))
	dst = binary.AppendUvarint(dst, uint64(len(s.tuples)))
	var prev int64
	for _, t := range s.tuples {
		dst = codec.AppendFloat64(dst, t.Value)
		dst = binary.AppendUvarint(dst, uint64(t.RMin-prev))
		dst = binary.AppendUvarint(dst, uint64(t.RMax-t.RMin))
		prev = t.RMin
	}
	return dst
}

func readSummary(r *codec.Reader) (Summary, error) {
	n := r.Int("count", maxCount)
	m := r.Int("tuples", int64(r.Remaining()/minTupleBytes))
	if err := r.Err(); err != nil {
		return Summary{}, err
	}
	s := Summary{n: n, tuples: make([]Tuple, 0, m)}
	var prev int64
	for range m {
		v := r.Float64()
		rmin := prev + r.Int("rmin", maxCount)
		rmax := rmin + r.Int("rmax", maxCount)
		if r.Err() != nil {
			return Summary{}, r.Err()
		}
		s.tuples = append(s.tuples, Tuple{v, rmin, rmax})
		prev = rmin
	}
	if err := s.Valid(); err != nil {
		return Summary{}, err
	}
	return s, nil
}

// AppendBinary appends k's encoding to dst.
func (k *Sketch) AppendBinary(dst []byte) ([]byte, error) {
	start := len(dst)
	dst = codec.Begin(dst, sketchMagic, formatVersion)
	dst = codec.AppendFloat64(dst, k.eps)
	dst = binary.AppendUvarint(dst, uint64(len(k.buckets)))
	for _, b := range k.buckets {
		dst = binary.AppendUvarint(dst, uint64(b.id))
		dst = b.s.appendPayload(dst)
	}
	return codec.End(dst, start), nil
}

// MarshalBinary returns k's encoding.
func (k *Sketch) MarshalBinary() ([]byte, error) { return k.AppendBinary(nil) }

// UnmarshalBinary replaces k with the sketch encoded in data, checking
// every invariant and error bound; it never panics on bad input.
func (k *Sketch) UnmarshalBinary(data []byte) error {
	p, err := codec.Open(data, sketchMagic, formatVersion)
	if err != nil {
		return fmt.Errorf("decode gk sketch: %w", err)
	}
	r := codec.NewReader(p)
	eps := r.Float64()
	nb := r.Int("buckets", maxBucketCount)
	if r.Err() == nil && !(eps > 0 && eps < 1) {
		return fmt.Errorf("decode gk sketch: %w: epsilon %v", codec.ErrCorrupt, eps)
	}
	d := Sketch{eps: eps}
	for range nb {
		id := r.Int("bucket id", maxBucketCount)
		s, err := readSummary(r)
		if err != nil {
			return fmt.Errorf("decode gk sketch: %w", err)
		}
		d.buckets = append(d.buckets, bucket{id: int(id), s: s})
		d.n += s.n
		if d.n > maxCount {
			return fmt.Errorf("decode gk sketch: %w: count overflow", codec.ErrCorrupt)
		}
	}
	if err := r.Done(); err != nil {
		return fmt.Errorf("decode gk sketch: %w", err)
	}
	if err := d.Valid(); err != nil {
		return fmt.Errorf("decode gk sketch: %w", err)
	}
	*k = d
	return nil
}
