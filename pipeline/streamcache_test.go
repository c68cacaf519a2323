package pipeline

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"streamd/feed"
)

// TestStreamCacheBucket checks one bucket of a streamCache: streams whose
// hashes are equal are told apart by name, a full bucket gives a way up
// to a new stream and the others stay found, a stream put twice takes one
// way, and a removed stream is no longer found, nor peeked.
func TestStreamCacheBucket(t *testing.T) {
	var c streamCache
	c.reset(0)
	const h = 42 // every stream below falls in one bucket
	streams := make([]*Stream, cacheWays+1)
	for i := range streams {
		streams[i] = &Stream{name: fmt.Sprintf("s%d", i)}
	}
	for _, s := range streams[:cacheWays] {
		c.put(h, s)
		c.put(h, s)
	}
	for _, s := range streams[:cacheWays] {
		if got := c.get(h, s.name); got != s {
			t.Fatalf("get(%q) = %v, want the stream put", s.name, got)
		}
	}
	if got := c.get(h, "none"); got != nil {
		t.Fatalf("get of a name never put = %q", got.name)
	}
	if got := c.get(h+1, streams[0].name); got != nil {
		t.Fatalf("get with another hash = %q", got.name)
	}
	// A fifth stream takes one way; the other three stay.
	c.put(h, streams[cacheWays])
	if c.get(h, streams[cacheWays].name) != streams[cacheWays] {
		t.Fatal("the stream put in a full bucket is not found")
	}
	found := 0
	for _, s := range streams[:cacheWays] {
		if c.get(h, s.name) == s {
			found++
		}
	}
	if found != cacheWays-1 {
		t.Fatalf("%d of the first %d streams found after a fifth, want %d", found, cacheWays, cacheWays-1)
	}
	for _, s := range streams {
		c.remove(h, s)
		if got := c.get(h, s.name); got != nil {
			t.Fatalf("get(%q) after remove = %v", s.name, got)
		}
	}
	if got := c.peek(h); got != nil {
		t.Fatalf("peek after every stream removed = %q", got.name)
	}
}

// TestStreamCacheFit checks that the cache grows with the table, a bucket
// for each two streams, and never shrinks.
func TestStreamCacheFit(t *testing.T) {
	var c streamCache
	c.reset(0)
	for _, tc := range []struct {
		streams int64
		want    int
	}{
		{0, minCacheBuckets}, {33, minCacheBuckets}, {66, 64}, {1000, 512}, {1000000, 1 << 19}, {1 << 20, 1 << 19}, {1<<20 + 2, 1 << 20}, {10, 1 << 20},
	} {
		c.fit(tc.streams)
		if got := len(*c.buckets.Load()); got != tc.want {
			t.Errorf("after fit(%d): %d buckets, want %d", tc.streams, got, tc.want)
		}
	}
	c.reset(10)
	if got := len(*c.buckets.Load()); got != minCacheBuckets {
		t.Errorf("after reset(10): %d buckets, want %d", got, minCacheBuckets)
	}
}

// TestStreamCacheFollowsTable checks that a pipeline's lookups, which
// go through the cache, find what its table holds as streams are
// created, deleted and made again under the same name, while the cache
// grows: never a deleted stream, and values accepted after a deletion
// go to the stream made after it.
func TestStreamCacheFollowsTable(t *testing.T) {
	p := open(t, Config{MaxStreams: 1 << 20})
	ctx := context.Background()
	accept := func(name string, v float64) {
		t.Helper()
		if _, err := p.Accept(ctx, &feed.Batch{Stream: name, Values: []float64{v}}); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 3 {
		// Enough streams each round to grow the cache past its buckets.
		for i := range 5000 {
			accept(fmt.Sprintf("r%d-%d", round, i), float64(i))
		}
		for i := range 5000 {
			name := fmt.Sprintf("r%d-%d", round, i)
			old := p.lookup(name)
			if old == nil || old.name != name {
				t.Fatalf("lookup(%q) = %v", name, old)
			}
			if i%3 != 0 {
				continue
			}
			if err := p.Delete(name); err != nil {
				t.Fatal(err)
			}
			if s := p.lookup(name); s != nil {
				t.Fatalf("lookup(%q) after Delete found a stream", name)
			}
			accept(name, -1)
			s := p.lookup(name)
			if s == nil || s == old {
				t.Fatalf("lookup(%q) after it was made again = %p, the deleted one %p", name, s, old)
			}
			if st := s.Stats(); st.Count != 1 || st.Min != -1 || st.Max != -1 {
				t.Fatalf("%q made again holds %d values in [%g, %g]; want the one accepted after Delete, -1", name, st.Count, st.Min, st.Max)
			}
		}
	}
}

// TestStreamCacheConcurrent looks streams up from many goroutines while
// others delete them, make them again and make new ones, which grows the
// cache: a lookup made after a deletion has returned, in the goroutine
// that made it, never finds the deleted stream. Run with -race, it also
// checks that the cache's words are read and written atomically.
func TestStreamCacheConcurrent(t *testing.T) {
	p := open(t, Config{MaxStreams: 1 << 20})
	ctx := context.Background()
	const names = 64
	for i := range names {
		if _, err := p.Accept(ctx, &feed.Batch{Stream: fmt.Sprintf("x%d", i), Values: []float64{1}}); err != nil {
			t.Fatal(err)
		}
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				name := fmt.Sprintf("x%d", (i+g)%names)
				if s := p.lookup(name); s != nil && s.name != name {
					t.Errorf("lookup(%q) found %q", name, s.name)
					return
				}
				p.Prefetch([][]byte{[]byte(name)})
			}
		})
	}
	wg.Go(func() { // grows the table, and with it the cache
		for i := 0; i < 20000 && !stop.Load(); i++ {
			if _, err := p.Accept(ctx, &feed.Batch{Stream: fmt.Sprintf("grow%d", i), Values: []float64{1}}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for i := range 3000 {
		name := fmt.Sprintf("x%d", i%names)
		old := p.lookup(name)
		if old == nil {
			t.Fatalf("lookup(%q) found nothing before its deletion", name)
		}
		if err := p.Delete(name); err != nil {
			t.Fatal(err)
		}
		if s := p.lookup(name); s != nil {
			t.Fatalf("lookup(%q) after Delete returned found a stream (the deleted one: %v)", name, s == old)
		}
		if _, err := p.Accept(ctx, &feed.Batch{Stream: name, Values: []float64{2}}); err != nil {
			t.Fatal(err)
		}
		if s := p.lookup(name); s == nil || s == old {
			t.Fatalf("lookup(%q) after it was made again = %p, the deleted one %p", name, s, old)
		}
	}
	stop.Store(true)
	wg.Wait()
}
