package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"streamd/feed"
	"streamd/gpusort"
	"streamd/internal/codec"
	"streamd/items"
	"streamd/summary"
)

// quiesce waits until no stream of p, nor any level, has windows in
// flight, so that its state stays as it is until it is fed again.
func quiesce(t *testing.T, p *Pipeline) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, s := range p.all() {
		for _, x := range s.withLevels() {
			for {
				x.mu.Lock()
				k := len(x.pendingQ)
				for _, pt := range x.partsLocked() {
					k += len(pt.inflight)
				}
				x.mu.Unlock()
				if k == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: %d windows still in flight", x.Name(), k)
				}
				runtime.Gosched()
			}
		}
	}
}

// save writes a snapshot, or a delta, of p, and commits it unless told
// not to; it returns the bytes and the names of the streams written.
func save(t *testing.T, p *Pipeline, delta, commit bool) ([]byte, []string) {
	t.Helper()
	var b bytes.Buffer
	n, sv, err := p.SaveTo(&b, delta)
	if err != nil || n != int64(b.Len()) {
		t.Fatalf("SaveTo: %d bytes of %d, %v", n, b.Len(), err)
	}
	if commit {
		sv.Commit()
	}
	var names []string
	for _, s := range sv.streams {
		names = append(names, s.name)
	}
	slices.Sort(names)
	return b.Bytes(), names
}

// encodings returns the encoding of each stream of p, levels included,
// by name.
func encodings(t *testing.T, p *Pipeline) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, s := range p.all() {
		var buf encodeBuf
		err := s.writeState(&buf, p.itemKey, func(b []byte) error {
			out[s.name] += string(b)
			return nil
		}, &Saved{})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestDeltasRestoreAsTheSnapshot: a snapshot followed by deltas restores
// exactly the streams a snapshot taken at the last delta restores — every
// stream encodes byte for byte alike — across values, rejects, streams
// made, deleted and made again under the same name with another
// configuration, item, hierarchy and pair streams and parts of Kafka
// partitions; each delta holds only the streams changed since the one
// before, and a delta not committed (its checkpoint failed) leaves its
// changes to the next.
func TestDeltasRestoreAsTheSnapshot(t *testing.T) {
	ctx := context.Background()
	p := open(t, Config{Defaults: summary.Config{Epsilon: 0.1, WindowSize: 64, SlidingWindow: 256}, Sorter: gpusort.NewCPU(1)})
	tp := func(i int) feed.Source { return feed.Source{Topic: "t", Partition: i} }
	vals := func(n, seed int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = float64((i*7919 + seed) % 1009)
		}
		return out
	}
	accept := func(src feed.Source, name string, v []float64) {
		t.Helper()
		if err := acceptValues(ctx, p, src, name, v, p.Now()); err != nil {
			t.Fatal(err)
		}
	}
	acceptItems := func(name string, list ...string) {
		t.Helper()
		var b items.Batch
		for _, s := range list {
			b.AppendString(s)
		}
		if err := acceptItemBatch(ctx, p, feed.Local, name, &b, p.Now()); err != nil {
			t.Fatal(err)
		}
	}
	acceptPairs := func(name string, n int) {
		t.Helper()
		x, y := vals(n, 1), vals(n, 2)
		if _, err := p.Accept(ctx, &feed.Batch{Stream: name, Pairs: feed.Pairs{X: x, Y: y}}); err != nil {
			t.Fatal(err)
		}
	}
	create := func(name string, cfg summary.Config) {
		t.Helper()
		if _, err := p.Create(name, cfg); err != nil {
			t.Fatal(err)
		}
	}
	del := func(name string) {
		t.Helper()
		if err := p.Delete(name); err != nil {
			t.Fatal(err)
		}
	}
	var words []string
	for i := range 500 {
		words = append(words, fmt.Sprintf("w%d", i%37))
	}
	var paths []string
	for i := range 300 {
		paths = append(paths, fmt.Sprintf("a%d/b%d/c%d", i%3, i%7, i%11))
	}

	// The base: one stream of each kind, and one with parts of partitions.
	accept(feed.Local, "a", vals(1000, 0))
	create("f", summary.Config{Float64: true})
	accept(feed.Local, "f", vals(300, 3))
	create("it", summary.Config{Items: true})
	acceptItems("it", words...)
	create("h", summary.Config{Hierarchy: "path/3"})
	acceptItems("h", paths...)
	create("pr", summary.Config{Pairs: true})
	acceptPairs("pr", 200)
	accept(tp(1), "k", vals(150, 5))
	accept(tp(2), "k", vals(70, 6))
	for i := range 20 {
		accept(feed.Local, fmt.Sprint("still", i), vals(i*10, i))
	}
	quiesce(t, p)
	base, _ := save(t, p, false, true)

	// Delta 1: values, rejects, a deletion, a new stream.
	accept(feed.Local, "a", vals(100, 9))
	accept(feed.Local, "f", []float64{math.NaN()})
	accept(feed.Local, "still1", []float64{1e300}) // beyond float32: rejected
	del("it")
	accept(feed.Local, "n", vals(10, 1))
	quiesce(t, p)
	d1, names := save(t, p, true, true)
	if want := []string{"a", "f", "n", "still1"}; !slices.Equal(names, want) {
		t.Errorf("delta 1 holds %q, want %q", names, want)
	}

	// Delta 2: a stream made again under its name, of another kind; items
	// into the hierarchy, pairs, a new partition, a stream deleted.
	create("it", summary.Config{Float64: true, WindowSize: 32})
	accept(feed.Local, "it", vals(77, 4))
	acceptItems("h", paths[:50]...)
	acceptPairs("pr", 30)
	accept(tp(3), "k", vals(40, 8))
	del("n")
	quiesce(t, p)
	d2, names := save(t, p, true, true)
	if want := []string{"h", "h#1", "h#2", "it", "k", "pr"}; !slices.Equal(names, want) {
		t.Errorf("delta 2 holds %q, want %q", names, want)
	}

	// Delta 3: nothing changed.
	d3, names := save(t, p, true, true)
	if len(names) != 0 {
		t.Errorf("delta 3 holds %q, want none", names)
	}

	// A delta whose checkpoint failed: the next holds its changes too.
	accept(feed.Local, "still3", vals(5, 0))
	save(t, p, true, false)
	accept(feed.Local, "still4", vals(5, 0))
	del("still5")
	quiesce(t, p)
	d4, names := save(t, p, true, true)
	if want := []string{"still3", "still4"}; !slices.Equal(names, want) {
		t.Errorf("delta 4 holds %q, want %q", names, want)
	}
	full, _ := save(t, p, false, false)

	q := restoreChain(t, base, d1, d2, d3, d4)
	r, err := New(Config{Sorter: gpusort.NewCPU(0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Restore(full); err != nil {
		t.Fatal(err)
	}
	got, want := encodings(t, q), encodings(t, r)
	if !slices.Equal(q.List(), r.List()) || !slices.Equal(q.List(), p.List()) {
		t.Fatalf("streams %q from the deltas, %q from the snapshot, %q in the pipeline", q.List(), r.List(), p.List())
	}
	for name, enc := range want {
		if got[name] != enc {
			t.Errorf("stream %q restored from the deltas differs from the snapshot's", name)
		}
	}
	if !slices.Equal(sortedRejects(q), sortedRejects(r)) {
		t.Errorf("rejects %v from the deltas, %v from the snapshot", q.Rejected(), r.Rejected())
	}
	if st := mustStream(t, q, "f").Stats(); st.Rejected[feed.ReasonNaN] != 1 {
		t.Errorf("stream f restored with rejects %v, want 1 nan", st.Rejected)
	}
	if st := mustStream(t, q, "still1").Stats(); st.Rejected[feed.ReasonInf] != 1 {
		t.Errorf("stream still1 restored with rejects %v, want 1 inf", st.Rejected)
	}
	if c := mustStream(t, q, "it").Config(); !c.Float64 || c.Items || c.WindowSize != 32 {
		t.Errorf("stream it made again restored with %+v", c)
	}
	// Once open, the restored pipeline answers and takes values.
	if err := q.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer q.Close(ctx)
	if err := acceptValues(ctx, q, feed.Local, "a", vals(10, 0), time.Now()); err != nil {
		t.Fatal(err)
	}
	if st := mustStream(t, q, "a").Stats(); st.Count != 1110 {
		t.Errorf("stream a counts %d values, want 1110", st.Count)
	}
}

func sortedRejects(p *Pipeline) []string {
	var out []string
	for r, n := range p.Rejected() {
		out = append(out, fmt.Sprint(r, n))
	}
	slices.Sort(out)
	return out
}

// TestRestoreDeltaBad: a damaged delta, one taken under another item key,
// and a snapshot given as a delta fail with codec.ErrCorrupt and change
// nothing.
func TestRestoreDeltaBad(t *testing.T) {
	ctx := context.Background()
	p := open(t, Config{Sorter: gpusort.NewCPU(0)})
	if err := acceptValues(ctx, p, feed.Local, "a", []float64{1, 2, 3}, time.Now()); err != nil {
		t.Fatal(err)
	}
	base, _ := save(t, p, false, true)
	if err := acceptValues(ctx, p, feed.Local, "a", []float64{4}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := p.Delete("a"); err != nil {
		t.Fatal(err)
	}
	if err := acceptValues(ctx, p, feed.Local, "b", []float64{4}, time.Now()); err != nil {
		t.Fatal(err)
	}
	delta, _ := save(t, p, true, true)
	damaged := slices.Clone(delta)
	damaged[len(damaged)/2] ^= 1
	other, err := New(Config{Sorter: gpusort.NewCPU(0)})
	if err != nil {
		t.Fatal(err)
	}
	otherDelta, _ := save(t, other, true, true)
	for name, d := range map[string][]byte{"damaged": damaged, "other key": otherDelta, "snapshot": base} {
		q, err := New(Config{Sorter: gpusort.NewCPU(0)})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Restore(base); err != nil {
			t.Fatal(err)
		}
		if err := q.RestoreDelta(d); !errors.Is(err, codec.ErrCorrupt) {
			t.Errorf("%s: %v, want codec.ErrCorrupt", name, err)
		}
		if got := q.List(); !slices.Equal(got, []string{"a"}) || mustStream(t, q, "a").Stats().Count != 3 {
			t.Errorf("%s: streams %q after a failed delta, want a of 3 values", name, got)
		}
	}
}

// TestDeleteWhileSaving: a stream deleted after the snapshot holding it is
// written and before it is committed is deleted by the next delta, even
// by the first snapshot's; a pipeline that never saves keeps no names of
// deleted streams.
func TestDeleteWhileSaving(t *testing.T) {
	ctx := context.Background()
	p := open(t, Config{Sorter: gpusort.NewCPU(0)})
	for _, name := range []string{"a", "b", "c"} {
		if err := acceptValues(ctx, p, feed.Local, name, []float64{1, 2}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Delete("c"); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	kept := p.deleted
	p.mu.Unlock()
	if kept != nil {
		t.Fatalf("deleted names %q kept with no snapshot saved", kept)
	}
	var b bytes.Buffer
	_, sv, err := p.SaveTo(&b, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Delete("a"); err != nil {
		t.Fatal(err)
	}
	sv.Commit()
	delta, _ := save(t, p, true, true)
	q, err := New(Config{Sorter: gpusort.NewCPU(0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Restore(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := q.RestoreDelta(delta); err != nil {
		t.Fatal(err)
	}
	if got, want := q.List(), []string{"b"}; !slices.Equal(got, want) {
		t.Errorf("restored %q, want %q", got, want)
	}
}

// A deleteOnWrite deletes a stream of p on its first write, then writes
// to b.
type deleteOnWrite struct {
	t    *testing.T
	p    *Pipeline
	name string
	b    bytes.Buffer
}

func (w *deleteOnWrite) Write(data []byte) (int, error) {
	if w.name != "" {
		if err := w.p.Delete(w.name); err != nil {
			w.t.Error(err)
		}
		w.name = ""
	}
	return w.b.Write(data)
}

// TestDeleteWhileWriting deletes a stream after a snapshot's cut, before
// the stream is written: the snapshot, and a delta likewise, still hold
// the stream whole, and restore as they were cut.
func TestDeleteWhileWriting(t *testing.T) {
	ctx := context.Background()
	p := open(t, Config{Sorter: gpusort.NewCPU(0)})
	for _, name := range []string{"a", "b"} {
		if err := acceptValues(ctx, p, feed.Local, name, []float64{1, 2, 3}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	w := &deleteOnWrite{t: t, p: p, name: "a"}
	_, sv, err := p.SaveTo(w, false)
	if err != nil {
		t.Fatal(err)
	}
	sv.Commit()
	q, err := New(Config{Sorter: gpusort.NewCPU(0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Restore(w.b.Bytes()); err != nil {
		t.Fatalf("restore a snapshot written across a deletion: %v", err)
	}
	for _, name := range []string{"a", "b"} {
		if s, err := q.Stream(name); err != nil || s.Stats().Count != 3 {
			t.Fatalf("restored %s: %v", name, err)
		}
	}
	// A delta written across a deletion of a changed stream.
	if err := acceptValues(ctx, p, feed.Local, "b", []float64{4}, time.Now()); err != nil {
		t.Fatal(err)
	}
	w = &deleteOnWrite{t: t, p: p, name: "b"}
	if _, _, err := p.SaveTo(w, true); err != nil {
		t.Fatal(err)
	}
	if err := q.RestoreDelta(w.b.Bytes()); err != nil {
		t.Fatalf("restore a delta written across a deletion: %v", err)
	}
	if got, want := q.List(), []string{"b"}; !slices.Equal(got, want) {
		t.Fatalf("restored %q, want %q", got, want)
	}
	if s, _ := q.Stream("b"); s.Stats().Count != 4 {
		t.Fatalf("restored b counts %d, want 4", s.Stats().Count)
	}
}

// TestStormRestores creates, feeds and deletes streams from several
// goroutines, against a stream limit, while others page through the names
// and a snapshot and then deltas are saved and committed, with the idle
// sweeper flushing every millisecond: the snapshot and its deltas restore
// to exactly the streams left and their counts, the count never passes
// the limit, and deleting every stream brings the budget back to 0.
func TestStormRestores(t *testing.T) {
	ctx := context.Background()
	p := open(t, Config{Sorter: gpusort.NewCPU(0), MaxStreams: 30, MaxMemory: 1 << 30, IdleFlush: time.Millisecond})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("s%02d-with-a-long-shared-prefix-%d", r.IntN(40), r.IntN(2))
				if r.IntN(3) == 0 {
					if err := p.Delete(name); err != nil && !errors.Is(err, ErrNotFound) {
						t.Error(err)
					}
					continue
				}
				if err := acceptValues(ctx, p, feed.Local, name, []float64{1, 2, 3}, time.Time{}); err != nil && !errors.Is(err, feed.ErrStreamLimit) {
					t.Error(err)
				}
			}
		})
	}
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			p.Names("", "s1", 5)
			p.List()
		}
	})
	base, _ := save(t, p, false, true)
	var deltas [][]byte
	for range 40 {
		d, _ := save(t, p, true, true)
		deltas = append(deltas, d)
		if n := p.Len(); n > 30 {
			t.Errorf("Len %d past the limit", n)
		}
	}
	close(stop)
	wg.Wait()
	quiesce(t, p)
	d, _ := save(t, p, true, true)
	deltas = append(deltas, d)
	q := restoreChainWith(t, Config{Sorter: gpusort.NewCPU(0), MaxStreams: 30}, base, deltas...)
	want := p.List()
	if got := q.List(); !slices.Equal(got, want) {
		t.Fatalf("restored %q\nwant %q", got, want)
	}
	for _, name := range want {
		a, _ := p.Stream(name)
		b, _ := q.Stream(name)
		if a.Stats().Count != b.Stats().Count {
			t.Errorf("%s: restored count %d, want %d", name, b.Stats().Count, a.Stats().Count)
		}
	}
	if p.Len() != len(want) || len(p.all()) != len(want) {
		t.Fatalf("Len %d, map %d, List %d", p.Len(), len(p.all()), len(want))
	}
	for _, name := range want {
		if err := p.Delete(name); err != nil {
			t.Fatal(err)
		}
	}
	quiesce(t, p)
	if st := p.mem.Stats(); st.Used != 0 || st.Reserved != 0 {
		t.Fatalf("budget after deleting all: %+v", st)
	}
}
