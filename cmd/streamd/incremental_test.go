package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	pb "streamd/api/proto/streamd/v1"
)

// checkpointFiles returns the data dir's checkpoint files, oldest first,
// with whether each is a delta.
func checkpointFiles(t *testing.T, dir string) ([]string, []bool) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "checkpoint-*.bin"))
	if err != nil {
		t.Fatal(err)
	}
	var delta []bool
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		delta = append(delta, len(raw) > 4 && raw[4] == 2)
	}
	return files, delta
}

// TestIncrementalCheckpoints: after a base checkpoint of many streams, a
// durable Push writes a delta of the one stream it changed, small next to
// the base; a kill -9 then restores the base and every delta — each value
// acknowledged, the stream deleted gone — and with the newest delta
// damaged, the restore stops at the checkpoint before it, saying so.
func TestIncrementalCheckpoints(t *testing.T) {
	dir := t.TempDir()
	d, c := openOn(t, dir, io.Discard, nil)
	const n = 50
	for i := range n {
		push(t, c, fmt.Sprint("s", i), []float64{1, 2, 3, float64(i)}, false)
	}
	push(t, c, "s0", []float64{4}, true) // the base
	push(t, c, "s1", []float64{5}, true) // a delta
	if _, err := c.DeleteStream(context.Background(), &pb.DeleteStreamRequest{Stream: "s2"}); err != nil {
		t.Fatal(err)
	}
	push(t, c, "s3", []float64{6}, true) // a delta with the deletion
	files, delta := checkpointFiles(t, dir)
	if len(files) != 3 || delta[0] || !delta[1] || !delta[2] {
		t.Fatalf("checkpoints %v, deltas %v; want a base and two deltas", files, delta)
	}
	base, _ := os.Stat(files[0])
	last, _ := os.Stat(files[2])
	if last.Size()*10 > base.Size() {
		t.Errorf("a delta of one stream takes %d bytes, the base of %d streams %d", last.Size(), n, base.Size())
	}
	crashed := copyDataDir(t, dir)
	closeDaemon(t, d)

	check := func(c pb.StreamdClient, deleted bool, s3 uint64) {
		t.Helper()
		for i := range n {
			name := fmt.Sprint("s", i)
			want := uint64(4)
			switch i {
			case 0:
				want = 5
			case 1:
				want = 5
			case 2:
				l, err := c.ListStreams(context.Background(), &pb.ListStreamsRequest{})
				if err != nil || slices.Contains(l.Streams, name) != !deleted {
					t.Errorf("streams %v, %v; want %s deleted: %v", l.GetStreams(), err, name, deleted)
				}
				if deleted {
					continue
				}
			case 3:
				want = s3
			}
			if st := stats(t, c, name); st.Count != want {
				t.Errorf("stream %s: %d values, want %d", name, st.Count, want)
			}
		}
	}
	damaged := copyDataDir(t, crashed)
	d, c = openOn(t, crashed, io.Discard, nil)
	check(c, true, 5)
	closeDaemon(t, d)

	// The newest delta damaged: the state of the delta before it, which
	// had not deleted s2 yet.
	path := filepath.Join(damaged, filepath.Base(files[2]))
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 0xff
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	d, c = openOn(t, damaged, &log, nil)
	check(c, false, 4)
	if !strings.Contains(log.String(), "bad checkpoint") || !strings.Contains(log.String(), filepath.Base(path)) {
		t.Errorf("the damaged delta is not logged:\n%s", log.String())
	}
	// The next checkpoint follows the point restored, and restores.
	push(t, c, "s3", []float64{7}, true)
	again := copyDataDir(t, damaged)
	closeDaemon(t, d)
	d, c = openOn(t, again, io.Discard, nil)
	defer closeDaemon(t, d)
	check(c, false, 5)
}

// TestChainBoundedByStreams: deltas whose bytes stay small next to the
// base (a value added to streams that hold many) but that hold more than
// half the base's streams in all make the next checkpoint a base, since
// a restore rebuilds every stream of every delta; the chain restores.
func TestChainBoundedByStreams(t *testing.T) {
	dir := t.TempDir()
	d, c := openOn(t, dir, io.Discard, nil)
	const n = 40
	vals := make([]float64, 3000)
	for i := range vals {
		vals[i] = float64(i % 997)
	}
	for i := range n {
		push(t, c, fmt.Sprint("s", i), vals, false)
	}
	push(t, c, "s0", []float64{1}, true) // the base
	touch := func(from, to int) {
		for i := from; i < to; i++ {
			push(t, c, fmt.Sprint("s", i), []float64{2}, false)
		}
		push(t, c, fmt.Sprint("s", to), []float64{3}, true)
	}
	touch(0, 15) // a delta of 16 streams: 16 ≤ 20
	touch(0, 10) // a delta of 11: 27 > 20 in all
	touch(0, 5)  // so a base
	files, delta := checkpointFiles(t, dir)
	if want := []bool{false, true, true, false}; !slices.Equal(delta, want) {
		t.Fatalf("checkpoints %v, deltas %v; want %v", files, delta, want)
	}
	base, _ := os.Stat(files[0])
	for _, f := range files[1:3] {
		if st, _ := os.Stat(f); st.Size()*5 > base.Size() {
			t.Errorf("delta %s takes %d bytes, the base %d", filepath.Base(f), st.Size(), base.Size())
		}
	}
	crashed := copyDataDir(t, dir)
	closeDaemon(t, d)
	d, c = openOn(t, crashed, io.Discard, nil)
	defer closeDaemon(t, d)
	for i := range n {
		want := uint64(len(vals)) // and one value more for each touch
		switch {
		case i == 0:
			want += 4
		case i <= 5:
			want += 3
		case i <= 10:
			want += 2
		case i <= 15:
			want++
		}
		if st := stats(t, c, fmt.Sprint("s", i)); st.Count != want {
			t.Errorf("stream s%d: %d values, want %d", i, st.Count, want)
		}
	}
}
