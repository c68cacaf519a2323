package pipeline

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"streamd/feed"
	"streamd/ingest"
	"streamd/summary"
)

// TestRoundAsIngest checks that values entering a stream — float64 values
// cleaned by feed.CleanValues or decoded from a frame by
// ingest.DecodeFloat64, into float32 and float64 streams — are kept as
// summary.Config.Round gives them, the rounding queries apply to the
// values they ask about.
func TestRoundAsIngest(t *testing.T) {
	half := 1 + math.Ldexp(1, -24)
	vals := []float64{0.1, 13.1, 9.8, -0.1, 3.4e38, -3.4e38, math.MaxFloat32, 3.5e38, -3.5e38, 1e300,
		1e-40, math.SmallestNonzeroFloat32, 5e-324, -5e-324, half, math.Nextafter(half, 2), math.Nextafter(half, 0),
		16777217, math.Copysign(0, -1), math.Nextafter(math.MaxFloat32, math.Inf(1))}
	ctx := context.Background()
	p := open(t, Config{})
	for _, f64 := range []bool{false, true} {
		cfg := summary.Config{Float64: f64}
		for i, v := range vals {
			want := cfg.Round(v)
			kept := !math.IsInf(want, 0)
			clean, _, _ := feed.CleanValues([]float64{v})
			dec, _, _ := ingest.DecodeFloat64(nil, binary.LittleEndian.AppendUint64(nil, math.Float64bits(v)))
			if len(clean) != 1 || len(dec) != 1 || !same(clean[0], dec[0]) {
				t.Fatalf("%v: CleanValues %v, DecodeFloat64 %v", v, clean, dec)
			}
			name := fmt.Sprintf("r%d.%v", i, f64)
			if _, err := p.Create(name, cfg); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Accept(ctx, &feed.Batch{Stream: name, Values: clean}); err != nil {
				t.Fatal(err)
			}
			s, _ := p.Stream(name)
			s.mu.Lock()
			got := s.local.appendPartialLocked(nil)
			s.mu.Unlock()
			if (len(got) == 1) != kept || kept && !same(got[0], want) {
				t.Errorf("float64 %v: %v kept as %v, want %v", f64, v, got, want)
			}
		}
	}
}

// same reports whether a and b are the same float64, sign of zero
// included.
func same(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
