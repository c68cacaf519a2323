package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"streamd/feed"
	"streamd/gpusort"
	"streamd/summary"
)

// TestDeltaHoldsTheValuesAdded: a delta holds a value stream's sliding
// window as the values added since the checkpoint before, so its size
// follows what was added, not what the streams hold; and a chain of such
// deltas restores exactly what a snapshot at its end does, every stream
// encoding byte for byte alike, across streams that grow, whose rings
// wrap, of float64 values, deleted and made again under their names, and
// deltas whose checkpoint failed. Restoring a delta of such windows after
// a chain that lacks the delta before it fails with codec.ErrCorrupt and
// changes nothing.
func TestDeltaHoldsTheValuesAdded(t *testing.T) {
	ctx := context.Background()
	p := open(t, Config{Defaults: summary.Config{Epsilon: 0.01, WindowSize: 256, SlidingWindow: 5000}, Sorter: gpusort.NewCPU(1)})
	rnd := rand.New(rand.NewPCG(3, 14))
	vals := func(n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = float64(rnd.IntN(100000)) / 8
		}
		return out
	}
	accept := func(name string, v []float64) {
		t.Helper()
		if err := acceptValues(ctx, p, feed.Local, name, v, p.Now()); err != nil {
			t.Fatal(err)
		}
	}
	const thin = 200
	for i := range thin {
		accept(fmt.Sprint("thin", i), vals(20+i))
	}
	if _, err := p.Create("wide", summary.Config{Float64: true}); err != nil {
		t.Fatal(err)
	}
	accept("wide", vals(4000))
	accept("fat", vals(12000))
	quiesce(t, p)
	base, _ := save(t, p, false, true)

	var deltas [][]byte
	held := func() int64 {
		var n int64
		for _, s := range p.all() {
			n += s.recent.RawLen()
		}
		return n
	}
	for round := range 8 {
		added := 0
		for i := range thin {
			if rnd.IntN(3) > 0 {
				k := 1 + rnd.IntN(10)
				accept(fmt.Sprint("thin", i), vals(k))
				added += k
			}
		}
		accept("wide", vals(30))
		accept("fat", vals(3000+round*1000)) // its ring wraps
		added += 30 + 3000 + round*1000
		switch round {
		case 2:
			if err := p.Delete("thin7"); err != nil {
				t.Fatal(err)
			}
			accept("thin7", vals(3)) // made again: whole in the delta
		case 4:
			quiesce(t, p)
			save(t, p, true, false) // its checkpoint failed: the next holds its values too
			accept("thin9", vals(5))
		}
		quiesce(t, p)
		d, names := save(t, p, true, true)
		deltas = append(deltas, d)
		// Each stream's record, its summaries and parts whole, is a few
		// hundred bytes; the values added are 4 bytes each (8 for wide).
		if most := int64(len(names))*800 + 8*int64(added) + 1024; int64(len(d)) > most {
			t.Errorf("round %d: delta of %d bytes for %d streams changed and %d values added, want at most %d (the streams hold %d values)", round, len(d), len(names), added, most, held())
		}
	}
	// One value more to each thin stream: the delta holds their records
	// and those values, a small part of what the streams hold.
	for i := range thin {
		accept(fmt.Sprint("thin", i), vals(1))
	}
	quiesce(t, p)
	last, _ := save(t, p, true, true)
	deltas = append(deltas, last)
	full, _ := save(t, p, false, false)
	t.Logf("a delta of one value to each of %d thin streams: %d bytes; the whole state: %d bytes, %d values", thin, len(last), len(full), held())
	if 4*len(last) > len(full) {
		t.Errorf("the delta takes %d bytes, the whole state %d", len(last), len(full))
	}

	q := restoreChain(t, base)
	for i, d := range deltas {
		if i == 3 {
			// Skipping a delta: the next one's windows follow positions
			// the chain restored has not reached.
			mustRefuse(t, fmt.Sprintf("delta %d after %d", i+2, i), q, deltas[i+1])
		}
		if err := q.RestoreDelta(d); err != nil {
			t.Fatalf("delta %d: %v", i+1, err)
		}
	}
	sameAsSnapshot(t, "the chain", q, full)
	// The restored pipeline goes on: values added after it, and the
	// delta after its chain, hold as they do in the original.
	if err := q.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer q.Close(ctx)
	more := vals(50)
	for _, pp := range []*Pipeline{p, q} {
		if err := acceptValues(ctx, pp, feed.Local, "thin3", more, time.Unix(0, 0)); err != nil {
			t.Fatal(err)
		}
	}
	quiesce(t, p)
	quiesce(t, q)
	a, errA := mustStream(t, p, "thin3").Last(60)
	b, errB := mustStream(t, q, "thin3").Last(60)
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	va, _, _ := a.Quantile(0.5)
	vb, _, _ := b.Quantile(0.5)
	if va != vb {
		t.Errorf("thin3: the last 60 values' median %v, restored %v", va, vb)
	}
}

// FuzzRestoreDelta fuzzes RestoreDelta after a snapshot (checkRestoreDelta).
func FuzzRestoreDelta(f *testing.F) {
	base, delta := deltaFuzzSeeds(f)
	f.Add(delta)
	f.Fuzz(func(t *testing.T, data []byte) { checkRestoreDelta(t, base, data) })
}

// deltaFuzzSeeds returns a snapshot and a delta that follows it, to seed
// the fuzzers of RestoreDelta: the delta's sliding windows hold the values
// added since the snapshot, a ring filled past its capacity, a stream of a
// Kafka partition, one made again, and a new one.
func deltaFuzzSeeds(f *testing.F) (base, delta []byte) {
	ctx := context.Background()
	p, _ := New(Config{Defaults: summary.Config{Epsilon: 0.1, WindowSize: 8, SlidingWindow: 20}, Sorter: gpusort.NewCPU(1)})
	_ = acceptValues(ctx, p, feed.Local, "a", []float64{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5}, time.Time{})
	_ = acceptValues(ctx, p, feed.Local, "b", []float64{2, 7, 1}, time.Time{})
	_ = acceptValues(ctx, p, feed.Local, "c", []float64{1, 2}, time.Time{})
	_ = acceptValues(ctx, p, feed.Source{Topic: "t", Partition: 2}, "k", []float64{2, 7, 1, 8, 2, 8}, time.Time{})
	var b, d bytes.Buffer
	_, sv, err := p.SaveTo(&b, false)
	if err != nil {
		f.Fatal(err)
	}
	sv.Commit()
	_ = acceptValues(ctx, p, feed.Local, "a", []float64{8, 9, 7}, time.Time{})
	_ = acceptValues(ctx, p, feed.Local, "b", slices.Repeat([]float64{4, 5}, 15), time.Time{}) // past the ring
	_ = acceptValues(ctx, p, feed.Source{Topic: "t", Partition: 2}, "k", []float64{1}, time.Time{})
	_ = p.Delete("c")
	_ = acceptValues(ctx, p, feed.Local, "c", []float64{3}, time.Time{}) // made again
	_ = acceptValues(ctx, p, feed.Local, "n", []float64{6}, time.Time{})
	if _, _, err := p.SaveTo(&d, true); err != nil {
		f.Fatal(err)
	}
	return b.Bytes(), d.Bytes()
}

// checkRestoreDelta restores base, then data as a delta: one refused
// leaves the streams restored as they were; one restored leaves streams
// that answer, and a snapshot of them restores again.
func checkRestoreDelta(t *testing.T, base, data []byte) {
	q, _ := New(Config{Sorter: gpusort.NewCPU(1)})
	if err := q.Restore(base); err != nil {
		t.Fatal(err)
	}
	before := encodings(t, q)
	if err := q.RestoreDelta(data); err != nil {
		if after := encodings(t, q); !maps.Equal(before, after) {
			t.Fatalf("a delta that failed (%v) changed the streams restored", err)
		}
		return
	}
	for _, name := range q.List() {
		s, _ := q.Stream(name)
		s.View(true).Quantile(0.5)
		if _, err := s.Last(10); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if _, _, err := q.SaveTo(&b, false); err != nil {
		t.Fatal(err)
	}
	r, _ := New(Config{Sorter: gpusort.NewCPU(1)})
	if err := r.Restore(b.Bytes()); err != nil {
		t.Fatalf("a snapshot of a pipeline restored from a delta does not restore: %v", err)
	}
}

// TestDeltaWritesDeletedNamesWhole: a stream saved before whose name the
// delta also lists deleted is whole in it, as RestoreDelta reads such a
// name: here the name is listed as Commit lists that of a stream deleted
// while its checkpoint was written, and the delta restores as a snapshot
// does.
func TestDeltaWritesDeletedNamesWhole(t *testing.T) {
	ctx := context.Background()
	p := open(t, Config{Defaults: summary.Config{Epsilon: 0.1, WindowSize: 64, SlidingWindow: 300}})
	vals := make([]float64, 80)
	for i := range vals {
		vals[i] = float64(i*37%101) / 4
	}
	if err := acceptValues(ctx, p, feed.Local, "x", vals[:50], time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	quiesce(t, p)
	base, _ := save(t, p, false, true)
	if err := acceptValues(ctx, p, feed.Local, "x", vals[50:], time.Unix(2, 0)); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.deleted = append(p.deleted, "x")
	p.mu.Unlock()
	quiesce(t, p)
	delta, names := save(t, p, true, true)
	if !slices.Equal(names, []string{"x"}) {
		t.Fatalf("the delta holds %q, want x", names)
	}
	full, _ := save(t, p, false, false)
	sameAsSnapshot(t, "a name deleted and held", restoreChain(t, base, delta), full)
}

// TestVersion3DeltaRestores: a base and a version-3 delta written by the
// streamd before deltas held the values added since (testdata/delta-v3-*,
// every stream whole) restore as the snapshot written with them does; the
// pipeline restored from them takes values, and the version-4 delta it
// then takes follows that chain.
func TestVersion3DeltaRestores(t *testing.T) {
	read := func(name string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	base, delta, full := read("delta-v3-base.bin"), read("delta-v3-delta.bin"), read("delta-v3-full.bin")
	if delta[4] != 3 {
		t.Fatalf("testdata delta of version %d, want 3", delta[4])
	}
	q := restoreChain(t, base, delta)
	sameAsSnapshot(t, "version 3", q, full)

	ctx := context.Background()
	if err := q.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer q.Close(ctx)
	for _, name := range []string{"s0", "s3", "f", "k", "new"} {
		if err := acceptValues(ctx, q, feed.Local, name, []float64{1.5, 2.5, 3.5}, time.Unix(1700000100, 0)); err != nil {
			t.Fatal(err)
		}
	}
	quiesce(t, q)
	next, names := save(t, q, true, true)
	if next[4] != deltaVersion || len(names) != 5 {
		t.Fatalf("the next delta: version %d holding %q", next[4], names)
	}
	now, _ := save(t, q, false, false)
	sameAsSnapshot(t, "version 3 then 4", restoreChain(t, base, delta, next), now)
}
