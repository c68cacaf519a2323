package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"streamd/feed"
	"streamd/summary"
)

// TestTimeWindowsAfterRestore feeds two pipelines the same batches on one
// clock, with ties, times from the past and batches that share the sliding
// window's time marks; one is restored from its own snapshot again and
// again, at random points. Its stream's time windows must answer as the
// other's, which never restored, and its sliding window encode alike.
func TestTimeWindowsAfterRestore(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{now: time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)}
	for _, sc := range []summary.Config{
		// The default sliding window: a time mark every 256 values.
		{Epsilon: 0.001, WindowSize: 1000, SlidingWindow: 1 << 20},
		// A mark every 2 values, most of them expired.
		{Epsilon: 0.01, WindowSize: 100, SlidingWindow: 8192, Float64: true},
	} {
		t.Run(fmt.Sprint(sc.SlidingWindow), func(t *testing.T) {
			cfg := Config{Now: clock.Now, Defaults: sc}
			p, q := open(t, cfg), open(t, cfg)
			rng := rand.New(rand.NewPCG(3, uint64(sc.SlidingWindow)))
			restores := 0
			for batch := range 400 {
				vals := make([]float64, 1+rng.IntN(60))
				for i := range vals {
					vals[i] = float64(rng.IntN(5000)) / 16
				}
				var at time.Time // the clock's time
				if rng.IntN(8) == 0 {
					at = clock.Now().Add(-time.Minute) // taken as the newest
				}
				for _, x := range []*Pipeline{p, q} {
					if err := acceptValues(ctx, x, feed.Local, "lat", vals, at); err != nil {
						t.Fatal(err)
					}
				}
				if rng.IntN(3) > 0 {
					clock.Advance(time.Duration(rng.IntN(2000)) * time.Millisecond)
				}
				if rng.IntN(25) == 0 {
					quiesce(t, q)
					var b bytes.Buffer
					if _, err := q.SnapshotTo(&b); err != nil {
						t.Fatal(err)
					}
					if err := q.Close(ctx); err != nil {
						t.Fatal(err)
					}
					q = openRestored(t, cfg, b.Bytes())
					restores++
				}
				if batch%20 == 19 {
					sameTimeWindows(t, p, q, clock.Now(), fmt.Sprintf("batch %d, %d restores", batch, restores))
				}
			}
			if restores == 0 {
				t.Fatal("never restored")
			}
		})
	}
}

// sameTimeWindows checks that the stream "lat" of q answers every time
// window as that of p, and that their sliding windows encode alike.
func sameTimeWindows(t *testing.T, p, q *Pipeline, now time.Time, what string) {
	t.Helper()
	s, err := p.Stream("lat")
	if err != nil {
		t.Fatal(err)
	}
	r, err := q.Stream("lat")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []time.Duration{0, time.Millisecond, 500 * time.Millisecond, time.Second, 3 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute, time.Hour} {
		cutoff := now.Add(-d)
		s1, span1 := s.Since(cutoff)
		s2, span2 := r.Since(cutoff)
		if s1.Count() != s2.Count() || span1 != span2 {
			t.Fatalf("%s: last %v restored covers %d values, %+v; never restored %d, %+v", what, d, s2.Count(), span2, s1.Count(), span1)
		}
		for _, phi := range []float64{0, 0.5, 0.99, 1} {
			v1, _, _ := s1.Quantile(phi)
			v2, _, _ := s2.Quantile(phi)
			if v1 != v2 {
				t.Fatalf("%s: last %v, quantile %v restored %v, never restored %v", what, d, phi, v2, v1)
			}
		}
	}
	s.mu.Lock()
	a, err := s.recent.MarshalBinary()
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	b, err := r.recent.MarshalBinary()
	r.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("%s: the restored sliding window encodes in %d bytes, unlike the other's %d", what, len(b), len(a))
	}
}
