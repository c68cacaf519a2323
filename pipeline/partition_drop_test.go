package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"testing"

	"streamd/feed"
	"streamd/summary"
	"streamd/synth"
)

// TestDroppedPartFreesItsMemory: a part that ReplacePartition drops frees
// what it held, its summaries above all, though its stream lives on. A
// stream's first part lies in the stream's own block and stays reachable
// from it (Stream.first), so a dropped first part once kept its summaries
// for as long as its stream lived, uncharged by the memory budget: a
// partition that moved away and back left one such part in each of its
// streams.
func TestDroppedPartFreesItsMemory(t *testing.T) {
	const streams = 200
	cfg := Config{Defaults: summary.Config{Epsilon: 0.001, WindowSize: 1024, SlidingWindow: 1024}, MaxMemory: 4 << 30}
	p := open(t, cfg)
	ctx := context.Background()
	x, _ := synth.Generate(synth.Spec{Dist: synth.LogNormal, Seed: 7}, 50*1024)
	vals, m, _ := feed.AppendFloat32(nil, x)
	few, fm, _ := feed.AppendFloat32(nil, x[:10])
	tp, other := tpOf(0), tpOf(1)
	for i := range streams {
		name := fmt.Sprintf("s%d", i)
		if _, err := p.Accept(ctx, &feed.Batch{Stream: name, Source: tp, Float32: vals, Moments: m}); err != nil {
			t.Fatal(err)
		}
		// A second partition keeps the stream's values apart from the
		// part dropped: the stream lives on.
		if _, err := p.Accept(ctx, &feed.Batch{Stream: name, Source: other, Float32: few, Moments: fm}); err != nil {
			t.Fatal(err)
		}
	}
	quiesce(t, p)
	heap := func() int64 {
		runtime.GC()
		runtime.GC()
		var st runtime.MemStats
		runtime.ReadMemStats(&st)
		return int64(st.HeapAlloc)
	}
	held := func() (n int64) {
		for _, s := range p.all() {
			n += int64(s.Stats().Bytes)
		}
		return n
	}
	before, heldBefore := heap(), held()
	if err := p.ReplacePartition(ctx, tp, nil); err != nil {
		t.Fatal(err)
	}
	after, heldAfter := heap(), held()
	for _, s := range p.all() {
		if got := s.Stats().Count; got != 10 {
			t.Fatalf("%s counts %d values after its partition left, want the other partition's 10", s.Name(), got)
		}
	}
	freed, dropped := before-after, heldBefore-heldAfter
	t.Logf("dropping the parts freed %d B of the heap a stream; they held %d B a stream (Stats.Bytes)", freed/streams, dropped/streams)
	if dropped < 100<<10*streams || freed < dropped*3/4 {
		t.Errorf("the %d parts dropped held %d B; the heap fell by %d B: the parts kept what they held", streams, dropped, freed)
	}
	runtime.KeepAlive(p)
}

// TestReplacePartitionOtherConfig: a part handed over from a daemon that
// configures its stream otherwise (another ε) is installed, its values
// answered within the larger ε of the two, and ReplacePartition says so
// in one warning for the call.
func TestReplacePartitionOtherConfig(t *testing.T) {
	ctx := context.Background()
	tp := tpOf(0)
	from := open(t, Config{Defaults: summary.Config{Epsilon: 0.01}})
	x, _ := synth.Generate(synth.Spec{Dist: synth.LogNormal, Seed: 3}, 5000)
	for _, name := range []string{"a", "b"} {
		if _, err := from.Accept(ctx, &feed.Batch{Stream: name, Source: tp, Values: x}); err != nil {
			t.Fatal(err)
		}
	}
	states, err := from.PartitionState(tp)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	to := open(t, Config{Defaults: summary.Config{Epsilon: 0.001}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for _, name := range []string{"a", "b"} {
		if _, err := to.Accept(ctx, &feed.Batch{Stream: name, Values: x[:100]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := to.ReplacePartition(ctx, tp, states); err != nil {
		t.Fatal(err)
	}
	// Every value of both parts is counted, within the larger ε of the
	// two, against the exact answers.
	for _, name := range []string{"a", "b"} {
		checkStream(t, mustStream(t, to, name), append(slices.Clone(x), x[:100]...), 0.01)
	}
	out := logs.String()
	if strings.Count(out, "another configuration") != 1 || !strings.Contains(out, "parts=2") ||
		!strings.Contains(out, "part_epsilon=0.01") || !strings.Contains(out, "stream_epsilon=0.001") {
		t.Errorf("want one warning of 2 parts of ε 0.01 into streams of 0.001; the log:\n%s", out)
	}
}
