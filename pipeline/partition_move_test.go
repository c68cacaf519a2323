package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"streamd/feed"
	"streamd/summary"
	"streamd/synth"
)

// TestReplacePartitionUnderLoad: a partition that moves away and back
// (PartitionState, ReplacePartition with none, ReplacePartition with its
// state) again and again, while the stream's other sources keep sending,
// the sweeper flushes idle parts and queries and snapshots run, loses no
// value and counts none twice: every stream ends with exactly the values
// sent, within ε, and so does its restored snapshot. Run it with -race:
// the part dropped each time (the first one lies in its stream's block)
// must not be read after its history is released.
func TestReplacePartitionUnderLoad(t *testing.T) {
	const eps = 0.01
	cfg := Config{
		Defaults:  summary.Config{Epsilon: eps, WindowSize: 256, SlidingWindow: 1024},
		MaxMemory: 1 << 30, IdleFlush: 5 * time.Millisecond, Linger: time.Millisecond,
	}
	p := open(t, cfg)
	ctx := context.Background()
	names := []string{"a", "b", "c"}
	x, _ := synth.Generate(synth.Spec{Dist: synth.LogNormal, Seed: 21}, 12000)
	sent := make(map[string][]float64)
	// Each stream's first part is tp0's, in its block.
	for i, name := range names {
		v := slices.Clone(x[i*1000 : i*1000+1000+i*37])
		if err := acceptValues(ctx, p, tpOf(0), name, v, time.Time{}); err != nil {
			t.Fatal(err)
		}
		sent[name] = append(sent[name], v...)
	}
	var mu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	deadline := time.Now().Add(time.Second)
	wg.Go(func() { // the other sources
		defer close(stop)
		for i := 4000; time.Now().Before(deadline); i += 50 {
			if i+50 > len(x) {
				i = 4000
			}
			name := names[i/50%len(names)]
			src := feed.Local
			if i/150%2 == 1 {
				src = tpOf(1)
			}
			v := slices.Clone(x[i : i+50])
			if err := acceptValues(ctx, p, src, name, v, time.Time{}); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			sent[name] = append(sent[name], v...)
			mu.Unlock()
		}
	})
	wg.Go(func() { // queries and snapshots
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, name := range names {
				s := mustStream(t, p, name)
				s.View(true).HeavyHitters(0.1)
				s.Stats()
				s.Parts(true, nil)
			}
			var b bytes.Buffer
			if _, _, err := p.SaveTo(&b, false); err != nil {
				t.Error(err)
				return
			}
		}
	})
	moves := 0
	for done := false; !done; moves++ {
		select {
		case <-stop:
			done = true
		default:
		}
		states, err := p.PartitionState(tpOf(0))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.ReplacePartition(ctx, tpOf(0), nil); err != nil {
			t.Fatal(err)
		}
		if err := p.ReplacePartition(ctx, tpOf(0), states); err != nil {
			t.Fatal(err)
		}
		// The partition's own delivery, stopped around the moves: its
		// windows are in flight, and its partial windows full, at the
		// next.
		name := names[moves%len(names)]
		v := slices.Clone(x[moves*97%3000 : moves*97%3000+300])
		if err := acceptValues(ctx, p, tpOf(0), name, v, time.Time{}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		sent[name] = append(sent[name], v...)
		mu.Unlock()
	}
	wg.Wait()
	quiesce(t, p)
	t.Logf("%d moves", moves)
	snap, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	r := openRestored(t, Config{Defaults: cfg.Defaults}, snap)
	for _, q := range []*Pipeline{p, r} {
		for _, name := range names {
			s := mustStream(t, q, name)
			if got, want := s.Stats().Count, int64(len(sent[name])); got != want {
				t.Fatalf("%s counts %d values, want the %d sent", name, got, want)
			}
			checkStream(t, s, sent[name], eps)
		}
	}
}

// TestBudgetReturnsAfterDrops: the memory budget's charges come back to
// nothing once every stream is gone, whatever the streams went through:
// value, item, hierarchy and pair streams, local, Kafka-only and of
// several parts, their partitions moved away and back (the dropped parts
// among them the first ones, in their streams' blocks), restored from a
// snapshot and a delta, deleted. Their answers count exactly the values
// sent throughout.
func TestBudgetReturnsAfterDrops(t *testing.T) {
	const eps = 0.01
	defaults := summary.Config{Epsilon: eps, WindowSize: 128, SlidingWindow: 512}
	cfg := Config{Defaults: defaults, MaxMemory: 1 << 30}
	p := open(t, cfg)
	ctx := context.Background()
	if _, err := p.Create("h", summary.Config{Hierarchy: "ipv4/8"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Create("xy", summary.Config{Pairs: true}); err != nil {
		t.Fatal(err)
	}
	x, _ := synth.Generate(synth.Spec{Dist: synth.Normal, Seed: 5}, 3000)
	sent := make(map[string]int64)
	for i := 0; i < len(x); i += 100 {
		v := slices.Clone(x[i : i+100])
		for j, name := range []string{"local", "kafka", "both"} {
			src := feed.Local
			if j == 1 || (j == 2 && i/100%2 == 1) {
				src = tpOf(i / 100 % 3)
			}
			if err := acceptValues(ctx, p, src, name, slices.Clone(v), time.Time{}); err != nil {
				t.Fatal(err)
			}
			sent[name] += int64(len(v))
		}
		var list []string
		for k := range 100 {
			list = append(list, fmt.Sprintf("10.%d.%d.%d", k%3, k%7, i/100))
		}
		acceptItemsAt(t, p, tpOf(i/100%3), "h", list, 50, time.Time{})
		acceptItemsAt(t, p, tpOf(i/100%3), "items", list, 50, time.Time{})
		sent["h"] += 100
		sent["items"] += 100
		if _, err := p.Accept(ctx, &feed.Batch{Stream: "xy", Source: tpOf(0), Pairs: feed.Pairs{X: slices.Clone(v), Y: slices.Clone(v)}}); err != nil {
			t.Fatal(err)
		}
	}
	quiesce(t, p)
	count := func(q *Pipeline, name string) int64 {
		s := mustStream(t, q, name)
		if s.IsPairs() {
			return -1
		}
		return s.View(false).Count()
	}
	check := func(q *Pipeline, what string) {
		t.Helper()
		for name, n := range sent {
			if got := count(q, name); got != n {
				t.Fatalf("%s: %s counts %d, want %d", what, name, got, n)
			}
		}
	}
	check(p, "made")
	base, _ := save(t, p, false, true)
	for _, tp := range []feed.Source{tpOf(0), tpOf(1), tpOf(2)} {
		states, err := p.PartitionState(tp)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.ReplacePartition(ctx, tp, nil); err != nil {
			t.Fatal(err)
		}
		if err := p.ReplacePartition(ctx, tp, states); err != nil {
			t.Fatal(err)
		}
	}
	quiesce(t, p)
	check(p, "moved")
	delta, _ := save(t, p, true, true)
	r := openRestored(t, cfg, base, delta)
	quiesce(t, r)
	check(r, "restored")
	for _, q := range []*Pipeline{p, r} {
		for _, name := range q.List() {
			if err := q.Delete(name); err != nil {
				t.Fatal(err)
			}
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			m := q.Memory()
			if m.Reserved == 0 && m.Windows == 0 && m.Growth == 0 && m.Used == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("every stream deleted, the budget still charges %+v", m)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// TestFailedOpenLeavesNoCharge: a stream the budget cannot hold — its own
// account, or one of its hierarchy's levels' after the accounts opened
// before it — leaves the budget's charges as they were, and is not made;
// the streams made before it give back every charge when deleted.
func TestFailedOpenLeavesNoCharge(t *testing.T) {
	defaults := summary.Config{Epsilon: 0.01, WindowSize: 128, SlidingWindow: 512}
	hcfg := summary.Config{Hierarchy: "ipv4/8", Epsilon: 0.01, WindowSize: 128, SlidingWindow: 512}
	item := StreamFootprint(summary.Config{Items: true, Epsilon: 0.01, WindowSize: 128, SlidingWindow: 512, Float64: true})
	value := StreamFootprint(defaults)
	limit := 2*item.Worst + 4*item.Reserve
	p := open(t, Config{Defaults: defaults, MaxMemory: limit})
	ctx := context.Background()
	// Fill the budget with value streams until two item streams' reserves
	// are left, fewer than the hierarchy's four accounts.
	made := 0
	for p.Memory().Used+value.Reserve <= limit-2*item.Reserve {
		if _, err := p.Create(fmt.Sprintf("v%d", made), summary.Config{}); err != nil {
			t.Fatal(err)
		}
		made++
	}
	before := p.Memory()
	_, err := p.Create("h", hcfg)
	t.Logf("%d value streams; the hierarchy: %v", made, err)
	if err == nil {
		t.Fatalf("a hierarchy stream of 4 accounts made with room for 2 (%+v)", before)
	}
	if _, err := p.Stream("h"); err == nil {
		t.Fatal("the stream refused is in the pipeline")
	}
	after := p.Memory()
	if after.Used != before.Used || after.Reserved != before.Reserved || after.Growth != before.Growth || after.Refused != before.Refused+1 {
		t.Fatalf("the refused stream left the budget at %+v, from %+v", after, before)
	}
	if _, err := p.Accept(ctx, &feed.Batch{Stream: "v0", Values: []float64{1, 2, 3}, Moments: feed.Measure([]float64{1, 2, 3})}); err != nil {
		t.Fatal(err)
	}
	for _, name := range p.List() {
		if err := p.Delete(name); err != nil {
			t.Fatal(err)
		}
	}
	if m := p.Memory(); m.Used != 0 || m.Reserved != 0 || m.Growth != 0 || m.Windows != 0 {
		t.Fatalf("every stream deleted, the budget still charges %+v", m)
	}
}

// TestGoldenRestoresGiveBackTheirCharges: the streams of the golden
// snapshots, version 1 and version 2 with parts of version 1, restored
// in place (their first parts in their streams' blocks, or apart for
// version 1) count what they did once a partition is moved away and
// back, a snapshot of them restores to the same counts, and once
// deleted they give back every charge of the budget.
func TestGoldenRestoresGiveBackTheirCharges(t *testing.T) {
	for _, file := range []string{"testdata/pipeline-v1.bin", "testdata/pipeline-v2-part-v1.bin"} {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{MaxMemory: 1 << 30}
			p := openRestored(t, cfg, data)
			quiesce(t, p)
			ctx := context.Background()
			counts := func(q *Pipeline) map[string]int64 {
				m := make(map[string]int64)
				for _, name := range q.List() {
					m[name] = mustStream(t, q, name).Stats().Count
				}
				return m
			}
			before := counts(p)
			if len(before) == 0 {
				t.Fatal("no streams restored")
			}
			// Every stream gets a part of a partition, which moves away and
			// back.
			for name := range before {
				if err := acceptValues(ctx, p, tpOf(9), name, []float64{1, 2, 3, 4, 5}, time.Time{}); err != nil {
					t.Fatal(err)
				}
				before[name] += 5
			}
			states, err := p.PartitionState(tpOf(9))
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range [][]PartState{nil, states} {
				if err := p.ReplacePartition(ctx, tpOf(9), st); err != nil {
					t.Fatal(err)
				}
			}
			quiesce(t, p)
			snap, err := p.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			r := openRestored(t, cfg, snap)
			quiesce(t, r)
			for _, q := range []*Pipeline{p, r} {
				if got := counts(q); !maps.Equal(got, before) {
					t.Fatalf("counts %v, want %v", got, before)
				}
				for _, name := range q.List() {
					if err := q.Delete(name); err != nil {
						t.Fatal(err)
					}
				}
				if m := q.Memory(); m.Used != 0 || m.Reserved != 0 || m.Growth != 0 || m.Windows != 0 {
					t.Fatalf("every stream deleted, the budget still charges %+v", m)
				}
			}
		})
	}
}
