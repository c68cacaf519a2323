package slidingwindow

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"streamd/synth"
)

// TestSince feeds values at known arrival times — in batches, with ties,
// gaps and times that go back — and checks every time window: it covers
// every value that arrived at or after the cutoff, no more older values
// than its stated slack, reports its count and the arrival times of its
// first and last value exactly, and answers within ε of what it covers.
func TestSince(t *testing.T) {
	for _, c := range []struct {
		name     string
		eps      float64
		capacity int64
		n        int
	}{
		{"exact", 0.01, 20000, 15000},
		{"exact-expired", 0.01, 5000, 23000},
		// A stream's default sliding window: a mark every 256 values,
		// so that several batches share one, and the newest mark's last
		// time is the window's own.
		{"exact-shared-marks", 0.001, 1 << 20, 40000},
		{"blocks", 0.1, 1 << 22, 60000},
		// Blocks with values expired: capacities of at least 1/ε² keep
		// blocks rather than every value (RawCapacity).
		{"blocks-expired", 0.2, 50000, 160000},
		{"blocks-expired-2", 0.1, 200000, 500000},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, err := New(c.eps, c.capacity)
			if err != nil {
				t.Fatal(err)
			}
			if want := Exact; strings.HasPrefix(c.name, "blocks") != (w.mode != want) {
				t.Fatalf("mode %v for case %s", w.mode, c.name)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			x, _ := synth.Generate(synth.Spec{Dist: synth.LogNormal, Seed: 5}, c.n)
			times := make([]int64, 0, c.n) // arrival times as the window sees them
			now, newest := int64(1_000_000), int64(0)
			for i := 0; i < len(x); {
				k := min(1+rng.IntN(300), len(x)-i)
				t0 := now
				if rng.IntN(10) == 0 {
					t0 -= 50_000 // a time that goes back: taken as the newest
				}
				w.Add(t0, x[i:i+k]...)
				newest = max(newest, t0)
				for range k {
					times = append(times, newest)
				}
				i += k
				now += int64(rng.IntN(3)) * 1000 // ties too
			}
			pos := int64(len(x))
			held := w.Count()
			cutoffs := []int64{0, times[0], times[len(times)-1], times[len(times)-1] + 1}
			for range 200 {
				cutoffs = append(cutoffs, times[0]+rng.Int64N(times[len(times)-1]-times[0]+1))
			}
			for _, cutoff := range cutoffs {
				snap, span := w.Since(cutoff)
				n := snap.Count()
				first := pos // first position that arrived at or after cutoff
				for first > 0 && times[first-1] >= cutoff {
					first--
				}
				what := fmt.Sprintf("since %d (%d in range, %d held)", cutoff, pos-first, held)
				if first == pos {
					if n != 0 || span != (Span{}) {
						t.Fatalf("%s: nothing in range, got %d values, span %+v", what, n, span)
					}
					continue
				}
				start := pos - n
				if first < pos-held {
					// Values in range have expired.
					if !span.Truncated || start > pos-held {
						t.Fatalf("%s: covers from %d, span %+v; values in range expired before %d", what, start, span, pos-held)
					}
				} else {
					if start > first {
						t.Fatalf("%s: covers from %d, misses values from %d", what, start, first)
					}
					if first-start > span.OlderMax {
						t.Fatalf("%s: %d older values covered, slack stated %d", what, first-start, span.OlderMax)
					}
					if span.First != times[start] {
						t.Fatalf("%s: span first %d, want %d", what, span.First, times[start])
					}
				}
				if span.Last != times[pos-1] {
					t.Fatalf("%s: span last %d, want %d", what, span.Last, times[pos-1])
				}
				checkSnapshot(t, snap, x[start:], c.eps, what)
			}
			// The marks and times survive encoding.
			b, err := w.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var d Window
			if err := d.UnmarshalBinary(b); err != nil {
				t.Fatal(err)
			}
			for _, cutoff := range cutoffs[:20] {
				s1, span1 := w.Since(cutoff)
				s2, span2 := d.Since(cutoff)
				if s1.Count() != s2.Count() || span1 != span2 {
					t.Fatalf("since %d after decoding: %d values, %+v; before %d, %+v", cutoff, s2.Count(), span2, s1.Count(), span1)
				}
			}
		})
	}
}
