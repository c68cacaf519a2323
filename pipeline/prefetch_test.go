package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"testing"

	"streamd/feed"
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

// TestPrefetch checks that Prefetch changes nothing: names of streams,
// of none, empty and too many leave the pipeline's snapshot as it was,
// in a pipeline made by Accept and in one restored from its snapshot.
func TestPrefetch(t *testing.T) {
	p := open(t, Config{})
	names := prefetchStreams(t, p, prefetchMinStreams+100)
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
		if err := s.appendState(&buf, p.itemKey, new(Saved)); err != nil {
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
