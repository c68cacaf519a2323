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
	// Two batches: the buffer, sized to the first, doubles for the second
	// and has room to spare.
	for _, x := range [][]float64{{1, 2}, {3}} {
		if _, err := d.pipe.Accept(context.Background(), &feed.Batch{Stream: "quiet", Values: x}); err != nil {
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
