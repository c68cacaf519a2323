package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"streamd/feed"
	"streamd/gpusort"
	"streamd/items"
	"streamd/summary"
)

// prefetchStreams makes n streams of a few values in p, named s0 to s(n−1):
// every seventh fed by a Kafka partition, the others by the local inputs,
// every fifth an item stream. It returns their names.
func prefetchStreams(t *testing.T, p *Pipeline, n int) [][]byte {
	t.Helper()
	ctx := context.Background()
	names := make([][]byte, n)
	for i := range names {
		name := fmt.Sprintf("s%d", i)
		names[i] = []byte(name)
		b := feed.Batch{Stream: name, Values: []float64{float64(i), 1, 2}}
		if i%7 == 0 {
			b.Source = feed.Source{Topic: "t", Partition: i % 3}
		}
		if i%5 == 0 {
			if _, err := p.Create(name, summary.Config{Items: true}); err != nil {
				t.Fatal(err)
			}
			var list items.Batch
			list.AppendString("x")
			b = feed.Batch{Stream: name, Source: b.Source, Items: &list}
		}
		if _, err := p.Accept(ctx, &b); err != nil {
			t.Fatal(err)
		}
	}
	return names
}

// TestPrefetch checks that Prefetch finds the streams it is told of, as
// Accept's lookup by name does, up to prefetchMax, and none below
// prefetchMinStreams streams; and that it changes nothing: names of
// streams, of none, empty and too many leave the pipeline's snapshot as
// it was, in a pipeline made by Accept and in one restored from its
// snapshot.
func TestPrefetch(t *testing.T) {
	few := open(t, Config{})
	if got := few.Prefetch(prefetchStreams(t, few, prefetchMinStreams-1)[:10]); got != 0 {
		t.Errorf("Prefetch among %d streams found %d, want 0", few.Len(), got)
	}
	p := open(t, Config{})
	names := prefetchStreams(t, p, prefetchMinStreams+100)
	for _, c := range []struct {
		names [][]byte
		want  int
	}{
		{names[:10], 10},
		{names[100:140], prefetchMax},
		{[][]byte{[]byte("none"), names[7], {}, []byte("s7x"), names[4000]}, 2},
	} {
		if got := p.Prefetch(c.names); got != c.want {
			t.Errorf("Prefetch(%q) found %d streams, want %d", c.names, got, c.want)
		}
	}
	snapshot, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	before := streamStates(t, p)
	hints := func(p *Pipeline) {
		for i := 0; i < len(names); i += 40 {
			p.Prefetch(names[i:min(i+40, len(names))]) // past prefetchMax
		}
		p.Prefetch(nil)
		p.Prefetch([][]byte{{}, []byte("none"), []byte("s0"), {0xff, 0}, bytes.Repeat([]byte("x"), 1<<10)})
	}
	hints(p)
	if !maps.Equal(before, streamStates(t, p)) {
		t.Fatal("Prefetch changed the streams")
	}

	r := openRestored(t, Config{}, snapshot)
	for _, s := range r.streams.all() {
		s.mu.Lock()
		first := s.partsLocked()[0]
		s.mu.Unlock()
		if s.first != first {
			t.Fatalf("restored stream %q: first is not its first part", s.name)
		}
	}
	restored := streamStates(t, r)
	hints(r)
	if !maps.Equal(restored, streamStates(t, r)) {
		t.Fatal("Prefetch changed the restored streams")
	}
}

// streamStates returns the encoding of each stream of p, by name.
func streamStates(t *testing.T, p *Pipeline) map[string]string {
	t.Helper()
	states := make(map[string]string)
	for _, s := range p.streams.all() {
		var buf encodeBuf
		if err := s.appendState(&buf, p.itemKey, new(Saved), false); err != nil {
			t.Fatal(err)
		}
		states[s.name] = string(buf.b)
	}
	return states
}

// TestPrefetchConcurrent runs Prefetch while other goroutines create,
// feed, delete and snapshot the streams it names. Run with -race, it
// checks that what Prefetch reads without a lock is never written once a
// stream is published.
func TestPrefetchConcurrent(t *testing.T) {
	p := open(t, Config{})
	names := prefetchStreams(t, p, prefetchMinStreams)
	ctx := context.Background()
	var writers, readers sync.WaitGroup
	stop := make(chan struct{})
	for g := range 2 {
		writers.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for i := range 3000 {
				name := fmt.Sprintf("s%d", rng.IntN(len(names)+500))
				switch {
				case i%97 == 0:
					_ = p.Delete(name)
				case i%13 == 0:
					b := feed.Batch{Stream: name, Values: []float64{1}, Source: feed.Source{Topic: "u", Partition: g}}
					_, _ = p.Accept(ctx, &b) // an item stream refuses values
				default:
					b := feed.Batch{Stream: name, Values: []float64{float64(i), 2, 3}}
					_, _ = p.Accept(ctx, &b)
				}
			}
		})
	}
	readers.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := p.Snapshot(); err != nil {
				t.Error(err)
				return
			}
		}
	})
	readers.Go(func() {
		extra := [][]byte{[]byte("s4100"), []byte("s4200"), []byte("s4300")}
		for i := 0; ; i = (i + prefetchMax) % len(names) {
			select {
			case <-stop:
				return
			default:
			}
			p.Prefetch(names[i:min(i+prefetchMax, len(names))])
			p.Prefetch(extra)
		}
	})
	writers.Wait()
	close(stop)
	readers.Wait()
}

// checkFirst checks that every stream of p has the first part that
// Prefetch reads without a lock, with its summaries: read as Prefetch
// reads them, so that, run with -race, it also checks that nothing
// writes them once the stream is published.
func checkFirst(t *testing.T, p *Pipeline) {
	t.Helper()
	for _, s := range p.streams.all() {
		if s.first == nil || s.first.sum == nil || s.first.stream != s || s.name == "" || s.recent == nil {
			t.Errorf("stream %q: first part %p, recent %p: not what Prefetch reads", s.name, s.first, s.recent)
			return
		}
	}
}

// TestPrefetchConcurrentChanges runs Prefetch, and checks the streams'
// first parts, while other goroutines change the streams in every way
// that makes, replaces or changes one: hierarchy, pair and float64
// streams created, deleted and created again under one name, a Kafka
// partition's parts handed over and emptied (PartitionState,
// ReplacePartition), partitions released and owned again
// (OwnPartitions), quiet partial windows flushed (sweepIdle) and
// snapshots; then while a pipeline that is not open is restored from a
// snapshot and deltas, again and again. Run with -race, it checks that
// what Prefetch reads without a lock is set before a stream is
// published and never written after.
func TestPrefetchConcurrentChanges(t *testing.T) {
	clock := &fakeClock{now: idleStart}
	cfg := Config{Now: clock.Now, IdleFlush: time.Minute, Defaults: summary.Config{WindowSize: 64}}
	p := open(t, cfg)
	names := prefetchStreams(t, p, prefetchMinStreams+200)
	base, _ := save(t, p, false, true)
	kinds := []summary.Config{
		{Hierarchy: "path/3"},
		{Pairs: true},
		{Float64: true},
		{Items: true},
	}
	for i := range 2 * len(kinds) {
		names = append(names, []byte(fmt.Sprintf("k%d", i)))
	}
	ctx := context.Background()
	var writers, readers sync.WaitGroup
	stop := make(chan struct{})
	writers.Go(func() { // kinds of streams, deleted and created again
		for i := range 400 {
			j := i % (2 * len(kinds))
			name := fmt.Sprintf("k%d", j)
			if i/(2*len(kinds))%2 == 1 {
				_ = p.Delete(name)
				continue
			}
			cfg := kinds[(j+i/(4*len(kinds)))%len(kinds)]
			if _, err := p.Create(name, cfg); err != nil {
				t.Errorf("create %q: %v", name, err)
				return
			}
			b := feed.Batch{Stream: name}
			switch {
			case cfg.Hierarchy != "" || cfg.Items:
				var list items.Batch
				for k := range 70 {
					list.AppendString(fmt.Sprintf("/a%d/b%d/c", k%3, k))
				}
				b.Items = &list
			case cfg.Pairs:
				b.Pairs = feed.Pairs{X: []float64{1, 2, 3}, Y: []float64{4, 5, 6}}
			default:
				b.Values = make([]float64, 70)
			}
			if _, err := p.Accept(ctx, &b); err != nil {
				t.Errorf("accept %q: %v", name, err)
				return
			}
		}
	})
	writers.Go(func() { // a Kafka partition's parts, handed over and emptied
		for i := range 300 {
			tp := feed.Source{Topic: "t", Partition: i % 3}
			b := feed.Batch{Stream: fmt.Sprintf("s%d", 7*(i%50)), Source: tp, Values: []float64{1, 2, 3}}
			_, _ = p.Accept(ctx, &b) // an item stream refuses values
			switch {
			case i%25 == 24:
				if err := p.ReplacePartition(ctx, tp, nil); err != nil {
					t.Error(err)
					return
				}
			case i%10 == 9:
				states, err := p.PartitionState(tp)
				if err == nil {
					err = p.ReplacePartition(ctx, tp, states)
				}
				if err != nil {
					t.Error(err)
					return
				}
			case i%7 == 6:
				p.OwnPartitions([]feed.Source{tp})
			}
		}
	})
	writers.Go(func() { // idle flushes and snapshots
		for i := range 40 {
			clock.Advance(time.Minute)
			p.sweepIdle(ctx)
			if i%10 == 0 {
				if _, err := p.Snapshot(); err != nil {
					t.Error(err)
					return
				}
			}
		}
	})
	var found atomic.Int64
	prefetching := func(p *Pipeline) {
		readers.Go(func() {
			for i := 0; ; i = (i + prefetchMax) % len(names) {
				select {
				case <-stop:
					return
				default:
				}
				found.Add(int64(p.Prefetch(names[i:min(i+prefetchMax, len(names))])))
				if i == 0 {
					checkFirst(t, p)
				}
			}
		})
	}
	prefetching(p)
	writers.Wait()
	close(stop)
	readers.Wait()
	checkFirst(t, p)
	if found.Load() == 0 {
		t.Fatal("Prefetch found no stream")
	}

	quiesce(t, p)
	delta, _ := save(t, p, true, true)
	q, err := New(Config{Sorter: gpusort.NewCPU(0), Now: clock.Now, Defaults: cfg.Defaults})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Restore(base); err != nil {
		t.Fatal(err)
	}
	stop = make(chan struct{})
	found.Store(0)
	prefetching(q)
	for range 3 {
		if err := q.RestoreDelta(delta); err != nil {
			t.Error(err)
			break
		}
		if err := q.Restore(base); err != nil {
			t.Error(err)
			break
		}
	}
	close(stop)
	readers.Wait()
	checkFirst(t, q)
	if found.Load() == 0 {
		t.Fatal("Prefetch found no restored stream")
	}
}
