package pipeline

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"streamd/feed"
	"streamd/gpusort"
	"streamd/items"
	"streamd/summary"
	"streamd/synth"
)

// heapPerStream returns the heap bytes that each of count streams holds in
// a pipeline of defaults (the CPU sorter, no memory budget) once add has
// fed it and its windows are summarised: the growth of the live heap,
// after a collection, over the streams. add feeds the stream name.
func heapPerStream(tb testing.TB, defaults summary.Config, count int, add func(ctx context.Context, p *Pipeline, name string) error) float64 {
	tb.Helper()
	p, err := New(Config{Sorter: gpusort.NewCPU(0), Defaults: defaults})
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	if err := p.Open(ctx); err != nil {
		tb.Fatal(err)
	}
	defer p.Close(ctx)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range count {
		if err := add(ctx, p, fmt.Sprintf("host%07d.cpu", i)); err != nil {
			tb.Fatal(err)
		}
	}
	// The windows in flight hold their copies until they are summarised.
	for p.Memory().Windows != 0 {
		runtime.Gosched()
	}
	// Twice: the first collection moves the pools' buffers to their
	// victim caches, the second frees them.
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(p)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(count)
}

// addValues returns an add for heapPerStream that feeds each stream the
// float32 values of x in batches of batch values, as ingest hands over a
// binary frame's.
func addValues(x []float64, batch int) func(context.Context, *Pipeline, string) error {
	vals, _, _ := feed.AppendFloat32(nil, x)
	moments := make([]feed.Moments, 0, len(vals)/batch+1)
	for i := 0; i < len(vals); i += batch {
		moments = append(moments, feed.Measure(vals[i:min(i+batch, len(vals))]))
	}
	return func(ctx context.Context, p *Pipeline, name string) error {
		for i := 0; i < len(vals); i += batch {
			b := &feed.Batch{Stream: name, Float32: vals[i:min(i+batch, len(vals)):min(i+batch, len(vals))], Moments: moments[i/batch]}
			if _, err := p.Accept(ctx, b); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestStreamBytes: at the default configuration a stream's fixed part —
// its structures, name, map and index entries — takes at most 1 KiB, and
// at most the reservation the budget charges it, and its values at most
// 8 bytes each on top (each is held once, below W values of a stream of
// one part, in the sliding window's ring: 4 bytes, in a buffer that
// doubles; see Mirrored partial windows); a
// stream fed only by a Kafka partition takes what one fed only by the
// local inputs does, and one fed by both, beside that, at most what the
// second part is charged (partOverhead); an item stream's fixed part
// takes at most its reservation.
func TestStreamBytes(t *testing.T) {
	const streams, fixed = 20000, 1 << 10
	x, _ := synth.Generate(synth.Spec{Dist: synth.LogNormal, Seed: 1}, 200)
	one := heapPerStream(t, summary.Config{}, streams, addValues(x[:1], 50))
	t.Logf("1 value: %.0f B/stream", one)
	if reserve := StreamFootprint(summary.Config{}).Reserve; one > fixed || one > float64(reserve) {
		t.Errorf("a stream of 1 value holds %.0f bytes, more than %d, or than the %d of its reservation", one, fixed, reserve)
	}
	for _, n := range []int{20, 200} {
		b := heapPerStream(t, summary.Config{}, streams, addValues(x[:n], 50))
		t.Logf("%d values: %.0f B/stream, %.1f B/value past the first", n, b, (b-one)/float64(n-1))
		if most := float64(fixed + 8*n); b > most {
			t.Errorf("a stream of %d values holds %.0f bytes, more than %.0f", n, b, most)
		}
	}
	// A stream fed by one Kafka partition holds that partition's part in
	// place of a local part, in its fixed part; a stream fed by both
	// holds the second part beside it, whose structures are charged as it
	// holds them.
	src := feed.Source{Topic: "metrics", Partition: 3}
	vals, m, _ := feed.AppendFloat32(nil, x[:20])
	fromKafka := func(ctx context.Context, p *Pipeline, name string) error {
		_, err := p.Accept(ctx, &feed.Batch{Stream: name, Source: src, Float32: vals, Moments: m})
		return err
	}
	kafka := heapPerStream(t, summary.Config{}, streams, fromKafka)
	local := heapPerStream(t, summary.Config{}, streams, addValues(x[:20], 50))
	t.Logf("20 values from Kafka: %.0f B/stream, %.0f more than from the local inputs", kafka, kafka-local)
	if kafka-local > 16 {
		t.Errorf("a stream of 20 values from Kafka holds %.0f bytes, %.0f more than one of 20 local values; want at most 16 more (its slice of parts)", kafka, kafka-local)
	}
	both := heapPerStream(t, summary.Config{}, streams, func(ctx context.Context, p *Pipeline, name string) error {
		if err := addValues(x[:10], 50)(ctx, p, name); err != nil {
			return err
		}
		vals, m, _ := feed.AppendFloat32(nil, x[10:20])
		_, err := p.Accept(ctx, &feed.Batch{Stream: name, Source: src, Float32: vals, Moments: m})
		return err
	})
	// Its partial windows hold its values a second time (4 bytes each):
	// a stream of one part holds them only in its sliding window.
	t.Logf("10 local values and 10 from Kafka: %.0f B/stream, %.0f more than 20 local values", both, both-local)
	if most := float64(partOverhead + 4*20); both-local > most {
		t.Errorf("a stream of 10 local values and 10 from Kafka holds %.0f bytes, %.0f more than one of 20 local values; want at most %.0f more, a part's charge and the values' second copy", both, both-local, most)
	}
	var batch items.Batch
	batch.AppendString("GET /index.html")
	item := heapPerStream(t, summary.Config{Items: true}, streams, func(ctx context.Context, p *Pipeline, name string) error {
		_, err := p.Accept(ctx, &feed.Batch{Stream: name, Items: &batch})
		return err
	})
	t.Logf("1 item: %.0f B/stream", item)
	if reserve := StreamFootprint(summary.Config{Items: true}).Reserve; item > float64(reserve) {
		t.Errorf("an item stream of 1 item holds %.0f bytes, more than the %d of its reservation", item, reserve)
	}
}

// BenchmarkStreamBytes reports the heap bytes a stream of the default
// configuration holds (B/stream) once its values are in, by the stream's
// length: fed by batches of 50 float32 values (1,000 for the longer
// streams), its windows summarised.
func BenchmarkStreamBytes(b *testing.B) {
	for _, c := range []struct{ values, streams, batch int }{
		{1, 20000, 50}, {100, 20000, 50}, {10000, 500, 1000}, {1000000, 8, 1000},
	} {
		b.Run(fmt.Sprintf("values=%d", c.values), func(b *testing.B) {
			x, _ := synth.Generate(synth.Spec{Dist: synth.LogNormal, Seed: 1}, c.values)
			add := addValues(x, c.batch)
			var per float64
			for b.Loop() {
				per = heapPerStream(b, summary.Config{}, c.streams, add)
			}
			b.ReportMetric(per, "B/stream")
		})
	}
}

// TestStreamBlockSize: a stream and its first part, with the part's
// filler and history, the stream's memory account and a name of up to
// blockNameLen bytes, which newStream allocates together (streamBlock),
// fit the 512-byte allocation size class, the largest whose objects need
// no header; a daemon of a million streams holds a million of them.
func TestStreamBlockSize(t *testing.T) {
	if n := unsafe.Sizeof(streamBlock{}); n > 512 {
		t.Errorf("a stream with its first part takes %d bytes, want at most 512", n)
	}
}

// TestStreamNameInBlock: a stream made or restored keeps a name of up to
// blockNameLen bytes in its block, and a longer one apart; both read back
// as given.
func TestStreamNameInBlock(t *testing.T) {
	ctx := context.Background()
	names := []string{"host0000001.cpu", strings.Repeat("n", blockNameLen), strings.Repeat("m", blockNameLen+1)}
	inBlock := func(s *Stream) bool {
		start := uintptr(unsafe.Pointer(s))
		at := uintptr(unsafe.Pointer(unsafe.StringData(s.name)))
		return at >= start && at < start+unsafe.Sizeof(streamBlock{})
	}
	check := func(p *Pipeline, how string) {
		for _, name := range names {
			s := mustStream(t, p, name)
			if s.Name() != name {
				t.Errorf("%s stream %q is named %q", how, name, s.Name())
			}
			if want := len(name) <= blockNameLen; inBlock(s) != want {
				t.Errorf("%s stream of a %d-byte name: name in its block %v, want %v", how, len(name), inBlock(s), want)
			}
		}
	}
	p := open(t, Config{})
	for _, name := range names {
		if _, err := p.Accept(ctx, &feed.Batch{Stream: name, Values: []float64{1, 2}}); err != nil {
			t.Fatal(err)
		}
	}
	check(p, "made")
	snap, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	check(openRestored(t, Config{}, snap), "restored")
}

// TestNewStreamAllocs: making a stream of the default configuration takes
// 2 allocations: the stream with its first part (streamBlock) and its
// sliding window. The filler and the history, made in place, take none
// of their own, nor does the memory account that create opens.
func TestNewStreamAllocs(t *testing.T) {
	p, err := New(Config{Sorter: gpusort.NewCPU(0)})
	if err != nil {
		t.Fatal(err)
	}
	n := testing.AllocsPerRun(100, func() {
		if _, err := p.newStream("s", summary.Config{}, feed.Local); err != nil {
			t.Fatal(err)
		}
	})
	if n > 2 {
		t.Errorf("making a stream takes %.0f allocations, want at most 2", n)
	}
}

// BenchmarkCollect measures what a thin stream costs the garbage
// collector: a full collection of a pipeline of 200,000 streams of 20
// float32 values each (ns/stream: the collection's time over the
// streams). The collector traces every pointer of every object a stream
// holds at each cycle, and a daemon of a million streams runs one every
// time its heap doubles.
func BenchmarkCollect(b *testing.B) {
	const streams = 200000
	p := open(b, Config{MaxMemory: 8 << 30})
	ctx := context.Background()
	x, _ := synth.Generate(synth.Spec{Dist: synth.LogNormal, Seed: 1}, 20)
	vals, m, _ := feed.AppendFloat32(nil, x)
	for i := range streams {
		if _, err := p.Accept(ctx, &feed.Batch{Stream: fmt.Sprintf("host%07d.cpu", i), Float32: vals, Moments: m}); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	for b.Loop() {
		runtime.GC()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/streams, "ns/stream")
}
