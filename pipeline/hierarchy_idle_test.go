package pipeline

import (
	"context"
	"testing"
	"time"

	"streamd/feed"
	"streamd/hhh"
	"streamd/items"
	"streamd/summary"
)

// TestHierarchyIdleFlush: a hierarchy stream whose levels' partial
// windows the sweeper shrinks again and again, between full windows,
// answers its heavy prefixes and discounted hitters within their bounds
// of exact counts, before and after a snapshot and restore.
func TestHierarchyIdleFlush(t *testing.T) {
	const precision, minSupport = 0.01, 0.05
	eps := hhh.LevelEpsilon(precision, minSupport)
	clock := &fakeClock{now: idleStart}
	cfg := Config{Now: clock.Now, IdleFlush: time.Minute}
	p := open(t, cfg)
	s, err := p.Create("addrs", summary.Config{Epsilon: eps, WindowSize: 1024, SlidingWindow: 1 << 15, Hierarchy: "ipv4"})
	if err != nil {
		t.Fatal(err)
	}
	list := floodTrace(t, 20000, 0.3, 12000)
	var shrunk int64
	at := 0
	for _, k := range []int{300, 2500, 700, 5000, 11500} {
		for i := at; i < at+k; i += 200 {
			var b items.Batch
			for _, x := range list[i:min(i+200, at+k)] {
				b.AppendString(x)
			}
			if err := acceptItemBatch(context.Background(), p, feed.Local, "addrs", &b, time.Time{}); err != nil {
				t.Fatal(err)
			}
		}
		at += k
		waitIdle(t, p)
		shrunk += sweepQuiet(p, clock, time.Minute).Shrunk
		checkHHH(t, s, HHHQuery{}, list[:at], precision, minSupport)
	}
	if shrunk == 0 {
		t.Fatal("the sweeps shrank no partial window")
	}
	snap, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	q := open(t, cfg)
	if err := q.Restore(snap); err != nil {
		t.Fatal(err)
	}
	r := mustStream(t, q, "addrs")
	checkHHH(t, r, HHHQuery{}, list, precision, minSupport)
	checkHHH(t, r, HHHQuery{LastN: 8000}, list[len(list)-8000:], precision, minSupport)
}
