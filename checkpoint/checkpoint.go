// Package checkpoint keeps a daemon's checkpoints in a directory: each one
// is written atomically (a temporary file, fsync, rename, fsync of the
// directory), carries a format version and a CRC-32C of its content, and
// the newest two are kept. Latest returns the newest valid one; a corrupt or
// truncated checkpoint is reported and the previous one used.
package checkpoint

import (
	"errors"
	"fmt"
	"log/slog"
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
	keep    = 2
)

// Store is a directory of checkpoints. Its methods are not safe for
// concurrent use.
type Store struct {
	Dir    string
	Logger *slog.Logger
}

func (s *Store) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

func name(seq uint64) string { return fmt.Sprintf("%s%016d%s", prefix, seq, suffix) }

// Write stores data as checkpoint seq, durably, and removes all but the
// newest two checkpoints. seq must grow from one checkpoint to the next.
func (s *Store) Write(seq uint64, data []byte) error {
	buf := codec.Begin(make([]byte, 0, len(data)+9), magic, version)
	buf = append(buf, data...)
	buf = codec.End(buf, 0)

	tmp, err := os.CreateTemp(s.Dir, ".checkpoint-*.tmp")
	if err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if _, err := tmp.Write(buf); err != nil {
		tmp.Close()
		return fmt.Errorf("write checkpoint: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sync checkpoint: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close checkpoint: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(s.Dir, name(seq))); err != nil {
		return fmt.Errorf("rename checkpoint: %w", err)
	}
	if err := syncDir(s.Dir); err != nil {
		return err
	}
	seqs, err := s.list()
	if err != nil {
		return err
	}
	for _, old := range seqs[min(keep, len(seqs)):] {
		if err := os.Remove(filepath.Join(s.Dir, name(old))); err != nil {
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

// list returns the sequence numbers of the checkpoint files, newest first.
func (s *Store) list() ([]uint64, error) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil, fmt.Errorf("list checkpoints: %w", err)
	}
	var seqs []uint64
	for _, e := range entries {
		n, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		n, ok = strings.CutSuffix(n, suffix)
		if !ok {
			continue
		}
		if seq, err := strconv.ParseUint(n, 10, 64); err == nil {
			seqs = append(seqs, seq)
		}
	}
	slices.Sort(seqs)
	slices.Reverse(seqs)
	return seqs, nil
}

// Latest returns the newest checkpoint whose envelope is intact, with its
// sequence number. A checkpoint that is corrupt, truncated or of another
// version is logged and skipped. It returns ErrNone if none is valid.
func (s *Store) Latest() (uint64, []byte, error) {
	seqs, err := s.list()
	if err != nil {
		return 0, nil, err
	}
	for _, seq := range seqs {
		data, err := s.read(seq)
		if err == nil {
			return seq, data, nil
		}
		s.logger().Error("skipping bad checkpoint; trying the previous one", "file", name(seq), "err", err)
	}
	return 0, nil, ErrNone
}

// Older returns the newest valid checkpoint older than seq, for a caller
// whose decoding of checkpoint seq failed.
func (s *Store) Older(seq uint64) (uint64, []byte, error) {
	seqs, err := s.list()
	if err != nil {
		return 0, nil, err
	}
	for _, q := range seqs {
		if q >= seq {
			continue
		}
		data, err := s.read(q)
		if err == nil {
			return q, data, nil
		}
		s.logger().Error("skipping bad checkpoint; trying the previous one", "file", name(q), "err", err)
	}
	return 0, nil, ErrNone
}

func (s *Store) read(seq uint64) ([]byte, error) {
	raw, err := os.ReadFile(filepath.Join(s.Dir, name(seq)))
	if err != nil {
		return nil, fmt.Errorf("read checkpoint: %w", err)
	}
	data, err := codec.Open(raw, magic, version)
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", name(seq), err)
	}
	return data, nil
}
