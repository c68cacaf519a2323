package radix

import (
	"time"

	"golang.org/x/sys/unix"
)

// newClock returns a clock of the CPU time of the calling OS thread, which
// time spent waiting for a core (other processes, other goroutines) does
// not advance, or a wall clock if the kernel does not keep one. The caller
// must be locked to its thread (runtime.LockOSThread).
func newClock() func() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return wallClock()
	}
	return func() time.Duration {
		unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
		return time.Duration(ts.Nano())
	}
}
