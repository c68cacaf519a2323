package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"streamd/feed"
	"streamd/summary"
)

// TestBudgetRefusalsLoseNothing: producers fill two streams while the
// memory left to them comes and goes (filler streams made and deleted)
// and the sweeper flushes their partial windows; some batches are refused
// for the budget. Each stream then counts exactly the values Accept
// acknowledged, and answers within ε of exact over just those values.
func TestBudgetRefusalsLoseNothing(t *testing.T) {
	const eps = 0.01
	cfg := summary.Config{Epsilon: eps, WindowSize: 1000, SlidingWindow: 5000}
	p := open(t, Config{Defaults: cfg, MaxMemory: 400 << 10, IdleFlush: 10 * time.Millisecond})
	ctx := context.Background()
	names := []string{"a", "b"}
	for _, name := range names {
		if _, err := p.Create(name, cfg); err != nil {
			t.Fatal(err)
		}
	}
	var fillers []string
	for i := 0; ; i++ {
		name := fmt.Sprint("f", i)
		if _, err := p.Create(name, cfg); err != nil {
			break
		}
		fillers = append(fillers, name)
	}
	var mu sync.Mutex
	acked := map[string][]float64{}
	var refused, accepted int
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 3))
			for range 120 {
				name := names[rng.IntN(len(names))]
				x := idleValues([]string{"random", "sorted", "dups"}[rng.IntN(3)], 1+rng.IntN(1500), rng.Uint64())
				n, err := p.Accept(ctx, &feed.Batch{Stream: name, Values: x})
				mu.Lock()
				acked[name] = append(acked[name], x[:n]...)
				if err != nil {
					refused++
				} else {
					accepted++
				}
				mu.Unlock()
				if err != nil && !errors.Is(err, ErrMemoryBudget) {
					t.Error(err)
					return
				}
				if err != nil && n != 0 {
					t.Errorf("a refused batch of %d values acknowledged %d", len(x), n)
				}
			}
		})
	}
	// Free and take back room while the producers run.
	wg.Go(func() {
		for i := range 200 {
			name := fillers[i/2%len(fillers)]
			if i%2 == 0 {
				_ = p.Delete(name) // absent when the budget refused its making
			} else {
				_, _ = p.Create(name, cfg) // may be refused: the producers took the room
			}
			time.Sleep(time.Millisecond) // pacing only: no outcome depends on it
		}
	})
	wg.Wait()
	if refused == 0 || accepted == 0 {
		t.Fatalf("%d batches accepted, %d refused: want some of both", accepted, refused)
	}
	for _, name := range names {
		s := mustStream(t, p, name)
		if st := s.Stats(); st.Count != int64(len(acked[name])) || st.Summarised+st.Pending != st.Count {
			t.Fatalf("%s: counts %d (%d summarised, %d pending), Accept acknowledged %d", name, st.Count, st.Summarised, st.Pending, len(acked[name]))
		}
		// acked holds the values of producers that share a stream in an
		// order other than the stream's, which all-history answers do not
		// depend on; last-n answers would.
		checkAnswersExact(t, name, s.View(true), acked[name], eps)
	}
}
