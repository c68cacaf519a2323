package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"streamd/checkpoint"
	"streamd/feed"
	"streamd/gpusort"
	"streamd/summary"
)

// benchStreams is how many streams BenchmarkCheckpoint keeps:
// STREAMD_BENCH_STREAMS, or 10000.
func benchStreams(b *testing.B) int {
	if s := os.Getenv("STREAMD_BENCH_STREAMS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	return 10000
}

// BenchmarkCheckpoint compares, on a pipeline of many small streams (ε 0.1,
// W 16, a sliding window of 64, 20 values each; W from
// STREAMD_BENCH_CHECKPOINT_W, such as 64, where the streams stay below a
// window as thin streams do at the default W), a full checkpoint with a
// delta after 1% of the streams took a value and one after none did, all
// written durably
// through a checkpoint.Store, and a restore of the full checkpoint with
// one of the base and a delta. It reports the bytes of each checkpoint,
// and the heap the streams take.
func BenchmarkCheckpoint(b *testing.B) {
	n := benchStreams(b)
	window := benchEnvInt(b, "STREAMD_BENCH_CHECKPOINT_W", 16)
	ctx := context.Background()
	cfg := Config{
		Defaults:   summary.Config{Epsilon: 0.1, WindowSize: window, SlidingWindow: 64},
		Sorter:     gpusort.NewCPU(0),
		MaxStreams: n,
	}
	p, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Open(ctx); err != nil {
		b.Fatal(err)
	}
	defer p.Close(ctx)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	vals := make([]float64, 20)
	for i := range vals {
		vals[i] = float64(i * 7 % 13)
	}
	for i := range n {
		if err := acceptValues(ctx, p, feed.Local, fmt.Sprint("s", i), vals, time.Time{}); err != nil {
			b.Fatal(err)
		}
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.Logf("%d streams take %d MiB of heap", n, (after.HeapAlloc-before.HeapAlloc)>>20)
	store := &checkpoint.Store{Dir: b.TempDir()}
	save := func(delta bool) int64 { return saveDurably(b, store, p, delta) }
	touched := 0
	touch := func() {
		for range n / 100 {
			name := fmt.Sprint("s", touched%n)
			touched += 97 // spread over the streams
			if err := acceptValues(ctx, p, feed.Local, name, vals[:1], time.Time{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	var full bytes.Buffer
	b.Run(fmt.Sprintf("streams=%d/full", n), func(b *testing.B) {
		var size int64
		for b.Loop() {
			size = save(false)
		}
		b.ReportMetric(float64(size), "bytes")
	})
	w := bufio.NewWriter(&full)
	if _, err := p.SnapshotTo(w); err != nil {
		b.Fatal(err)
	}
	w.Flush()
	var delta bytes.Buffer
	b.Run(fmt.Sprintf("streams=%d/delta-1%%", n), func(b *testing.B) {
		var size int64
		for b.Loop() {
			b.StopTimer()
			save(false) // the base
			touch()
			b.StartTimer()
			size = save(true)
		}
		b.ReportMetric(float64(size), "bytes")
	})
	// A delta of nothing: the cost of finding the streams changed.
	b.Run(fmt.Sprintf("streams=%d/delta-none", n), func(b *testing.B) {
		var size int64
		for b.Loop() {
			b.StopTimer()
			save(false)
			b.StartTimer()
			size = save(true)
		}
		b.ReportMetric(float64(size), "bytes")
	})
	// The base and the delta for the restores.
	base := full.Bytes()
	q, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := q.Restore(base); err != nil {
		b.Fatal(err)
	}
	_, sv, err := q.SaveTo(io.Discard, false)
	if err != nil {
		b.Fatal(err)
	}
	sv.Commit()
	for i := range n / 100 {
		s, err := q.Stream(fmt.Sprint("s", i*97%n))
		if err != nil {
			b.Fatal(err)
		}
		s.mu.Lock()
		s.version++ // changed: written whole in the delta
		s.mu.Unlock()
	}
	if _, _, err := q.SaveTo(&delta, true); err != nil {
		b.Fatal(err)
	}
	b.Run(fmt.Sprintf("streams=%d/restore-full", n), func(b *testing.B) {
		for b.Loop() {
			r, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			if err := r.Restore(base); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(fmt.Sprintf("streams=%d/restore-base+delta", n), func(b *testing.B) {
		for b.Loop() {
			r, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			if err := r.Restore(base); err != nil {
				b.Fatal(err)
			}
			if err := r.RestoreDelta(delta.Bytes()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// saveDurably writes a snapshot of p, or with delta a delta, through
// store, commits it and returns its bytes.
func saveDurably(b *testing.B, store *checkpoint.Store, p *Pipeline, delta bool) int64 {
	var size int64
	var sv *Saved
	write := store.Write
	if delta {
		write = store.WriteDelta
	}
	if _, err := write(func(w io.Writer) error {
		var err error
		size, sv, err = p.SaveTo(w, delta)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	sv.Commit()
	return size
}
