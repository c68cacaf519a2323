package pipeline

import (
	"encoding/binary"
	"math"
	"testing"

	"streamd/ingest"
	"streamd/summary"
)

// TestRoundAsIngest checks that the three ways values enter a stream —
// Accept's cleanValues, and frames decoded by ingest.DecodeValues into
// float32 and float64 streams — keep each value as summary.Config.Round
// gives it, the rounding queries apply to the values they ask about.
func TestRoundAsIngest(t *testing.T) {
	half := 1 + math.Ldexp(1, -24)
	vals := []float64{0.1, 13.1, 9.8, -0.1, 3.4e38, -3.4e38, math.MaxFloat32, 3.5e38, -3.5e38, 1e300,
		1e-40, math.SmallestNonzeroFloat32, 5e-324, half, math.Nextafter(half, 2), math.Nextafter(half, 0),
		16777217, math.Copysign(0, -1), math.Nextafter(math.MaxFloat32, math.Inf(1))}
	for _, f64 := range []bool{false, true} {
		cfg := summary.Config{Float64: f64}
		for _, v := range vals {
			want := cfg.Round(v)
			kept := !math.IsInf(want, 0)
			got, _, _ := cleanValues([]float64{v}, cfg)
			if (len(got) == 1) != kept || kept && !same(got[0], want) {
				t.Errorf("float64 %v: cleanValues(%v) = %v, want %v", f64, v, got, want)
			}
			data := binary.LittleEndian.AppendUint64(nil, math.Float64bits(v))
			var dec []float64
			if f64 {
				dec, _, _, _ = ingest.DecodeValues([]float64(nil), data, 8)
			} else {
				d32, _, _, _ := ingest.DecodeValues([]float32(nil), data, 8)
				for _, x := range d32 {
					dec = append(dec, float64(x))
				}
			}
			if (len(dec) == 1) != kept || kept && !same(dec[0], want) {
				t.Errorf("float64 %v: DecodeValues(%v) = %v, want %v", f64, v, dec, want)
			}
		}
	}
}

// same reports whether a and b are the same float64, sign of zero
// included.
func same(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
