package web

import (
	"context"
	"net/http"
	"testing"
	"time"

	"streamd/feed"
	"streamd/pipeline"
	"streamd/summary"
)

// TestMetricsIdleFlush: /metrics counts the partial windows of quiet
// streams that the pipeline flushed, by how, and the bytes it freed.
func TestMetricsIdleFlush(t *testing.T) {
	s := servePipeline(t, pipeline.Config{
		Defaults:  summary.Config{Epsilon: 0.05, WindowSize: 4096, SlidingWindow: 1000},
		IdleFlush: 20 * time.Millisecond,
	}, nil)
	p, ctx := s.Pipeline, context.Background()
	digested := make([]float64, 2000) // more raw than digested at ε = 0.05
	for i := range digested {
		digested[i] = float64(i)
	}
	// The shrunk stream's buffer, sized to its first batch, doubles for
	// its second and has room to spare.
	for _, b := range []feed.Batch{{Stream: "digested", Values: digested}, {Stream: "shrunk", Values: []float64{1, 2}}, {Stream: "shrunk", Values: []float64{3}}} {
		if _, err := p.Accept(ctx, &b); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, text := get(t, http.DefaultClient, "http://"+s.ListenAddr(), "/metrics", nil)
		e := parseExposition(t, text)
		if e.types["streamd_idle_flushes_total"] != "counter" || e.types["streamd_idle_freed_bytes_total"] != "counter" {
			t.Fatalf("idle flush families missing or mistyped:\n%s", text)
		}
		d, sh := e.value(t, `streamd_idle_flushes_total{how="digested"}`), e.value(t, `streamd_idle_flushes_total{how="shrunk"}`)
		if d == 1 && sh == 1 {
			// 3 values in a buffer of 4 shrink to 3.
			if freed := e.value(t, "streamd_idle_freed_bytes_total"); freed != 4*(4-3) {
				t.Fatalf("freed %v bytes, want %d", freed, 4*(4-3))
			}
			return
		}
		if d > 1 || sh > 1 || time.Now().After(deadline) {
			t.Fatalf("flushes: %v digested, %v shrunk; want 1 and 1", d, sh)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
