package pipeline

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"streamd/feed"
	"streamd/gpusort"
	"streamd/internal/codec"
	"streamd/summary"
)

// TestRestoreRefusesNonFiniteMirrored: a stream whose part mirrors its
// partial window in the sliding window's ring is written without those
// values, which the ring holds; a snapshot whose ring holds a ±Inf there
// (no value accepted is one) would give the part a partial window that the
// summaries refuse once it fills. Restore refuses it as corrupt, and a
// pipeline that refused it takes values and stays up.
func TestRestoreRefusesNonFiniteMirrored(t *testing.T) {
	ctx := context.Background()
	cfg := Config{Defaults: summary.Config{Epsilon: 0.01, WindowSize: 64, SlidingWindow: 1024}}
	for _, bad := range []float32{float32(math.Inf(1)), float32(math.Inf(-1))} {
		p := open(t, cfg)
		if err := acceptValues(ctx, p, feed.Local, "x", []float64{1, 2, 3}, time.Time{}); err != nil {
			t.Fatal(err)
		}
		// Forge the ring: one more value, counted as the part's, as if
		// accepted, but not finite.
		s := mustStream(t, p, "x")
		s.mu.Lock()
		pt := s.local
		if !pt.mirror {
			s.mu.Unlock()
			t.Fatal("the part does not mirror its partial window")
		}
		s.recent.AddFloat32(time.Now().UnixNano(), []float32{bad})
		pt.mirrored++
		pt.sum.AddMoments(feed.Measure([]float32{4}))
		pt.changedLocked()
		s.mu.Unlock()
		var b bytes.Buffer
		if _, err := p.SnapshotTo(&b); err != nil {
			t.Fatal(err)
		}

		q, err := New(Config{Defaults: cfg.Defaults, Sorter: gpusort.NewCPU(0)})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Restore(b.Bytes()); !errors.Is(err, codec.ErrCorrupt) {
			t.Fatalf("a ring holding %v restored with %v, want an error wrapping codec.ErrCorrupt", bad, err)
		}
		if err := q.Open(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = q.Close(ctx) })
		vals := make([]float64, 200)
		for i := range vals {
			vals[i] = float64(i)
		}
		if err := acceptValues(ctx, q, feed.Local, "x", vals, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
}
