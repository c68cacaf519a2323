package pipeline

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"streamd/feed"
	"streamd/items"
	"streamd/summary"
	"streamd/synth"
)

// zipfItems returns n Zipf-distributed item strings over distinct ranks,
// in the given arrival order of their ranks.
func zipfItems(t *testing.T, n int, distinct uint64, order synth.Order, seed uint64) []string {
	t.Helper()
	ranks, err := synth.Generate(synth.Spec{Dist: synth.Zipf, S: 1.1, Distinct: distinct, Seed: seed, Order: order, Period: 5000}, n)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, n)
	names := make(map[float64]string)
	for i, r := range ranks {
		s, ok := names[r]
		if !ok {
			s = synth.ItemName(r)
			names[r] = s
		}
		out[i] = s
	}
	return out
}

// acceptItems pushes list to the item stream name in batches of per.
func acceptItems(t *testing.T, p *Pipeline, name string, list []string, per int) {
	t.Helper()
	ctx := context.Background()
	var b items.Batch
	for i := 0; i < len(list); i += per {
		b.Reset()
		for _, x := range list[i:min(i+per, len(list))] {
			b.AppendString(x)
		}
		if err := acceptItemBatch(ctx, p, feed.Local, name, &b, p.Now()); err != nil {
			t.Fatal(err)
		}
	}
}

func countItems(list []string) map[string]int64 {
	m := make(map[string]int64)
	for _, x := range list {
		m[x]++
	}
	return m
}

// checkItems checks the answers of the item stream s over c, which covers
// list, against the exact counts: heavy hitters named by their strings,
// none missing and none too small, and count bounds that hold.
func checkItems(t *testing.T, s *Stream, c Counter, list []string, eps float64) {
	t.Helper()
	exact := countItems(list)
	n := float64(len(list))
	for _, support := range []float64{2 * eps, 0.01, 0.05} {
		got := s.HeavyItems(c, support)
		seen := make(map[string]bool, len(got))
		for _, h := range got {
			want, ok := exact[h.Item]
			switch {
			case !ok:
				t.Fatalf("support %v: heavy hitter %q (fingerprint %#x) is no item of the stream", support, h.Item, h.Fingerprint)
			case want < h.Min || want > h.Max:
				t.Fatalf("support %v: %q counted %d, bounds [%d, %d]", support, h.Item, want, h.Min, h.Max)
			case float64(want) < (support-eps)*n:
				t.Fatalf("support %v: %q counted %d < (s−ε)N = %v", support, h.Item, want, (support-eps)*n)
			case float64(h.Max-h.Min) > eps*n:
				t.Fatalf("support %v: %q bounds [%d, %d] wider than εN", support, h.Item, h.Min, h.Max)
			}
			seen[h.Item] = true
		}
		for x, k := range exact {
			if float64(k) >= support*n && !seen[x] {
				t.Fatalf("support %v: %q counted %d ≥ sN = %v is missing", support, x, k, support*n)
			}
		}
	}
	// Frequencies of the heaviest items, some others, and absent ones.
	list2 := make([]string, 0, len(exact))
	for x := range exact {
		list2 = append(list2, x)
	}
	slices.SortFunc(list2, func(a, b string) int { return int(exact[b] - exact[a]) })
	ask := list2[:min(50, len(list2))]
	for i := 50; i < len(list2); i += max(1, len(list2)/50) {
		ask = append(ask, list2[i])
	}
	ask = append(ask, "absent", "item-absent-too")
	for _, f := range s.ItemFrequencies(c, ask) {
		want := exact[f.Item]
		if want < f.Min || want > f.Max || float64(f.Max-f.Min) > eps*n || f.Shared {
			t.Fatalf("frequency of %q: true %d, bounds [%d, %d] (shared %v), εN = %v", f.Item, want, f.Min, f.Max, f.Shared, eps*n)
		}
	}
}

// TestItemStreamZipf feeds Zipf-distributed strings (10^6 distinct, 10^7
// items; less with -short) in several arrival orders, and checks the
// all-history and last-n answers against exact counts.
func TestItemStreamZipf(t *testing.T) {
	n, distinct := 10_000_000, uint64(1_000_000)
	if testing.Short() {
		n, distinct = 400_000, 40_000
	}
	const eps = 0.001
	for _, order := range synth.Orders {
		size := n
		if order != synth.Random {
			size = n / 10 // the other orders at a tenth of the size
		}
		t.Run(string(order), func(t *testing.T) {
			p := open(t, Config{})
			if _, err := p.Create("urls", summary.Config{Epsilon: eps, WindowSize: 1 << 16, SlidingWindow: 1 << 16, Items: true}); err != nil {
				t.Fatal(err)
			}
			list := zipfItems(t, size, distinct, order, 7)
			acceptItems(t, p, "urls", list, 10000)
			s, _ := p.Stream("urls")
			v := s.View(true)
			if v.Count() != int64(len(list)) {
				t.Fatalf("view counts %d of %d items", v.Count(), len(list))
			}
			checkItems(t, s, v, list, eps)
			for _, last := range []int64{1000, 50000, 1 << 16} {
				last = min(last, int64(len(list)))
				snap, err := s.Last(last)
				if err != nil {
					t.Fatal(err)
				}
				checkItems(t, s, snap, list[len(list)-int(last):], eps)
			}
			if err := p.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			// Once every window is summarised, every fingerprint of the
			// lossy table has its string, and no other is kept.
			s.mu.Lock()
			table, known := s.local.sum.Counts().Len(), s.local.items.names.Len()
			s.mu.Unlock()
			if table != known {
				t.Errorf("lossy table holds %d fingerprints, names %d strings", table, known)
			}
			checkItems(t, s, s.View(true), list, eps)
		})
	}
}

// TestItemCollisions forces fingerprint collisions with a hash of 6 bits
// (64 fingerprints for 2000 items) and checks that the count bounds still
// hold: every item's count is at most the upper bound of its fingerprint,
// every lower bound at most the total count of the items that share it,
// and a frequency asked for an item whose fingerprint is known under
// another string reports the collision with a lower bound of 0.
func TestItemCollisions(t *testing.T) {
	const eps = 0.001
	key := items.Key{1, 2, 3}
	sip := items.SipHash(key)
	hash := func(b []byte) uint64 { return sip(b) & 63 }
	p := open(t, Config{})
	if _, err := p.Create("c", summary.Config{Epsilon: eps, WindowSize: 4096, SlidingWindow: 1 << 14, Items: true, ItemHash: hash}); err != nil {
		t.Fatal(err)
	}
	list := zipfItems(t, 300_000, 2000, synth.Random, 3)
	acceptItems(t, p, "c", list, 777)
	s, _ := p.Stream("c")
	exact := countItems(list)
	class := make(map[uint64]int64)
	for x, k := range exact {
		class[items.Fingerprint(hash([]byte(x)))] += k
	}
	n := float64(len(list))
	v := s.View(true)
	for _, support := range []float64{0.005, 0.02, 0.1} {
		got := s.HeavyItems(v, support)
		seen := make(map[uint64]bool)
		for _, h := range got {
			k, ok := exact[h.Item]
			if !ok || k > h.Max || h.Min > class[h.Fingerprint] || h.Fingerprint != items.Fingerprint(hash([]byte(h.Item))) {
				t.Fatalf("support %v: heavy hitter %q: count %d (known %v), fingerprint total %d, bounds [%d, %d]", support, h.Item, k, ok, class[h.Fingerprint], h.Min, h.Max)
			}
			seen[h.Fingerprint] = true
		}
		for fp, k := range class {
			if float64(k) >= support*n && !seen[fp] {
				t.Fatalf("support %v: fingerprint %#x with total %d missing", support, fp, k)
			}
		}
	}
	var all []string
	for x := range exact {
		all = append(all, x)
	}
	shared := 0
	for _, f := range s.ItemFrequencies(v, all) {
		k := exact[f.Item]
		if k > f.Max || f.Min > class[f.Fingerprint] || (f.Shared && f.Min != 0) {
			t.Fatalf("frequency of %q: count %d, fingerprint total %d, bounds [%d, %d], shared %v", f.Item, k, class[f.Fingerprint], f.Min, f.Max, f.Shared)
		}
		if f.Shared {
			shared++
		}
	}
	if shared == 0 {
		t.Error("no collision reported among 2000 items on 64 fingerprints")
	}
}

// TestItemFingerprintsSplit checks that a batch hashed by two goroutines
// gets the fingerprints and values of one hashed in order.
func TestItemFingerprintsSplit(t *testing.T) {
	var b items.Batch
	for i := range 3*parallelItems + 1 {
		b.AppendString(fmt.Sprintf("item-%d", i))
	}
	h := items.SipHash(items.Key{7})
	var buf itemBuf
	buf.fingerprint(&b, h)
	want := b.AppendFingerprints(nil, h)
	if !slices.Equal(buf.fps, want) {
		t.Fatal("fingerprints of a split batch differ from AppendFingerprints")
	}
	for i, fp := range want {
		if buf.values[i] != items.Value(fp) {
			t.Fatalf("value %d = %v, want %v", i, buf.values[i], items.Value(fp))
		}
	}
}

// TestItemStringsWithinBudget floods an item stream with distinct items of
// the longest length, several times what its sliding window's strings may
// take and more than the whole memory budget, mixed with a few heavy
// items: the strings it keeps stay within the budget after every batch,
// every item is accepted or refused with ErrMemoryBudget (none dropped),
// and the answers hold against exact counts of the items accepted.
func TestItemStringsWithinBudget(t *testing.T) {
	const eps = 0.01
	cfg := summary.Config{Epsilon: eps, WindowSize: 1024, SlidingWindow: 1 << 16, Items: true}
	fp := StreamFootprint(cfg)
	limit := fp.Reserve + 24<<20 // the newest items' 16 MiB, and the windows' strings
	p := open(t, Config{Defaults: cfg, MaxMemory: limit})
	if _, err := p.Create("flood", cfg); err != nil {
		t.Fatal(err)
	}
	s, _ := p.Stream("flood")
	ctx := context.Background()
	pad := strings.Repeat("x", items.MaxLen)
	n := 40_000
	if testing.Short() {
		n = 20_000
	}
	var list []string // the items accepted
	var b items.Batch
	for i := 0; i < n; i += 500 {
		b.Reset()
		for j := i; j < i+500; j++ {
			if j%4 == 0 {
				b.AppendString(fmt.Sprintf("heavy-%d", j%20/4))
			} else {
				id := strconv.Itoa(j)
				b.AppendString(id + pad[len(id):])
			}
		}
		if err := acceptItemBatch(ctx, p, feed.Local, "flood", &b, time.Time{}); err != nil {
			t.Fatalf("items %d to %d: %v", i, i+500, err)
		}
		for j := range b.Len() {
			list = append(list, string(b.Item(j)))
		}
		if m := p.Memory(); m.Used > limit {
			t.Fatalf("after %d items: %d bytes charged, limit %d", len(list), m.Used, limit)
		}
		if st := s.Stats(); int64(st.Bytes) > limit {
			t.Fatalf("after %d items: the stream holds %d bytes, budget %d", len(list), st.Bytes, limit)
		}
	}

	// A batch larger than what is free, with nothing in flight to wait
	// for, is refused whole.
	waitNothingInFlight(t, s)
	b.Reset()
	for j := range 10_000 {
		id := "big" + strconv.Itoa(j)
		b.AppendString(id + pad[len(id):])
	}
	err := acceptItemBatch(ctx, p, feed.Local, "flood", &b, time.Time{})
	if r, ok := feed.RefusalReason(err); !ok || r != feed.ReasonMemoryBudget {
		t.Fatalf("a batch of %d MiB with %d MiB free: %v, want a refusal for the memory budget", b.Size()>>20, (limit-p.Memory().Used)>>20, err)
	}
	if got := s.View(true).Count(); got != int64(len(list)) {
		t.Fatalf("the stream counts %d items, %d accepted", got, len(list))
	}

	checkItems(t, s, s.View(true), list, eps)
	last, err := s.Last(10_000)
	if err != nil {
		t.Fatal(err)
	}
	checkItems(t, s, last, list[len(list)-10_000:], eps)
}

// waitNothingInFlight waits until s has no windows in flight.
func waitNothingInFlight(t *testing.T, s *Stream) {
	t.Helper()
	for {
		s.mu.Lock()
		k := len(s.local.inflight) + len(s.pendingQ)
		s.mu.Unlock()
		if k == 0 {
			return
		}
		runtime.Gosched()
	}
}
