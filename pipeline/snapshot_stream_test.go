package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"streamd/feed"
	"streamd/gpusort"
	"streamd/items"
	"streamd/summary"
)

// failAfter is a writer that takes n bytes, then fails.
type failAfter struct {
	n   int
	err error
}

func (w *failAfter) Write(b []byte) (int, error) {
	if len(b) > w.n {
		m := w.n
		w.n = 0
		return m, w.err
	}
	w.n -= len(b)
	return len(b), nil
}

// TestSnapshotTo: SnapshotTo writes a snapshot that restores, of numeric,
// float64 and item streams with parts of Kafka partitions, one stream at a
// time and whatever the size of each, and reports the bytes it wrote; a
// writer that fails at any point fails it with that writer's error.
func TestSnapshotTo(t *testing.T) {
	ctx := context.Background()
	p := open(t, Config{Defaults: summary.Config{Epsilon: 0.01, WindowSize: 1000, SlidingWindow: 5000}, Sorter: gpusort.NewCPU(1)})
	want := map[string]int64{}
	for i := range 20 {
		name := fmt.Sprint("s", i)
		vals := make([]float64, i*i*37)
		for j := range vals {
			vals[j] = float64(j % 1013)
		}
		if i%3 == 0 {
			if _, err := p.Create(name, summary.Config{Float64: true}); err != nil {
				t.Fatal(err)
			}
		}
		if err := acceptValues(ctx, p, feed.Local, name, vals, time.Time{}); err != nil {
			t.Fatal(err)
		}
		want[name] = int64(len(vals))
	}
	tp := feed.Source{Topic: "t", Partition: 2}
	if err := acceptValues(ctx, p, tp, "s4", []float64{1, 2, 3}, p.Now()); err != nil {
		t.Fatal(err)
	}
	want["s4"] += 3
	var b items.Batch
	for i := range 3000 {
		b.AppendString(fmt.Sprint("item", i%97))
	}
	if err := acceptItemBatch(ctx, p, feed.Local, "words", &b, p.Now()); err != nil {
		t.Fatal(err)
	}
	want["words"] = 3000

	var buf bytes.Buffer
	n, err := p.SnapshotTo(&buf)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("SnapshotTo: %d bytes of %d, %v", n, buf.Len(), err)
	}
	q, err := New(Config{Sorter: gpusort.NewCPU(0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Restore(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	if q.Len() != len(want) {
		t.Errorf("%d streams restored, want %d", q.Len(), len(want))
	}
	for name, count := range want {
		s, err := q.Stream(name)
		if err != nil {
			t.Fatal(err)
		}
		if st := s.Stats(); st.Count != count {
			t.Errorf("stream %s: %d values, want %d", name, st.Count, count)
		}
	}

	broken := errors.New("disk full")
	for _, at := range []int{0, 3, 5000, 100000} {
		w := &failAfter{n: at, err: broken}
		if m, err := p.SnapshotTo(w); !errors.Is(err, broken) || m != int64(at) {
			t.Errorf("writer failing after %d bytes: %d, %v", at, m, err)
		}
	}
	if _, err := p.SnapshotTo(io.Discard); err != nil {
		t.Error(err)
	}
}
