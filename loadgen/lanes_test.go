package loadgen_test

import (
	"context"
	"errors"
	"io"
	"maps"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"streamd/feed"
	"streamd/ingest"
	"streamd/loadgen"
	"streamd/synth"
)

// failTarget is a Target whose connections fail every Send after its
// first ok (over all of them) with err, or call then before each Send.
type failTarget struct {
	ok   atomic.Int64
	err  error
	then func()
}

func (f *failTarget) Dial(context.Context) (loadgen.Conn, error) { return failConn{f}, nil }

type failConn struct{ f *failTarget }

func (c failConn) Send(string, []float64) error {
	if c.f.ok.Add(-1) < 0 {
		if c.f.then != nil {
			c.f.then()
			return nil
		}
		return c.f.err
	}
	return nil
}

func (c failConn) Close() (loadgen.Ack, error) { return loadgen.Ack{}, nil }

var errBroken = errors.New("connection broken")

// settle waits until the goroutines are no more than before, and fails
// the test if they stay more for ten seconds.
func settle(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before the run:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(time.Millisecond)
	}
}

// TestRunnerLanesStop: a run from several lanes ends, with no goroutine
// left, when a connection fails (with its error, not the cancellation
// it causes), when its context is cancelled, when its duration is
// reached, and when a lane's sink refuses a stream's name (with that
// error).
func TestRunnerLanesStop(t *testing.T) {
	src := sizedSynth(t, "zipf:5:100000", 5000, 3)
	for _, lanes := range []int{2, 4} {
		before := runtime.NumGoroutine()
		ft := &failTarget{err: errBroken}
		ft.ok.Store(200)
		res, err := (&loadgen.Runner{Source: src, Target: ft, Conns: 4, Batch: 64, SplitStreams: true, Lanes: lanes}).Run(context.Background())
		if !errors.Is(err, errBroken) {
			t.Fatalf("lanes %d, a connection broken: %v, want its error", lanes, err)
		}
		if res.Sent > 200*64 {
			t.Fatalf("lanes %d: %d values sent in 200 batches of 64", lanes, res.Sent)
		}
		settle(t, before)

		ctx, cancel := context.WithCancel(context.Background())
		ft = &failTarget{then: cancel}
		ft.ok.Store(100)
		if _, err := (&loadgen.Runner{Source: src, Target: ft, Conns: 4, Batch: 64, SplitStreams: true, Lanes: lanes}).Run(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("lanes %d, cancelled: %v", lanes, err)
		}
		settle(t, before)

		ft = &failTarget{then: func() { time.Sleep(time.Millisecond) }}
		res, err = (&loadgen.Runner{Source: src, Target: ft, Conns: 4, Batch: 64, SplitStreams: true, Lanes: lanes, Duration: 50 * time.Millisecond}).Run(context.Background())
		if err != nil || res.Sent == 0 {
			t.Fatalf("lanes %d, duration reached: %v, %d values sent", lanes, err, res.Sent)
		}
		settle(t, before)

		bad := *src
		bad.Streams = append([]string(nil), src.Streams...)
		bad.Streams[4000] = "bad name"
		ft = &failTarget{}
		ft.ok.Store(1 << 40)
		_, err = (&loadgen.Runner{Source: &bad, Target: ft, Conns: 4, Batch: 64, SplitStreams: true, Lanes: lanes}).Run(context.Background())
		if err == nil || !strings.Contains(err.Error(), "bad name") {
			t.Fatalf("lanes %d, a stream's name refused: %v", lanes, err)
		}
		settle(t, before)
	}
}

// discardServer listens on a local TCP port and reads every connection to
// its end; it returns the address.
func discardServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				io.Copy(io.Discard, c)
				c.Close()
			})
		}
	})
	return ln.Addr().String()
}

// TestRunnerLanesSkipped: the values a float32 target cannot send, left
// out at the source, are counted the same from several lanes as from one,
// in the totals and stream by stream.
func TestRunnerLanesSkipped(t *testing.T) {
	addr := discardServer(t)
	sizes := synth.Sizes{Min: 1, Max: 300, S: 1}.Draw(8, 300)
	src := &loadgen.Synth{Spec: synth.Spec{Dist: synth.Pareto, Alpha: 0.01, Seed: 8}, Streams: streamNames("p", len(sizes)), Sizes: sizes, Batch: 16}
	run := func(lanes int) *loadgen.Result {
		t.Helper()
		r := &loadgen.Runner{Source: src, Target: &loadgen.TCP{Addr: addr, Float32: true}, Conns: 4, SplitStreams: true, Lanes: lanes}
		res, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	one, three := run(1), run(3)
	var total int64
	for _, n := range sizes {
		total += n
	}
	if one.Skipped == 0 || one.Sent+one.Skipped != total {
		t.Fatalf("one lane: %d sent and %d skipped of %d values", one.Sent, one.Skipped, total)
	}
	if three.Sent != one.Sent || three.Skipped != one.Skipped || len(three.Streams) != len(one.Streams) {
		t.Fatalf("three lanes: %d sent, %d skipped, %d streams; one lane: %d, %d, %d", three.Sent, three.Skipped, len(three.Streams), one.Sent, one.Skipped, len(one.Streams))
	}
	for name, st := range one.Streams {
		if got := three.Streams[name]; got == nil || got.Sent != st.Sent || !maps.Equal(got.Skipped, st.Skipped) {
			t.Fatalf("stream %s: %+v from three lanes, %+v from one", name, got, st)
		}
	}
}

// waitSink is an ingest.Sink whose first Accept closes started and waits
// for its context to end; it counts its Accepts.
type waitSink struct {
	discardSink
	started chan struct{}
	n       int
}

func (s *waitSink) Accept(ctx context.Context, b *feed.Batch) (int, error) {
	if s.n++; s.n == 1 {
		close(s.started)
		<-ctx.Done()
	}
	return s.discardSink.Accept(ctx, b)
}

// gateSink is an ingest.Sink whose first Accept fails once open is closed.
type gateSink struct {
	discardSink
	open chan struct{}
}

func (s *gateSink) Accept(context.Context, *feed.Batch) (int, error) {
	<-s.open
	return 0, errSinkFull
}

// TestRunLanesStopOnError: when one sink of a run from several lanes
// fails, the others take no batch after the one they were handed then, as
// a run to one sink takes none after its error.
func TestRunLanesStopOnError(t *testing.T) {
	s := sizedSynth(t, "zipf:5:100000", 5000, 4)
	s.Batch = 16
	for range 5 {
		other := &waitSink{started: make(chan struct{})}
		lane := func(stream string) int { return int(stream[len(stream)-1]) % 2 }
		err := s.RunLanes(context.Background(), []ingest.Sink{&gateSink{open: other.started}, other}, lane)
		if !errors.Is(err, errSinkFull) {
			t.Fatalf("%v, want the failing sink's error", err)
		}
		if other.n != 1 {
			t.Fatalf("the other sink took %d batches, want the one it was handed when the first failed", other.n)
		}
	}
}
