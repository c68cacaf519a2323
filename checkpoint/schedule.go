package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Scheduler decides when a daemon checkpoints, and keeps the outcome: it
// checkpoints every Interval from Open to Close (and, after a checkpoint
// that took longer than a quarter of Interval, waits three times as long as
// it took: see Pace), and when asked
// (Checkpoint: a durable Push, the final checkpoint); the outcome of a
// checkpoint written elsewhere (before the Kafka consumer gives partitions
// up) is recorded with Record. A failed checkpoint degrades the daemon
// (Err) until a later one succeeds. What a checkpoint holds is Write's
// business. Its methods are safe for concurrent use.
type Scheduler struct {
	// Interval is the time between periodic checkpoints; 0 for none.
	Interval time.Duration
	// Write writes one checkpoint (a Store.Write of the daemon's state).
	Write func(ctx context.Context) error
	// Changed, if set, is called after each outcome recorded, with Err's
	// new value, under the Scheduler's lock: outcomes reach it in order.
	// The daemon sets its health from it.
	Changed func(degraded error)
	Logger  *slog.Logger

	mu       sync.Mutex
	err      error     // the last checkpoint's failure; nil once one succeeds
	failedAt time.Time // when it failed
	lastOK   time.Time // when the last checkpoint succeeded, or Open
	failures uint64

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (s *Scheduler) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// Open starts the periodic checkpoints, if Interval is positive. The
// daemon's state is taken as durable as of Open (restored from its
// checkpoint, or new): Stats reports Open's time as the last success until
// a checkpoint succeeds.
func (s *Scheduler) Open(ctx context.Context) error {
	if s.Write == nil {
		return errors.New("open checkpoint scheduler: no write function")
	}
	s.mu.Lock()
	s.lastOK = time.Now()
	s.mu.Unlock()
	if s.Interval <= 0 {
		return nil
	}
	ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.wg.Go(func() { s.loop(ctx) })
	return nil
}

// Close stops the periodic checkpoints, cancelling one in progress, and
// waits for them to stop. Checkpoint and Record still work after Close.
func (s *Scheduler) Close() {
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
}

// Pace is how many times as long as the last periodic checkpoint took
// the scheduler waits at least before the next one: periodic checkpoints
// take at most a quarter of the daemon's time. A daemon with a million
// streams, all changed, takes seconds to write one; checkpointing it
// back to back would take a core from ingest for good.
const Pace = 3

// loop checkpoints every Interval, or Pace times as long as the last one
// took if that is longer, from the start of one to the start of the next
// less its duration, until ctx ends.
func (s *Scheduler) loop(ctx context.Context) {
	t := time.NewTimer(s.Interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			start := time.Now()
			err := s.Write(ctx)
			if ctx.Err() != nil {
				return
			}
			_ = s.Record(err) // logs a failure
			took := time.Since(start)
			wait := max(s.Interval-took, Pace*took)
			if wait > s.Interval {
				s.logger().Debug("checkpoint was slow: the next waits longer", "took", took, "wait", wait)
			}
			t.Reset(wait)
		case <-ctx.Done():
			return
		}
	}
}

// Checkpoint writes a checkpoint now and records its outcome (Record).
func (s *Scheduler) Checkpoint(ctx context.Context) error {
	return s.Record(s.Write(ctx))
}

// Record records the outcome of a checkpoint and returns err: a failure
// degrades the daemon (Err) until a later checkpoint succeeds. An error of
// a cancelled context is no outcome: the checkpoint was abandoned, not
// failed, and is returned unrecorded.
func (s *Scheduler) Record(err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.err, s.failedAt = err, time.Now()
		s.failures++
		s.logger().Error("checkpoint failed; health is degraded until one succeeds", "err", err, "failures", s.failures)
	} else {
		if s.err != nil {
			s.logger().Info("checkpoint succeeded again: health restored")
		}
		s.err, s.lastOK = nil, time.Now()
	}
	if s.Changed != nil {
		s.Changed(s.errLocked())
	}
	return err
}

// Err returns why the daemon is degraded: the last checkpoint's failure,
// or nil.
func (s *Scheduler) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errLocked()
}

func (s *Scheduler) errLocked() error {
	if s.err != nil {
		return fmt.Errorf("degraded: the checkpoint at %s failed (%d failures so far): %w", s.failedAt.UTC().Format(time.RFC3339), s.failures, s.err)
	}
	return nil
}

// Stats returns the number of checkpoints that failed, and when the last
// one succeeded (or Open, before any).
func (s *Scheduler) Stats() (failures uint64, lastSuccess time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failures, s.lastOK
}
