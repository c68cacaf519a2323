package checkpoint

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

func newStore(t *testing.T) (*Store, *bytes.Buffer) {
	var log bytes.Buffer
	return &Store{Dir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&log, nil))}, &log
}

func TestWriteLatestKeepsTwo(t *testing.T) {
	s, _ := newStore(t)
	if _, _, err := s.Latest(); !errors.Is(err, ErrNone) {
		t.Fatalf("empty dir: %v", err)
	}
	for seq := uint64(1); seq <= 5; seq++ {
		if err := s.Write(seq, []byte{byte(seq), 42}); err != nil {
			t.Fatal(err)
		}
		got, data, err := s.Latest()
		if err != nil || got != seq || !bytes.Equal(data, []byte{byte(seq), 42}) {
			t.Fatalf("latest after %d: %d %v %v", seq, got, data, err)
		}
	}
	files, _ := os.ReadDir(s.Dir)
	if len(files) != 2 {
		t.Errorf("%d files kept, want 2", len(files))
	}
}

// TestCorruptFallsBack truncates or flips a byte of the newest checkpoint:
// Latest logs it and returns the previous one, never panicking.
func TestCorruptFallsBack(t *testing.T) {
	for _, damage := range []func([]byte) []byte{
		func(b []byte) []byte { return b[:len(b)/2] },
		func(b []byte) []byte { b[6] ^= 1; return b },
		func(b []byte) []byte { return nil },
		func(b []byte) []byte { b[4] = 99; return b },
	} {
		s, log := newStore(t)
		_ = s.Write(7, []byte("old state"))
		_ = s.Write(8, []byte("new state"))
		path := filepath.Join(s.Dir, name(8))
		raw, _ := os.ReadFile(path)
		if err := os.WriteFile(path, damage(raw), 0o644); err != nil {
			t.Fatal(err)
		}
		seq, data, err := s.Latest()
		if err != nil || seq != 7 || string(data) != "old state" {
			t.Fatalf("fallback: %d %q %v", seq, data, err)
		}
		if !bytes.Contains(log.Bytes(), []byte("skipping bad checkpoint")) {
			t.Errorf("no log line: %s", log.String())
		}
		seq, _, err = s.Older(7)
		if !errors.Is(err, ErrNone) {
			t.Errorf("older than 7: %d %v", seq, err)
		}
	}
}

func TestLeftoverTempIgnored(t *testing.T) {
	s, _ := newStore(t)
	_ = s.Write(1, []byte("a"))
	// A crash mid-write leaves a temporary file behind.
	if err := os.WriteFile(filepath.Join(s.Dir, ".checkpoint-123.tmp"), []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	if seq, data, err := s.Latest(); err != nil || seq != 1 || string(data) != "a" {
		t.Fatalf("%d %q %v", seq, data, err)
	}
}
