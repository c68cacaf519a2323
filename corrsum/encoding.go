package corrsum

import (
	"encoding/binary"
	"fmt"
	"math"

	"streamd/internal/codec"
)

// Encoding (see streamd/internal/codec for the envelope: magic, version,
// payload, CRC-32C), magic "CSUM", version 1:
//
//	epsilon                      float64 LE
//	count                        uvarint
//	Σx, Σy, Σ|y|, min x, max x   float64 LE each
//	buckets                      uvarint
//	buckets × id uvarint, count uvarint, tuples uvarint,
//	          tuples × x, y float64 LE, rmin − previous rmin uvarint,
//	                   rmax − rmin uvarint, pmin, pmax, qmin, qmax float64 LE
const (
	magic          = "CSUM"
	formatVersion  = 1
	maxCount       = math.MaxInt64 / 4
	minTupleBytes  = 6*8 + 2
	maxBucketCount = 128
)

// AppendBinary appends s's encoding to dst. It never fails.
func (s *Summary) AppendBinary(dst []byte) ([]byte, error) {
	start := len(dst)
	dst = codec.Begin(dst, magic, formatVersion)
	dst = codec.AppendFloat64(dst, s.eps)
	dst = binary.AppendUvarint(dst, uint64(s.n))
	for _, f := range []float64{s.sumX, s.sumY, s.sumAbs, s.minX, s.maxX} {
		dst = codec.AppendFloat64(dst, f)
	}
	dst = binary.AppendUvarint(dst, uint64(len(s.parts)))
	for _, p := range s.parts {
		dst = binary.AppendUvarint(dst, uint64(p.id))
		dst = binary.AppendUvarint(dst, uint64(p.n))
		dst = binary.AppendUvarint(dst, uint64(len(p.t)))
		var prev int64
		for _, u := range p.t {
			dst = codec.AppendFloat64(dst, u.x)
			dst = codec.AppendFloat64(dst, u.y)
			dst = binary.AppendUvarint(dst, uint64(u.rmin-prev))
			dst = binary.AppendUvarint(dst, uint64(u.rmax-u.rmin))
			for _, f := range []float64{u.pmin, u.pmax, u.qmin, u.qmax} {
				dst = codec.AppendFloat64(dst, f)
			}
			prev = u.rmin
		}
	}
	return codec.End(dst, start), nil
}

// MarshalBinary returns s's encoding.
func (s *Summary) MarshalBinary() ([]byte, error) { return s.AppendBinary(nil) }

// UnmarshalBinary replaces s with the summary encoded in data, checking
// every invariant and gap bound (Valid) and that the totals agree with
// the buckets. It returns an error wrapping codec.ErrCorrupt or
// ErrInvalid, never panicking and leaving s unchanged, if data is not a
// valid encoding.
func (s *Summary) UnmarshalBinary(data []byte) error {
	d, err := decode(data)
	if err != nil {
		return fmt.Errorf("decode correlated-sum summary: %w", err)
	}
	d.scratch = s.scratch
	*s = d
	return nil
}

func decode(data []byte) (Summary, error) {
	p, err := codec.Open(data, magic, formatVersion)
	if err != nil {
		return Summary{}, err
	}
	r := codec.NewReader(p)
	d := Summary{eps: r.Float64(), n: r.Int("count", maxCount)}
	d.sumX, d.sumY, d.sumAbs, d.minX, d.maxX = r.Float64(), r.Float64(), r.Float64(), r.Float64(), r.Float64()
	nb := r.Int("buckets", maxBucketCount)
	if r.Err() == nil && !(d.eps > 0 && d.eps < 1) {
		return Summary{}, fmt.Errorf("%w: epsilon %v", codec.ErrCorrupt, d.eps)
	}
	for range nb {
		pt := part{id: int(r.Int("bucket id", maxBucketCount)), n: r.Int("bucket count", maxCount)}
		m := r.Int("tuples", int64(r.Remaining()/minTupleBytes))
		if r.Err() != nil {
			return Summary{}, r.Err()
		}
		pt.t = make([]tuple, 0, m)
		var prev int64
		for range m {
			u := tuple{x: r.Float64(), y: r.Float64()}
			u.rmin = prev + r.Int("rmin", maxCount)
			u.rmax = u.rmin + r.Int("rmax", maxCount)
			u.pmin, u.pmax, u.qmin, u.qmax = r.Float64(), r.Float64(), r.Float64(), r.Float64()
			if r.Err() != nil {
				return Summary{}, r.Err()
			}
			pt.t = append(pt.t, u)
			prev = u.rmin
		}
		d.parts = append(d.parts, pt)
	}
	if err := r.Done(); err != nil {
		return Summary{}, err
	}
	if err := d.Valid(); err != nil {
		return Summary{}, err
	}
	if err := d.validTotals(); err != nil {
		return Summary{}, err
	}
	return d, nil
}

// validTotals checks that the totals are finite and that min and max x
// are those of the buckets.
func (s *Summary) validTotals() error {
	for _, f := range []float64{s.sumX, s.sumY, s.sumAbs, s.minX, s.maxX} {
		if f-f != 0 {
			return fmt.Errorf("%w: totals not finite", ErrInvalid)
		}
	}
	if s.sumAbs < 0 {
		return fmt.Errorf("%w: negative Σ|y|", ErrInvalid)
	}
	if len(s.parts) == 0 {
		if s.sumX != 0 || s.sumY != 0 || s.sumAbs != 0 || s.minX != 0 || s.maxX != 0 {
			return fmt.Errorf("%w: totals of no pairs not zero", ErrInvalid)
		}
		return nil
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range s.parts {
		lo, hi = min(lo, p.t[0].x), max(hi, p.lastT().x)
	}
	if lo != s.minX || hi != s.maxX {
		return fmt.Errorf("%w: min and max x %v, %v; buckets hold %v, %v", ErrInvalid, s.minX, s.maxX, lo, hi)
	}
	return nil
}
