package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"testing"

	"streamd/feed"
	"streamd/summary"
)

// TestCheckpointMemory: a checkpoint is written to disk as a stream, one
// stream's encoding at a time, not built whole in memory: of a state of 16
// streams of 512 Ki values pending each (a 68 MiB checkpoint), writing one
// allocates less than a quarter of the checkpoint's size.
func TestCheckpointMemory(t *testing.T) {
	const streams, pending = 16, 1 << 19
	d, _ := openOn(t, t.TempDir(), io.Discard, func(c *Config) { c.MaxMemory = MemoryLimit{} })
	defer closeDaemon(t, d)
	ctx := context.Background()
	vals := make([]float64, pending)
	for i := range vals {
		vals[i] = float64(i)
	}
	for i := range streams {
		name := fmt.Sprint("big", i)
		// The values stay pending, in the stream's partial window.
		if _, err := d.Pipeline().Create(name, summary.Config{Epsilon: 0.01, WindowSize: 2 * pending, SlidingWindow: 1 << 10}); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Pipeline().Accept(ctx, &feed.Batch{Stream: name, Values: vals}); err != nil {
			t.Fatal(err)
		}
	}
	vals = nil

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	stop, peak := make(chan struct{}), make(chan uint64)
	go func() {
		var high uint64
		for {
			select {
			case <-stop:
				peak <- high
				return
			default:
			}
			metrics.Read(sample)
			high = max(high, sample[0].Value.Uint64())
			runtime.Gosched()
		}
	}()
	if err := d.checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	close(stop)
	high := <-peak
	runtime.ReadMemStats(&after)

	files, _ := filepath.Glob(filepath.Join(d.Config.DataDir, "checkpoint-*.bin"))
	fi, err := os.Stat(files[len(files)-1])
	if err != nil {
		t.Fatal(err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("checkpoint of %.1f MiB: allocated %.1f MiB; heap objects %.1f MiB before, peak %.1f MiB sampled during",
		float64(fi.Size())/(1<<20), float64(alloc)/(1<<20), float64(base)/(1<<20), float64(high)/(1<<20))
	if alloc > uint64(fi.Size())/4 {
		t.Errorf("a checkpoint of %d bytes allocated %d bytes, want under a quarter of its size", fi.Size(), alloc)
	}
}
