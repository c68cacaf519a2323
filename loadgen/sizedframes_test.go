package loadgen_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"streamd/ingest"
	"streamd/loadgen"
	"streamd/synth"
)

// received starts a TCP server that keeps what it receives, per stream in
// order, and returns it with its address.
func received(t *testing.T) (*memSink, *ingest.TCPServer) {
	t.Helper()
	sink := &memSink{}
	srv := ingest.NewTCPServer("127.0.0.1:0", sink)
	if err := srv.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	return sink, srv
}

// waitValues waits until srv has decoded n values.
func waitValues(t *testing.T, srv *ingest.TCPServer, n int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); srv.Stats().Values < uint64(n); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("server decoded %d values of %d", srv.Stats().Values, n)
		}
	}
}

// TestRenderSized: streams of many sizes rendered ahead and sent by a
// FrameRunner reach the daemon as they do through a Runner, value for
// value and each stream in order, float32 and float64, with values left
// out (Pareto's tail overflows float32, and at this shape float64 too);
// the result counts the same values sent and skipped, and keeps the same
// values of the tracked streams.
func TestRenderSized(t *testing.T) {
	sizes := synth.Sizes{Min: 1, Max: 2000, S: 1}.Draw(7, 400)
	names := streamNames("r", len(sizes))
	tracked := func(name string) bool { return len(name)%2 == 1 }
	for _, spec := range []synth.Spec{
		{Dist: synth.LogNormal, Seed: 7},
		{Dist: synth.Pareto, Alpha: 0.01, Seed: 8},
	} {
		for _, f32 := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/f32=%v", spec.Dist, f32), func(t *testing.T) {
				src := &loadgen.Synth{Spec: spec, Streams: names, Sizes: sizes, Batch: 16}
				wantSink, wantSrv := received(t)
				r := &loadgen.Runner{
					Source: src, Target: &loadgen.TCP{Addr: wantSrv.ListenAddr().String(), Binary: true, Float32: f32},
					Conns: 5, SplitStreams: true, Batch: 16, Keep: true, Track: tracked,
				}
				want, err := r.Run(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				waitValues(t, wantSrv, want.Sent)

				frames, err := loadgen.RenderSized(src, 5, f32, tracked)
				if err != nil {
					t.Fatal(err)
				}
				if frames.Len() != want.Sent || frames.Conns() != 5 || frames.Float32() != f32 {
					t.Fatalf("rendered %d values for %d connections (f32 %v), want %d, 5, %v", frames.Len(), frames.Conns(), frames.Float32(), want.Sent, f32)
				}
				// The estimate: the frames and their index, and the values
				// kept; exact when no value is left out.
				var index, kept int64
				for i, n := range sizes {
					index += 16 * ((n + 15) / 16)
					if tracked(names[i]) {
						kept += 8 * n
					}
				}
				held := int64(frames.Bytes()) + index + kept
				if limit := loadgen.SizedFramesBytes(src, f32, tracked); limit < held || want.Skipped == 0 && limit != held {
					t.Errorf("rendered %d bytes, %d of index, %d kept: %d in all, %d foreseen", frames.Bytes(), index, kept, held, limit)
				}
				gotSink, gotSrv := received(t)
				// Writes of several frames, or (below a frame) of one.
				most := 700
				if spec.Dist == synth.Pareto {
					most = 50
				}
				got, err := (&loadgen.FrameRunner{Addr: gotSrv.ListenAddr().String(), Sized: frames, Conns: 5, WriteBytes: most}).Run(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				waitValues(t, gotSrv, got.Sent)
				if got.Sent != want.Sent || got.Skipped != want.Skipped {
					t.Errorf("sent %d, skipped %d; through a Runner %d and %d", got.Sent, got.Skipped, want.Sent, want.Skipped)
				}
				if spec.Dist == synth.Pareto && got.Skipped == 0 {
					t.Error("no value skipped")
				}
				if !maps.EqualFunc(gotSink.values, wantSink.values, slices.Equal) {
					t.Error("the values received differ from a Runner's")
				}
				if !maps.EqualFunc(got.Streams, want.Streams, func(a, b *loadgen.StreamResult) bool {
					return a.Sent == b.Sent && slices.Equal(a.Values, b.Values) && maps.Equal(a.Skipped, b.Skipped)
				}) {
					t.Errorf("the result keeps %d streams, a Runner's %d; or their values differ", len(got.Streams), len(want.Streams))
				}
			})
		}
	}
}

// TestRenderSizedCut: a run of rendered frames cut short by its duration
// counts what it sent, and keeps of each tracked stream the values that
// went, which are the first of the stream's.
func TestRenderSizedCut(t *testing.T) {
	sizes := synth.Sizes{Min: 50, Max: 5000, S: 1}.Draw(9, 300)
	names := streamNames("c", len(sizes))
	src := &loadgen.Synth{Spec: synth.Spec{Dist: synth.Uniform, Seed: 9}, Streams: names, Sizes: sizes, Batch: 32}
	full, err := loadgen.RenderSized(src, 3, false, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	sink, srv := received(t)
	res, err := (&loadgen.FrameRunner{Addr: srv.ListenAddr().String(), Sized: full, Conns: 3, Rate: 100_000, Duration: 50 * time.Millisecond}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent == 0 || res.Sent >= full.Len() {
		t.Fatalf("sent %d of %d values in 50ms at 100,000/s", res.Sent, full.Len())
	}
	waitValues(t, srv, res.Sent)
	var kept int64
	for name, st := range res.Streams {
		kept += st.Sent
		if !slices.Equal(st.Values, sink.values[name]) || st.Sent != int64(len(st.Values)) {
			t.Fatalf("stream %s: result keeps %d values (sent %d), the server got %d", name, len(st.Values), st.Sent, len(sink.values[name]))
		}
	}
	if kept != res.Sent {
		t.Errorf("the streams kept %d values, the run sent %d", kept, res.Sent)
	}
}

func TestRenderSizedErrors(t *testing.T) {
	src := &loadgen.Synth{Spec: synth.Spec{Dist: synth.Uniform}, Streams: []string{"a", "b"}, Sizes: []int64{3, 4}}
	for _, tt := range []struct {
		name  string
		src   *loadgen.Synth
		conns int
	}{
		{"no connection", src, 0},
		{"sizes for other streams", &loadgen.Synth{Spec: src.Spec, Streams: []string{"a"}, Sizes: []int64{3, 4}}, 1},
		{"bad name", &loadgen.Synth{Spec: src.Spec, Streams: []string{"a b"}, Sizes: []int64{3}}, 1},
		{"sorted", &loadgen.Synth{Spec: synth.Spec{Dist: synth.Uniform, Order: synth.Sorted}, Streams: []string{"a"}, Sizes: []int64{3}}, 1},
		{"frame too large", &loadgen.Synth{Spec: src.Spec, Streams: []string{"a"}, Sizes: []int64{3}, Batch: ingest.MaxFrameLen}, 1},
	} {
		if _, err := loadgen.RenderSized(tt.src, tt.conns, false, nil); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
	frames, err := loadgen.RenderSized(src, 2, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := loadgen.NewPayload("s", []float64{1}, false, 0)
	for _, r := range []*loadgen.FrameRunner{
		{Addr: "127.0.0.1:1", Sized: frames, Conns: 3},
		{Addr: "127.0.0.1:1", Sized: frames, Conns: 2, Count: 5},
		{Addr: "127.0.0.1:1", Sized: frames, Conns: 2, Payloads: []*loadgen.Payload{p}},
	} {
		if _, err := r.Run(context.Background()); err == nil {
			t.Errorf("%+v: no error", r)
		}
	}
}
