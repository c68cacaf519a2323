package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"streamd/internal/membudget"
)

// MemoryLimit is the value of --max-memory: a size in bytes, or a share of
// the machine's memory. The zero MemoryLimit is no limit.
type MemoryLimit struct {
	Bytes   int64   // the limit, when Percent is 0
	Percent float64 // a share of the machine's memory, in (0, 100]
}

// DefaultMaxMemory is the default memory budget: half the machine's
// memory, leaving the rest to the runtime, the connections' buffers, the
// page cache and other processes.
var DefaultMaxMemory = MemoryLimit{Percent: 50}

func (m MemoryLimit) String() string {
	switch {
	case m.Percent > 0:
		return strconv.FormatFloat(m.Percent, 'g', -1, 64) + "%"
	case m.Bytes == 0:
		return "0"
	}
	return membudget.Size(m.Bytes)
}

// Set parses "50%", "4GiB", "512MiB", a number of bytes, or "0" for none.
func (m *MemoryLimit) Set(s string) error {
	if p, ok := strings.CutSuffix(strings.TrimSpace(s), "%"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(f > 0 && f <= 100) {
			return fmt.Errorf("memory share %q: want a percentage in (0, 100]", s)
		}
		*m = MemoryLimit{Percent: f}
		return nil
	}
	n, err := membudget.ParseSize(s)
	if err != nil {
		return err
	}
	*m = MemoryLimit{Bytes: n}
	return nil
}

// Resolve returns the limit in bytes, reading the machine's memory for a
// share of it.
func (m MemoryLimit) Resolve() (int64, error) {
	if m.Percent == 0 {
		return m.Bytes, nil
	}
	total, err := machineMemory()
	if err != nil {
		return 0, err
	}
	return int64(float64(total) * m.Percent / 100), nil
}

// machineMemory returns the memory the daemon may use: the machine's
// (MemTotal of /proc/meminfo), or its cgroup's limit if lower.
func machineMemory() (int64, error) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("read the machine's memory: %w", err)
	}
	total, err := memTotal(data)
	if err != nil {
		return 0, err
	}
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := os.ReadFile(f); err == nil {
			if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 {
				total = min(total, n)
			}
		}
	}
	return total, nil
}

// memTotal returns MemTotal of /proc/meminfo's contents, in bytes.
func memTotal(meminfo []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 2 && f[1] == "kB" {
			if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil && kb > 0 {
				return kb << 10, nil
			}
		}
		return 0, fmt.Errorf("read the machine's memory: bad line %q", sc.Text())
	}
	return 0, errors.New("read the machine's memory: no MemTotal in /proc/meminfo")
}

// memoryHeadroom is what the process may take besides the memory budget
// before the garbage collector works hard to stay within it: the runtime,
// the connections' buffers, queries' copies, and garbage not yet
// collected. See the README's memory section.
func memoryHeadroom(limit int64) int64 {
	return 64<<20 + limit/4
}
