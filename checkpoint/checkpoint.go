// Package checkpoint keeps a daemon's checkpoints in a directory: each one
// is written atomically (a temporary file, fsync, rename, fsync of the
// directory) and carries a format version and a CRC-32C of its content.
// Latest returns the newest valid one; a corrupt or truncated checkpoint is
// reported and the previous one used. Lock locks the directory for one
// process at a time.
//
// A checkpoint's content is written as a stream: the caller's content
// function writes it to the file through a buffer as it makes it, and the
// checksum is computed on the way and written after it, so a checkpoint is
// never held whole in memory to be written. The file's layout is the
// envelope of streamd/internal/codec, magic "CKPT", version 1: magic,
// version, content, then the CRC-32C (Castagnoli) of all that precedes it,
// little-endian.
//
// Numbering: a new checkpoint is numbered above every checkpoint file in
// the directory, valid or not, renamed aside or not, so the newest valid
// checkpoint is always the last one written. A file renamed aside numbered
// 2^64−1 (junk, never read again) does not count, so that the numbers do
// not wrap around; one that is not set aside (it cannot be read) leaves no
// number above it, and Write fails, naming it. Directories are not
// checkpoint files, whatever their names.
//
// Retention: after each write the store keeps the newest two checkpoints it
// knows to be valid — those it wrote, and the one Latest or Older returned
// last, which its caller restored from — and removes the checkpoint files
// numbered below both. A checkpoint restored from thus stays until two
// newer ones are on disk, and a file that is not a valid checkpoint never
// takes the place of one.
//
// Invalid checkpoints: a checkpoint file that Latest or Older finds
// corrupt, truncated or of another version, and one whose content its
// caller could not decode (the seq it passes to Older), is renamed aside to
// its name with ".invalid" appended (checkpoint-0000000000000042.bin.invalid)
// and logged. The store never reads or counts as retained a renamed file
// again. It keeps the newest one for the operator to inspect and removes
// older ones as it writes, so that checkpoints damaged again and again do
// not fill the disk. A file that cannot be read at all (a permission or I/O
// error), and one with a good checksum but a version this program does not
// know (written by a newer one), is no damage: Latest and Older fail with
// its error rather than fall back past it, since it may hold newer state.
// No checkpoint file is removed before two are known to be valid.
//
// Temporary files: a writer killed in the middle of a checkpoint leaves its
// temporary file (.checkpoint-*.tmp) behind. Write removes such files before
// it writes, so that they cannot fill the disk across crashes: the
// directory must have one writer at a time (see Lock).
//
// Scheduling: a Scheduler decides when a daemon checkpoints — every
// interval, and when asked — and keeps the outcome: a failed checkpoint
// degrades the daemon's health until one succeeds. What a checkpoint holds
// is the daemon's business.
package checkpoint

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"streamd/internal/codec"
)

// ErrNone is returned by Latest when the directory holds no valid
// checkpoint.
var ErrNone = errors.New("no checkpoint")

const (
	magic   = "CKPT"
	version = 1
	prefix  = "checkpoint-"
	suffix  = ".bin"
	invalid = ".invalid"
	keep    = 2

	// keepInvalid is how many files renamed aside are kept.
	keepInvalid = 1

	// The names of temporary files, as for os.CreateTemp.
	tmpPattern = ".checkpoint-*.tmp"

	// bufferSize is the size of the writes to a checkpoint file.
	bufferSize = 1 << 20
)

// Store is a directory of checkpoints. Its methods are not safe for
// concurrent use.
type Store struct {
	Dir    string
	Logger *slog.Logger

	last uint64   // the highest number written
	good []uint64 // checkpoints known to be valid, oldest first
}

func (s *Store) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

func name(seq uint64) string { return fmt.Sprintf("%s%016d%s", prefix, seq, suffix) }

// Write writes a new checkpoint, durably, numbered above every checkpoint
// file in the directory, and returns its number. content writes the
// checkpoint's content to w, which is buffered and computes the checksum on
// the way: the content goes to disk as content makes it. Write then syncs
// the file, renames it into place and syncs the directory, and removes the
// checkpoints older than the newest two known to be valid (see the package
// comment). If content fails, nothing is left behind and its error is
// returned.
func (s *Store) Write(content func(w io.Writer) error) (uint64, error) {
	files, err := s.list()
	if err != nil {
		return 0, err
	}
	// Above every checkpoint file; but a file set aside at the top of the
	// range, which is never read again, must not wrap the numbers around
	// below the checkpoint restored: then above every other file.
	top := s.last
	for _, f := range files {
		if f.seq < math.MaxUint64 || !f.invalid {
			top = max(top, f.seq)
			break // files is newest first
		}
	}
	if top == math.MaxUint64 {
		return 0, fmt.Errorf("write checkpoint: no number above %s: remove it", name(top))
	}
	seq := top + 1
	s.removeTemps()
	tmp, err := os.CreateTemp(s.Dir, tmpPattern)
	if err != nil {
		return 0, fmt.Errorf("write checkpoint: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if err := writeFile(tmp, content); err != nil {
		tmp.Close()
		return 0, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return 0, fmt.Errorf("sync checkpoint: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return 0, fmt.Errorf("close checkpoint: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(s.Dir, name(seq))); err != nil {
		return 0, fmt.Errorf("rename checkpoint: %w", err)
	}
	if err := syncDir(s.Dir); err != nil {
		return 0, err
	}
	s.last = seq
	s.good = append(s.good, seq)
	if err := s.prune(append(files, file{seq: seq, name: name(seq)})); err != nil {
		// The checkpoint is on disk: an old file left behind is no failure
		// of it. The next write tries again.
		s.logger().Warn("remove old checkpoints", "err", err)
	}
	return seq, nil
}

// removeTemps removes the temporary files of writes that did not finish:
// with one writer, those of a writer that was killed.
func (s *Store) removeTemps() {
	tmps, err := filepath.Glob(filepath.Join(s.Dir, tmpPattern))
	if err != nil {
		return // the pattern is well-formed
	}
	for _, name := range tmps {
		if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.logger().Warn("remove a checkpoint's leftover temporary file", "file", filepath.Base(name), "err", err)
		}
	}
}

// writeFile writes the envelope of a checkpoint with the content that
// content writes to f: the header, the content through a buffer that
// computes the checksum, then the checksum.
func writeFile(f *os.File, content func(w io.Writer) error) error {
	table := crc32.MakeTable(crc32.Castagnoli)
	sum := crc32.New(table)
	w := bufio.NewWriterSize(io.MultiWriter(f, sum), bufferSize)
	if _, err := w.Write(codec.Begin(nil, magic, version)); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	if err := content(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	if _, err := f.Write(binary.LittleEndian.AppendUint32(nil, sum.Sum32())); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	return nil
}

// prune keeps the newest checkpoints known to be valid and removes the
// checkpoint files numbered below them, and the files renamed aside but
// the newest keepInvalid; files is the directory's, newest first.
func (s *Store) prune(files []file) error {
	slices.Sort(s.good)
	s.good = s.good[max(0, len(s.good)-keep):]
	oldest := s.good[0]
	if len(s.good) < keep {
		oldest = 0 // no file but those set aside goes until keep are known valid
	}
	invalids := 0
	for _, f := range files {
		if f.invalid {
			if invalids++; invalids <= keepInvalid {
				continue
			}
		} else if f.seq >= oldest {
			continue
		}
		if err := os.Remove(filepath.Join(s.Dir, f.name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove old checkpoint: %w", err)
		}
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync checkpoint dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync checkpoint dir: %w", err)
	}
	return nil
}

// A file is a checkpoint file in the directory.
type file struct {
	seq     uint64
	name    string
	invalid bool // renamed aside
}

// list returns the checkpoint files, those renamed aside included, newest
// first.
func (s *Store) list() ([]file, error) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil, fmt.Errorf("list checkpoints: %w", err)
	}
	var files []file
	for _, e := range entries {
		if e.IsDir() {
			continue // not a checkpoint file, whatever its name
		}
		n, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		n, bad := strings.CutSuffix(n, invalid)
		n, ok = strings.CutSuffix(n, suffix)
		if !ok {
			continue
		}
		if seq, err := strconv.ParseUint(n, 10, 64); err == nil {
			files = append(files, file{seq: seq, name: e.Name(), invalid: bad})
		}
	}
	slices.SortFunc(files, func(a, b file) int { return cmp.Compare(b.seq, a.seq) })
	return files, nil
}

// Latest returns the newest checkpoint whose envelope is intact, with its
// sequence number, and remembers it as the one in use: retention keeps it
// until two newer ones are written. Each newer checkpoint file that is
// corrupt, truncated or of another version is logged and renamed aside. It
// returns ErrNone if none is valid.
func (s *Store) Latest() (uint64, []byte, error) {
	return s.newest(0, false)
}

// Older returns the newest valid checkpoint older than seq, for a caller
// whose decoding of checkpoint seq failed: checkpoint seq is renamed aside
// as invalid, and the one returned is the one in use, as with Latest.
func (s *Store) Older(seq uint64) (uint64, []byte, error) {
	s.good = slices.DeleteFunc(s.good, func(q uint64) bool { return q == seq })
	files, err := s.list()
	if err != nil {
		return 0, nil, err
	}
	for _, f := range files {
		if f.seq == seq && !f.invalid {
			s.setAside(f, errors.New("its content does not decode"))
		}
	}
	return s.newest(seq, true)
}

// Restore restores from the newest checkpoint whose content restore
// accepts. It calls restore with the content of the newest valid
// checkpoint (Latest) and, while restore fails, logs the failure and calls
// it with the next older one (Older, which sets the one that failed
// aside). It stops at a content that restore fails with an error wrapping
// codec.ErrVersion, and returns that error: the checkpoint is not damaged
// but written by another version of the program, and falling back past it
// would serve older state. It returns the number of the checkpoint
// restored from, ErrNone if no checkpoint was restored from, or the error
// of a checkpoint that cannot be read.
func (s *Store) Restore(restore func(content []byte) error) (uint64, error) {
	seq, data, err := s.Latest()
	for err == nil {
		rerr := restore(data)
		if rerr == nil {
			return seq, nil
		}
		if errors.Is(rerr, codec.ErrVersion) {
			return 0, fmt.Errorf("checkpoint %d was written by another version of streamd (run that version, or move the data dir aside): %w", seq, rerr)
		}
		s.logger().Error("bad checkpoint; trying the previous one", "seq", seq, "err", rerr)
		seq, data, err = s.Older(seq)
	}
	return 0, err
}

// newest returns the newest valid checkpoint, below seq if below is set.
func (s *Store) newest(seq uint64, below bool) (uint64, []byte, error) {
	files, err := s.list()
	if err != nil {
		return 0, nil, err
	}
	for _, f := range files {
		if f.invalid || below && f.seq >= seq {
			continue
		}
		data, err := s.read(f)
		if err == nil {
			if !slices.Contains(s.good, f.seq) {
				s.good = append(s.good, f.seq)
				slices.Sort(s.good)
			}
			return f.seq, data, nil
		}
		if errors.Is(err, codec.ErrCorrupt) && !errors.Is(err, codec.ErrVersion) {
			s.setAside(f, err)
			continue
		}
		// Unreadable (a permission or I/O error), or written by another
		// version: it may hold newer state than any older one, so the
		// store neither falls back past it nor sets it aside.
		return 0, nil, err
	}
	return 0, nil, ErrNone
}

// setAside renames an invalid checkpoint file aside, with why in the log.
func (s *Store) setAside(f file, why error) {
	aside := f.name + invalid
	if err := os.Rename(filepath.Join(s.Dir, f.name), filepath.Join(s.Dir, aside)); err != nil {
		s.logger().Error("skipping bad checkpoint; trying the previous one", "file", f.name, "err", why, "rename_err", err)
		return
	}
	s.logger().Error("skipping bad checkpoint, renamed aside; trying the previous one", "file", f.name, "renamed", aside, "err", why)
}

func (s *Store) read(f file) ([]byte, error) {
	raw, err := os.ReadFile(filepath.Join(s.Dir, f.name))
	if err != nil {
		return nil, fmt.Errorf("read checkpoint: %w", err)
	}
	data, err := codec.Open(raw, magic, version)
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", f.name, err)
	}
	return data, nil
}
