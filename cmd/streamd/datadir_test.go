package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	pb "streamd/api/proto/streamd/v1"
	"streamd/checkpoint"
	"streamd/synth"
)

// copyDataDir copies dir's files to a new directory: what a kill -9 of the
// daemon leaves on disk, since every checkpoint is fsynced before a
// durable Push returns.
func copyDataDir(t *testing.T, dir string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func stats(t *testing.T, c pb.StreamdClient, stream string) *pb.StatsResponse {
	t.Helper()
	st, err := c.Stats(context.Background(), &pb.StatsRequest{Stream: stream})
	if err != nil {
		t.Fatalf("stream %s: %v", stream, err)
	}
	return st
}

// TestJunkCheckpoints: checkpoint files numbered above the valid one that
// do not read back (junk, and a truncated copy of the valid one) neither
// hide the valid one nor make the daemon delete it or the checkpoints it
// writes next: after several checkpoints, the data dir as a kill -9 leaves
// it restores every value, and so does one more restart after that.
func TestJunkCheckpoints(t *testing.T) {
	dir := t.TempDir()
	d, c := openOn(t, dir, io.Discard, nil)
	push(t, c, "a", []float64{1, 2, 3}, false)
	closeDaemon(t, d) // one valid checkpoint
	valid, _ := filepath.Glob(filepath.Join(dir, "checkpoint-*.bin"))
	if len(valid) != 1 {
		t.Fatalf("checkpoints: %v", valid)
	}
	raw, err := os.ReadFile(valid[0])
	if err != nil {
		t.Fatal(err)
	}
	junk := map[int][]byte{1000: []byte("junk"), 1001: raw[:len(raw)-1]}
	for seq, b := range junk {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("checkpoint-%016d.bin", seq)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	d, c = openOn(t, dir, io.Discard, nil)
	if st := stats(t, c, "a"); st.Count != 3 {
		t.Fatalf("restored %v, want 3 values", st)
	}
	for i := range 3 {
		push(t, c, "a", []float64{float64(4 + i)}, true) // one checkpoint each
	}
	crashed := copyDataDir(t, dir)
	closeDaemon(t, d)

	for range 2 {
		d, c = openOn(t, crashed, io.Discard, nil)
		if st := stats(t, c, "a"); st.Count != 6 || st.Max != 6 {
			t.Fatalf("after a crash: %v, want 6 values up to 6", st)
		}
		crashed = copyDataDir(t, crashed)
		closeDaemon(t, d)
	}
}

// TestDataDirLocked: a second daemon on a data dir in use refuses to
// start, saying which process holds it, and writes nothing there; once
// the first one is gone, even by kill -9, the dir opens and restores.
func TestDataDirLocked(t *testing.T) {
	dir := t.TempDir()
	d, c := openOn(t, dir, io.Discard, nil)
	push(t, c, "a", []float64{1, 2}, true)
	before, _ := filepath.Glob(filepath.Join(dir, "checkpoint-*"))

	second := func() error {
		cfg := d.Config
		cfg.GRPCAddr = "127.0.0.1:0"
		d2 := NewDaemon(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		err := d2.Open(context.Background())
		if err == nil {
			closeDaemon(t, d2)
		}
		return err
	}
	err := second()
	if !errors.Is(err, checkpoint.ErrLocked) || !strings.Contains(err.Error(), "process "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second daemon on the dir: %v; want it locked by process %d", err, os.Getpid())
	}
	if after, _ := filepath.Glob(filepath.Join(dir, "checkpoint-*")); !slices.Equal(before, after) {
		t.Errorf("checkpoints %v became %v", before, after)
	}
	closeDaemon(t, d)
	d, c = openOn(t, dir, io.Discard, nil) // Close released the lock
	if st := stats(t, c, "a"); st.Count != 2 {
		t.Fatalf("restored %v, want 2 values", st)
	}
	closeDaemon(t, d)

	if testing.Short() {
		return // what follows builds and runs the daemon
	}
	// A daemon process holds the lock until it dies, however it dies.
	bin := buildStreamd(t)
	cmd := exec.Command(bin, "serve", "--grpc-addr", "127.0.0.1:0", "--tcp-addr", "", "--metrics-addr", "",
		"--data-dir", dir, "--sorter", "cpu", "--checkpoint-interval", "0")
	startBinary(t, cmd)
	err = second()
	if !errors.Is(err, checkpoint.ErrLocked) || !strings.Contains(err.Error(), "process "+strconv.Itoa(cmd.Process.Pid)) {
		t.Fatalf("daemon on a dir another daemon serves: %v; want it locked by process %d", err, cmd.Process.Pid)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	d, c = openOn(t, dir, io.Discard, nil)
	defer closeDaemon(t, d)
	if st := stats(t, c, "a"); st.Count != 2 {
		t.Fatalf("restored %v, want 2 values", st)
	}
}

// TestRestoreStateVersion1 restores a checkpoint of the state's version 1,
// built whole in memory with the snapshot length-prefixed
// (testdata/checkpoint-sdst-v1.bin): stream "old" (ε 0.001, W 4096, N
// 50000) took the 5000 values of synth LogNormal seed 5, and the
// checkpoint holds the offsets values/0: 42 and values/3: 7. Every value
// and offset comes back, the answers are within ε, and the next checkpoint
// is of the new version (a delta following the old one) and restores the
// same.
func TestRestoreStateVersion1(t *testing.T) {
	raw, err := os.ReadFile("testdata/checkpoint-sdst-v1.bin")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw[5:10], []byte("SDST\x01")) {
		t.Fatalf("the fixture is not of state version 1: % x", raw[:10])
	}
	x, _ := synth.Generate(synth.Spec{Dist: synth.LogNormal, Seed: 5}, 5000)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "checkpoint-0000000000000001.bin"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	wantOff := offsets{{Topic: "values", Partition: 0}: 42, {Topic: "values", Partition: 3}: 7}
	for range 2 {
		d, c := openOn(t, dir, io.Discard, nil)
		var off offsets
		_ = d.handoff.Offsets(func(held offsets) error { off = maps.Clone(held); return nil })
		if !maps.Equal(off, wantOff) {
			t.Errorf("offsets %v, want %v", off, wantOff)
		}
		if st := stats(t, c, "old"); st.Count != 5000 {
			t.Fatalf("restored %v, want 5000 values", st)
		}
		checkAnswers(t, c, "old", round32(x), 0.001, 0)
		checkAnswers(t, c, "old", round32(x), 0.001, 1000)
		closeDaemon(t, d) // writes a checkpoint of the new version
	}
	files, _ := filepath.Glob(filepath.Join(dir, "checkpoint-*.bin"))
	raw, err = os.ReadFile(files[len(files)-1])
	if err == nil && len(raw) > 18 && raw[4] == 2 {
		raw = raw[8:] // a delta: the number of the checkpoint it follows comes first
	}
	if err != nil || !bytes.Equal(raw[5:10], []byte("SDST\x02")) {
		t.Errorf("the newest checkpoint %v is not of state version 2: %v", files, err)
	}
}
