package pipeline

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"streamd/feed"
	"streamd/gpusort"
	"streamd/items"
	"streamd/summary"
	"streamd/synth"
)

func tpOf(i int) feed.Source { return feed.Source{Topic: "t", Partition: i} }

// feedPartitionItems accepts list into the item stream name, item i from
// partition i mod parts (and the local inputs for every seventh item), in
// batches of up to 100 items of one source, interleaving the sources. It
// returns the items of each source and all items in arrival order.
func feedPartitionItems(t *testing.T, p *Pipeline, name string, list []string, parts int) (map[feed.Source][]string, []string) {
	t.Helper()
	by := make(map[feed.Source][]string)
	var srcs []feed.Source
	for i, x := range list {
		src := tpOf(i % parts)
		if i%7 == 0 {
			src = feed.Local
		}
		if by[src] == nil {
			srcs = append(srcs, src)
		}
		by[src] = append(by[src], x)
	}
	ctx := context.Background()
	var arrived []string
	var b items.Batch
	for off := 0; ; off += 100 {
		more := false
		for _, src := range srcs {
			xs := by[src]
			if off >= len(xs) {
				continue
			}
			more = true
			b.Reset()
			for _, x := range xs[off:min(off+100, len(xs))] {
				b.AppendString(x)
			}
			var err error
			if src == feed.Local {
				err = acceptItemBatch(ctx, p, feed.Local, name, &b, time.Time{})
			} else {
				err = acceptItemBatch(ctx, p, src, name, &b, time.Time{})
			}
			if err != nil {
				t.Fatal(err)
			}
			arrived = append(arrived, xs[off:min(off+100, len(xs))]...)
		}
		if !more {
			return by, arrived
		}
	}
}

// TestPartitionItems: an item stream fed by Kafka partitions keeps each
// partition's items and strings apart; its answers name every heavy
// hitter by its string and bound every count, over all sources, over the
// partitions it owns, over its last n items, after a partition moves to a
// pipeline with another item key (the part is rekeyed), and after a
// snapshot.
func TestPartitionItems(t *testing.T) {
	const eps = 0.002
	n, distinct := 200_000, uint64(20_000)
	if testing.Short() {
		n, distinct = 40_000, 4_000
	}
	cfg := Config{Defaults: summary.Config{Epsilon: eps, WindowSize: 2000, SlidingWindow: 1 << 14}}
	p := open(t, cfg)
	if _, err := p.Create("urls", summary.Config{Items: true}); err != nil {
		t.Fatal(err)
	}
	list := zipfItems(t, n, distinct, synth.Random, 5)
	by, arrived := feedPartitionItems(t, p, "urls", list, 4)
	s := mustStream(t, p, "urls")
	checkItems(t, s, s.View(true), list, eps)
	for _, last := range []int64{500, 5000, 1 << 14} {
		snap, err := s.Last(last)
		if err != nil {
			t.Fatal(err)
		}
		checkItems(t, s, snap, arrived[len(arrived)-int(last):], eps)
	}

	p.OwnPartitions([]feed.Source{tpOf(0), tpOf(3)})
	owned := union(by, func(src feed.Source) bool { return src == feed.Local || src == tpOf(0) || src == tpOf(3) })
	checkItems(t, s, s.View(true), owned, eps)

	// Partition 1 moves to another pipeline: another item key, stale items
	// of its own for partition 1, items of partition 2.
	states, err := p.PartitionState(tpOf(1))
	if err != nil || len(states) != 1 {
		t.Fatalf("partition state: %d parts, %v", len(states), err)
	}
	q := open(t, cfg)
	if q.itemKey == p.itemKey {
		t.Fatal("two pipelines drew one item key")
	}
	ctx := context.Background()
	var stale items.Batch
	stale.AppendString("stale")
	if err := acceptItemBatch(ctx, q, tpOf(1), "urls", &stale, time.Time{}); err != nil {
		t.Fatal(err)
	}
	var b items.Batch
	for _, x := range by[tpOf(2)] {
		b.AppendString(x)
	}
	if err := acceptItemBatch(ctx, q, tpOf(2), "urls", &b, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := q.ReplacePartition(ctx, tpOf(1), states); err != nil {
		t.Fatal(err)
	}
	qs := mustStream(t, q, "urls")
	moved := append(slices.Clone(by[tpOf(1)]), by[tpOf(2)]...)
	checkItems(t, qs, qs.View(true), moved, eps)

	// A snapshot keeps the strings and the item key.
	data, err := q.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	r, _ := New(Config{Defaults: cfg.Defaults, Sorter: gpusort.NewCPU(0)})
	if err := r.Restore(data); err != nil {
		t.Fatal(err)
	}
	if err := r.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	rs := mustStream(t, r, "urls")
	checkItems(t, rs, rs.View(true), moved, eps)
	more := zipfItems(t, 3000, distinct, synth.Random, 6)
	b.Reset()
	for _, x := range more {
		b.AppendString(x)
	}
	if err := acceptItemBatch(ctx, r, tpOf(1), "urls", &b, time.Time{}); err != nil {
		t.Fatal(err)
	}
	checkItems(t, rs, rs.View(true), append(moved, more...), eps)

	// Once every window is summarised, each part keeps the strings of its
	// lossy table and no others.
	for _, pl := range []*Pipeline{p, q, r} {
		if err := pl.Close(ctx); err != nil {
			t.Fatal(err)
		}
		s := mustStream(t, pl, "urls")
		s.mu.Lock()
		for _, pt := range s.partsLocked() {
			if table, known := pt.sum.Counts().Len(), pt.items.names.Len(); table != known {
				t.Errorf("part %v: lossy table holds %d fingerprints, names %d strings", pt.src, table, known)
			}
		}
		s.mu.Unlock()
	}
}

// TestPartitionItemsWrongKind: a part of an item stream handed to a
// pipeline whose stream of that name takes values is refused and counted,
// and the stream's stale part of the partition goes.
func TestPartitionItemsWrongKind(t *testing.T) {
	cfg := Config{Defaults: summary.Config{Epsilon: 0.01, WindowSize: 100, SlidingWindow: 1000}}
	p := open(t, cfg)
	list := zipfItems(t, 500, 50, synth.Random, 1)
	feedPartitionItems(t, p, "s", list, 2)
	states, err := p.PartitionState(tpOf(1))
	if err != nil {
		t.Fatal(err)
	}
	q := open(t, cfg)
	ctx := context.Background()
	if err := acceptValues(ctx, q, tpOf(1), "s", []float64{1, 2, 3}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := q.ReplacePartition(ctx, tpOf(1), states); err != nil {
		t.Fatal(err)
	}
	st := mustStream(t, q, "s").Stats()
	if st.Count != 0 || st.Rejected[feed.ReasonWrongKind] == 0 {
		t.Fatalf("stats after a part of the other kind: %+v", st)
	}
}

// TestPartitionTimeWindows: values from the local inputs (the clock) and
// from Kafka partitions (the messages' timestamps, some from the past)
// share the stream's arrival times; a time window covers the values of
// every source that arrived in it.
func TestPartitionTimeWindows(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	const eps = 0.01
	p := open(t, Config{Now: clock.Now, Defaults: summary.Config{Epsilon: eps, WindowSize: 1000, SlidingWindow: 1 << 15}})
	x, _ := synth.Generate(synth.Spec{Dist: synth.LogNormal, Seed: 4}, 40000)
	var times []time.Time
	ctx := context.Background()
	newest := clock.Now()
	for i := 0; i < len(x); i += 400 {
		chunk := slices.Clone(x[i : i+400])
		at := clock.Now()
		var err error
		switch k := i / 400 % 4; k {
		case 0:
			err = acceptValues(ctx, p, feed.Local, "lat", chunk, time.Time{})
		default:
			// A message's timestamp, at times older than the newest
			// arrival: taken as the newest.
			at = at.Add(-time.Duration(k-1) * time.Second)
			err = acceptValues(ctx, p, tpOf(k), "lat", chunk, at)
		}
		if err != nil {
			t.Fatal(err)
		}
		if at.After(newest) {
			newest = at
		}
		for range chunk {
			times = append(times, newest)
		}
		clock.Advance(time.Duration(i%3) * time.Second)
	}
	for i := range x {
		x[i] = float64(float32(x[i]))
	}
	s := mustStream(t, p, "lat")
	if len(s.Parts(false, nil)) != 4 {
		t.Fatalf("%d parts, want 4", len(s.Parts(false, nil)))
	}
	for _, d := range []time.Duration{time.Second, 10 * time.Second, time.Minute, 10 * time.Minute} {
		checkSince(t, s, clock.Now(), d, x, times, eps)
	}
}

// TestPartitionMemory: a stream's partitions' windows in flight and
// partial windows are charged to the stream, a partition dropped by
// ReplacePartition gives back its windows never sent, its partial window's
// (lent) buffer and its charges, and a deleted stream gives back all.
func TestPartitionMemory(t *testing.T) {
	cfg := summary.Config{Epsilon: 0.01, WindowSize: 1000, SlidingWindow: 1000}
	fp := StreamFootprint(cfg)
	st := &stagingCPU{CPU: gpusort.NewCPU(1), lent: map[*float32]bool{}}
	bs := &blockingStager{stagingCPU: st, release: make(chan struct{})}
	p := open(t, Config{Defaults: cfg, Sorter: bs, Queue: 1, MaxMemory: 1 << 30, Linger: time.Millisecond})
	var once sync.Once
	release := func() { once.Do(func() { close(bs.release) }) }
	t.Cleanup(release)

	// Another stream fills the stuck sorter's queue; then Accepts whose
	// context has ended leave their windows unsent: each source fills 3
	// windows and a partial one.
	fill, stopFill := context.WithCancel(context.Background())
	filled := make(chan struct{})
	defer func() { stopFill(); <-filled }()
	go func() {
		defer close(filled)
		for fill.Err() == nil {
			_ = acceptValues(fill, p, feed.Local, "filler", make([]float64, cfg.WindowSize), time.Time{})
		}
	}()
	for full := 0; full < 3; {
		time.Sleep(10 * time.Millisecond)
		if p.Counters().Queued == 1 {
			full++
		} else {
			full = 0
		}
	}
	const parts = 12
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x, _ := synth.Generate(synth.Spec{Dist: synth.Uniform, Seed: 3}, 3500)
	for i := -1; i < parts; i++ {
		for j := 0; j < len(x); j += 700 {
			chunk := slices.Clone(x[j : j+700])
			var err error
			if i < 0 {
				err = acceptValues(ctx, p, feed.Local, "m", chunk, time.Time{})
			} else {
				err = acceptValues(ctx, p, tpOf(i), "m", chunk, time.Time{})
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	s := mustStream(t, p, "m")
	// Every window of every source is a window of the stream in flight, and
	// the partitions' partial windows are charged beside the reservation,
	// as measured.
	windows := int64(parts+1) * 3
	measured := func() int64 {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.summaryBytes()
	}
	charged := func() int64 { return s.Stats().Memory }
	want := func() int64 { return fp.Reserve + windows*fp.Window + max(measured()-fp.Summaries, 0) }
	if m := measured(); m < parts*int64(cfg.WindowSize)*4 {
		t.Fatalf("summaries and partial windows measured at %d bytes, less than the %d partitions' partial windows", m, parts)
	}
	if charged() != want() {
		t.Fatalf("stream charged %d, want %d (%d windows in flight, %d bytes measured)", charged(), want(), windows, measured())
	}
	before, lent := measured(), st.out()
	drop, staged := 0, 0
	s.mu.Lock()
	for _, w := range s.pendingQ {
		if w.Owner.src == tpOf(0) {
			drop++
			if w.Buffer.Staged {
				staged++
			}
		}
	}
	s.mu.Unlock()
	if drop != 3 {
		t.Fatalf("%d unsent windows of partition 0, want 3", drop)
	}
	if err := p.ReplacePartition(context.Background(), tpOf(0), nil); err != nil {
		t.Fatal(err)
	}
	windows -= int64(drop)
	if after := measured(); after > before-int64(cfg.WindowSize)*4 {
		t.Errorf("%d bytes measured after dropping partition 0, %d before", after, before)
	}
	if charged() != want() {
		t.Errorf("after dropping partition 0: stream charged %d, want %d", charged(), want())
	}
	if got := st.out(); got != lent-staged-1 {
		t.Errorf("%d lent buffers out after dropping partition 0, want %d (its %d lent unsent windows and its partial window back)", got, lent-staged-1, staged)
	}
	stopFill()
	<-filled
	if err := p.Delete("filler"); err != nil {
		t.Fatal(err)
	}
	release()
	if err := p.sendPending(context.Background(), s); err != nil { // the unsent windows go
		t.Fatal(err)
	}
	waitStreamSummarised(t, s, int64(parts*3*cfg.WindowSize))
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := st.out(); got != parts {
		t.Errorf("%d lent buffers out after close, want %d (the partial windows of the local part and %d partitions)", got, parts, parts-1)
	}
	checkStreamCount(t, s, int64(parts*len(x)))
	if err := p.Delete("m"); err != nil {
		t.Fatal(err)
	}
	if m := p.Memory(); m.Used != 0 {
		t.Errorf("after the delete: %+v", m)
	}
	if got := st.out(); got != 0 {
		t.Errorf("%d lent buffers out after the delete", got)
	}
}

func checkStreamCount(t *testing.T, s *Stream, want int64) {
	t.Helper()
	if got := s.View(false).Count(); got != want {
		t.Fatalf("%s counts %d values, want %d", s.Name(), got, want)
	}
}

// blockingStager is a stagingCPU whose sorts wait for release.
type blockingStager struct {
	*stagingCPU
	release chan struct{}
}

func (b *blockingStager) Digest(ctx context.Context, batch *gpusort.Quad, specs *[gpusort.Channels]summary.WindowSpec, out *[gpusort.Channels]summary.Digest) error {
	<-b.release
	return b.stagingCPU.Digest(ctx, batch, specs, out)
}

// FuzzRestoreItems seeds FuzzRestore's decoding with snapshots and part
// states of item streams, whose strings must follow their counts.
func FuzzRestoreItems(f *testing.F) {
	p, _ := New(Config{Defaults: summary.Config{Epsilon: 0.1, WindowSize: 4, SlidingWindow: 10}, Sorter: gpusort.NewCPU(1)})
	ctx := context.Background()
	var b items.Batch
	for _, x := range []string{"a", "b", "a", "c", "a", "d", "e"} {
		b.AppendString(x)
	}
	_ = acceptItemBatch(ctx, p, feed.Local, "i", &b, time.Time{})
	_ = acceptItemBatch(ctx, p, tpOf(2), "i", &b, time.Time{})
	data, _ := p.Snapshot()
	f.Add(data)
	states, _ := p.PartitionState(tpOf(2))
	f.Add(states[0].Data)
	f.Fuzz(func(t *testing.T, data []byte) {
		q, _ := New(Config{Sorter: gpusort.NewCPU(1)})
		if q.Restore(data) == nil {
			for _, name := range q.List() {
				s, _ := q.Stream(name)
				v := s.View(true)
				if s.IsItems() {
					s.HeavyItems(v, 0.5)
					s.ItemFrequencies(v, []string{"a"})
				}
			}
		}
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		r, _ := New(Config{Sorter: gpusort.NewCPU(1)})
		_, _ = r.Create("i", summary.Config{Items: true})
		if r.ReplacePartition(cancelled, tpOf(2), []PartState{{Stream: "i", Data: data}}) == nil {
			s, _ := r.Stream("i")
			s.HeavyItems(s.View(true), 0.5)
			var more items.Batch
			more.AppendString(fmt.Sprint(len(data)))
			_ = acceptItemBatch(cancelled, r, tpOf(2), "i", &more, time.Time{})
		}
	})
}
