package main

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// TestProcsGovernor checks the Ps a governor sets: one a core from the
// start, two a core as soon as windows are sorted, kept while they are
// and for quiet after the last, then one a core again; and one a core
// when it stops.
func TestProcsGovernor(t *testing.T) {
	var sorted atomic.Int64
	var sets []int
	set := func(n int) int { sets = append(sets, n); return 0 }
	g := newProcsGovernor(4, 5*time.Second, sorted.Load, set, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t0 := time.Unix(1000, 0)
	for _, s := range []struct {
		at     time.Duration
		sorted int64
		want   int
	}{
		{0, 0, 4},                         // nothing sorted yet
		{time.Second, 0, 4},               // still nothing
		{2 * time.Second, 3, 8},           // windows sorted: two a core
		{3 * time.Second, 3, 8},           // none since, not yet quiet
		{6 * time.Second, 9, 8},           // more: the quiet starts again
		{10 * time.Second, 9, 8},          // 4 s without
		{11 * time.Second, 9, 4},          // 5 s without: one a core
		{12 * time.Second, 9, 4},          //
		{12500 * time.Millisecond, 10, 8}, // sorting again
	} {
		sorted.Store(s.sorted)
		g.step(t0.Add(s.at))
		if g.procs != s.want {
			t.Fatalf("at %v with %d sorted: %d Ps, want %d", s.at, s.sorted, g.procs, s.want)
		}
	}
	if want := []int{4, 8, 4, 8}; !slices.Equal(sets, want) {
		t.Errorf("set %v, want %v: once at the start and once for each change", sets, want)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		g.run(ctx, time.Millisecond)
		close(done)
	}()
	cancel()
	<-done
	if sets[len(sets)-1] != 4 {
		t.Errorf("after run: set %v, want one a core last", sets)
	}
}
