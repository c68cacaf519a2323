package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"streamd/internal/codec"
)

func newStore(t *testing.T) (*Store, *bytes.Buffer) {
	var log bytes.Buffer
	return &Store{Dir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&log, nil))}, &log
}

// write writes data as a checkpoint and returns its number.
func write(t *testing.T, s *Store, data string) uint64 {
	t.Helper()
	seq, err := s.Write(func(w io.Writer) error {
		_, err := io.WriteString(w, data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// files returns the names of the files in dir, sorted.
func files(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteLatestKeepsTwo(t *testing.T) {
	s, _ := newStore(t)
	if _, _, err := s.Latest(); !errors.Is(err, ErrNone) {
		t.Fatalf("empty dir: %v", err)
	}
	for i := uint64(1); i <= 5; i++ {
		want := []byte{byte(i), 42}
		if seq := write(t, s, string(want)); seq != i {
			t.Fatalf("checkpoint %d numbered %d", i, seq)
		}
		got, data, err := s.Latest()
		if err != nil || got != i || !bytes.Equal(data, want) {
			t.Fatalf("latest after %d: %d %v %v", i, got, data, err)
		}
	}
	if got, want := files(t, s.Dir), []string{name(4), name(5)}; !slices.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
}

// TestCorruptFallsBack truncates or flips a byte of the newest checkpoint:
// Latest logs it, renames it aside and returns the previous one, never
// panicking.
func TestCorruptFallsBack(t *testing.T) {
	for _, damage := range []func([]byte) []byte{
		func(b []byte) []byte { return b[:len(b)/2] },
		func(b []byte) []byte { b[6] ^= 1; return b },
		func(b []byte) []byte { return nil },
		func(b []byte) []byte { b[4] = 99; return b },
	} {
		s, log := newStore(t)
		write(t, s, "old state")
		write(t, s, "new state")
		path := filepath.Join(s.Dir, name(2))
		raw, _ := os.ReadFile(path)
		if err := os.WriteFile(path, damage(raw), 0o644); err != nil {
			t.Fatal(err)
		}
		s = &Store{Dir: s.Dir, Logger: s.Logger} // a restart
		seq, data, err := s.Latest()
		if err != nil || seq != 1 || string(data) != "old state" {
			t.Fatalf("fallback: %d %q %v", seq, data, err)
		}
		if !bytes.Contains(log.Bytes(), []byte("skipping bad checkpoint")) {
			t.Errorf("no log line: %s", log.String())
		}
		if got, want := files(t, s.Dir), []string{name(1), name(2) + ".invalid"}; !slices.Equal(got, want) {
			t.Errorf("files %v, want %v", got, want)
		}
		seq, _, err = s.Older(1)
		if !errors.Is(err, ErrNone) {
			t.Errorf("older than 1: %d %v", seq, err)
		}
	}
}

// TestInvalidNeverRetained: with junk and a truncated checkpoint numbered
// above the one valid checkpoint, Latest returns the valid one, new
// checkpoints are numbered above the invalid files, and retention keeps
// the valid one until two newer ones are on disk: at every step a restart
// finds the newest valid checkpoint.
func TestInvalidNeverRetained(t *testing.T) {
	s, log := newStore(t)
	write(t, s, "valid")
	raw, err := os.ReadFile(filepath.Join(s.Dir, name(1)))
	if err != nil {
		t.Fatal(err)
	}
	junk := map[string][]byte{
		name(1000):             []byte("junk"),
		name(1001):             raw[:len(raw)-1],
		"checkpoint-1002.bin":  nil, // not zero-padded
		"checkpoint-x.bin":     []byte("not a checkpoint name"),
		".checkpoint-1.tmp":    []byte("a crash mid-write"),
		"checkpoint-0004.data": nil,
	}
	for n, b := range junk {
		if err := os.WriteFile(filepath.Join(s.Dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	restart := func(want uint64, data string) {
		t.Helper()
		s = &Store{Dir: s.Dir, Logger: s.Logger}
		seq, got, err := s.Latest()
		if err != nil || seq != want || string(got) != data {
			t.Fatalf("latest: %d %q %v; want %d %q", seq, got, err, want, data)
		}
	}
	restart(1, "valid")
	for _, n := range []string{name(1000), name(1001), "checkpoint-1002.bin"} {
		if _, err := os.Stat(filepath.Join(s.Dir, n+".invalid")); err != nil {
			t.Errorf("%s not renamed aside: %v\n%s", n, err, log)
		}
	}
	if seq := write(t, s, "second"); seq != 1003 {
		t.Fatalf("numbered %d, want 1003, above every checkpoint file", seq)
	}
	restart(1003, "second")
	if seq := write(t, s, "third"); seq != 1004 {
		t.Fatalf("numbered %d, want 1004", seq)
	}
	restart(1004, "third")
	write(t, s, "fourth")
	// The leftover temporary file is gone, and of the files renamed aside
	// the newest is kept.
	want := []string{"checkpoint-0000000000001004.bin",
		"checkpoint-0000000000001005.bin", "checkpoint-0004.data", "checkpoint-1002.bin.invalid", "checkpoint-x.bin"}
	if got := files(t, s.Dir); !slices.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
}

// TestRestoredKept: the checkpoint the caller restored from stays until two
// newer ones are written, even when the newest files decode badly for the
// caller (Older) and older valid ones are there.
func TestRestoredKept(t *testing.T) {
	s, _ := newStore(t)
	for i := range 4 {
		write(t, s, fmt.Sprint("state ", i+1))
	}
	s = &Store{Dir: s.Dir, Logger: s.Logger}
	seq, _, err := s.Latest()
	if err != nil || seq != 4 {
		t.Fatalf("latest: %d %v", seq, err)
	}
	// The caller cannot decode 4; 3 restores.
	if seq, data, err := s.Older(4); err != nil || seq != 3 || string(data) != "state 3" {
		t.Fatalf("older: %d %q %v", seq, data, err)
	}
	if seq := write(t, s, "state 5"); seq != 5 {
		t.Fatalf("numbered %d, want 5", seq)
	}
	want := []string{name(3), name(4) + ".invalid", name(5)}
	if got := files(t, s.Dir); !slices.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
}

func TestLeftoverTempIgnored(t *testing.T) {
	s, _ := newStore(t)
	write(t, s, "a")
	// A crash mid-write leaves a temporary file behind.
	if err := os.WriteFile(filepath.Join(s.Dir, ".checkpoint-123.tmp"), []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	if seq, data, err := s.Latest(); err != nil || seq != 1 || string(data) != "a" {
		t.Fatalf("%d %q %v", seq, data, err)
	}
	// The next write removes it, so that crashes do not fill the disk.
	write(t, s, "b")
	if got, want := files(t, s.Dir), []string{name(1), name(2)}; !slices.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
}

// TestDamageDoesNotFillTheDisk: a newest checkpoint damaged at every
// restart, and a crash in the middle of each write, leave one file renamed
// aside and no temporary file, however often they happen.
func TestDamageDoesNotFillTheDisk(t *testing.T) {
	s, _ := newStore(t)
	write(t, s, "0")
	write(t, s, "1")
	for i := range 10 {
		seq := write(t, s, fmt.Sprint(i+2))
		if err := os.Truncate(filepath.Join(s.Dir, name(seq)), 5); err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(s.Dir, fmt.Sprintf(".checkpoint-%d.tmp", i))
		if err := os.WriteFile(tmp, bytes.Repeat([]byte{1}, 4096), 0o644); err != nil {
			t.Fatal(err)
		}
		// Every checkpoint since the second is damaged: the second restores.
		s = &Store{Dir: s.Dir, Logger: s.Logger}
		if got, data, err := s.Latest(); err != nil || got != 2 || string(data) != "1" {
			t.Fatalf("round %d: latest %d %q %v; want 2", i, got, data, err)
		}
	}
	write(t, s, "last")
	var invalid, tmps int
	for _, n := range files(t, s.Dir) {
		invalid += strings.Count(n, ".invalid")
		if strings.HasSuffix(n, ".tmp") {
			tmps++
		}
	}
	if invalid != 1 || tmps != 0 {
		t.Errorf("files %v: %d renamed aside, %d temporary; want 1 and 0", files(t, s.Dir), invalid, tmps)
	}
}

// TestWriteStreams: the content is written in pieces of any size, larger
// than the buffer too, and reads back whole; a content function that fails
// leaves no file behind and takes no number.
func TestWriteStreams(t *testing.T) {
	s, _ := newStore(t)
	var want []byte
	seq, err := s.Write(func(w io.Writer) error {
		for i := range 30 {
			piece := bytes.Repeat([]byte{byte(i)}, i*i*1500) // up to 1.3 MB
			want = append(want, piece...)
			if _, err := w.Write(piece); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || seq != 1 {
		t.Fatalf("write: %d %v", seq, err)
	}
	if got, data, err := s.Latest(); err != nil || got != 1 || !bytes.Equal(data, want) {
		t.Fatalf("latest: %d, %d bytes, %v; want 1, %d bytes", got, len(data), err, len(want))
	}
	failed := errors.New("snapshot failed")
	if _, err := s.Write(func(w io.Writer) error {
		_, _ = w.Write(bytes.Repeat([]byte{1}, 3<<20))
		return failed
	}); !errors.Is(err, failed) {
		t.Fatalf("failed content: %v", err)
	}
	if got, want := files(t, s.Dir), []string{name(1)}; !slices.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
	if seq := write(t, s, "next"); seq != 2 {
		t.Errorf("numbered %d after a failed write, want 2", seq)
	}
}

// TestNumbersDoNotWrap: a junk file numbered 2^64−1 is set aside and does
// not wrap the numbers around below the checkpoint restored, so the next
// restart restores the newest checkpoint.
func TestNumbersDoNotWrap(t *testing.T) {
	s, _ := newStore(t)
	write(t, s, "old")
	top := filepath.Join(s.Dir, "checkpoint-18446744073709551615.bin")
	if err := os.WriteFile(top, []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	s = &Store{Dir: s.Dir, Logger: s.Logger}
	if seq, data, err := s.Latest(); err != nil || seq != 1 || string(data) != "old" {
		t.Fatalf("latest: %d %q %v", seq, data, err)
	}
	if seq := write(t, s, "new"); seq != 2 {
		t.Fatalf("numbered %d, want 2", seq)
	}
	s = &Store{Dir: s.Dir, Logger: s.Logger}
	if seq, data, err := s.Latest(); err != nil || seq != 2 || string(data) != "new" {
		t.Fatalf("after a restart: %d %q %v; want 2 \"new\"", seq, data, err)
	}
}

// TestDirectoriesIgnored: a directory named like a checkpoint is no
// checkpoint file: it is neither counted nor removed, and checkpoints go on.
func TestDirectoriesIgnored(t *testing.T) {
	s, _ := newStore(t)
	dir := filepath.Join(s.Dir, name(0), "sub")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if seq := write(t, s, fmt.Sprint(i)); seq != uint64(i+1) {
			t.Fatalf("numbered %d, want %d", seq, i+1)
		}
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("the directory is gone: %v", err)
	}
}

// TestNewerVersionKept: a checkpoint with a good checksum but a version
// this program does not know (a newer one wrote it) is not damage: Latest
// fails with codec.ErrVersion rather than fall back past it, and the file
// stays as it is.
func TestNewerVersionKept(t *testing.T) {
	s, _ := newStore(t)
	write(t, s, "old")
	newer := codec.End(append(codec.Begin(nil, magic, deltaVersion+1), "newer state"...), 0)
	if err := os.WriteFile(filepath.Join(s.Dir, name(2)), newer, 0o644); err != nil {
		t.Fatal(err)
	}
	s = &Store{Dir: s.Dir, Logger: s.Logger}
	if seq, _, err := s.Latest(); !errors.Is(err, codec.ErrVersion) {
		t.Fatalf("latest: %d, %v; want codec.ErrVersion", seq, err)
	}
	if got, want := files(t, s.Dir), []string{name(1), name(2)}; !slices.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
}

// TestRestore: Restore falls back past the checkpoints whose content its
// caller cannot restore, setting them aside, but never past one written by
// another version of the content, and reports ErrNone when none is left.
func TestRestore(t *testing.T) {
	s, log := newStore(t)
	write(t, s, "good 1")
	write(t, s, "good 2")
	write(t, s, "bad")
	var tried []string
	restore := func(data []byte) error {
		tried = append(tried, string(data))
		if strings.HasPrefix(string(data), "good") {
			return nil
		}
		return fmt.Errorf("decode %q: %w", data, codec.ErrCorrupt)
	}
	seq, err := s.Restore(restore)
	if err != nil || seq != 2 || !slices.Equal(tried, []string{"bad", "good 2"}) {
		t.Errorf("Restore = %d, %v after %q; want 2, nil after bad, good 2", seq, err, tried)
	}
	if !strings.Contains(log.String(), "bad checkpoint; trying the previous one") {
		t.Errorf("the fallback is not logged:\n%s", log)
	}
	if want := []string{name(2), name(3) + invalid}; !slices.Equal(files(t, s.Dir), want) {
		t.Errorf("files %v, want %v", files(t, s.Dir), want)
	}

	// A content of another version stops the fallback and is kept.
	write(t, s, "newer")
	tried = nil
	seq, err = s.Restore(func(data []byte) error {
		tried = append(tried, string(data))
		return fmt.Errorf("state version 9: %w", codec.ErrVersion)
	})
	if !errors.Is(err, codec.ErrVersion) || !strings.Contains(err.Error(), "checkpoint 4 was written by another version") || !slices.Equal(tried, []string{"newer"}) {
		t.Errorf("Restore = %d, %v after %q; want checkpoint 4's codec.ErrVersion after newer", seq, err, tried)
	}
	if !slices.Contains(files(t, s.Dir), name(4)) {
		t.Errorf("checkpoint 4 set aside: %v", files(t, s.Dir))
	}

	// None restores: ErrNone.
	if _, err := s.Restore(func([]byte) error { return codec.ErrCorrupt }); !errors.Is(err, ErrNone) {
		t.Errorf("Restore of nothing = %v, want ErrNone", err)
	}
}
