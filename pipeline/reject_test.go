package pipeline

import (
	"bytes"
	"context"
	"maps"
	"math"
	"testing"
	"time"

	"streamd/feed"
	"streamd/ingest"
	"streamd/items"
)

// rejects is a stream's rejects, or the pipeline's for stream "".
type rejects map[feed.Reason]uint64

// checkKind checks that the named stream exists, is an item stream or
// not, holds count values or items and counts exactly want as rejects.
func checkKind(t *testing.T, p *Pipeline, name string, itemStream bool, count int64, want rejects) {
	t.Helper()
	s, err := p.Stream(name)
	if err != nil {
		t.Fatalf("stream %q: %v", name, err)
	}
	if s.IsItems() != itemStream {
		t.Errorf("stream %q: item stream %v, want %v", name, s.IsItems(), itemStream)
	}
	st := s.Stats()
	if st.Count != count {
		t.Errorf("stream %q: count %d, want %d", name, st.Count, count)
	}
	if !maps.Equal(rejects(st.Rejected), want) {
		t.Errorf("stream %q: rejects %v, want %v", name, st.Rejected, want)
	}
}

// checkNoStream checks that the named stream does not exist.
func checkNoStream(t *testing.T, p *Pipeline, name string) {
	t.Helper()
	if _, err := p.Stream(name); err == nil {
		t.Errorf("stream %q exists", name)
	}
}

func itemBatch(list ...string) *items.Batch {
	var b items.Batch
	for _, x := range list {
		b.AppendString(x)
	}
	return &b
}

func decode(t *testing.T, p *Pipeline, in []byte) {
	t.Helper()
	d := ingest.Decoder{Sink: p}
	if err := d.Decode(context.Background(), bytes.NewReader(in)); err != nil {
		t.Fatal(err)
	}
}

// TestRejectCreatesNoStream checks that a stream's kind comes from the
// values or items it keeps, never from rejects: the bad parts of the first
// input to a name are counted on the stream its good parts create, and
// input with no good part creates no stream; its rejects are the
// pipeline's, counted by reason only.
func TestRejectCreatesNoStream(t *testing.T) {
	ctx := context.Background()
	p := open(t, Config{})

	// A reject alone creates nothing.
	p.Reject("r", feed.Local, feed.ReasonEmptyItem, 1)
	p.Reject("r", feed.Source{Topic: "t", Partition: 1}, feed.ReasonBadUTF8, 2)
	checkNoStream(t, p, "r")

	// Values and items of which none is kept create nothing.
	if err := acceptValues(ctx, p, feed.Local, "v", []float64{math.NaN(), math.Inf(1), 3.5e38}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := acceptValues(ctx, p, feed.Local, "v", []float64{math.NaN()}, p.Now()); err != nil {
		t.Fatal(err)
	}
	if err := acceptValues(ctx, p, feed.Source{Topic: "t"}, "v", []float64{-1e300}, p.Now()); err != nil {
		t.Fatal(err)
	}
	if n, err := acceptEncoded(ctx, p, "v", 8, f64Bytes(math.NaN(), 1e39)); n != 0 || err != nil {
		t.Fatalf("acceptEncoded: %d, %v", n, err)
	}
	if err := acceptValues(ctx, p, feed.Local, "v", nil, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := acceptItemBatch(ctx, p, feed.Local, "v", itemBatch(), p.Now()); err != nil {
		t.Fatal(err)
	}
	checkNoStream(t, p, "v")
	if got, want := rejects(p.Rejected()), (rejects{"empty_item": 1, "bad_utf8": 2, "nan": 3, "inf": 4}); !maps.Equal(got, want) {
		t.Errorf("pipeline rejects %v, want %v", got, want)
	}
	if p.Len() != 0 {
		t.Fatalf("%d streams: %v", p.Len(), p.List())
	}
	// A bad name is still refused.
	if err := acceptValues(ctx, p, feed.Local, "bad name", []float64{math.NaN()}, time.Time{}); err == nil {
		t.Error("Accept to a bad name: no error")
	}

	// Items make "v" an item stream, which takes items.
	if err := acceptItemBatch(ctx, p, feed.Local, "v", itemBatch("ok"), p.Now()); err != nil {
		t.Fatal(err)
	}
	if err := acceptItemBatch(ctx, p, feed.Local, "v", itemBatch("ok", "fine"), p.Now()); err != nil {
		t.Fatal(err)
	}
	checkKind(t, p, "v", true, 3, rejects{})
}

// TestFirstInputKind sends first inputs that mix good and bad parts to
// new streams over the line and framed protocols.
func TestFirstInputKind(t *testing.T) {
	p := open(t, Config{})
	frame := func(in []byte, stream string, list ...string) []byte {
		in, err := ingest.AppendItemsFrame(in, stream, list)
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	in := []byte(ingest.Magic)
	in = frame(in, "f1", "ok", "")
	in = frame(in, "f2", "\xff", "ok")
	in = frame(in, "f3", "", "\xff")
	in, _ = ingest.AppendFrame(in, "f4", []float64{math.NaN(), 1.5, 3.5e38}, false)
	in, _ = ingest.AppendFrame(in, "f5", []float64{math.NaN(), math.Inf(-1)}, true)
	in, _ = ingest.AppendFrame(in, "f6", []float64{math.NaN(), 2, 4e38}, true)
	decode(t, p, in)
	checkKind(t, p, "f1", true, 1, rejects{"empty_item": 1})
	checkKind(t, p, "f2", true, 1, rejects{"bad_utf8": 1})
	checkNoStream(t, p, "f3")
	checkKind(t, p, "f4", false, 1, rejects{"nan": 1, "inf": 1})
	checkNoStream(t, p, "f5")
	checkKind(t, p, "f6", false, 1, rejects{"nan": 1, "inf": 1})
	if got, want := rejects(p.Rejected()), (rejects{"empty_item": 1, "bad_utf8": 1, "nan": 1, "inf": 1}); !maps.Equal(got, want) {
		t.Errorf("pipeline rejects %v, want %v", got, want)
	}

	// Later items to the item streams are taken.
	in = frame([]byte(ingest.Magic), "f1", "a", "b")
	in = frame(in, "f2", "c")
	decode(t, p, in)
	checkKind(t, p, "f1", true, 3, rejects{"empty_item": 1})
	checkKind(t, p, "f2", true, 2, rejects{"bad_utf8": 1})

	q := open(t, Config{})
	decode(t, q, []byte("l1 abc 1.5 NaN\n"+
		"l2 abc def\n"+
		"l3 NaN +Inf 4e38\n"+
		"l4 1e39 x 2\n"+
		"l4 y\n"+
		"l5\n"))
	checkKind(t, q, "l1", false, 1, rejects{"malformed": 1, "nan": 1})
	checkNoStream(t, q, "l2")
	checkNoStream(t, q, "l3")
	checkKind(t, q, "l4", false, 1, rejects{"malformed": 2, "inf": 1})
	checkNoStream(t, q, "l5")
	if got, want := rejects(q.Rejected()), (rejects{"malformed": 3, "nan": 1, "inf": 2}); !maps.Equal(got, want) {
		t.Errorf("pipeline rejects %v, want %v", got, want)
	}
}

func f64Bytes(vals ...float64) []byte {
	var b []byte
	for _, v := range vals {
		b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
		u := math.Float64bits(v)
		for i := range 8 {
			b[len(b)-8+i] = byte(u >> (8 * i))
		}
	}
	return b
}
