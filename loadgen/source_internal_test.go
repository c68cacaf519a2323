package loadgen

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"streamd/feed"
	"streamd/ingest"
	"streamd/synth"
)

// itemCounter is an ingest.Sink that counts the items it is handed.
type itemCounter struct {
	ingest.Sink
	n int
}

func (c *itemCounter) Accept(_ context.Context, b *feed.Batch) (int, error) {
	if b.Items == nil {
		panic("itemCounter: values")
	}
	c.n += b.Items.Len()
	return b.Items.Len(), nil
}

func (c *itemCounter) IsItemStream(string) bool { return true }

// TestItemNamerCache checks that a value far out in a Pareto tail costs
// its own name, not the names of every integer below it (4 M strings,
// over 100 MB), while a Zipf stream keeps the names of its values.
func TestItemNamerCache(t *testing.T) {
	allocated := func(spec synth.Spec, v float64) uint64 {
		sink := &itemCounter{}
		accept := itemNamer(sink, spec)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := accept(context.Background(), "s", []float64{v}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if sink.n != 1 {
			t.Fatalf("%d items handed on, want 1", sink.n)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	if b := allocated(synth.Spec{Dist: synth.Pareto}, 1<<22-1); b > 8<<20 {
		t.Errorf("one Pareto item of value 2^22−1 allocated %d bytes", b)
	}
	if b := allocated(synth.Spec{Dist: synth.Zipf, Distinct: 1 << 20}, 1<<20-1); b < 1<<20 {
		t.Errorf("one Zipf item of value 2^20−1, of 2^20, allocated only %d bytes: its names are not kept", b)
	}
}

// laneSink is an ingest.Sink for one lane of runSized: its first Accept
// waits for wait, if set, closes done, if set, and returns err.
type laneSink struct {
	ingest.Sink
	wait, done chan struct{}
	err        error
}

func (s *laneSink) Accept(context.Context, *feed.Batch) (int, error) {
	if s.wait != nil {
		<-s.wait
	}
	if s.done != nil {
		close(s.done)
		s.done = nil
	}
	return 0, s.err
}

func (s *laneSink) IsItemStream(string) bool { return false }

// TestRunSizedLimitHidesNoFailure: when one lane reaches the run's limit
// (errLimit) just as another lane's sink fails, the run reports the
// failure, not a clean end.
func TestRunSizedLimitHidesNoFailure(t *testing.T) {
	failed := make(chan struct{})
	broken := errors.New("connection broken")
	sinks := []ingest.Sink{
		&laneSink{wait: failed, err: errLimit},
		&laneSink{done: failed, err: broken},
	}
	src := &Synth{Spec: synth.Spec{Dist: synth.Uniform, Seed: 1}, Streams: []string{"a", "b"}, Sizes: []int64{100, 100}}
	lane := func(stream string) int {
		if stream == "a" {
			return 0
		}
		return 1
	}
	if err := src.runSized(context.Background(), sinks, lane); !errors.Is(err, broken) {
		t.Fatalf("a lane at the limit while another's sink failed: %v, want the failure", err)
	}
}
