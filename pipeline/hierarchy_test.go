package pipeline

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"streamd/feed"
	"streamd/hhh"
	"streamd/items"
	"streamd/loadgen/hhhexact"
	"streamd/summary"
	"streamd/synth"
)

// exactOf returns the exact counts of list over h.
func exactOf(t *testing.T, h hhh.Hierarchy, list []string) *hhhexact.Counts {
	t.Helper()
	c := hhhexact.New(h)
	for _, x := range list {
		if err := c.Add(x); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// checkHHH checks s's answers over q against list, the items q covers:
// heavy prefixes and discounted hitters at several supports, every bound,
// and the precision the stream was made for (want) at supports ≥
// minSupport.
func checkHHH(t *testing.T, s *Stream, q HHHQuery, list []string, want, minSupport float64) {
	t.Helper()
	h, ok := s.Hierarchy()
	if !ok {
		t.Fatalf("stream %q has no hierarchy", s.Name())
	}
	exact := exactOf(t, h, list)
	for _, support := range []float64{0.02, minSupport, 0.1, 0.25} {
		for _, discounted := range []bool{false, true} {
			q.Support, q.Discounted = support, discounted
			a, err := s.HierarchicalHeavyHitters(q)
			if err != nil {
				t.Fatal(err)
			}
			if a.Count != exact.N() {
				t.Fatalf("answer counts %d items, want %d", a.Count, exact.N())
			}
			if discounted {
				err = exact.CheckDiscounted(a.Hitters, support, a.Epsilon, a.Precision)
			} else {
				err = exact.CheckHeavy(a.Hitters, support, a.Epsilon)
			}
			if err != nil {
				t.Fatalf("%+v: %v", q, err)
			}
			if support >= minSupport && a.Precision > want*(1+1e-12) {
				t.Fatalf("%+v: precision %v, more than the %v the stream was made for", q, a.Precision, want)
			}
		}
	}
}

// floodTrace returns n addresses with a flood of share from item after.
func floodTrace(t *testing.T, n int, share float64, after int64) []string {
	t.Helper()
	list, err := synth.Addresses(synth.AddrSpec{Seed: 11, FloodShare: share, FloodAfter: after}, n)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// acceptItemsAt pushes list to the item stream name from src, in batches
// of per, arrived at at.
func acceptItemsAt(t *testing.T, p *Pipeline, src feed.Source, name string, list []string, per int, at time.Time) {
	t.Helper()
	var b items.Batch
	for i := 0; i < len(list); i += per {
		b.Reset()
		for _, x := range list[i:min(i+per, len(list))] {
			b.AppendString(x)
		}
		if err := acceptItemBatch(context.Background(), p, src, name, &b, at); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHierarchyIPv4Flood: a late flood from one /24, none of whose
// addresses is heavy, is found over all history, the last n items and a
// time window, with every bound checked against exact counts; items not
// in the hierarchy are counted as rejects; and the answers survive a
// snapshot and restore.
func TestHierarchyIPv4Flood(t *testing.T) {
	const precision, minSupport = 0.01, 0.05
	eps := hhh.LevelEpsilon(precision, minSupport)
	t0 := time.Unix(1_700_000_000, 0)
	p := open(t, Config{Now: func() time.Time { return t0.Add(time.Hour) }})
	s, err := p.Create("addrs", summary.Config{Epsilon: eps, WindowSize: 1024, SlidingWindow: 1 << 15, Hierarchy: "ipv4"})
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Config(); c.Hierarchy != "ipv4/8" || !c.Items {
		t.Fatalf("config %+v, want an item stream of hierarchy ipv4/8", c)
	}
	const n, after = 60000, 40000
	list := floodTrace(t, n, 0.3, after)
	acceptItemsAt(t, p, feed.Local, "addrs", list[:after], 1000, t0)
	bad := []string{"10.0.0", "2001:db8::1", "300.1.2.3"}
	acceptItemsAt(t, p, feed.Local, "addrs", append(bad, list[after:]...), 1000, t0.Add(time.Hour))
	if got := s.Stats().Rejected[feed.ReasonNotInHierarchy]; got != uint64(len(bad)) {
		t.Fatalf("%d items rejected as not in the hierarchy, want %d", got, len(bad))
	}

	check := func(t *testing.T, s *Stream) {
		t.Run("all", func(t *testing.T) { checkHHH(t, s, HHHQuery{}, list, precision, minSupport) })
		t.Run("last-n", func(t *testing.T) {
			checkHHH(t, s, HHHQuery{LastN: n - after}, list[after:], precision, minSupport)
		})
		t.Run("time", func(t *testing.T) {
			a, err := s.HierarchicalHeavyHitters(HHHQuery{Support: 0.1, Since: t0.Add(30 * time.Minute)})
			if err != nil {
				t.Fatal(err)
			}
			if a.Count < n-after || a.Count-(n-after) > a.Span.OlderMax {
				t.Fatalf("time window covers %d items, span %+v; want the %d since its start", a.Count, a.Span, n-after)
			}
			checkHHH(t, s, HHHQuery{Since: t0.Add(30 * time.Minute)}, list[n-int(a.Count):], precision, minSupport)
		})
		t.Run("flood", func(t *testing.T) {
			a, err := s.HierarchicalHeavyHitters(HHHQuery{Support: 0.2, Discounted: true, LastN: n - after})
			if err != nil {
				t.Fatal(err)
			}
			var found bool
			for _, h := range a.Hitters {
				found = found || h.Prefix == "203.0.113.0/24" && h.Level == 1
			}
			if !found {
				t.Fatalf("the flood's /24 is not among the last n items' hitters %+v", a.Hitters)
			}
		})
	}
	t.Run("live", func(t *testing.T) { check(t, s) })

	snap, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	q := open(t, Config{Now: func() time.Time { return t0.Add(time.Hour) }})
	if err := q.Restore(snap); err != nil {
		t.Fatal(err)
	}
	r, err := q.Stream("addrs")
	if err != nil {
		t.Fatal(err)
	}
	if r.Config().Hierarchy != "ipv4/8" {
		t.Fatalf("restored config %+v, want hierarchy ipv4/8", r.Config())
	}
	for _, hq := range []HHHQuery{{Support: 0.05, Discounted: true}, {Support: 0.05, LastN: 1000}, {Support: 0.03, Discounted: true, Since: t0.Add(30 * time.Minute)}} {
		want, err := s.HierarchicalHeavyHitters(hq)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.HierarchicalHeavyHitters(hq)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%+v: restored answer %+v, want %+v", hq, got, want)
		}
	}
	t.Run("restored", func(t *testing.T) { check(t, r) })
	if got := r.Stats().Rejected[feed.ReasonNotInHierarchy]; got != uint64(len(bad)) {
		t.Fatalf("restored: %d items rejected as not in the hierarchy, want %d", got, len(bad))
	}
}

// TestHierarchyErrors: a stream without a hierarchy, and a support not
// above ε, are refused.
func TestHierarchyErrors(t *testing.T) {
	p := open(t, Config{})
	plain, err := p.Create("plain", summary.Config{Items: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.HierarchicalHeavyHitters(HHHQuery{Support: 0.1}); !errors.Is(err, ErrWrongKind) {
		t.Errorf("HierarchicalHeavyHitters of an item stream = %v, want ErrWrongKind", err)
	}
	s, err := p.Create("paths", summary.Config{Epsilon: 0.01, Hierarchy: "path/3"})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []HHHQuery{{Support: 0.1}, {Support: 0.1, Discounted: true, LastN: 10}, {Support: 0.1, Since: p.Now()}} {
		if a, err := s.HierarchicalHeavyHitters(q); err != nil || a.Count != 0 || len(a.Hitters) != 0 {
			t.Errorf("%+v of an empty stream: %+v, %v; want no hitters", q, a, err)
		}
	}
	if _, err := s.HierarchicalHeavyHitters(HHHQuery{Support: 0.01}); !errors.Is(err, hhh.ErrBounds) {
		t.Errorf("support ε: %v, want hhh.ErrBounds", err)
	}
	if _, err := p.Create("bad", summary.Config{Hierarchy: "ipv4/7"}); !errors.Is(err, hhh.ErrHierarchy) {
		t.Errorf("Create with hierarchy ipv4/7 = %v, want hhh.ErrHierarchy", err)
	}
	if _, err := p.Accept(context.Background(), &feed.Batch{Stream: "paths", Values: []float64{1}}); !errors.Is(err, ErrWrongKind) {
		t.Errorf("values into a hierarchy stream: %v, want ErrWrongKind", err)
	}
	var b items.Batch
	b.AppendString("/a/b")
	b.AppendString("no/slash")
	if n, err := p.Accept(context.Background(), &feed.Batch{Stream: "paths", Items: &b}); n != 1 || err != nil {
		t.Errorf("Accept of a path and an item that is none: %d accepted, %v; want 1", n, err)
	}
	if got := s.Stats().Rejected[feed.ReasonNotInHierarchy]; got != 1 {
		t.Errorf("%d rejected as not in the hierarchy, want 1", got)
	}
}

// TestHierarchyPathsIPv6: deep URL paths (deeper than the hierarchy, and
// shallower, and not canonical) and IPv6 addresses, over all history and
// the last n items.
func TestHierarchyPathsIPv6(t *testing.T) {
	const precision, minSupport = 0.02, 0.05
	eps := hhh.LevelEpsilon(precision, minSupport)
	r := rand.New(rand.NewPCG(5, 6))
	zipf := rand.NewZipf(r, 1.3, 1, 40)
	paths := make([]string, 30000)
	for i := range paths {
		// Up to 6 segments under a hierarchy of 4: deeper paths are cut.
		p := ""
		for range 1 + r.IntN(6) {
			p += "/s" + strconv.FormatUint(zipf.Uint64(), 10)
		}
		if i%7 == 0 {
			p += "/?q=1" // a trailing slash and a query, left out
		}
		paths[i] = p
	}
	addrs := make([]string, 30000)
	for i := range addrs {
		a := [16]byte{0x20, 0x01, 0x0d, 0xb8, byte(zipf.Uint64()), byte(zipf.Uint64())}
		a[15] = byte(r.IntN(256))
		if i > 20000 && i%3 == 0 {
			a = [16]byte{0xfd, 0, 0, 0, 0, 0, 0, 0x42, 0, 0, 0, 0, 0, 0, byte(r.IntN(256)), byte(r.IntN(256))}
		}
		addrs[i] = netip.AddrFrom16(a).String()
	}
	for _, tc := range []struct {
		hierarchy string
		list      []string
	}{{"path/4", paths}, {"ipv6/16", addrs}} {
		t.Run(tc.hierarchy, func(t *testing.T) {
			p := open(t, Config{})
			s, err := p.Create("s", summary.Config{Epsilon: eps, WindowSize: 2048, SlidingWindow: 1 << 14, Hierarchy: tc.hierarchy})
			if err != nil {
				t.Fatal(err)
			}
			acceptItemsAt(t, p, feed.Local, "s", tc.list, 777, time.Time{})
			checkHHH(t, s, HHHQuery{}, tc.list, precision, minSupport)
			checkHHH(t, s, HHHQuery{LastN: 10000}, tc.list[len(tc.list)-10000:], precision, minSupport)
		})
	}
}

// TestHierarchyPartitions feeds a hierarchy stream from two Kafka
// partitions: releasing one leaves its items out of every level's
// answers, and handing one to another daemon moves its levels' parts
// with it, so that the answers there are exact over what it then holds.
// A daemon whose stream has no hierarchy refuses the part.
func TestHierarchyPartitions(t *testing.T) {
	const precision, minSupport = 0.02, 0.05
	cfg := summary.Config{Epsilon: hhh.LevelEpsilon(precision, minSupport), WindowSize: 1000, SlidingWindow: 1 << 14, Hierarchy: "ipv4"}
	p := open(t, Config{})
	if _, err := p.Create("addrs", cfg); err != nil {
		t.Fatal(err)
	}
	list := floodTrace(t, 20000, 0.5, 12000)
	one, two := list[:12000], list[12000:] // the flood comes from partition 2
	acceptItemsAt(t, p, tpOf(1), "addrs", one, 999, time.Time{})
	acceptItemsAt(t, p, tpOf(2), "addrs", two, 999, time.Time{})
	s, _ := p.Stream("addrs")
	checkHHH(t, s, HHHQuery{}, list, precision, minSupport)

	p.OwnPartitions([]feed.Source{tpOf(1)})
	checkHHH(t, s, HHHQuery{}, one, precision, minSupport)
	p.OwnPartitions([]feed.Source{tpOf(1), tpOf(2)})

	states, err := p.PartitionState(tpOf(2))
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 4 || states[0].Stream != "addrs" || states[3].Stream != "addrs#3" {
		names := []string{}
		for _, st := range states {
			names = append(names, st.Stream)
		}
		t.Fatalf("partition states of %v, want addrs and its levels addrs#1 to addrs#3", names)
	}
	q := open(t, Config{})
	if _, err := q.Create("addrs", cfg); err != nil {
		t.Fatal(err)
	}
	local := list[:3000]
	acceptItemsAt(t, q, feed.Local, "addrs", local, 500, time.Time{})
	if err := q.ReplacePartition(context.Background(), tpOf(2), states); err != nil {
		t.Fatal(err)
	}
	r, _ := q.Stream("addrs")
	checkHHH(t, r, HHHQuery{}, append(append([]string(nil), local...), two...), precision, minSupport)

	// A stream without a hierarchy takes neither the part nor its levels.
	u := open(t, Config{})
	if _, err := u.Create("addrs", summary.Config{Items: true}); err != nil {
		t.Fatal(err)
	}
	if err := u.ReplacePartition(context.Background(), tpOf(2), states); err != nil {
		t.Fatal(err)
	}
	x, _ := u.Stream("addrs")
	if st := x.Stats(); st.Count != 0 || st.Rejected[feed.ReasonWrongKind] != uint64(len(two)) {
		t.Fatalf("a stream without a hierarchy: count %d, rejects %v; want 0 and %d wrong_kind", st.Count, st.Rejected, len(two))
	}
	// Nor does a hierarchy stream take a part without its levels.
	if err := q.ReplacePartition(context.Background(), tpOf(2), states[:1]); err != nil {
		t.Fatal(err)
	}
	checkHHH(t, r, HHHQuery{}, local, precision, minSupport)
}

// TestHierarchyRefusedCountsNone: items the memory budget refuses are
// refused whole, and those of them not in the hierarchy are not counted
// as such too: the caller counts the refusal.
func TestHierarchyRefusedCountsNone(t *testing.T) {
	cfg := summary.Config{Epsilon: 0.01, WindowSize: 1024, SlidingWindow: 4096, Hierarchy: "path/3"}
	level := levelConfig(cfg.WithDefaults())
	budget := StreamFootprint(level).Worst // holds the stream and its 2 levels, not a MiB of strings
	p := open(t, Config{MaxMemory: budget})
	s, err := p.Create("paths", cfg)
	if err != nil {
		t.Fatal(err)
	}
	var b items.Batch
	for i := range 1000 {
		b.AppendString("/" + strings.Repeat("x", 1000) + "/" + strconv.Itoa(i))
	}
	b.AppendString("not/a/path")
	if n, err := p.Accept(context.Background(), &feed.Batch{Stream: "paths", Items: &b}); !errors.Is(err, ErrMemoryBudget) || n != 0 {
		t.Fatalf("Accept past the budget: %d, %v; want 0 and ErrMemoryBudget", n, err)
	}
	if st := s.Stats(); st.Count != 0 || len(st.Rejected) != 0 {
		t.Fatalf("after a refused batch: count %d, rejects %v; want none", st.Count, st.Rejected)
	}
}

// TestHierarchyHostsUnderSupport: ten addresses of one /24, each just
// under the support, make their /24 a hitter and none of them one, over
// all history, the last n items and a time window.
func TestHierarchyHostsUnderSupport(t *testing.T) {
	const precision, minSupport = 0.005, 0.05
	p := open(t, Config{})
	s, err := p.Create("addrs", summary.Config{Epsilon: hhh.LevelEpsilon(precision, minSupport), WindowSize: 2048, SlidingWindow: 1 << 16, Hierarchy: "ipv4"})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(8, 9))
	const n = 40000
	list := make([]string, n)
	for i := range list {
		if r.IntN(100) < 45 { // 45%: ten hosts of 4.5% each
			list[i] = "198.51.100." + strconv.Itoa(1+r.IntN(10))
		} else {
			list[i] = netip.AddrFrom4([4]byte{byte(r.IntN(256)), byte(r.IntN(256)), byte(r.IntN(256)), byte(r.IntN(256))}).String()
		}
	}
	acceptItemsAt(t, p, feed.Local, "addrs", list, 1000, time.Time{})
	for _, q := range []HHHQuery{{}, {LastN: 20000}, {Since: p.Now().Add(-time.Hour)}} {
		covered := list
		if q.LastN > 0 {
			covered = list[n-q.LastN:]
		}
		checkHHH(t, s, q, covered, precision, minSupport)
		q.Support, q.Discounted = minSupport, true
		a, err := s.HierarchicalHeavyHitters(q)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range a.Hitters {
			if h.Level < 4 {
				got = append(got, h.Prefix)
			}
		}
		if !slices.Equal(got, []string{"198.51.100.0/24"}) {
			t.Errorf("%+v: hitters below the root %v, want the /24 alone", q, got)
		}
	}
}

// TestPartitionStateDuringDelete hands off a partition while a hierarchy
// stream with a part of it is deleted: the states taken are those of the
// stream before the deletion, or none, and another daemon takes them.
func TestPartitionStateDuringDelete(t *testing.T) {
	cfg := summary.Config{WindowSize: 1000, Hierarchy: "ipv4"}
	p := open(t, Config{})
	if _, err := p.Create("addrs", cfg); err != nil {
		t.Fatal(err)
	}
	acceptItemsAt(t, p, tpOf(1), "addrs", floodTrace(t, 300, 0.5, 100), 100, time.Time{})
	s, _ := p.Stream("addrs")
	// Hold the hierarchy's lock, so that PartitionState, having listed
	// the stream, waits at it while the stream is deleted.
	s.hier.mu.Lock()
	type result struct {
		states []PartState
		err    error
	}
	done := make(chan result)
	go func() {
		states, err := p.PartitionState(tpOf(1))
		done <- result{states, err}
	}()
	waitForStack(t, "(*Stream).partitionState")
	// Delete, which may wait for the hierarchy's lock too: until it has
	// returned, or removed the stream and waits.
	deleted := make(chan error, 1)
	go func() { deleted <- p.Delete("addrs") }()
	for len(deleted) == 0 && (p.lookup("addrs") != nil || !stackHolds("(*Pipeline).Delete")) {
		time.Sleep(time.Millisecond)
	}
	s.hier.mu.Unlock()
	if err := <-deleted; err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	q := open(t, Config{})
	if err := q.ReplacePartition(context.Background(), tpOf(1), r.states); err != nil {
		t.Fatalf("states taken across a deletion: %v", err)
	}
}
