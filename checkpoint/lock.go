package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// LockFile is the name of the lock file in a directory that Lock locks.
const LockFile = "lock"

// ErrLocked is wrapped by Lock's error when another process, or another
// DirLock of this one, holds the directory.
var ErrLocked = errors.New("directory in use")

// A DirLock is an exclusive lock on a directory, for one daemon at a time.
type DirLock struct {
	f *os.File
}

// Lock locks dir for this process: flock(2) with LOCK_EX|LOCK_NB on
// dir/lock, created if missing, into which it then writes the process id.
// If the directory is locked already, Lock fails at once with an error that
// wraps ErrLocked and names the process that holds it. The lock lasts until
// Unlock, or until the process ends, however it ends: the kernel releases
// it with the process's files.
func Lock(dir string) (*DirLock, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		// The holder writes its PID right after it locks: an empty file
		// means it has not yet.
		holder := "another process"
		if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			holder = "process " + strings.TrimSpace(string(b))
		}
		return nil, fmt.Errorf("%w: %s is held by %s", ErrLocked, path, holder)
	}
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("write lock file: %w", err)
	}
	if _, err := f.WriteAt(pid, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("write lock file: %w", err)
	}
	return &DirLock{f: f}, nil
}

// Unlock releases the lock; a second call does nothing. The lock file
// stays, with the last holder's process id: removing it could let two
// processes lock two different files.
func (l *DirLock) Unlock() error {
	if l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	if err := f.Close(); err != nil { // closing releases the flock
		return fmt.Errorf("unlock: %w", err)
	}
	return nil
}
