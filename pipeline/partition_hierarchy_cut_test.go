package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"streamd/feed"
	"streamd/gpusort"
	"streamd/summary"
)

// shardIndex returns the index of the shard of the pipeline's streams
// that name lies in: p.all and snapshots walk the shards in order.
func shardIndex(p *Pipeline, name string) int {
	sh, _ := p.streams.locate(name)
	for i := range p.streams.shards {
		if &p.streams.shards[i] == sh {
			return i
		}
	}
	panic("no shard")
}

// countingWriter counts the writes made to it, and closes wrote once it
// has had n.
type countingWriter struct {
	bytes.Buffer
	mu     sync.Mutex
	writes int
	n      int
	wrote  chan struct{}
}

func (w *countingWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	if w.writes == w.n {
		close(w.wrote)
	}
	return w.Buffer.Write(b)
}

// TestReplacePartitionHierarchyCut: ReplacePartition drops a hierarchy
// stream's part of a partition and its levels' parts at one cut (the
// hierarchy's lock), as OwnPartitions and the installs of its parts do:
// a query or a snapshot that takes that cut while the call is under way
// sees every level count the same items. A snapshot that saw the stream
// without its part but its levels with theirs would not restore (its
// levels' counts do not match: sameCounts), and a hierarchical heavy
// hitters query fails meanwhile.
//
// The call is held, deterministically, by the lock of a stream that it
// comes to after the hierarchy stream h (in a later shard): for a
// partition that leaves, that of a value stream z, in the pass that drops
// the streams' own parts, before the one that dropped their levels'; for
// one that comes back with its state, that of the first level of another
// hierarchy stream h2, in the pass that dropped the levels' parts, before
// the stream's own part and its levels' were installed.
func TestReplacePartitionHierarchyCut(t *testing.T) {
	for _, moveBack := range []bool{false, true} {
		t.Run(fmt.Sprintf("moveBack=%v", moveBack), func(t *testing.T) {
			cfg := Config{Defaults: summary.Config{Epsilon: 0.01, WindowSize: 128, SlidingWindow: 512}}
			p := open(t, cfg)
			ctx := context.Background()
			// h lies in a shard before the last (the shards follow a hash
			// seeded anew for each pipeline), so that streams come after it.
			h := "h"
			for i := 0; shardIndex(p, h) == len(p.streams.shards)-1; i++ {
				h = fmt.Sprintf("h.%d", i)
			}
			later := func(prefix string) string {
				for i := 0; ; i++ {
					if name := fmt.Sprintf("%s%d", prefix, i); shardIndex(p, name) > shardIndex(p, h) {
						return name
					}
				}
			}
			z, h2 := later("z"), later("h")
			hcfg := summary.Config{Hierarchy: "ipv4/8", Epsilon: 0.01, WindowSize: 128, SlidingWindow: 512}
			for _, name := range []string{h, h2} {
				if _, err := p.Create(name, hcfg); err != nil {
					t.Fatal(err)
				}
			}
			var list []string
			for i := range 1000 {
				list = append(list, fmt.Sprintf("10.%d.%d.%d", i%3, i%5, i%7))
			}
			acceptItemsAt(t, p, tpOf(0), h, list, 100, time.Time{})
			if err := acceptValues(ctx, p, feed.Local, z, []float64{1, 2, 3}, time.Time{}); err != nil {
				t.Fatal(err)
			}
			quiesce(t, p)
			var states []PartState
			if moveBack {
				// The partition comes back with its state: the stream's part
				// is replaced, and its levels' with it.
				var err error
				if states, err = p.PartitionState(tpOf(0)); err != nil {
					t.Fatal(err)
				}
			}
			hs, zs := mustStream(t, p, h), mustStream(t, p, z)
			levels := len(hs.levelStreams())

			blocker := &zs.mu
			if moveBack {
				blocker = &mustStream(t, p, h2).levelStreams()[0].mu
			}
			blocker.Lock()
			done := make(chan error, 1)
			go func() { done <- p.ReplacePartition(ctx, tpOf(0), states) }()
			time.Sleep(50 * time.Millisecond) // the call reaches the blocker
			// A query of the cut, meanwhile.
			if _, err := hs.HierarchicalHeavyHitters(HHHQuery{Support: 0.1}); err != nil {
				t.Errorf("a query during ReplacePartition: %v", err)
			}
			// A snapshot, meanwhile: its header, then the stream and each
			// of its levels; the blocker, after them, waits.
			w := &countingWriter{n: 2 + levels, wrote: make(chan struct{})}
			saved := make(chan error, 1)
			go func() {
				_, _, err := p.SaveTo(w, false)
				saved <- err
			}()
			select {
			case <-w.wrote:
			case <-time.After(5 * time.Second):
				t.Fatal("the snapshot did not write the hierarchy stream")
			}
			blocker.Unlock()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if err := <-saved; err != nil {
				t.Fatal(err)
			}
			q, err := New(Config{Defaults: cfg.Defaults, Sorter: gpusort.NewCPU(1)})
			if err != nil {
				t.Fatal(err)
			}
			if err := q.Restore(w.Bytes()); err != nil {
				t.Fatalf("a snapshot taken during ReplacePartition does not restore: %v", err)
			}
			var want int64
			if moveBack {
				want = int64(len(list))
			}
			for _, x := range []*Pipeline{p, q} {
				a, err := mustStream(t, x, h).HierarchicalHeavyHitters(HHHQuery{Support: 0.1})
				if err != nil || a.Count != want {
					t.Fatalf("after: %d items, %v; want %d", a.Count, err, want)
				}
			}
		})
	}
}
