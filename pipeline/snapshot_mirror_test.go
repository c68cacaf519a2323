package pipeline

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"streamd/feed"
	"streamd/internal/codec"
	"streamd/slidingwindow"
	"streamd/summary"
)

// TestSnapshotMirroredOnce: a snapshot writes the values of a stream that
// mirrors its partial window once, in its sliding window, with a part of
// version 2 that counts them (at least 8 bytes a value less than the part
// alone); restored, the stream answers exactly and mirrors again, on
// every arrival order, float32 and float64, local or from one partition.
// The part a hand-off takes is still version 1, with its values, and a
// part of version 2 is refused where no sliding window holds its values.
func TestSnapshotMirroredOnce(t *testing.T) {
	const w, n = 4096, 1500
	for _, float64s := range []bool{false, true} {
		for _, order := range []string{"random", "sorted", "reverse", "dups"} {
			for _, src := range []feed.Source{feed.Local, {Topic: "t", Partition: 3}} {
				name := order + "/local"
				if src != feed.Local {
					name = order + "/kafka"
				}
				if float64s {
					name += "/float64"
				}
				t.Run(name, func(t *testing.T) {
					cfg := Config{Defaults: summary.Config{Epsilon: 0.01, WindowSize: w, SlidingWindow: 2 * w, Float64: float64s}}
					p := open(t, cfg)
					x := idleValues(order, n, 5)
					if order == "reverse" {
						x = idleValues("sorted", n, 5)
						slices.Reverse(x)
					}
					if err := acceptValues(context.Background(), p, src, "thin", slices.Clone(x), time.Time{}); err != nil {
						t.Fatal(err)
					}
					s := mustStream(t, p, "thin")
					if mirror, m, _ := mirrorState(t, s); !mirror || m != n {
						t.Fatalf("mirror %v, %d mirrored; want %d", mirror, m, n)
					}

					s.mu.Lock()
					pt := s.partsLocked()[0]
					var vals []float64
					alone, err := pt.appendEncoding(nil, p.itemKey, &vals, false)
					if err != nil {
						t.Fatal(err)
					}
					inStream, err := pt.appendEncoding(nil, p.itemKey, &vals, true)
					s.mu.Unlock()
					if err != nil {
						t.Fatal(err)
					}
					if alone[4] != partVersion || inStream[4] != partMirrored || len(alone)-len(inStream) < 8*n {
						t.Fatalf("part alone: version %d, %d bytes; in its stream: version %d, %d bytes", alone[4], len(alone), inStream[4], len(inStream))
					}
					if _, err := unmarshalPart(inStream, nil, nil); !errors.Is(err, codec.ErrCorrupt) {
						t.Fatalf("a mirrored part alone: %v, want corrupt", err)
					}
					short, err := slidingwindow.New(0.01, 2*w)
					if err != nil {
						t.Fatal(err)
					}
					for i := range n - 1 {
						short.Add(0, float64(i))
					}
					if _, err := unmarshalPart(inStream, short, nil); !errors.Is(err, codec.ErrCorrupt) {
						t.Fatalf("a mirrored part of %d values over %d raw: %v, want corrupt", n, short.RawLen(), err)
					}
					d, err := unmarshalPart(alone, nil, nil)
					if err != nil || !slices.Equal(d.pending, s.recent.AppendNewest(nil, n)) {
						t.Fatalf("the part alone: %v, %d pending values, want its %d", err, len(d.pending), n)
					}
					// Decoded in its stream, the part counts its values and
					// copies none: a restore of a million thin streams would
					// otherwise copy each one's values for nothing.
					if d, err := unmarshalPart(inStream, s.recent, nil); err != nil {
						t.Fatalf("the part in its stream: %v", err)
					} else if d.pending != nil || d.mirrored != n {
						t.Fatalf("the part in its stream: %d values copied, %d mirrored; want none and %d", len(d.pending), d.mirrored, n)
					}

					data, err := p.Snapshot()
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Contains(data, inStream) {
						t.Fatal("the snapshot does not hold the part of version 2")
					}
					r := openRestored(t, Config{Defaults: cfg.Defaults}, data)
					rs := mustStream(t, r, "thin")
					if mirror, m, b := mirrorState(t, rs); !mirror || m != n || b != 0 {
						t.Fatalf("restored: mirror %v, %d mirrored, %d bytes of filler", mirror, m, b)
					}
					checkStream(t, rs, x, 0)
					checkLast(t, rs, x, n)
					if st := rs.Stats(); st.Count != n || st.Pending != n {
						t.Fatalf("restored: %d values, %d pending", st.Count, st.Pending)
					}
					// More values, past a window: the restored stream goes on.
					more := idleValues(order, 2*w, 6)
					if err := acceptValues(context.Background(), r, src, "thin", slices.Clone(more), time.Time{}); err != nil {
						t.Fatal(err)
					}
					all := append(slices.Clone(x), more...)
					waitStreamSummarised(t, rs, w)
					checkStream(t, rs, all, 0.01)
					checkLast(t, rs, all, 2*w)
				})
			}
		}
	}
}

// TestRestoreMirroredPartV1: a snapshot from before parts of version 2,
// which wrote a mirrored stream's values twice, restores, and its streams
// mirror again.
func TestRestoreMirroredPartV1(t *testing.T) {
	data, err := os.ReadFile("testdata/pipeline-v2-part-v1.bin")
	if err != nil {
		t.Fatal(err)
	}
	r := openRestored(t, Config{}, data)
	for _, c := range []struct {
		name string
		x    []float64
	}{
		{"c", []float64{2, 7, 1, 8, 2}},
		{"k", []float64{1, 6, 1}},
	} {
		s := mustStream(t, r, c.name)
		if mirror, m, b := mirrorState(t, s); !mirror || m != len(c.x) || b != 0 {
			t.Fatalf("%s: mirror %v, %d mirrored, %d bytes of filler", c.name, mirror, m, b)
		}
		checkStream(t, s, c.x, 0)
		checkLast(t, s, c.x, len(c.x))
	}
	// Written again, it is shorter by 8 bytes a mirrored value at least.
	again, err := r.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if len(data)-len(again) < 8*8 {
		t.Errorf("written again: %d bytes, from %d", len(again), len(data))
	}
}

// TestRestoreMirroredPartNoMirror: a part of version 2 for a stream that
// cannot mirror (its sliding window keeps fewer than W values raw), as
// only a forged snapshot holds, restores with its values copied into its
// partial window, and the stream answers exactly.
func TestRestoreMirroredPartNoMirror(t *testing.T) {
	cfg := Config{Defaults: summary.Config{Epsilon: 0.01, WindowSize: 1000, SlidingWindow: 500}}
	p := open(t, cfg)
	x := idleValues("dups", 300, 3)
	if err := acceptValues(context.Background(), p, feed.Local, "s", slices.Clone(x), time.Time{}); err != nil {
		t.Fatal(err)
	}
	s := mustStream(t, p, "s")
	s.mu.Lock()
	pt := s.local
	if pt.mirror || pt.filler.Len() != len(x) {
		s.mu.Unlock()
		t.Fatalf("mirror %v, %d values in the filler; want none mirrored", pt.mirror, pt.filler.Len())
	}
	pt.mirrored = int32(len(x)) // encoded as version 2; the filler keeps them
	s.mu.Unlock()
	data, err := p.Snapshot()
	s.mu.Lock()
	pt.mirrored = 0
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	r := openRestored(t, Config{Defaults: cfg.Defaults}, data)
	rs := mustStream(t, r, "s")
	rs.mu.Lock()
	mirror, mirrored, held := rs.local.mirror, rs.local.mirrored, rs.local.filler.Len()
	rs.mu.Unlock()
	if mirror || mirrored != 0 || held != len(x) {
		t.Fatalf("restored: mirror %v, %d mirrored, %d in the filler; want %d in the filler", mirror, mirrored, held, len(x))
	}
	checkStream(t, rs, x, 0)
	checkLast(t, rs, x, len(x))
}
