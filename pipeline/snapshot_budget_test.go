package pipeline

import (
	"context"
	"sync"
	"testing"
	"time"

	"streamd/feed"
	"streamd/gpusort"
	"streamd/summary"
)

// TestRestoreDeltaReturnsTheBudget: a stream that a delta replaces or
// deletes, whose base held full windows of pending values (windows in
// flight when the base was written), gives its charges back: once every
// stream restored is deleted, the budget's sums are all 0 again. They used
// to keep its reservation and its windows, which no sort would ever
// finish, for good.
func TestRestoreDeltaReturnsTheBudget(t *testing.T) {
	ctx := context.Background()
	cfg := summary.Config{Epsilon: 0.1, WindowSize: 8, SlidingWindow: 20}
	bs := &blockingSorter{CPU: gpusort.NewCPU(1), release: make(chan struct{})}
	var once sync.Once
	release := func() { once.Do(func() { close(bs.release) }) }
	from := open(t, Config{Defaults: cfg, Sorter: bs, MaxMemory: 1 << 30, Linger: time.Millisecond})
	t.Cleanup(release) // runs before the pipeline's Close
	// Two windows of each stream go to the stuck sorter; the base holds
	// them as pending.
	for _, name := range []string{"x", "y"} {
		if err := acceptValues(ctx, from, feed.Local, name, make([]float64, 20), time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	base, _ := save(t, from, false, true)
	if err := acceptValues(ctx, from, feed.Local, "x", []float64{1, 2, 3}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := from.Delete("y"); err != nil {
		t.Fatal(err)
	}
	delta, names := save(t, from, true, true)
	if len(names) != 1 || names[0] != "x" {
		t.Fatalf("delta holds %v, want [x]", names)
	}
	release()

	p := openRestored(t, Config{Defaults: cfg, Sorter: gpusort.NewCPU(1), MaxMemory: 1 << 30}, base, delta)
	if c := mustStream(t, p, "x").Stats().Count; c != 23 {
		t.Fatalf("restored count %d, want 23", c)
	}
	if names := p.List(); len(names) != 1 {
		t.Fatalf("restored streams %v, want [x]", names)
	}
	quiesce(t, p)
	if err := p.Delete("x"); err != nil {
		t.Fatal(err)
	}
	if m := p.Memory(); m.Used != 0 || m.Reserved != 0 || m.Windows != 0 || m.Growth != 0 {
		t.Fatalf("after deleting every stream: %+v, want every sum 0", m)
	}
}
