package membudget

import (
	"context"
	"errors"
	"math"
	"testing"
)

// TestHugeChargeRefused: a charge so large that the total plus it passes
// math.MaxInt64 is refused, and charges nothing: the sum must not wrap
// around to a negative total that admits it.
func TestHugeChargeRefused(t *testing.T) {
	for _, limit := range []int64{1 << 30, 1 << 40, 5000} {
		b := New(limit)
		a, err := b.Open(Footprint{Reserve: 1, Window: 1}) // a total above 0
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int64{math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64 - 100, limit} {
			if a.TryGrow(n, 0) {
				t.Errorf("limit %d: TryGrow(%d) fitted", limit, n)
			}
			if err := a.Charge(context.Background(), n); !errors.Is(err, ErrExhausted) {
				t.Errorf("limit %d: Charge(%d) = %v, want ErrExhausted", limit, n, err)
			}
			if st := b.Stats(); st.Used != 1 || b.used.Load() != 1 {
				t.Fatalf("limit %d: after refusing %d: %+v, total %d", limit, n, st, b.used.Load())
			}
		}
		if !a.TryGrow(limit-1, 0) {
			t.Errorf("limit %d: a charge of all the room left was refused", limit)
		}
		a.Close()
		if st := b.Stats(); st.Used != 0 || b.used.Load() != 0 {
			t.Fatalf("limit %d: after close: %+v, total %d", limit, st, b.used.Load())
		}
	}
}
