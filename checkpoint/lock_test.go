package checkpoint

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestLock: a locked directory refuses a second lock, naming the process
// that holds it, until the first is released.
func TestLock(t *testing.T) {
	dir := t.TempDir()
	l, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		_, err := Lock(dir)
		if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "held by process "+strconv.Itoa(os.Getpid())) {
			t.Fatalf("second lock: %v", err)
		}
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	l, err = Lock(dir)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(); err != nil {
		t.Errorf("second unlock: %v", err)
	}
	if _, err := Lock(t.TempDir() + "/missing"); err == nil || errors.Is(err, ErrLocked) {
		t.Errorf("lock of a missing dir: %v", err)
	}
}
