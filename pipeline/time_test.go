package pipeline

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"streamd/feed"
	"streamd/internal/exact"
	"streamd/summary"
	"streamd/synth"
)

// fakeClock is a clock that moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestTimeWindows accepts values at known times on a fake clock and checks
// every window "the last d": it covers every value that arrived in it, at
// most its stated slack of older ones, reports the exact span, and answers
// within ε of the n it covers.
func TestTimeWindows(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	const eps = 0.01
	p := open(t, Config{Now: clock.Now, Defaults: summary.Config{Epsilon: eps, WindowSize: 1000, SlidingWindow: 1 << 15}})
	x, _ := synth.Generate(synth.Spec{Dist: synth.Pareto, Seed: 9}, 40000)
	var times []time.Time
	ctx := context.Background()
	for i := 0; i < len(x); i += 400 {
		chunk := append([]float64(nil), x[i:i+400]...)
		if err := acceptValues(ctx, p, feed.Local, "lat", chunk, time.Time{}); err != nil {
			t.Fatal(err)
		}
		for range chunk {
			times = append(times, clock.Now())
		}
		clock.Advance(time.Duration(i%3) * time.Second) // ties every third batch
	}
	// A Kafka-style timestamp from the past is taken as the newest time.
	late := []float64{1, 2, 3}
	if err := acceptValues(ctx, p, feed.Local, "lat", late, clock.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	x = append(x, late...)
	for range late {
		times = append(times, times[len(times)-1])
	}
	for i := range x {
		x[i] = float64(float32(x[i]))
	}
	s, _ := p.Stream("lat")
	for _, d := range []time.Duration{0, time.Second, 5 * time.Second, 30 * time.Second, time.Minute, 10 * time.Minute, time.Hour} {
		checkSince(t, s, clock.Now(), d, x, times, eps)
	}
	// Items carry their arrival time too.
	if _, err := p.Create("urls", summary.Config{Items: true}); err != nil {
		t.Fatal(err)
	}
	list := zipfItems(t, 5000, 100, synth.Random, 1)
	acceptItems(t, p, "urls", list[:2000], 500)
	clock.Advance(time.Minute)
	acceptItems(t, p, "urls", list[2000:], 500)
	u, _ := p.Stream("urls")
	snap, span := u.Since(clock.Now().Add(-30 * time.Second))
	if snap.Count() != 3000 || span.OlderMax != 0 || span.First != clock.Now().UnixNano() {
		t.Fatalf("items of the last 30s: %d, span %+v; want 3000 from %d", snap.Count(), span, clock.Now().UnixNano())
	}
	checkItems(t, u, snap, list[2000:], u.Config().Epsilon)
}

// checkSince checks the time window "the last d" of s at now against x,
// the values s took (at its precision), which arrived at times: it covers
// every value that arrived in it and at most its stated slack of older
// ones, reports the exact span, and answers within ε of the n it covers.
func checkSince(t *testing.T, s *Stream, now time.Time, d time.Duration, x []float64, times []time.Time, eps float64) {
	t.Helper()
	cutoff := now.Add(-d)
	snap, span := s.Since(cutoff)
	first := len(x)
	for first > 0 && !times[first-1].Before(cutoff) {
		first--
	}
	n := int(snap.Count())
	start := len(x) - n
	what := fmt.Sprintf("last %v (%d values arrived in it)", d, len(x)-first)
	if held := int(s.Config().SlidingWindow); first < len(x)-held {
		// Values of the window have left the sliding window.
		if !span.Truncated || n != held {
			t.Fatalf("%s: covers %d values, span %+v; want the %d held, truncated", what, n, span, held)
		}
		return
	}
	switch {
	case start > first:
		t.Fatalf("%s: covers %d values, misses some", what, n)
	case int64(first-start) > span.OlderMax:
		t.Fatalf("%s: covers %d older values, slack stated %d", what, first-start, span.OlderMax)
	case span.Truncated:
		t.Fatalf("%s: truncated", what)
	case n > 0 && (span.First != times[start].UnixNano() || span.Last != times[len(x)-1].UnixNano()):
		t.Fatalf("%s: span [%d, %d], want [%d, %d]", what, span.First, span.Last, times[start].UnixNano(), times[len(x)-1].UnixNano())
	}
	if n == 0 {
		return
	}
	key := exact.New(x[start:])
	for _, phi := range []float64{0.01, 0.5, 0.99} {
		v, lo, hi := snap.Quantile(phi)
		if err := key.CheckQuantile(phi, v, eps, lo, hi); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
}
