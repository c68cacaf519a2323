package pipeline

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"streamd/feed"
	"streamd/hhh"
	"streamd/internal/codec"
	"streamd/items"
	"streamd/summary"
)

// TestHierarchyRefusedAtALevelChargesNone: when the memory budget holds
// the strings of a batch's items at level 0 but not their prefixes at
// level 1, the batch is refused whole and the budget is charged nothing
// for it, level 0 included.
func TestHierarchyRefusedAtALevelChargesNone(t *testing.T) {
	cfg := summary.Config{Epsilon: 0.01, WindowSize: 1024, SlidingWindow: 4096, Hierarchy: "path/3"}
	key, err := items.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	var b items.Batch
	pad := strings.Repeat("x", 1000)
	for i := range 100 {
		b.AppendString("/" + strconv.Itoa(i) + pad + "/leaf")
	}
	ctx := context.Background()

	_, used, level0, level1 := levelCharges(t, key, cfg, &b)
	if level0 <= 0 || level1 <= 0 {
		t.Fatalf("the batch charges %d bytes at level 0 and %d at level 1", level0, level1)
	}

	p := open(t, Config{ItemKey: key, MaxMemory: used + level0 + level1/2})
	if _, err := p.Create("paths", cfg); err != nil {
		t.Fatal(err)
	}
	before := p.Memory()
	if n, err := p.Accept(ctx, &feed.Batch{Stream: "paths", Items: &b}); !errors.Is(err, ErrMemoryBudget) || n != 0 {
		t.Fatalf("Accept past the budget at level 1: %d, %v; want 0 and ErrMemoryBudget", n, err)
	}
	if after := p.Memory(); after.Used != before.Used || after.Growth != before.Growth {
		t.Fatalf("after a refused batch the budget charges %d bytes (growth %d), %d (growth %d) before", after.Used, after.Growth, before.Used, before.Growth)
	}
}

// TestRestoreHierarchyChecksLevelCounts: a snapshot whose level streams
// count other items than their hierarchy stream is refused as corrupt,
// not restored into a stream whose every hierarchical heavy hitter query
// fails.
func TestRestoreHierarchyChecksLevelCounts(t *testing.T) {
	cfg := summary.Config{Epsilon: 0.01, WindowSize: 64, SlidingWindow: 1024, Hierarchy: "path/3"}
	p := open(t, Config{})
	s, err := p.Create("paths", cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var b items.Batch
	for i := range 100 {
		b.AppendString("/a/" + strconv.Itoa(i))
	}
	if n, err := p.Accept(ctx, &feed.Batch{Stream: "paths", Items: &b}); err != nil || n != 100 {
		t.Fatalf("Accept: %d, %v", n, err)
	}
	good, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	// One more item at level 1 only.
	b.Reset()
	b.AppendString("/b")
	if err := p.acceptItemsFrom(ctx, s.hier.levels[0], feed.Local, &b, time.Time{}); err != nil {
		t.Fatal(err)
	}
	bad, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}

	q := open(t, Config{})
	if err := q.Restore(bad); !errors.Is(err, codec.ErrCorrupt) {
		t.Fatalf("restore a level that counts one more item: %v, want an error wrapping codec.ErrCorrupt", err)
	}
	if err := q.Restore(good); err != nil {
		t.Fatal(err)
	}
	r, err := q.Stream("paths")
	if err != nil {
		t.Fatal(err)
	}
	a, err := r.HierarchicalHeavyHitters(HHHQuery{Support: 0.5})
	if err != nil || a.Count != 100 {
		t.Fatalf("restored answer: count %d, %v; want 100 items", a.Count, err)
	}
}

// TestHierarchyEmptyField: in a delimited hierarchy the empty first field
// of an item is a prefix like any other, named ""; when it is heavy, the
// answers name it, not fail for a prefix whose string is not kept.
func TestHierarchyEmptyField(t *testing.T) {
	const precision, minSupport = 0.02, 0.05
	cfg := summary.Config{Epsilon: hhh.LevelEpsilon(precision, minSupport), WindowSize: 64, SlidingWindow: 1024, Hierarchy: "delim/3:,"}
	p := open(t, Config{})
	s, err := p.Create("fields", cfg)
	if err != nil {
		t.Fatal(err)
	}
	var list []string
	for i := range 300 {
		if i%3 == 0 {
			list = append(list, ",x"+strconv.Itoa(i%7)+",y") // the empty first field
		} else {
			list = append(list, "a,b"+strconv.Itoa(i%5)+","+strconv.Itoa(i))
		}
	}
	acceptItems(t, p, "fields", list, 50)
	checkHHH(t, s, HHHQuery{}, list, precision, minSupport)
	checkHHH(t, s, HHHQuery{LastN: 100}, list[200:], precision, minSupport)
}

// TestHierarchyWindowAtEveryLevelNeverWaitsOnItself: when a batch fills a
// window at every level of a hierarchy stream and the budget holds level
// 0's window but not level 1's too, Accept does not wait for level 0's
// window, which it has charged but not filled yet and which fills only
// once every level is charged: nothing else is in flight, so the batch is
// refused whole and the budget charged nothing for it.
func TestHierarchyWindowAtEveryLevelNeverWaitsOnItself(t *testing.T) {
	cfg := summary.Config{Epsilon: 0.01, WindowSize: 1024, SlidingWindow: 4096, Hierarchy: "path/3"}
	key, err := items.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	var b items.Batch
	for i := range cfg.WindowSize {
		b.AppendString("/" + strconv.Itoa(i%7) + "/" + strconv.Itoa(i))
	}
	ctx := context.Background()

	s, used, level0, level1 := levelCharges(t, key, cfg, &b)
	window := s.account.Footprint().Window
	if level0 < window || level1 < window {
		t.Fatalf("the batch charges %d bytes at level 0 and %d at level 1, want a window (%d) at each", level0, level1, window)
	}

	p := open(t, Config{ItemKey: key, MaxMemory: used + level0 + level1 - 1})
	if _, err := p.Create("paths", cfg); err != nil {
		t.Fatal(err)
	}
	before := p.Memory()
	// A deadline only ends a wait that would otherwise never end.
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if n, err := p.Accept(wctx, &feed.Batch{Stream: "paths", Items: &b}); !errors.Is(err, ErrMemoryBudget) || n != 0 {
		t.Fatalf("Accept past the budget at level 1: %d, %v; want 0 and ErrMemoryBudget", n, err)
	}
	if after := p.Memory(); after.Used != before.Used || after.Windows != before.Windows {
		t.Fatalf("after a refused batch the budget charges %d bytes (windows %d), %d (windows %d) before", after.Used, after.Windows, before.Used, before.Windows)
	}
}

// levelCharges measures, on a pipeline without a limit, what the budget
// is charged for b at levels 0 and 1 of a new hierarchy stream "paths" of
// cfg, items hashed with key: used, the bytes charged before b, and
// level0 and level1, those charged for each level. It returns the stream
// measured too.
func levelCharges(t *testing.T, key items.Key, cfg summary.Config, b *items.Batch) (s *Stream, used, level0, level1 int64) {
	t.Helper()
	ctx := context.Background()
	probe := open(t, Config{ItemKey: key})
	s, err := probe.Create("paths", cfg)
	if err != nil {
		t.Fatal(err)
	}
	buf := &levelBuf{batches: make([]items.Batch, 2), fps: make([]itemBuf, 2)}
	if notIn := buf.split(s.hier.h, b); notIn != 0 {
		t.Fatalf("%d items not in the hierarchy", notIn)
	}
	used = probe.Memory().Used
	if err := probe.chargeItems(ctx, s, feed.Local, &buf.batches[0]); err != nil {
		t.Fatal(err)
	}
	level0 = probe.Memory().Used - used
	if err := probe.chargeItems(ctx, s.hier.levels[0], feed.Local, &buf.batches[1]); err != nil {
		t.Fatal(err)
	}
	level1 = probe.Memory().Used - used - level0
	return s, used, level0, level1
}
