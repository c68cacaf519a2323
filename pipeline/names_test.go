package pipeline

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"streamd/gpusort"
	"streamd/summary"
)

// checkIndex folds x and checks its invariants against want, the names it
// must hold, sorted.
func checkIndex(t *testing.T, x *nameIndex, want []string) {
	t.Helper()
	x.fold()
	if len(x.recent) != 0 {
		t.Fatalf("%d recent names after a fold", len(x.recent))
	}
	var all []string
	if len(x.lasts) != len(x.blocks) || len(x.lastKeys) != len(x.blocks) {
		t.Fatalf("%d blocks, %d last names, %d last keys", len(x.blocks), len(x.lasts), len(x.lastKeys))
	}
	for i, blk := range x.blocks {
		names := blk.names
		if len(names) == 0 || len(names) > maxBlock || !slices.IsSorted(names) || len(blk.keys) != len(names) {
			t.Fatalf("block %d of %d names, %d keys: %v", i, len(names), len(blk.keys), names)
		}
		for j, name := range names {
			if blk.keys[j] != keyOf(name) {
				t.Fatalf("block %d: key of %q is %x, want %x", i, name, blk.keys[j], keyOf(name))
			}
		}
		if x.lasts[i] != names[len(names)-1] || x.lastKeys[i] != keyOf(x.lasts[i]) {
			t.Fatalf("block %d ends with %q, recorded %q", i, names[len(names)-1], x.lasts[i])
		}
		all = append(all, names...)
	}
	if x.n != len(want) || !slices.Equal(all, want) || len(slices.Compact(slices.Clone(all))) != len(all) {
		t.Fatalf("index counts %d and holds %d names, want %d", x.n, len(all), len(want))
	}
}

// TestNameKeyOrder checks that names whose keys differ compare as their
// keys do, for names that differ early, late, in length, and by zero
// bytes.
func TestNameKeyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	alphabet := "\x00\x01az~\xff"
	name := func() string {
		b := make([]byte, r.IntN(20))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	for range 100000 {
		a, b := name(), name()
		ka, kb := keyOf(a), keyOf(b)
		if got := before(ka, a, kb, b); got != (a < b) {
			t.Fatalf("before(%q, %q) = %v", a, b, got)
		}
		if ka != kb && (ka[0] < kb[0] || ka[0] == kb[0] && ka[1] < kb[1]) != (a < b) {
			t.Fatalf("keys of %q and %q order them wrong", a, b)
		}
	}
}

// appendPage appends to dst the names of x after the name after ("" for
// none), in increasing order, that start with prefix, at most n of them:
// a page of one index, as streamTable.page merges them.
func appendPage(x *nameIndex, dst []string, after, prefix string, n int) []string {
	x.fold()
	b, i := x.start(after, prefix)
	for ; n > 0; n-- {
		name, nb, ni, ok := x.next(b, i)
		if !ok || !strings.HasPrefix(name, prefix) {
			break
		}
		dst = append(dst, name)
		b, i = nb, ni
	}
	return dst
}

// refPage is appendPage's answer from a sorted list of names.
func refPage(names []string, after, prefix string, n int) []string {
	var out []string
	for _, name := range names {
		if len(out) < n && name > after && strings.HasPrefix(name, prefix) {
			out = append(out, name)
		}
	}
	return out
}

// TestNameIndex adds and removes random names, splitting and emptying
// blocks, and checks the index and its pages against a sorted list.
func TestNameIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	// Short names differ in their keys; long ones share their first 16
	// bytes, and a name and itself with a zero byte after have one key:
	// searches then compare the names themselves.
	name := func() string {
		switch r.IntN(4) {
		case 0:
			return fmt.Sprintf("customer.region-1.s%d.%d", r.IntN(40), r.IntN(200))
		case 1:
			return fmt.Sprintf("s%d.%d\x00", r.IntN(40), r.IntN(200))
		}
		return fmt.Sprintf("s%d.%d", r.IntN(40), r.IntN(200))
	}
	var x nameIndex
	var want []string
	for step := range 20000 {
		n := name()
		i, found := slices.BinarySearch(want, n)
		if step < 12000 || r.IntN(2) == 0 {
			x.add(n)
			if !found {
				want = slices.Insert(want, i, n)
			}
		} else {
			x.remove(n)
			if found {
				want = slices.Delete(want, i, i+1)
			}
		}
		if step%500 == 0 {
			checkIndex(t, &x, want)
		}
	}
	checkIndex(t, &x, want)
	if len(x.blocks) < 4 {
		t.Fatalf("%d names in %d blocks: no split", x.n, len(x.blocks))
	}
	cut := func(s string) string { return s[:1+r.IntN(len(s))] }
	for range 2000 {
		after, prefix := "", ""
		if r.IntN(4) > 0 {
			after = cut(name())
		}
		if r.IntN(2) == 0 {
			prefix = cut(name())
		}
		n := r.IntN(1200)
		if got, want := appendPage(&x, nil, after, prefix, n), refPage(want, after, prefix, n); !slices.Equal(got, want) {
			t.Fatalf("page after %q prefix %q n %d: %d names, want %d", after, prefix, n, len(got), len(want))
		}
	}
	for _, n := range slices.Clone(want) {
		x.remove(n)
	}
	checkIndex(t, &x, nil)
	if len(x.blocks) != 0 {
		t.Fatalf("%d blocks left", len(x.blocks))
	}
	if got := newNameIndex([]string{"b", "c", "a"}); !slices.Equal(appendPage(&got, nil, "a", "", 5), []string{"b", "c"}) {
		t.Fatalf("new index pages %v", got.blocks)
	}
}

// TestNamesPages pages through a pipeline's streams as they are created
// and deleted, and after a restore: every page is the next names in order,
// the levels of a hierarchy stream are not listed.
func TestNamesPages(t *testing.T) {
	p := open(t, Config{})
	var want []string
	for i := range 1500 {
		name := fmt.Sprintf("n%04d", (i*7)%1500)
		if _, err := p.Create(name, summary.Config{}); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	if _, err := p.Create("n0500.h", summary.Config{Hierarchy: "ipv4"}); err != nil {
		t.Fatal(err)
	}
	want = append(want, "n0500.h")
	for i := 0; i < 1500; i += 3 {
		if err := p.Delete(fmt.Sprintf("n%04d", i)); err != nil {
			t.Fatal(err)
		}
		want = slices.DeleteFunc(want, func(n string) bool { return n == fmt.Sprintf("n%04d", i) })
	}
	slices.Sort(want)
	pages := func(p *Pipeline, prefix string, size int) []string {
		var all []string
		after := ""
		for {
			page := p.Names(after, prefix, size)
			all = append(all, page...)
			if len(page) < size {
				return all
			}
			after = page[len(page)-1]
		}
	}
	if got := pages(p, "", 100); !slices.Equal(got, want) || !slices.Equal(p.List(), want) {
		t.Fatalf("pages of 100: %d names, List %d, want %d", len(got), len(p.List()), len(want))
	}
	if got := pages(p, "n05", 7); !slices.Equal(got, refPage(want, "", "n05", len(want))) || len(got) != 68 {
		t.Fatalf("prefix n05: %v", got)
	}
	if got := p.Names("n0500", "n0500", 10); !slices.Equal(got, []string{"n0500.h"}) {
		t.Fatalf("after n0500: %v", got)
	}

	snap, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	q, err := New(Config{Sorter: gpusort.NewCPU(0)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Create("gone", summary.Config{}); err != nil {
		t.Fatal(err)
	}
	if err := q.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if got := pages(q, "", 1000); !slices.Equal(got, want) {
		t.Fatalf("restored, before Open: %d names, want %d", len(got), len(want))
	}
	if err := q.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer q.Close(context.Background())
	if got := pages(q, "", 1000); !slices.Equal(got, want) {
		t.Fatalf("restored: %d names, want %d", len(got), len(want))
	}
}

// manyStreams returns an open pipeline of n streams as small as they can
// be, named s0000000 on, created in a random order.
func manyStreams(b *testing.B, n int) *Pipeline {
	p := open(b, Config{MaxStreams: n + 1, Defaults: summary.Config{WindowSize: 16, SlidingWindow: 16}})
	for _, i := range rand.New(rand.NewPCG(1, 2)).Perm(n) {
		if _, err := p.Create(fmt.Sprintf("s%07d", i), summary.Config{}); err != nil {
			b.Fatal(err)
		}
	}
	return p
}

var namesSink []string

// BenchmarkNames measures a page of 1000 names, and deleting and creating
// a stream again, among 10^4 and 10^6 streams (10^4 only with -short).
func BenchmarkNames(b *testing.B) {
	for _, n := range []int{1e4, 1e6} {
		if testing.Short() && n > 1e4 {
			continue
		}
		b.Run(fmt.Sprintf("streams=%d", n), func(b *testing.B) {
			p := manyStreams(b, n)
			b.Run("page=1000", func(b *testing.B) {
				r := rand.New(rand.NewPCG(3, 4))
				b.ReportAllocs()
				for b.Loop() {
					namesSink = p.Names(fmt.Sprintf("s%07d", r.IntN(n)), "", 1000)
				}
			})
			b.Run("delete+create", func(b *testing.B) {
				r := rand.New(rand.NewPCG(5, 6))
				b.ReportAllocs()
				for b.Loop() {
					name := fmt.Sprintf("s%07d", r.IntN(n))
					if err := p.Delete(name); err != nil {
						b.Fatal(err)
					}
					if _, err := p.Create(name, summary.Config{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkNameIndexAdd measures adding a name to the index of a million,
// in random order, as streams are created: an op is one add.
func BenchmarkNameIndexAdd(b *testing.B) {
	const n = 1 << 20
	names := make([]string, n)
	for i, j := range rand.New(rand.NewPCG(1, 2)).Perm(n) {
		names[i] = fmt.Sprintf("host%07d.cpu", j)
	}
	var x nameIndex
	i := 0
	for b.Loop() {
		if i == n {
			b.StopTimer()
			x, i = nameIndex{}, 0
			b.StartTimer()
		}
		x.add(names[i])
		i++
	}
}

// TestNameIndexFolds drives an index with bursts of additions of many
// sizes (folds of one name and of thousands), removals, rebuilds from a
// checkpoint's names and pages against a sorted set, with names that share
// their key: equal in their first 16 bytes, or differing only by trailing
// zero bytes.
func TestNameIndexFolds(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	name := func() string {
		i := r.IntN(3000)
		switch r.IntN(5) {
		case 0:
			return fmt.Sprintf("0123456789abcdef.%d", i)
		case 1:
			return fmt.Sprintf("z%d", i) + strings.Repeat("\x00", r.IntN(3))
		case 2:
			return fmt.Sprintf("%016d", i)
		}
		return fmt.Sprintf("m%d", i)
	}
	set := make(map[string]bool)
	sorted := func() []string {
		names := make([]string, 0, len(set))
		for n := range set {
			names = append(names, n)
		}
		slices.Sort(names)
		return names
	}
	var x nameIndex
	for round := range 200 {
		switch op := r.IntN(10); {
		case op < 5: // a burst of additions, some twice, some of names there
			k := []int{1, 2, 7, 100, 1500, 5000}[r.IntN(6)]
			for range k {
				n := name()
				x.add(n)
				set[n] = true
				if r.IntN(8) == 0 {
					x.add(n)
				}
			}
		case op < 8: // removals, some of names only recent, some of none
			for range r.IntN(300) {
				n := name()
				if r.IntN(3) == 0 {
					x.add(n) // created and deleted before a fold
				}
				x.remove(n)
				delete(set, n)
			}
		case op < 9: // a restore from a checkpoint
			names := sorted()
			r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
			x = newNameIndex(names)
		default:
			x.fold()
		}
		want := sorted()
		for range 3 {
			after, prefix := "", ""
			if r.IntN(3) > 0 {
				after = name()
			}
			if r.IntN(3) == 0 {
				prefix = name()[:1+r.IntN(3)]
			}
			n := r.IntN(2000)
			if got, want := appendPage(&x, nil, after, prefix, n), refPage(want, after, prefix, n); !slices.Equal(got, want) {
				t.Fatalf("round %d: page after %q prefix %q n %d: %d names, want %d", round, after, prefix, n, len(got), len(want))
			}
		}
		checkIndex(t, &x, want)
	}
}

// TestPagesLinearize creates and deletes streams from several goroutines
// while others take pages, and checks each page against the history: it
// names every stream that existed from before the page began until after
// it ended, and none that was absent all that time.
func TestPagesLinearize(t *testing.T) {
	const writers, names, ops = 4, 150, 3000
	p := open(t, Config{Sorter: gpusort.NewCPU(0)})
	var clock atomic.Int64
	type op struct {
		create      bool
		start, done int64
	}
	var logs [writers][names][]op
	type view struct {
		start, end    int64
		after, prefix string
		got           []string
	}
	var views []view
	stop := make(chan struct{})
	var readers, ws sync.WaitGroup
	var mu sync.Mutex
	for rd := range 2 {
		readers.Go(func() {
			r := rand.New(rand.NewPCG(uint64(rd), 9))
			for {
				select {
				case <-stop:
					return
				default:
				}
				v := view{}
				if r.IntN(2) == 0 {
					v.after = fmt.Sprintf("w%d-%03d", r.IntN(writers), r.IntN(names))
				}
				if r.IntN(3) == 0 {
					v.prefix = fmt.Sprintf("w%d-", r.IntN(writers))
				}
				v.start = clock.Add(1)
				v.got = p.Names(v.after, v.prefix, math.MaxInt)
				v.end = clock.Add(1)
				mu.Lock()
				views = append(views, v)
				mu.Unlock()
			}
		})
	}
	for w := range writers {
		ws.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 10))
			for range ops {
				k := r.IntN(names)
				name := fmt.Sprintf("w%d-%03d", w, k)
				log := &logs[w][k]
				o := op{create: len(*log) == 0 || !(*log)[len(*log)-1].create}
				o.start = clock.Add(1)
				if o.create {
					if _, err := p.Create(name, summary.Config{}); err != nil {
						t.Errorf("create %s: %v", name, err)
					}
				} else if err := p.Delete(name); err != nil {
					t.Errorf("delete %s: %v", name, err)
				}
				o.done = clock.Add(1)
				*log = append(*log, o)
			}
		})
	}
	ws.Wait()
	close(stop)
	readers.Wait()
	if len(views) == 0 {
		t.Fatal("no page taken")
	}
	for _, v := range views {
		if !slices.IsSorted(v.got) || len(slices.Compact(slices.Clone(v.got))) != len(v.got) {
			t.Fatalf("page after %q prefix %q: not strictly increasing", v.after, v.prefix)
		}
		for w := range writers {
			for k := range names {
				name := fmt.Sprintf("w%d-%03d", w, k)
				if name <= v.after || !strings.HasPrefix(name, v.prefix) {
					continue
				}
				// The state from the last operation done before the page
				// began, if the next began after it ended.
				log := logs[w][k]
				i := -1
				for i+1 < len(log) && log[i+1].done < v.start {
					i++
				}
				if i+1 < len(log) && log[i+1].start < v.end {
					continue // changed while the page was taken
				}
				there := i >= 0 && log[i].create
				if _, listed := slices.BinarySearch(v.got, name); listed != there {
					t.Fatalf("page after %q prefix %q (clock %d to %d): %s listed %v, there all along %v", v.after, v.prefix, v.start, v.end, name, listed, there)
				}
			}
		}
	}
	t.Logf("%d pages checked", len(views))
}
