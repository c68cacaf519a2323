//go:build unix

package main

import (
	"fmt"
	"syscall"
)

// raiseOpenFiles raises the soft limit on open files (RLIMIT_NOFILE) to
// the hard limit, and returns it.
func raiseOpenFiles() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("read open files limit: %w", err)
	}
	if lim.Cur < lim.Max {
		want := lim
		want.Cur = want.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
			// macOS refuses more than OPEN_MAX with an unlimited hard
			// limit: check against the soft one.
			return uint64(lim.Cur), nil
		}
		lim = want
	}
	return uint64(lim.Cur), nil
}
