package pipeline

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"streamd/feed"
	"streamd/gpusort"
)

// TestRestoredStreamBytes checks that thin streams restored from a
// snapshot hold no more than the same streams made by their values: as
// many objects for the collector to trace, and no more bytes. A restored
// part used to keep empty summaries, a copy of its configuration and an
// empty map of rejects that a part made by values has not, and was
// allocated apart from its stream: 12 objects a stream against 7.
func TestRestoredStreamBytes(t *testing.T) {
	const n = 20000
	ctx := context.Background()
	heap := func() (bytes, objects int64) {
		runtime.GC()
		runtime.GC()
		var st runtime.MemStats
		runtime.ReadMemStats(&st)
		return int64(st.HeapAlloc), int64(st.HeapObjects)
	}
	b0, o0 := heap()
	p := open(t, Config{MaxStreams: 1 << 20})
	for i := range n {
		if _, err := p.Accept(ctx, &feed.Batch{Stream: fmt.Sprintf("host%07d.cpu", i), Values: []float64{1, 2, 3}}); err != nil {
			t.Fatal(err)
		}
	}
	b1, o1 := heap()
	snap, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	q, err := New(Config{MaxStreams: 1 << 20, Sorter: gpusort.NewCPU(0)})
	if err != nil {
		t.Fatal(err)
	}
	b2, o2 := heap()
	if err := q.Restore(snap); err != nil {
		t.Fatal(err)
	}
	snap = nil
	b3, o3 := heap()
	runtime.KeepAlive(p)
	runtime.KeepAlive(q)
	made, restored := (b1-b0)/n, (b3-b2)/n
	madeObjects, restoredObjects := (o1-o0)/n, (o3-o2)/n
	t.Logf("made: %d B, %d objects a stream; restored: %d B, %d objects", made, madeObjects, restored, restoredObjects)
	if restoredObjects > madeObjects || restored > made {
		t.Errorf("a restored stream holds %d B in %d objects, one made by its values %d B in %d", restored, restoredObjects, made, madeObjects)
	}
	if got, want := q.Len(), n; got != want {
		t.Errorf("%d streams restored, want %d", got, want)
	}
}
