package loadgen_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"

	"streamd/feed"
	"streamd/ingest"
	"streamd/loadgen"
	"streamd/synth"
)

// batchLog is an ingest.Sink that logs the stream and the values of every
// batch it is handed, in order.
type batchLog struct {
	ingest.Sink
	streams []string
	values  [][]float64
	items   int
}

func (b *batchLog) Accept(_ context.Context, fb *feed.Batch) (int, error) {
	b.streams = append(b.streams, fb.Stream)
	if fb.Items != nil {
		b.items += fb.Items.Len()
		b.values = append(b.values, make([]float64, fb.Items.Len()))
		return fb.Items.Len(), nil
	}
	b.values = append(b.values, slices.Clone(fb.Values))
	return len(fb.Values), nil
}

func (b *batchLog) Reject(string, feed.Source, feed.Reason, int) {}

// streamNames returns n stream names, prefix.0 to prefix.<n-1>.
func streamNames(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = prefix + "." + strconv.Itoa(i)
	}
	return names
}

// TestSynthSizes checks a synthetic source of streams of Zipf-distributed
// sizes: every stream gets its size, in batches of at most Batch values
// (only a stream's last one shorter), the batches of the streams are
// interleaved at random, the largest stream's over the whole run, and the
// same seed gives the same run.
func TestSynthSizes(t *testing.T) {
	const batch = 100
	sizes := synth.Sizes{Min: 5, Max: 5000, S: 1}.Draw(3, 3000)
	names := streamNames("z", len(sizes))
	run := func(items bool) *batchLog {
		t.Helper()
		src := &loadgen.Synth{Spec: synth.Spec{Dist: synth.Normal, Seed: 3}, Streams: names, Sizes: sizes, Batch: batch, Items: items}
		log := &batchLog{}
		if err := src.Run(context.Background(), log); err != nil {
			t.Fatal(err)
		}
		return log
	}
	log := run(false)

	got := make(map[string]int64)
	short := make(map[string]bool) // streams whose last batch so far was short
	same := 0                      // batches of the stream of the batch before
	for i, name := range log.streams {
		n := len(log.values[i])
		if n == 0 || n > batch {
			t.Fatalf("batch %d of stream %s holds %d values, want 1 to %d", i, name, n, batch)
		}
		if short[name] {
			t.Fatalf("stream %s: a batch after a short one", name)
		}
		short[name] = n < batch
		got[name] += int64(n)
		if i > 0 && log.streams[i-1] == name {
			same++
		}
	}
	var total int64
	for i, name := range names {
		if got[name] != sizes[i] {
			t.Fatalf("stream %s got %d values, want %d", name, got[name], sizes[i])
		}
		total += sizes[i]
	}
	if same > len(log.streams)/20 {
		t.Errorf("%d of %d batches follow one of their own stream: not interleaved", same, len(log.streams))
	}
	// The largest stream's batches fall in every quarter of the run.
	big := slices.Index(sizes, slices.Max(sizes))
	if sizes[big] < 20*batch {
		t.Fatalf("the largest stream holds %d values: too few for the test", sizes[big])
	}
	var quarters [4]int
	for i, name := range log.streams {
		if name == names[big] {
			quarters[4*i/len(log.streams)]++
		}
	}
	if slices.Contains(quarters[:], 0) {
		t.Errorf("the largest stream's batches by quarter of the run: %v", quarters)
	}

	again := run(false)
	if !slices.Equal(again.streams, log.streams) || !slices.EqualFunc(again.values, log.values, slices.Equal) {
		t.Error("the same seed sent another run")
	}
	if items := run(true); items.items != int(total) || !slices.Equal(items.streams, log.streams) {
		t.Errorf("items: %d in %d batches, want %d in %d", items.items, len(items.streams), total, len(log.streams))
	}
}

func TestSynthSizesErrors(t *testing.T) {
	names := []string{"a", "b"}
	for _, src := range []*loadgen.Synth{
		{Spec: synth.Spec{Dist: synth.Uniform}, Streams: names, Sizes: []int64{1}},
		{Spec: synth.Spec{Dist: synth.Uniform, Order: synth.Sorted}, Streams: names, Sizes: []int64{1, 2}},
		{Spec: synth.Spec{Dist: synth.Uniform}, Streams: names, Sizes: []int64{1, 2}, Pairs: true},
		{Spec: synth.Spec{Dist: "no"}, Streams: names, Sizes: []int64{1, 2}},
	} {
		if err := src.Run(context.Background(), &batchLog{}); err == nil {
			t.Errorf("%+v: no error", src)
		}
	}
}

func TestSampleStreams(t *testing.T) {
	sizes := synth.Sizes{Min: 5, Max: 100_000, S: 1}.Draw(9, 50_000)
	const big, k = 10_000, 300
	sample := loadgen.SampleStreams(sizes, big, k, 4)
	if !slices.IsSorted(sample) || len(slices.Compact(slices.Clone(sample))) != len(sample) {
		t.Fatalf("sample not sorted or not distinct: %v", sample)
	}
	in := make(map[int]bool)
	small := 0
	for _, i := range sample {
		in[i] = true
		if sizes[i] < big {
			small++
		}
	}
	bigs := 0
	for i, s := range sizes {
		if s >= big {
			bigs++
			if !in[i] {
				t.Errorf("stream %d of %d values not in the sample", i, s)
			}
		}
	}
	if small != k || bigs == 0 {
		t.Errorf("sample of %d small streams and %d big, want %d and more than 0", small, bigs, k)
	}
	if again := loadgen.SampleStreams(sizes, big, k, 4); !slices.Equal(again, sample) {
		t.Error("the same seed drew another sample")
	}
	if other := loadgen.SampleStreams(sizes, big, k, 5); slices.Equal(other, sample) {
		t.Error("seeds 4 and 5 drew the same sample")
	}
	// The sample is spread: its small streams are not the first ones.
	if last := sample[len(sample)-1]; last < len(sizes)/2 {
		t.Errorf("the sample ends at stream %d of %d", last, len(sizes))
	}
	if all := loadgen.SampleStreams([]int64{1, 2, 3}, 3, 10, 1); !slices.Equal(all, []int{0, 1, 2}) {
		t.Errorf("a sample larger than the streams: %v", all)
	}
	if none := loadgen.SampleStreams([]int64{1, 2, 3}, 4, 0, 1); len(none) != 0 {
		t.Errorf("a sample of none: %v", none)
	}
}

// TestRunnerTrack: the Result holds only the streams Track chooses, with
// the values sent to them, and counts the others in its totals.
func TestRunnerTrack(t *testing.T) {
	sizes := []int64{10, 2000, 7, 300, 1}
	names := streamNames("t", len(sizes))
	tracked := map[string]bool{"t.1": true, "t.4": true}
	target := &memTarget{}
	r := &loadgen.Runner{
		Source: &loadgen.Synth{Spec: synth.Spec{Dist: synth.Uniform, Seed: 2}, Streams: names, Sizes: sizes, Batch: 64},
		Target: target, Conns: 2, Keep: true,
		Track: func(s string) bool { return tracked[s] },
	}
	res, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent != 2318 {
		t.Errorf("sent %d values, want 2318", res.Sent)
	}
	if got := res.Names(); !slices.Equal(got, []string{"t.1", "t.4"}) {
		t.Fatalf("result streams %v, want t.1 and t.4", got)
	}
	for i, name := range names {
		if n := int64(len(target.values[name])); n != sizes[i] {
			t.Errorf("stream %s: target got %d values, want %d", name, n, sizes[i])
		}
		if !tracked[name] {
			continue
		}
		st := res.Streams[name]
		sent, kept := slices.Clone(target.values[name]), slices.Clone(st.Values)
		slices.Sort(sent)
		slices.Sort(kept)
		if st.Sent != sizes[i] || !slices.Equal(kept, sent) {
			t.Errorf("stream %s: sent %d, kept %d values; want %d", name, st.Sent, len(st.Values), sizes[i])
		}
	}
}

// connTarget is a Target that records which connections each stream's
// values went over, and the values in the order each connection sent
// them.
type connTarget struct {
	mu     sync.Mutex
	dials  int
	conns  map[string]map[int]bool
	values map[string][]float64
}

func (c *connTarget) Dial(context.Context) (loadgen.Conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dials++
	return &tagConn{c, c.dials}, nil
}

type tagConn struct {
	t  *connTarget
	id int
}

func (c *tagConn) Send(stream string, values []float64) error {
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	if c.t.conns[stream] == nil {
		c.t.conns[stream] = make(map[int]bool)
	}
	c.t.conns[stream][c.id] = true
	c.t.values[stream] = append(c.t.values[stream], values...)
	return nil
}

func (c *tagConn) Close() (loadgen.Ack, error) { return loadgen.Ack{}, nil }

// TestRunnerSplitStreams: with SplitStreams, each stream goes over one
// connection, in the order of the source, and the streams are spread over
// every connection; with lanes, every stream's values still go in the
// source's order, and the result keeps each tracked stream's values and
// counts.
func TestRunnerSplitStreams(t *testing.T) {
	sizes := synth.Sizes{Min: 1, Max: 1000, S: 1}.Draw(5, 500)
	names := streamNames("s", len(sizes))
	src := &loadgen.Synth{Spec: synth.Spec{Dist: synth.Uniform, Seed: 5}, Streams: names, Sizes: sizes, Batch: 16}
	log := &batchLog{}
	if err := src.Run(context.Background(), log); err != nil {
		t.Fatal(err)
	}
	want := make(map[string][]float64)
	var total int64
	for i, name := range log.streams {
		want[name] = append(want[name], log.values[i]...)
		total += int64(len(log.values[i]))
	}
	for _, lanes := range []int{1, 3, 8} {
		t.Run(fmt.Sprintf("lanes=%d", lanes), func(t *testing.T) {
			target := &connTarget{conns: make(map[string]map[int]bool), values: make(map[string][]float64)}
			tracked := func(name string) bool { return len(name)%2 == 0 }
			r := &loadgen.Runner{Source: src, Target: target, Conns: 5, Batch: 16, SplitStreams: true, Lanes: lanes, Keep: true, Track: tracked}
			res, err := r.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.Sent != total {
				t.Errorf("sent %d values, want %d", res.Sent, total)
			}
			used := make(map[int]int)
			for _, name := range names {
				if len(target.conns[name]) != 1 {
					t.Fatalf("stream %s went over connections %v, want one", name, target.conns[name])
				}
				for id := range target.conns[name] {
					used[id]++
				}
				if !slices.Equal(target.values[name], want[name]) {
					t.Fatalf("stream %s: %d values, not the %d of the source in order", name, len(target.values[name]), len(want[name]))
				}
				st := res.Streams[name]
				switch {
				case !tracked(name) && st != nil:
					t.Fatalf("stream %s is in the result, untracked", name)
				case tracked(name) && (st == nil || st.Sent != int64(len(want[name])) || !slices.Equal(st.Values, want[name])):
					t.Fatalf("stream %s: result %+v, want its %d values in order", name, st, len(want[name]))
				}
			}
			if len(used) != 5 {
				t.Errorf("streams by connection: %v, want 5 connections", used)
			}
		})
	}
}

// TestRunnerLanesItems: items sent with several lanes asked for (which
// send them from one) are the items sent from one, in each stream's order.
func TestRunnerLanesItems(t *testing.T) {
	sizes := synth.Sizes{Min: 1, Max: 300, S: 1}.Draw(6, 200)
	src := &loadgen.Synth{Spec: synth.Spec{Dist: synth.Zipf, S: 1.1, Distinct: 1000, Seed: 6}, Streams: streamNames("i", len(sizes)), Sizes: sizes, Batch: 7, Items: true}
	run := func(lanes int) map[string][]string {
		t.Helper()
		target := &memTarget{}
		if _, err := (&loadgen.Runner{Source: src, Target: target, Conns: 4, SplitStreams: true, Lanes: lanes}).Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return target.items
	}
	one, four := run(1), run(4)
	if len(one) != len(sizes) {
		t.Fatalf("%d streams of items, want %d", len(one), len(sizes))
	}
	for name, items := range one {
		if !slices.Equal(four[name], items) {
			t.Fatalf("stream %s: %d items from 4 lanes, not the %d from one in order", name, len(four[name]), len(items))
		}
	}
}

// BenchmarkSizedDraw measures drawing the batches of 10^5 Zipf-sized
// streams (zipf:5:1000000, lognormal values) into a sink that keeps
// nothing: the sender's own limit with many small streams. An op is the
// whole run.
func BenchmarkSizedDraw(b *testing.B) {
	s := sizedSynth(b, "zipf:5:1000000", 100000, 1)
	var total int64
	for _, n := range s.Sizes {
		total += n
	}
	for b.Loop() {
		if err := s.Run(context.Background(), discardSink{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mvalues/s")
}

// sizedSynth returns a Synth of n streams of lognormal values, their sizes
// drawn from the sizes spec with seed.
func sizedSynth(tb testing.TB, spec string, n int, seed uint64) *loadgen.Synth {
	tb.Helper()
	z, err := synth.ParseSizes(spec)
	if err != nil {
		tb.Fatal(err)
	}
	sizes := z.Draw(seed, n)
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("s%07d", i)
	}
	return &loadgen.Synth{Spec: synth.Spec{Dist: synth.LogNormal, Seed: seed}, Streams: names, Sizes: sizes}
}

// discardSink is an ingest.Sink that takes every value and keeps none.
type discardSink struct{}

func (discardSink) Accept(_ context.Context, b *feed.Batch) (int, error) {
	return len(b.Values) + len(b.Float32), nil
}
func (discardSink) Reject(string, feed.Source, feed.Reason, int) {}
func (discardSink) IsItemStream(string) bool                     { return false }

// failingSink fails the Accept after its first n.
type failingSink struct {
	discardSink
	n int
}

func (s *failingSink) Accept(ctx context.Context, b *feed.Batch) (int, error) {
	if s.n == 0 {
		return 0, errSinkFull
	}
	s.n--
	return s.discardSink.Accept(ctx, b)
}

var errSinkFull = errors.New("sink full")

// TestSizedStopsOnError checks that a run of stream sizes, whose batches
// are drawn on several goroutines, stops at the sink's first error and
// returns it, and stops when its context is cancelled, without hanging.
func TestSizedStopsOnError(t *testing.T) {
	s := sizedSynth(t, "zipf:5:100000", 20000, 2)
	for _, n := range []int{0, 1, 300, 5000} {
		sink := &failingSink{n: n}
		if err := s.Run(context.Background(), sink); !errors.Is(err, errSinkFull) {
			t.Fatalf("after %d batches: %v, want the sink's error", n, err)
		}
		if sink.n != 0 {
			t.Fatalf("%d batches left unsent before the error", sink.n)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Run(ctx, discardSink{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v", err)
	}
}
