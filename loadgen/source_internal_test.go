package loadgen

import (
	"context"
	"runtime"
	"testing"

	"streamd/feed"
	"streamd/ingest"
	"streamd/synth"
)

// itemCounter is an ingest.Sink that counts the items it is handed.
type itemCounter struct {
	ingest.Sink
	n int
}

func (c *itemCounter) Accept(_ context.Context, b *feed.Batch) (int, error) {
	if b.Items == nil {
		panic("itemCounter: values")
	}
	c.n += b.Items.Len()
	return b.Items.Len(), nil
}

func (c *itemCounter) IsItemStream(string) bool { return true }

// TestItemNamerCache checks that a value far out in a Pareto tail costs
// its own name, not the names of every integer below it (4 M strings,
// over 100 MB), while a Zipf stream keeps the names of its values.
func TestItemNamerCache(t *testing.T) {
	allocated := func(spec synth.Spec, v float64) uint64 {
		sink := &itemCounter{}
		accept := itemNamer(sink, spec)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := accept(context.Background(), "s", []float64{v}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if sink.n != 1 {
			t.Fatalf("%d items handed on, want 1", sink.n)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	if b := allocated(synth.Spec{Dist: synth.Pareto}, 1<<22-1); b > 8<<20 {
		t.Errorf("one Pareto item of value 2^22−1 allocated %d bytes", b)
	}
	if b := allocated(synth.Spec{Dist: synth.Zipf, Distinct: 1 << 20}, 1<<20-1); b < 1<<20 {
		t.Errorf("one Zipf item of value 2^20−1, of 2^20, allocated only %d bytes: its names are not kept", b)
	}
}
