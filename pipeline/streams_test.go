package pipeline

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"streamd/feed"
	"streamd/gpusort"
	"streamd/items"
	"streamd/summary"
)

// TestStreamLimitConcurrent creates streams from many goroutines at once
// against a limit: exactly the limit is created, the rest refused, and
// every count and listing agrees, though creations in different shards do
// not share a lock.
func TestStreamLimitConcurrent(t *testing.T) {
	const limit, workers, each = 100, 8, 40
	p := open(t, Config{Sorter: gpusort.NewCPU(0), MaxStreams: limit})
	ctx := context.Background()
	var created, refused atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				err := acceptValues(ctx, p, feed.Local, fmt.Sprintf("w%d-%d", w, i), []float64{float64(i)}, time.Time{})
				switch {
				case err == nil:
					created.Add(1)
				case errors.Is(err, feed.ErrStreamLimit):
					refused.Add(1)
				default:
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if created.Load() != limit || refused.Load() != workers*each-limit {
		t.Fatalf("created %d, refused %d; want %d and %d", created.Load(), refused.Load(), limit, workers*each-limit)
	}
	names := p.List()
	if p.Len() != limit || len(names) != limit || !slices.IsSorted(names) {
		t.Fatalf("Len %d, List %d names (sorted %v), want %d", p.Len(), len(names), slices.IsSorted(names), limit)
	}
	for _, name := range names {
		if p.lookup(name) == nil {
			t.Fatalf("listed stream %q not found", name)
		}
	}
	// A deletion gives its place back.
	if err := p.Delete(names[0]); err != nil {
		t.Fatal(err)
	}
	if err := acceptValues(ctx, p, feed.Local, "after-delete", []float64{1}, time.Time{}); err != nil {
		t.Fatalf("a stream after a deletion: %v", err)
	}
}

// TestNamesFollowCreateDelete creates and deletes streams from several
// goroutines while others page through the names and look streams up.
// Every page is sorted and names no stream twice; a stream a goroutine
// holds (created and not yet deleted by it) is on every page that covers
// its name; and at the end the index, the count and the map all name the
// same streams.
func TestNamesFollowCreateDelete(t *testing.T) {
	const workers, rounds = 4, 300
	p := open(t, Config{Sorter: gpusort.NewCPU(0)})
	ctx := context.Background()
	// Each worker holds a stream "pinned-w" for the whole test: every page
	// must name it.
	for w := range workers {
		if err := acceptValues(ctx, p, feed.Local, fmt.Sprintf("pinned-%d", w), []float64{1}, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	var live [workers]map[string]bool
	done := make(chan struct{})
	var readers, writers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				var all []string
				after := ""
				for {
					page := p.Names(after, "", 37)
					all = append(all, page...)
					if len(page) < 37 {
						break
					}
					after = page[len(page)-1]
				}
				if !slices.IsSorted(all) || len(slices.Compact(slices.Clone(all))) != len(all) {
					t.Error("pages not in strictly increasing order")
					return
				}
				for w := range workers {
					if _, ok := slices.BinarySearch(all, fmt.Sprintf("pinned-%d", w)); !ok {
						t.Errorf("pages miss pinned-%d", w)
						return
					}
				}
				runtime.Gosched()
			}
		})
	}
	for w := range workers {
		live[w] = make(map[string]bool)
		writers.Go(func() {
			for i := range rounds {
				name := fmt.Sprintf("s%d-%d", w, i%17)
				if live[w][name] {
					if err := p.Delete(name); err != nil {
						t.Error(err)
						return
					}
					delete(live[w], name)
					continue
				}
				if err := acceptValues(ctx, p, feed.Local, name, []float64{float64(i)}, time.Time{}); err != nil {
					t.Error(err)
					return
				}
				live[w][name] = true
			}
		})
	}
	writers.Wait()
	close(done)
	readers.Wait()
	var want []string
	for w := range workers {
		want = append(want, fmt.Sprintf("pinned-%d", w))
		for name := range live[w] {
			want = append(want, name)
		}
	}
	slices.Sort(want)
	if got := p.List(); !slices.Equal(got, want) {
		t.Fatalf("List %q, want %q", got, want)
	}
	if p.Len() != len(want) {
		t.Fatalf("Len %d, want %d", p.Len(), len(want))
	}
	if got := p.all(); len(got) != len(want) {
		t.Fatalf("%d streams in the map, want %d", len(got), len(want))
	}
}

// BenchmarkCreateStreams measures creating streams from every core at
// once, each with its first small batch, as a million thin streams
// arrive: an op is one new stream.
func BenchmarkCreateStreams(b *testing.B) {
	p := open(b, Config{MaxMemory: 64 << 30, MaxStreams: 1 << 30})
	ctx := context.Background()
	vals, m, _ := feed.AppendFloat32(nil, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	var next atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			name := fmt.Sprintf("host%09d.cpu", next.Add(1))
			if _, err := p.Accept(ctx, &feed.Batch{Stream: name, Float32: vals, Moments: m}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// TestSameConfig checks sameConfig against reflect.DeepEqual for a change
// of each field of summary.Config in turn, found by reflection, so that a
// field added to it and forgotten by sameConfig fails here rather than
// letting a stream share the defaults it differs from.
func TestSameConfig(t *testing.T) {
	base := summary.Config{}.WithDefaults()
	if !sameConfig(base, base) {
		t.Fatal("a config differs from itself")
	}
	typ := reflect.TypeFor[summary.Config]()
	for i := range typ.NumField() {
		changed := base
		f := reflect.ValueOf(&changed).Elem().Field(i)
		switch f.Kind() {
		case reflect.Float64:
			f.SetFloat(f.Float() + 0.5)
		case reflect.Int, reflect.Int64:
			f.SetInt(f.Int() + 1)
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.String:
			f.SetString(f.String() + "x")
		case reflect.Func:
			f.Set(reflect.ValueOf(items.SipHash(items.Key{1})))
		default:
			t.Fatalf("field %s of kind %s: teach this test and sameConfig to compare it", typ.Field(i).Name, f.Kind())
		}
		if sameConfig(changed, base) || sameConfig(base, changed) {
			t.Errorf("a change of %s goes unseen", typ.Field(i).Name)
		}
	}
}

// inShard0 reports whether the stream name goes to p's first shard.
func inShard0(p *Pipeline, name string) bool {
	sh, _ := p.streams.locate(name)
	return sh == &p.streams.shards[0]
}

// TestListDuringCreate lists the streams while a stream is created in
// another shard between List's start and its locks: the list may name the
// new stream or not, but it names every stream that existed throughout.
func TestListDuringCreate(t *testing.T) {
	p := open(t, Config{Sorter: gpusort.NewCPU(0)})
	ctx := context.Background()
	// Both streams out of shard 0: a seed that puts z-old there is
	// changed while the table is empty.
	for inShard0(p, "z-old") {
		p.streams.seed = maphash.MakeSeed()
	}
	if err := acceptValues(ctx, p, feed.Local, "z-old", []float64{1}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	newName := "a-new-0"
	for i := 1; inShard0(p, newName); i++ {
		newName = fmt.Sprintf("a-new-%d", i)
	}
	// Hold shard 0, so that List stops at it after it has started.
	p.streams.shards[0].mu.Lock()
	listed := make(chan []string)
	go func() { listed <- p.List() }()
	waitForStack(t, "(*Pipeline).List", "(*streamShard).fold")
	if err := acceptValues(ctx, p, feed.Local, newName, []float64{1}, time.Time{}); err != nil {
		p.streams.shards[0].mu.Unlock()
		t.Fatal(err)
	}
	p.streams.shards[0].mu.Unlock()
	got := <-listed
	if !slices.Contains(got, "z-old") {
		t.Fatalf("List = %q, without z-old, which existed all along", got)
	}
}

// waitForStack polls until some goroutine's stack holds every one of
// fns: a goroutine under way to, or waiting at, a point of the code.
func waitForStack(t *testing.T, fns ...string) {
	t.Helper()
	for range 10000 {
		if stackHolds(fns...) {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("no goroutine in %q", fns)
}

// stackHolds reports whether some goroutine's stack holds every one of
// fns.
func stackHolds(fns ...string) bool {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	for _, g := range strings.Split(string(buf[:n]), "\n\n") {
		if !slices.ContainsFunc(fns, func(fn string) bool { return !strings.Contains(g, fn) }) {
			return true
		}
	}
	return false
}

// TestLenNeverPastLimit reads Len while goroutines try to create streams
// past the stream limit: every creation is refused, and Len, which counts
// the creations under way, never counts more than the limit.
func TestLenNeverPastLimit(t *testing.T) {
	const limit = 10
	p := open(t, Config{Sorter: gpusort.NewCPU(0), MaxStreams: limit})
	ctx := context.Background()
	for i := range limit {
		if err := acceptValues(ctx, p, feed.Local, fmt.Sprintf("full-%d", i), []float64{1}, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				err := acceptValues(ctx, p, feed.Local, fmt.Sprintf("w%d-%d", w, i), []float64{1}, time.Time{})
				if !errors.Is(err, feed.ErrStreamLimit) {
					t.Errorf("a stream past the limit: %v", err)
					return
				}
			}
		})
	}
	over := 0
	for range 200000 {
		if p.Len() > limit {
			over++
		}
	}
	close(stop)
	wg.Wait()
	if over > 0 {
		t.Fatalf("Len past the limit of %d streams %d times", limit, over)
	}
}

// TestShardSharedHash: streams whose names share a hash are all found,
// listed and removed, whichever of them leaves first; with a random seed
// this happens in about one process in 10^7, so the hash is forced here.
func TestShardSharedHash(t *testing.T) {
	hash := func(name string) uint64 {
		if strings.HasPrefix(name, "same") {
			return 7
		}
		return 8
	}
	sh := &streamShard{m: make(map[uint64]*Stream)}
	names := []string{"same-a", "same-b", "other", "same-c"}
	for _, name := range names {
		sh.put(hash(name), &Stream{name: name})
	}
	check := func(left []string) {
		t.Helper()
		var got []string
		for _, s := range sh.appendStreams(nil) {
			got = append(got, s.name)
		}
		slices.Sort(got)
		if want := slices.Sorted(slices.Values(left)); !slices.Equal(got, want) || sh.len() != len(want) {
			t.Fatalf("shard holds %q (len %d), want %q", got, sh.len(), want)
		}
		for _, name := range names {
			s := sh.find(hash(name), name)
			if in := slices.Contains(left, name); in != (s != nil) || s != nil && s.name != name {
				t.Fatalf("find(%q) = %v, want it found: %v", name, s, in)
			}
		}
	}
	check(names)
	left := slices.Clone(names)
	// The first of the shared hash holds the map's slot: remove it first,
	// then one from the overflow, then the rest.
	for _, name := range []string{"same-a", "same-c", "other", "nowhere", "same-b"} {
		s := sh.remove(hash(name), name, hash)
		if (s != nil) != slices.Contains(left, name) || s != nil && s.name != name {
			t.Fatalf("remove(%q) = %v", name, s)
		}
		left = slices.DeleteFunc(left, func(n string) bool { return n == name })
		check(left)
	}
	if len(sh.m) != 0 || len(sh.overflow) != 0 {
		t.Fatalf("%d in the map, %d in overflow after removing all", len(sh.m), len(sh.overflow))
	}
}
