package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"streamd/feed"
	"streamd/gpusort"
	"streamd/items"
	"streamd/summary"
)

// TestStreamCacheGenerations deletes and makes again, from several
// goroutines, streams of values, items, pairs and hierarchies of items
// under names of their own, each time with a count of values of its own,
// while other goroutines grow the table (and with it the cache, which is
// then empty) and shrink it, look every name up, Prefetch them, and feed
// streams that stay. Each
// stream made again holds exactly what was accepted after its name's
// deletion, never a deleted stream's values, and a lookup after the
// deletion finds no stream; each stream that stays holds exactly the
// values accepted to it. Run with -race, it also checks the cache's words
// are read and written atomically.
func TestStreamCacheGenerations(t *testing.T) {
	p := open(t, Config{MaxStreams: 1 << 20})
	ctx := context.Background()
	const bases = prefetchMinStreams + 64 // so that Prefetch looks streams up
	for i := range bases {
		if _, err := p.Accept(ctx, &feed.Batch{Stream: fmt.Sprintf("b%d", i), Values: []float64{1}}); err != nil {
			t.Fatal(err)
		}
	}
	const owners, owned, rounds = 3, 8, 40
	var all [][]byte
	for g := range owners {
		for j := range owned {
			all = append(all, []byte(fmt.Sprintf("o%d-%d", g, j)))
		}
	}
	var stop atomic.Bool
	var readers, owning sync.WaitGroup
	for g := range 2 { // lookups and Prefetch of every name
		readers.Go(func() {
			for i := g; !stop.Load(); i++ {
				name := all[i%len(all)]
				if s := p.lookup(string(name)); s != nil && s.name != string(name) {
					t.Errorf("lookup(%q) found %q", name, s.name)
					return
				}
				k := i % len(all)
				p.Prefetch(all[k:min(k+prefetchMax, len(all))])
				if s := p.lookup(fmt.Sprintf("b%d", i%bases)); s == nil {
					t.Errorf("lookup(b%d) found no stream", i%bases)
					return
				}
			}
		})
	}
	owning.Go(func() { // grows the table past the cache's buckets, twice, and shrinks it
		for i := range 5 * bases {
			name := fmt.Sprintf("g%d", i)
			if _, err := p.Accept(ctx, &feed.Batch{Stream: name, Values: []float64{1}}); err != nil {
				t.Error(err)
				return
			}
			if i%3 == 0 {
				if err := p.Delete(name); err != nil {
					t.Error(err)
					return
				}
			}
		}
	})
	owning.Go(func() { // feeds the streams that stay, once more each
		for i := range bases {
			if _, err := p.Accept(ctx, &feed.Batch{Stream: fmt.Sprintf("b%d", i), Values: []float64{2}}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for g := range owners {
		owning.Go(func() {
			prev := make([]*Stream, owned)
			for r := range rounds {
				for j := range owned {
					if !generation(t, p, fmt.Sprintf("o%d-%d", g, j), r, &prev[j]) {
						return
					}
				}
			}
		})
	}
	owning.Wait()
	stop.Store(true)
	readers.Wait()
	if t.Failed() {
		return
	}
	for i := range bases {
		name := fmt.Sprintf("b%d", i)
		s := p.lookup(name)
		if s == nil {
			t.Fatalf("lookup(%q) found no stream", name)
		}
		if st := s.Stats(); st.Count != 2 || st.Min != 1 || st.Max != 2 {
			t.Fatalf("%q holds %d values in [%g, %g], want the 2 accepted, 1 and 2", name, st.Count, st.Min, st.Max)
		}
	}
}

// generation deletes the stream name (made by the call of the round
// before, in *prev, if any), checks that a lookup then finds none, makes
// it again, of the kind round picks (values, items, pairs, a hierarchy of
// items), with round%3+1 batches of one value, item or pair of round's,
// and checks that a lookup finds a new stream of that kind that holds
// exactly those. It reports whether the checks passed.
func generation(t *testing.T, p *Pipeline, name string, round int, prev **Stream) bool {
	ctx := context.Background()
	if err := p.Delete(name); err != nil && !errors.Is(err, ErrNotFound) {
		t.Errorf("delete %q: %v", name, err)
		return false
	}
	if s := p.lookup(name); s != nil {
		t.Errorf("round %d: lookup(%q) after Delete returned found a stream (the deleted one: %v)", round, name, s == *prev)
		return false
	}
	kind := []string{"value", "item", "pair", "hierarchy"}[round%4]
	if kind == "hierarchy" {
		if _, err := p.Create(name, summary.Config{Hierarchy: "path/3"}); err != nil {
			t.Errorf("round %d: create %q: %v", round, name, err)
			return false
		}
	}
	k := round%3 + 1
	v := float64(round)
	for range k {
		b := feed.Batch{Stream: name}
		switch kind {
		case "value":
			b.Values = []float64{v}
		case "pair":
			b.Pairs = feed.Pairs{X: []float64{v}, Y: []float64{v}}
		default:
			var list items.Batch
			list.AppendString(fmt.Sprintf("/r/%d/x", round))
			b.Items = &list
		}
		if _, err := p.Accept(ctx, &b); err != nil {
			t.Errorf("round %d: accept %q: %v", round, name, err)
			return false
		}
	}
	s := p.lookup(name)
	if s == nil || s == *prev {
		t.Errorf("round %d: lookup(%q) after it was made again = %p, the deleted stream %p", round, name, s, *prev)
		return false
	}
	*prev = s
	got := "value"
	switch {
	case s.hier != nil:
		got = "hierarchy"
	case s.IsItems():
		got = "item"
	case s.IsPairs():
		got = "pair"
	}
	st := s.Stats()
	if got != kind || st.Count != int64(k) || kind != "item" && kind != "hierarchy" && (st.Min != v || st.Max != v) {
		t.Errorf("round %d: %q, a %s stream, holds %d in [%g, %g]; want a %s stream of the %d accepted after its deletion, %g", round, name, got, st.Count, st.Min, st.Max, kind, k, v)
		return false
	}
	return true
}

// TestStreamCacheRestore looks streams up, which puts them in the cache,
// in a pipeline restored from a snapshot, then restores a delta over it
// that replaces one stream, deletes another and adds a third, then the
// snapshot again, and so on, while other goroutines look the streams up
// too: each lookup after a restore finds the stream it restored, with
// what that holds, never one it replaced or dropped.
func TestStreamCacheRestore(t *testing.T) {
	p := open(t, Config{})
	ctx := context.Background()
	accept := func(name string, vs ...float64) {
		t.Helper()
		if _, err := p.Accept(ctx, &feed.Batch{Stream: name, Values: vs}); err != nil {
			t.Fatal(err)
		}
	}
	accept("kept", 1)
	accept("changed", 1)
	accept("dropped", 1)
	quiesce(t, p)
	base, _ := save(t, p, false, true)
	accept("changed", 2, 3)
	accept("added", 4)
	if err := p.Delete("dropped"); err != nil {
		t.Fatal(err)
	}
	quiesce(t, p)
	delta, _ := save(t, p, true, true)

	q, err := New(Config{Sorter: gpusort.NewCPU(0)})
	if err != nil {
		t.Fatal(err)
	}
	// want checks q's lookups: count[name] values for each stream named,
	// none for the others, and no stream of before.
	want := func(count map[string]int64, before map[string]*Stream) map[string]*Stream {
		t.Helper()
		found := map[string]*Stream{}
		for _, name := range []string{"kept", "changed", "dropped", "added"} {
			s, err := q.Stream(name)
			switch {
			case count[name] == 0 && err == nil:
				t.Fatalf("Stream(%q) found a stream (%p; before: %p), want none", name, s, before[name])
			case count[name] == 0:
				continue
			case err != nil:
				t.Fatalf("Stream(%q): %v", name, err)
			case s == before[name]:
				t.Fatalf("Stream(%q) found the stream of before the restore", name)
			}
			if got := s.Stats().Count; got != count[name] {
				t.Fatalf("Stream(%q) holds %d values, want %d", name, got, count[name])
			}
			found[name] = s
		}
		return found
	}
	var stop atomic.Bool
	var lookers sync.WaitGroup
	for range 2 { // lookups, which put the streams they find in the cache
		lookers.Go(func() {
			for !stop.Load() {
				for _, name := range []string{"kept", "changed", "dropped", "added"} {
					if s := q.lookup(name); s != nil && s.name != name {
						t.Errorf("lookup(%q) found %q", name, s.name)
						return
					}
				}
			}
		})
	}
	defer lookers.Wait()
	defer stop.Store(true)
	var got map[string]*Stream
	for range 10 {
		if err := q.Restore(base); err != nil {
			t.Fatal(err)
		}
		got = want(map[string]int64{"kept": 1, "changed": 1, "dropped": 1}, got)
		if err := q.RestoreDelta(delta); err != nil {
			t.Fatal(err)
		}
		delete(got, "kept") // the delta does not hold it: it stays
		want(map[string]int64{"kept": 1, "changed": 3, "added": 1}, got)
		got = want(map[string]int64{"kept": 1, "changed": 3, "added": 1}, nil)
	}
}

// TestStreamCacheTornWay checks that a stream the cache holds beside
// another stream's hash is found in the cache again once a lookup has
// found it in the table. Two puts into one free way from two shards at
// once store the way's stream and hash apart, and may leave the one's
// stream beside the other's hash: every lookup of that stream then
// misses the cache, and it stays there, found by Prefetch for the other
// name.
func TestStreamCacheTornWay(t *testing.T) {
	tab := newStreamTable()
	// Two names whose hashes fall in one bucket and in two shards.
	var names [2]string
	var hs [2]uint64
	buckets := *tab.cache.buckets.Load()
	for i := 0; names[1] == ""; i++ {
		name := fmt.Sprintf("n%d", i)
		h := tab.hash(name)
		switch {
		case names[0] == "":
			names[0], hs[0] = name, h
		case bucket(buckets, h) == bucket(buckets, hs[0]) && h%streamShards != hs[0]%streamShards:
			names[1], hs[1] = name, h
		}
	}
	var streams [2]*Stream
	for i, name := range names {
		streams[i] = &Stream{name: name}
		sh, h := tab.locate(name)
		tab.count.Add(1)
		sh.mu.Lock()
		sh.put(h, streams[i])
		sh.names.add(name)
		sh.mu.Unlock()
	}
	// The way as the two puts left it: the second stream beside the
	// first's hash.
	b := bucket(buckets, hs[0])
	b[0].stream.Store(streams[1])
	b[0].hash.Store(hs[0])
	for i := range 3 {
		if s := tab.get(names[1]); s != streams[1] {
			t.Fatalf("lookup %d of %q = %p, want %p", i, names[1], s, streams[1])
		}
	}
	if s := tab.cache.get(hs[1], names[1]); s != streams[1] {
		t.Fatalf("the cache, after the table found %q, finds %p, want %p", names[1], s, streams[1])
	}
	if s := tab.cache.peek(hs[0]); s == streams[1] {
		t.Fatalf("the cache peeks %q for the hash of %q", names[1], names[0])
	}
}

// TestStreamTableCacheChurn deletes and puts back, from several
// goroutines, streams of names of their own in a table, a new stream each
// time, while another goroutine grows the table from empty to thousands
// of streams (the cache is replaced, empty, at each doubling, as other
// shards put and remove streams in it) and others look every name up and
// peek at its hash. In the goroutine that deletes a stream, a lookup after
// the deletion finds none, and one after the new stream's put finds it.
func TestStreamTableCacheChurn(t *testing.T) {
	tab := newStreamTable()
	const owners, owned, grown = 4, 64, 8000
	put := func(name string) *Stream {
		s := &Stream{name: name}
		sh, h := tab.locate(name)
		tab.count.Add(1)
		sh.mu.Lock()
		tab.putLocked(sh, h, s)
		sh.mu.Unlock()
		return s
	}
	del := func(name string) *Stream {
		sh, h := tab.locate(name)
		sh.mu.Lock()
		defer sh.mu.Unlock()
		return tab.deleteLocked(sh, h, name)
	}
	var growing atomic.Bool
	growing.Store(true)
	var stop atomic.Bool
	var writers, readers sync.WaitGroup
	writers.Go(func() {
		defer growing.Store(false)
		for i := range grown {
			name := fmt.Sprintf("g%d", i)
			put(name)
			if i%3 == 0 {
				del(name)
			}
		}
	})
	for g := range owners {
		writers.Go(func() {
			prev := make([]*Stream, owned)
			for r := 0; r < 20*owned || growing.Load(); r++ {
				i := r % owned
				name := fmt.Sprintf("o%d-%d", g, i)
				if s := del(name); s != prev[i] {
					t.Errorf("deleted %q: %p, want the stream put before, %p", name, s, prev[i])
					return
				}
				if s := tab.get(name); s != nil {
					t.Errorf("lookup of %q after its deletion found %p (the deleted one: %v)", name, s, s == prev[i])
					return
				}
				prev[i] = put(name)
				if s := tab.get(name); s != prev[i] {
					t.Errorf("lookup of %q after its put found %p, want %p", name, s, prev[i])
					return
				}
			}
		})
	}
	for g := range 2 {
		readers.Go(func() {
			for i := g; !stop.Load(); i++ {
				name := fmt.Sprintf("o%d-%d", i%owners, i%owned)
				if s := tab.get(name); s != nil && s.name != name {
					t.Errorf("lookup of %q found %q", name, s.name)
					return
				}
				tab.peekHash(tab.hash(name))
			}
		})
	}
	writers.Wait()
	stop.Store(true)
	readers.Wait()
	if got, want := tab.len(), grown-(grown+2)/3+owners*owned; got != want {
		t.Errorf("%d streams, want %d", got, want)
	}
	if got, want := len(*tab.cache.buckets.Load()), cacheBuckets(int64(tab.len())); got != want {
		t.Errorf("%d buckets, want %d", got, want)
	}
}
