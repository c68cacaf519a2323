package membudget

import (
	"context"
	"errors"
	"math"
	"testing"
)

// TestHugeChargeRefused: a charge so large that the total plus the credit
// a stripe would take beyond it passes math.MaxInt64 is refused, as it was
// before the stripes, and charges nothing: the sum must not wrap around to
// a negative total that admits it.
func TestHugeChargeRefused(t *testing.T) {
	for _, limit := range []int64{1 << 30, 1 << 40, 5000} {
		b := New(limit)
		a, err := b.Open(Footprint{Reserve: 0, Window: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int64{math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64 - 100, math.MaxInt64 - b.refill, math.MaxInt64 - 70*b.refill, limit + 1} {
			if a.TryGrow(n, 0) {
				t.Errorf("limit %d: TryGrow(%d) fitted", limit, n)
			}
			if err := a.Charge(context.Background(), n); !errors.Is(err, ErrExhausted) {
				t.Errorf("limit %d: Charge(%d) = %v, want ErrExhausted", limit, n, err)
			}
			if st := b.Stats(); st.Used != 0 || b.usedNow() != 0 || b.used.Load() < 0 {
				t.Fatalf("limit %d: after refusing %d: %+v, total %d, less credit %d", limit, n, st, b.used.Load(), b.usedNow())
			}
		}
		if !a.TryGrow(limit, 0) {
			t.Errorf("limit %d: a charge of the whole limit was refused", limit)
		}
		a.Close()
		if st := b.Stats(); st.Used != 0 || b.usedNow() != 0 {
			t.Fatalf("limit %d: after close: %+v, less credit %d", limit, st, b.usedNow())
		}
	}
}
