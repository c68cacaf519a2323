package pipeline

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"streamd/feed"
	"streamd/gpusort"
	"streamd/internal/codec"
	"streamd/summary"
)

// TestRestoreRefusesMirroredPartOutOfPlace: a part of version 2 where no
// sliding window holds its values for it — one of two parts, a part of
// an item, pair or hierarchy stream (or of a hierarchy's level), a count
// beyond the ring or other than its summary's unsummarised values, a part
// handed to ReplacePartition — gives an error wrapping codec.ErrCorrupt,
// never a panic, and Restore, RestoreDelta and ReplacePartition change
// nothing.
func TestRestoreRefusesMirroredPartOutOfPlace(t *testing.T) {
	ctx := context.Background()
	cfg := Config{Defaults: summary.Config{Epsilon: 0.01, WindowSize: 1000, SlidingWindow: 5000}}
	kafka := feed.Source{Topic: "t", Partition: 1}
	// forge marks every part of the stream name in p as mirroring m values,
	// as no stream does, while the snapshot is taken, delta or not.
	forge := func(t *testing.T, p *Pipeline, name string, m func(s *Stream, pt *part) int32, delta bool) []byte {
		t.Helper()
		s := mustStream(t, p, name)
		for _, x := range s.withLevels() {
			x.mu.Lock()
			for _, pt := range x.partsLocked() {
				pt.mirrored = m(x, pt)
			}
			x.mu.Unlock()
		}
		defer func() {
			for _, x := range s.withLevels() {
				x.mu.Lock()
				for _, pt := range x.partsLocked() {
					pt.mirrored = 0
				}
				x.mu.Unlock()
			}
		}()
		var b []byte
		w := writerFunc(func(p []byte) (int, error) { b = append(b, p...); return len(p), nil })
		if _, _, err := p.SaveTo(w, delta); err != nil {
			t.Fatal(err)
		}
		return b
	}
	count := func(s *Stream, pt *part) int32 { return int32(pt.partialLen()) }
	values := idleValues("random", 300, 7)
	hierarchy := func(t *testing.T, p *Pipeline) {
		if _, err := p.Create("x", summary.Config{Hierarchy: "path/3"}); err != nil {
			t.Fatal(err)
		}
		acceptItems(t, p, "x", []string{"/a/b/c", "/a/b/d", "/a/e"}, 2)
	}
	for _, tt := range []struct {
		name  string
		make  func(t *testing.T, p *Pipeline)
		count func(s *Stream, pt *part) int32
	}{
		{"one of two parts", func(t *testing.T, p *Pipeline) {
			_ = acceptValues(ctx, p, feed.Local, "x", slices.Clone(values[:200]), time.Time{})
			_ = acceptValues(ctx, p, kafka, "x", slices.Clone(values[200:]), time.Time{})
		}, count},
		{"beyond the ring", func(t *testing.T, p *Pipeline) {
			_ = acceptValues(ctx, p, feed.Local, "x", slices.Clone(values), time.Time{})
		}, func(s *Stream, pt *part) int32 { return int32(s.recent.RawLen()) + 1 }},
		{"fewer than unsummarised", func(t *testing.T, p *Pipeline) {
			_ = acceptValues(ctx, p, feed.Local, "x", slices.Clone(values), time.Time{})
		}, func(s *Stream, pt *part) int32 { return int32(s.recent.RawLen()) - 1 }},
		{"item stream", func(t *testing.T, p *Pipeline) {
			if _, err := p.Create("x", summary.Config{Items: true}); err != nil {
				t.Fatal(err)
			}
			acceptItems(t, p, "x", []string{"a", "b", "a", "c"}, 2)
		}, count},
		{"pair stream", func(t *testing.T, p *Pipeline) {
			if _, err := p.Create("x", summary.Config{Pairs: true}); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Accept(ctx, &feed.Batch{Stream: "x", Pairs: feed.Pairs{X: []float64{1, 2, 3}, Y: []float64{4, 5, 6}}}); err != nil {
				t.Fatal(err)
			}
		}, func(s *Stream, pt *part) int32 { return 1 }},
		{"hierarchy", hierarchy, count},
		{"hierarchy level", hierarchy, func(s *Stream, pt *part) int32 {
			if s.hier != nil {
				return 0
			}
			return count(s, pt)
		}},
	} {
		for _, delta := range []bool{false, true} {
			name := tt.name
			if delta {
				name += "/delta"
			}
			t.Run(name, func(t *testing.T) {
				p := open(t, cfg)
				_ = acceptValues(ctx, p, feed.Local, "keep", []float64{1, 2, 3}, time.Time{})
				base, err := p.Snapshot() // deltas are recorded from here on
				if err != nil {
					t.Fatal(err)
				}
				tt.make(t, p)
				data := forge(t, p, "x", tt.count, delta)

				r, err := New(Config{Defaults: cfg.Defaults, Sorter: gpusort.NewCPU(0)})
				if err != nil {
					t.Fatal(err)
				}
				if err := r.Restore(base); err != nil {
					t.Fatal(err)
				}
				if delta {
					err = r.RestoreDelta(data)
				} else {
					err = r.Restore(data)
				}
				if !errors.Is(err, codec.ErrCorrupt) {
					t.Fatalf("restore: %v, want corrupt", err)
				}
				if got := r.List(); !slices.Equal(got, []string{"keep"}) {
					t.Fatalf("after a refused restore: streams %q, want keep alone", got)
				}
			})
		}
	}

	// A part of version 2 handed to another daemon.
	p := open(t, cfg)
	_ = acceptValues(ctx, p, kafka, "x", slices.Clone(values), time.Time{})
	s := mustStream(t, p, "x")
	s.mu.Lock()
	var vals []float64
	part, err := s.kafka[0].appendEncoding(nil, p.itemKey, &vals, true)
	s.mu.Unlock()
	if err != nil || part[4] != partMirrored {
		t.Fatalf("part encoding: version %d, %v", part[4], err)
	}
	r := open(t, cfg)
	_ = acceptValues(ctx, r, kafka, "x", []float64{1, 2}, time.Time{})
	if err := r.ReplacePartition(ctx, kafka, []PartState{{Stream: "x", Data: part}}); !errors.Is(err, codec.ErrCorrupt) {
		t.Fatalf("replace partition with a part of version 2: %v, want corrupt", err)
	}
	checkStream(t, mustStream(t, r, "x"), []float64{1, 2}, 0)
}

// writerFunc is an io.Writer of a func.
type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
