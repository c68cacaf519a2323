//go:build !linux

package radix

import "time"

// newClock returns a wall clock: a thread's CPU time is read on Linux
// only.
func newClock() func() time.Duration { return wallClock() }
