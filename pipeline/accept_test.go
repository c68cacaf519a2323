package pipeline

import (
	"context"
	"errors"
	"maps"
	"math"
	"slices"
	"testing"
	"time"

	"streamd/feed"
	"streamd/ingest"
	"streamd/items"
	"streamd/summary"
)

// acceptValues hands values of the stream name from src, arrived at at, to
// p as the inputs do: after the value rule (feed.CleanValues), whose
// rejects it counts once the values are accepted.
func acceptValues(ctx context.Context, p *Pipeline, src feed.Source, name string, values []float64, at time.Time) error {
	vals, nan, inf := feed.CleanValues(values)
	if _, err := p.Accept(ctx, &feed.Batch{Stream: name, Source: src, At: at, Values: vals}); err != nil {
		return err
	}
	p.Reject(name, src, feed.ReasonNaN, nan)
	p.Reject(name, src, feed.ReasonInf, inf)
	return nil
}

// acceptItemBatch hands the items of b for the stream name from src, arrived
// at at, to p.
func acceptItemBatch(ctx context.Context, p *Pipeline, src feed.Source, name string, b *items.Batch, at time.Time) error {
	_, err := p.Accept(ctx, &feed.Batch{Stream: name, Source: src, At: at, Items: b})
	return err
}

// acceptEncoded hands the values of a frame body, float32 values if size
// is 4 and float64 values if it is 8, to p as ingest's framed decoder
// does, and returns how many p accepted.
func acceptEncoded(ctx context.Context, p *Pipeline, name string, size int, data []byte) (int, error) {
	b := &feed.Batch{Stream: name}
	var nan, inf int
	if size == 4 {
		b.Float32, b.Moments, nan, inf = ingest.DecodeFloat32([]float32(nil), data)
	} else {
		b.Values, nan, inf = ingest.DecodeFloat64(nil, data)
	}
	n, err := p.Accept(ctx, b)
	if err != nil {
		return n, err
	}
	p.Reject(name, feed.Local, feed.ReasonNaN, nan)
	p.Reject(name, feed.Local, feed.ReasonInf, inf)
	return n, nil
}

// TestAcceptPayloads sends each kind of payload — float64 values, values
// decoded from float32, items — from the local inputs and from a Kafka
// partition, into streams of both precisions, and checks what each part
// of each stream holds: the values rounded to the stream's precision, or
// widened from float32 exactly, the values that rounding to float32
// rejects, and the counts.
func TestAcceptPayloads(t *testing.T) {
	ctx := context.Background()
	p := open(t, Config{})
	for _, name := range []string{"wide", "wide32", "wide.kafka", "wide32.kafka"} {
		if _, err := p.Create(name, summary.Config{Float64: true}); err != nil {
			t.Fatal(err)
		}
	}
	f64 := []float64{0.1, 3.5e38, -1e-50, 16777217, -2.5}
	f32 := []float32{0.1, 16777216, -2.5, math.MaxFloat32}
	type want struct {
		values []float64 // the part's partial window, in order
		inf    uint64
	}
	var (
		narrow64 = []float64{float64(float32(0.1)), 0, 16777216, -2.5}               // 3.5e38 rejected, −1e−50 rounds to +0
		wide64   = []float64{0.1, 3.5e38, -1e-50, 16777217, -2.5}                    // as they are
		widened  = []float64{float64(float32(0.1)), 16777216, -2.5, math.MaxFloat32} // float32 widened
	)
	for _, src := range []feed.Source{feed.Local, {Topic: "t", Partition: 3}} {
		cases := []struct {
			stream string
			b      feed.Batch
			n      int
			want   want
		}{
			{"narrow", feed.Batch{Values: slices.Clone(f64)}, 4, want{narrow64, 1}},
			{"narrow32", feed.Batch{Float32: f32, Moments: feed.Measure(f32)}, 4, want{widened, 0}},
			{"wide", feed.Batch{Values: slices.Clone(f64)}, 5, want{wide64, 0}},
			{"wide32", feed.Batch{Float32: f32, Moments: feed.Measure(f32)}, 4, want{widened, 0}},
		}
		for _, c := range cases {
			stream := c.stream
			if src != feed.Local {
				stream += ".kafka"
			}
			b := c.b
			b.Stream, b.Source = stream, src
			n, err := p.Accept(ctx, &b)
			if err != nil || n != c.n {
				t.Fatalf("%s from %v: Accept = %d, %v; want %d, nil", stream, src, n, err, c.n)
			}
			s, err := p.Stream(stream)
			if err != nil {
				t.Fatal(err)
			}
			parts := s.Parts(false, nil)
			var got *PartView
			for i := range parts {
				if parts[i].Source == src {
					got = &parts[i]
				} else if parts[i].Stats.Count != 0 || len(parts[i].Rejected) != 0 {
					t.Errorf("%s: part %v holds %d values, rejects %v; want none", stream, parts[i].Source, parts[i].Stats.Count, parts[i].Rejected)
				}
			}
			if got == nil {
				t.Fatalf("%s: no part of %v", stream, src)
			}
			s.mu.Lock()
			held := s.partLocked(src).appendPartialLocked(nil)
			s.mu.Unlock()
			if !slices.Equal(held, c.want.values) || slices.ContainsFunc(held, func(v float64) bool { return math.Signbit(v) && v == 0 }) {
				t.Errorf("%s from %v: holds %v, want %v", stream, src, held, c.want.values)
			}
			st := got.Stats
			m := feed.Measure(c.want.values)
			if st.Count != m.Count || st.Sum != m.Sum || st.Min != m.Min || st.Max != m.Max {
				t.Errorf("%s from %v: stats count %d sum %v min %v max %v; want %+v", stream, src, st.Count, st.Sum, st.Min, st.Max, m)
			}
			wantRejects := map[feed.Reason]uint64{}
			if c.want.inf > 0 {
				wantRejects[feed.ReasonInf] = c.want.inf
			}
			if !maps.Equal(got.Rejected, wantRejects) {
				t.Errorf("%s from %v: rejects %v, want %v", stream, src, got.Rejected, wantRejects)
			}
		}

		// Items go to an item stream, in the part of their source.
		words := "words"
		if src != feed.Local {
			words += ".kafka"
		}
		n, err := p.Accept(ctx, &feed.Batch{Stream: words, Source: src, Items: itemBatch("a", "b", "a")})
		if err != nil || n != 3 {
			t.Fatalf("%s from %v: Accept = %d, %v; want 3, nil", words, src, n, err)
		}
		s, err := p.Stream(words)
		if err != nil || !s.IsItems() {
			t.Fatalf("%s: %v, items %v", words, err, err == nil && s.IsItems())
		}
		for _, pv := range s.Parts(false, nil) {
			want := int64(0)
			if pv.Source == src {
				want = 3
			}
			if pv.Stats.Count != want {
				t.Errorf("%s: part %v holds %d items, want %d", words, pv.Source, pv.Stats.Count, want)
			}
		}
		// Values for an item stream and items for a value stream are
		// refused whole.
		if n, err := p.Accept(ctx, &feed.Batch{Stream: words, Source: src, Values: []float64{1}}); n != 0 || !errors.Is(err, ErrWrongKind) {
			t.Errorf("values for %s: %d, %v; want 0, ErrWrongKind", words, n, err)
		}
		if n, err := p.Accept(ctx, &feed.Batch{Stream: "narrow", Source: src, Items: itemBatch("x")}); n != 0 || !errors.Is(err, ErrWrongKind) {
			t.Errorf("items for narrow: %d, %v; want 0, ErrWrongKind", n, err)
		}
	}

	// Values that a float32 stream rejects all create no stream: their
	// rejects belong to none.
	if n, err := p.Accept(ctx, &feed.Batch{Stream: "huge", Values: []float64{1e39, -1e300}}); n != 0 || err != nil {
		t.Errorf("huge: Accept = %d, %v; want 0, nil", n, err)
	}
	if _, err := p.Stream("huge"); err == nil {
		t.Error("values all rejected created a stream")
	}
	if got := p.Rejected()[feed.ReasonInf]; got != 2 {
		t.Errorf("rejects of no stream: %d inf, want 2", got)
	}
}
