package web

import (
	"context"
	"net/http"
	"testing"
	"time"

	"streamd/feed"
	"streamd/gpusort"
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
	pollMetrics(t, s, func(e exposition, text string) bool {
		if e.types["streamd_idle_flushes_total"] != "counter" || e.types["streamd_idle_freed_bytes_total"] != "counter" {
			t.Fatalf("idle flush families missing or mistyped:\n%s", text)
		}
		d, sh := e.value(t, `streamd_idle_flushes_total{how="digested"}`), e.value(t, `streamd_idle_flushes_total{how="shrunk"}`)
		if d > 1 || sh > 1 {
			t.Fatalf("flushes: %v digested, %v shrunk; want 1 and 1", d, sh)
		}
		if d < 1 || sh < 1 {
			return false
		}
		// 3 values in a buffer of 4 shrink to 3.
		if freed := e.value(t, "streamd_idle_freed_bytes_total"); freed != 4*(4-3) {
			t.Fatalf("freed %v bytes, want %d", freed, 4*(4-3))
		}
		return true
	})
}

// pollMetrics reads s's /metrics until done, given the exposition and its
// text, reports true; it fails the test after 10 s.
func pollMetrics(t *testing.T, s *Server, done func(e exposition, text string) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, text := get(t, http.DefaultClient, "http://"+s.ListenAddr(), "/metrics", nil)
		if done(parseExposition(t, text), text) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics after 10 s:\n%s", text)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestMetricsAutoSorter: with the auto sorter, /metrics says how many
// batches each side sorted and the rate it measured for each; without a
// GPU every batch is the CPU's. With another sorter the families are left
// out.
func TestMetricsAutoSorter(t *testing.T) {
	cfg := pipeline.Config{Defaults: summary.Config{Epsilon: 0.05, WindowSize: 1024, SlidingWindow: 1024}}
	cfg.Sorter = gpusort.NewAuto(nil, nil, gpusort.NewCPU(0))
	s := servePipeline(t, cfg, nil)
	vals := make([]float64, 8*1024)
	for i := range vals {
		vals[i] = float64(i % 97)
	}
	if _, err := s.Pipeline.Accept(context.Background(), &feed.Batch{Stream: "a", Values: vals}); err != nil {
		t.Fatal(err)
	}
	pollMetrics(t, s, func(e exposition, text string) bool {
		if e.types["streamd_sorter_batches_total"] != "counter" || e.types["streamd_sorter_rate_keys_per_second"] != "gauge" {
			t.Fatalf("auto sorter families missing or mistyped:\n%s", text)
		}
		if e.value(t, "streamd_windows_sorted_total") < 8 {
			return false
		}
		gpu, cpu := e.value(t, `streamd_sorter_batches_total{side="gpu"}`), e.value(t, `streamd_sorter_batches_total{side="cpu"}`)
		if gpu != 0 || cpu < 2 || cpu > 8 {
			t.Fatalf("8 windows sorted in %v batches on the GPU and %v on the CPU; want none and 2 to 8", gpu, cpu)
		}
		if r := e.value(t, `streamd_sorter_rate_keys_per_second{side="cpu"}`); r <= 0 {
			t.Fatalf("the CPU's rate %v after %v batches", r, cpu)
		}
		if r := e.value(t, `streamd_sorter_rate_keys_per_second{side="gpu"}`); r != 0 {
			t.Fatalf("the GPU's rate %v without a GPU", r)
		}
		return true
	})

	plain := servePipeline(t, pipeline.Config{Defaults: cfg.Defaults}, nil)
	_, text := get(t, http.DefaultClient, "http://"+plain.ListenAddr(), "/metrics", nil)
	if e := parseExposition(t, text); e.types["streamd_sorter_batches_total"] != "" || e.types["streamd_sorter_rate_keys_per_second"] != "" {
		t.Fatalf("auto sorter families with the cpu sorter:\n%s", text)
	}
}
