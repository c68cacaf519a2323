package pipeline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"streamd/gpusort"
	"streamd/summary"
)

// checkIndex checks the invariants of x against want, the names it must
// hold, sorted.
func checkIndex(t *testing.T, x *nameIndex, want []string) {
	t.Helper()
	var all []string
	for i, blk := range x.blocks {
		if len(blk) == 0 || len(blk) > maxBlock || !slices.IsSorted(blk) {
			t.Fatalf("block %d of %d names: %v", i, len(blk), blk)
		}
		all = append(all, blk...)
	}
	if x.n != len(want) || !slices.Equal(all, want) || len(slices.Compact(slices.Clone(all))) != len(all) {
		t.Fatalf("index counts %d and holds %d names, want %d", x.n, len(all), len(want))
	}
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
	name := func() string { return fmt.Sprintf("s%d.%d", r.IntN(40), r.IntN(200)) }
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
		if got, want := x.appendPage(nil, after, prefix, n), refPage(want, after, prefix, n); !slices.Equal(got, want) {
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
	if got := newNameIndex([]string{"b", "c", "a"}); !slices.Equal(got.appendPage(nil, "a", "", 5), []string{"b", "c"}) {
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
	p, err := New(Config{Sorter: gpusort.NewCPU(0), MaxStreams: n + 1,
		Defaults: summary.Config{WindowSize: 16, SlidingWindow: 16}})
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Open(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close(context.Background()) })
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
