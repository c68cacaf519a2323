package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"streamd/feed"
	"streamd/pipeline"
)

// TestIdleFlushFlag: --idle-flush sets how long a quiet stream keeps its
// partial window (0: for ever), is refused when negative, and reaches the
// pipeline, whose sweeper then flushes a quiet stream.
func TestIdleFlushFlag(t *testing.T) {
	cfg := DefaultConfig()
	if cfg.IdleFlush != pipeline.DefaultIdleFlush || cfg.pipelineIdleFlush() != pipeline.DefaultIdleFlush {
		t.Fatalf("default idle flush %v", cfg.IdleFlush)
	}
	fs := newServeFlags(&cfg)
	if err := fs.Parse([]string{"--idle-flush", "0"}); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil || cfg.IdleFlush != 0 || cfg.pipelineIdleFlush() >= 0 {
		t.Fatalf("--idle-flush 0: %v, pipeline's %v, %v", cfg.IdleFlush, cfg.pipelineIdleFlush(), err)
	}
	if err := fs.Parse([]string{"--idle-flush", "-1s"}); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "idle-flush") {
		t.Fatalf("--idle-flush -1s: %v", err)
	}

	d, _ := startDaemon(t, func(c *Config) { c.IdleFlush = 20 * time.Millisecond })
	// A value from a Kafka partition between two local batches: the local
	// part holds its partial window in a buffer of its own (a stream of
	// one source keeps it in its sliding window), sized to the first batch,
	// which doubles for the second and has room to spare.
	kafka := feed.Source{Topic: "t", Partition: 0}
	for _, b := range []feed.Batch{{Values: []float64{1, 2}}, {Source: kafka, Values: []float64{9}}, {Values: []float64{3}}} {
		b.Stream = "quiet"
		if _, err := d.pipe.Accept(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for d.pipe.IdleStats().Shrunk == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the quiet stream's partial window was never flushed")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
