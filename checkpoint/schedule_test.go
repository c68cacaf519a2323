package checkpoint

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSchedulerHealth: a failed checkpoint degrades the daemon until one
// succeeds; an abandoned one (its context cancelled) changes nothing.
func TestSchedulerHealth(t *testing.T) {
	var next error
	var changes []error
	s := &Scheduler{
		Write:   func(context.Context) error { return next },
		Changed: func(err error) { changes = append(changes, err) },
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if err := s.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, opened := s.Stats()
	if opened.IsZero() {
		t.Fatal("no last success at Open")
	}

	disk := errors.New("disk full")
	next = disk
	if err := s.Checkpoint(t.Context()); !errors.Is(err, disk) {
		t.Fatalf("Checkpoint = %v, want %v", err, disk)
	}
	err := s.Err()
	if !errors.Is(err, disk) || !strings.HasPrefix(err.Error(), "degraded: the checkpoint at ") || !strings.Contains(err.Error(), "(1 failures so far)") {
		t.Errorf("Err = %v, want degraded by %v once", err, disk)
	}
	if failures, last := s.Stats(); failures != 1 || !last.Equal(opened) {
		t.Errorf("Stats = %d, %v; want 1, %v", failures, last, opened)
	}

	// Abandoned: no outcome.
	if err := s.Record(context.Canceled); !errors.Is(err, context.Canceled) {
		t.Errorf("Record(Canceled) = %v", err)
	}
	if failures, _ := s.Stats(); failures != 1 || !errors.Is(s.Err(), disk) {
		t.Errorf("an abandoned checkpoint counted: %d failures, Err %v", failures, s.Err())
	}

	next = nil
	if err := s.Checkpoint(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.Err(); err != nil {
		t.Errorf("Err after a success = %v", err)
	}
	if failures, last := s.Stats(); failures != 1 || !last.After(opened) {
		t.Errorf("Stats = %d, %v; want 1, after %v", failures, last, opened)
	}
	if len(changes) != 2 || !errors.Is(changes[0], disk) || changes[1] != nil {
		t.Errorf("Changed with %v, want [degraded nil]", changes)
	}
}

// TestSchedulerLoop: the scheduler checkpoints every Interval, and Close
// cancels the checkpoint in progress, waits for it, and records no
// outcome of it.
func TestSchedulerLoop(t *testing.T) {
	var (
		mu    sync.Mutex
		calls int
	)
	blocked := make(chan struct{})
	s := &Scheduler{
		Interval: time.Millisecond,
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Write: func(ctx context.Context) error {
			mu.Lock()
			calls++
			n := calls
			mu.Unlock()
			if n < 3 {
				return errors.New("fails")
			}
			close(blocked)
			<-ctx.Done()
			return errors.New("gave up") // not ctx's error: still no outcome
		},
	}
	if err := s.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	<-blocked
	s.Close()
	mu.Lock()
	defer mu.Unlock()
	if calls != 3 {
		t.Errorf("%d checkpoints, want 3", calls)
	}
	if failures, _ := s.Stats(); failures != 2 {
		t.Errorf("%d failures, want the 2 before Close", failures)
	}
}

// TestSchedulerNoInterval: with no Interval nothing is written but what
// is asked for.
func TestSchedulerNoInterval(t *testing.T) {
	calls := 0
	s := &Scheduler{Write: func(context.Context) error { calls++; return nil }}
	if err := s.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.Checkpoint(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if calls != 1 {
		t.Errorf("%d checkpoints, want 1", calls)
	}
}

// TestSchedulerPaces: after a checkpoint that took longer than the
// interval, the next periodic one waits Pace times as long as it took, so
// slow checkpoints cannot take the daemon's time back to back.
func TestSchedulerPaces(t *testing.T) {
	const slow = 60 * time.Millisecond
	var mu sync.Mutex
	var starts, ends []time.Time
	s := &Scheduler{
		Interval: 5 * time.Millisecond,
		Write: func(ctx context.Context) error {
			mu.Lock()
			first := len(starts) == 0
			starts = append(starts, time.Now())
			mu.Unlock()
			if first {
				time.Sleep(slow)
			}
			mu.Lock()
			ends = append(ends, time.Now())
			mu.Unlock()
			return nil
		},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if err := s.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	for {
		mu.Lock()
		n := len(starts)
		mu.Unlock()
		if n >= 3 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	s.Close()
	mu.Lock()
	defer mu.Unlock()
	took := ends[0].Sub(starts[0])
	if gap := starts[1].Sub(ends[0]); gap < Pace*took {
		t.Errorf("the checkpoint after one of %v started %v after it, want at least %v", took, gap, Pace*took)
	}
	if gap := starts[2].Sub(starts[1]); gap > 50*slow {
		t.Errorf("after a quick checkpoint the next came %v later, want about the interval", gap)
	}
}
