package pipeline

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"testing"
	"time"

	"streamd/feed"
	"streamd/gpusort"
	"streamd/internal/codec"
	"streamd/summary"
)

// TestReplacePartitionRefusesBadPending: a part's state whose pending
// values hold a NaN or an infinity is corrupt, though its checksum is
// right (a peer's state is taken as it comes): ReplacePartition refuses it
// with codec.ErrCorrupt and makes no stream of it, as ingest never lets
// such a value in. A NaN taken in made the sorter's loop panic once its
// window filled.
func TestReplacePartitionRefusesBadPending(t *testing.T) {
	ctx := context.Background()
	tp := feed.Source{Topic: "t", Partition: 3}
	for _, tc := range []struct {
		name    string
		float64 bool
		bad     float64
	}{
		{"NaN", false, math.NaN()},
		{"+Inf", false, math.Inf(1)},
		{"-Inf", true, math.Inf(-1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := summary.Config{Epsilon: 0.01, WindowSize: 64, SlidingWindow: 100, Float64: tc.float64}
			from := open(t, Config{Defaults: cfg})
			// 5.25 is exact in float32, and neither the min, the max nor the
			// sum: its eight bytes are found once, among the pending values.
			if err := acceptValues(ctx, from, tp, "s", []float64{2, 5.25, 7}, time.Time{}); err != nil {
				t.Fatal(err)
			}
			states, err := from.PartitionState(tp)
			if err != nil || len(states) != 1 {
				t.Fatalf("state: %v, %d parts", err, len(states))
			}
			data := bytes.Clone(states[0].Data)
			body := data[:len(data)-4]
			old := binary.LittleEndian.AppendUint64(nil, math.Float64bits(5.25))
			i := bytes.Index(body, old)
			if i < 0 || bytes.Contains(body[i+1:], old) {
				t.Fatal("the pending value is not found once in the part's encoding")
			}
			binary.LittleEndian.PutUint64(body[i:], math.Float64bits(tc.bad))
			data = codec.End(body, 0)

			p := open(t, Config{Defaults: cfg})
			err = p.ReplacePartition(ctx, tp, []PartState{{Stream: "s", Data: data}})
			if !errors.Is(err, codec.ErrCorrupt) {
				t.Fatalf("ReplacePartition: %v, want an error wrapping codec.ErrCorrupt", err)
			}
			if _, err := p.Stream("s"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("stream after a refused state: %v, want ErrNotFound", err)
			}
		})
	}
}

// FuzzReplacePartitionPayload fuzzes a part's state behind its checksum,
// as a peer could send it: each input is the payload of a part's
// encoding, sealed in a valid envelope, so that the fuzzer reaches its
// fields (the nested summaries keep checksums of their own). A state that
// ReplacePartition takes is answered for, and its pending window, once
// filled, is sorted and summarised without a panic.
func FuzzReplacePartitionPayload(f *testing.F) {
	ctx := context.Background()
	tp := feed.Source{Topic: "t", Partition: 2}
	for _, cfg := range []summary.Config{
		{Epsilon: 0.1, WindowSize: 8, SlidingWindow: 20},
		{Epsilon: 0.1, WindowSize: 8, SlidingWindow: 20, Float64: true},
	} {
		p, _ := New(Config{Defaults: cfg, Sorter: gpusort.NewCPU(1)})
		_ = acceptValues(ctx, p, tp, "a", []float64{2, 7, 1, 8, 2, 8, 1, 8, 2, 8, 4, 5}, time.Time{})
		p.Reject("a", tp, feed.ReasonNaN, 1)
		states, _ := p.PartitionState(tp)
		f.Add(states[0].Data[len(partMagic)+1 : len(states[0].Data)-4])
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		data := codec.End(append(codec.Begin(nil, partMagic, partVersion), payload...), 0)
		p, err := New(Config{Sorter: gpusort.NewCPU(1)})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Open(ctx); err != nil {
			t.Fatal(err)
		}
		defer p.Close(ctx)
		if p.ReplacePartition(ctx, tp, []PartState{{Stream: "a", Data: data}}) != nil {
			return
		}
		if s, err := p.Stream("a"); err == nil {
			s.View(true).Quantile(0.5)
			s.View(true).HeavyHitters(0.5)
			// Fill the pending window: the sorter summarises it.
			_ = acceptValues(ctx, p, tp, "a", make([]float64, s.Config().WindowSize), time.Time{})
		}
		waitIdle(t, p)
	})
}
