package soak

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// ckptFile is a checkpoint file in the data dir.
type ckptFile struct {
	seq uint64
	ino uint64
}

// listCheckpoints returns the checkpoint files of dir, newest first.
func listCheckpoints(dir string) ([]ckptFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list data dir: %w", err)
	}
	var out []ckptFile
	for _, e := range entries {
		n, ok := strings.CutPrefix(e.Name(), "checkpoint-")
		if !ok {
			continue
		}
		if n, ok = strings.CutSuffix(n, ".bin"); !ok {
			continue
		}
		seq, err := strconv.ParseUint(n, 10, 64)
		if err != nil {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		var ino uint64
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			ino = st.Ino
		}
		out = append(out, ckptFile{seq, ino})
	}
	slices.SortFunc(out, func(a, b ckptFile) int { return cmp.Compare(b.seq, a.seq) })
	return out, nil
}

func ckptPath(dir string, seq uint64) string {
	return filepath.Join(dir, fmt.Sprintf("checkpoint-%016d.bin", seq))
}

// damage truncates the file or flips one of its bytes, in place (the
// inode stays, so a rewrite by the daemon is told apart); it says what it
// did.
func damage(path string, rng *rand.Rand) (string, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return "", fmt.Errorf("damage checkpoint: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("damage checkpoint: %w", err)
	}
	size := info.Size()
	switch rng.IntN(3) {
	case 0:
		n := rng.Int64N(max(size, 1))
		if err := f.Truncate(n); err != nil {
			return "", fmt.Errorf("damage checkpoint: %w", err)
		}
		return fmt.Sprintf("truncated from %d to %d bytes", size, n), nil
	case 1:
		if err := f.Truncate(0); err != nil {
			return "", fmt.Errorf("damage checkpoint: %w", err)
		}
		return fmt.Sprintf("emptied (%d bytes)", size), nil
	default:
		off := rng.Int64N(max(size, 1))
		b := make([]byte, 1)
		if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("damage checkpoint: %w", err)
		}
		b[0] ^= byte(1 << rng.IntN(8))
		if _, err := f.WriteAt(b, off); err != nil {
			return "", fmt.Errorf("damage checkpoint: %w", err)
		}
		return fmt.Sprintf("flipped a bit of byte %d of %d", off, size), nil
	}
}

// mountTmpfs mounts a tmpfs of size bytes on dir; it returns why not when
// it cannot.
func mountTmpfs(dir string, size int64) error {
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "soak", dir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("mount -t tmpfs: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

func unmount(dir string) error {
	if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
		return fmt.Errorf("umount %s: %v: %s", dir, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// fill appends to path until the file system is full.
func fill(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("fill: %w", err)
	}
	defer f.Close()
	buf := make([]byte, 1<<16)
	for size := len(buf); size > 0; size /= 16 {
		for {
			if _, err := f.Write(buf[:size]); err != nil {
				if errors.Is(err, syscall.ENOSPC) {
					break
				}
				return fmt.Errorf("fill: %w", err)
			}
		}
	}
	return nil
}
