package ingest

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"streamd/feed"
)

// prefetchSink is a recordSink that takes hints (Prefetcher). It records
// each hint's names, and for each batch accepted whether its stream had
// been named by a hint before it. It reports every name found, or none if
// none is set.
type prefetchSink struct {
	*recordSink
	none     bool
	hints    [][]string
	hinted   map[string]bool
	unhinted []string // streams of batches accepted before any hint named them
	bad      []string // hints that break Prefetch's contract
}

func newPrefetchSink() *prefetchSink {
	return &prefetchSink{recordSink: newRecordSink(), hinted: make(map[string]bool)}
}

func (s *prefetchSink) Prefetch(names [][]byte) int {
	hint := make([]string, len(names))
	for i, name := range names {
		hint[i] = string(name)
		s.hinted[hint[i]] = true
		if i > 0 && hint[i] == hint[i-1] {
			s.bad = append(s.bad, fmt.Sprintf("hint %d repeats %q", len(s.hints), name))
		}
		if len(name) == 0 || len(name) > feed.MaxNameLen {
			s.bad = append(s.bad, fmt.Sprintf("hint %d names %d bytes, no stream's name", len(s.hints), len(name)))
		}
	}
	if len(hint) == 0 || len(hint) > prefetchFrames {
		s.bad = append(s.bad, fmt.Sprintf("hint %d of %d names", len(s.hints), len(hint)))
	}
	s.hints = append(s.hints, hint)
	if s.none {
		return 0
	}
	return len(names)
}

func (s *prefetchSink) Accept(ctx context.Context, b *feed.Batch) (int, error) {
	if !s.hinted[b.Stream] {
		s.unhinted = append(s.unhinted, b.Stream)
	}
	return s.recordSink.Accept(ctx, b)
}

// decodePrefetching is decodeAll into a prefetchSink.
func decodePrefetching(data []byte, sizes []int, bufSize, maxLine, maxFrame int) (*prefetchSink, error) {
	return decodeInto(newPrefetchSink(), data, sizes, bufSize, maxLine, maxFrame)
}

// decodeInto is decodePrefetching into s.
func decodeInto(s *prefetchSink, data []byte, sizes []int, bufSize, maxLine, maxFrame int) (*prefetchSink, error) {
	d := Decoder{Sink: s, MaxLineBytes: maxLine, MaxFrameBytes: maxFrame, bufSize: bufSize}
	err := d.Decode(context.Background(), &chunkReader{data: data, sizes: sizes})
	return s, err
}

// TestFramePrefetch checks that the framed protocol's decoder tells a
// Prefetcher the streams of the frames ahead, in order, each before its
// batch, and that a sink taking hints receives what one that takes none
// does.
func TestFramePrefetch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var in []byte
	var names []string // the streams of the frames, in order
	for i := range 100 {
		name := fmt.Sprintf("s%d", rng.IntN(40))
		if i > 0 && rng.IntN(5) == 0 {
			name = names[i-1] // frames of one stream in a row
		}
		vals := make([]float64, 1+rng.IntN(30))
		for j := range vals {
			vals[j] = rng.NormFloat64()
		}
		in = append(in, frames(t, rng.IntN(2) == 0, name, vals)[len(Magic):]...)
		names = append(names, name)
	}
	in = append([]byte(Magic), in...)
	want, err := decodeAll(in, nil, 0, 0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		sizes []int
		buf   int
	}{
		{"buffered", nil, 0},
		{"reads of 7 bytes", []int{7}, 0},
		{"reads of 1 to 300 bytes", []int{1, 300, 17, 64, 2}, 0},
		{"a buffer of 64 bytes", nil, 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := decodePrefetching(in, tc.sizes, tc.buf, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if d := diff(s.result(), want); d != "" {
				t.Fatalf("with hints:\n%s", d)
			}
			if len(s.bad) > 0 {
				t.Fatalf("hints break the contract: %q", s.bad)
			}
			told := slices.Compact(slices.Concat(s.hints...))
			if ahead := slices.Compact(slices.Clone(names)); !isSubsequence(told, ahead) {
				t.Fatalf("hints name %q, not a subsequence of the frames' streams %q", told, ahead)
			}
			if tc.sizes == nil && tc.buf == 0 {
				// The whole input is buffered at once: every frame is
				// named ahead, prefetchFrames at a time.
				if got, want := len(s.hints), (len(names)+prefetchFrames-1)/prefetchFrames; got != want {
					t.Errorf("%d hints, want %d", got, want)
				}
				if len(s.unhinted) > 0 {
					t.Errorf("batches of %q accepted before a hint named them", s.unhinted)
				}
			}
		})
	}
}

// TestFramePrefetchBackoff checks that the decoder gives fewer hints
// while the sink finds none of their streams, and that their batches are
// decoded all the same.
func TestFramePrefetchBackoff(t *testing.T) {
	var in []byte
	for i := range 1000 {
		in = append(in, frames(t, true, fmt.Sprintf("s%d", i), []float64{float64(i)})[len(Magic):]...)
	}
	in = append([]byte(Magic), in...)
	want, err := decodeAll(in, nil, 0, 0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := newPrefetchSink()
	s.none = true
	if _, err := decodeInto(s, in, nil, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	if d := diff(s.result(), want); d != "" {
		t.Fatalf("with hints:\n%s", d)
	}
	// Hints at frames 0, 288, 576 and 864, each of 32 frames.
	if got, want := len(s.hints), 4; got != want {
		t.Errorf("%d hints of a sink that finds no stream, want %d", got, want)
	}
	for i, h := range s.hints {
		if first := fmt.Sprintf("s%d", i*(prefetchFrames+prefetchBackoff)); len(h) != prefetchFrames || h[0] != first {
			t.Errorf("hint %d names %d streams from %q, want %d from %q", i, len(h), h[0], prefetchFrames, first)
		}
	}
}

// isSubsequence reports whether a is b with some elements left out.
func isSubsequence(a, b []string) bool {
	for _, x := range a {
		i := slices.Index(b, x)
		if i < 0 {
			return false
		}
		b = b[i+1:]
	}
	return true
}

// TestFramePrefetchJunk checks that heads the decoder cannot trust are
// only hints: frames of bad lengths, names and types, cut short, decode
// as they do without a Prefetcher.
func TestFramePrefetchJunk(t *testing.T) {
	good := frames(t, true, "a", []float64{1, 2}, "b", []float64{3})[len(Magic):]
	for _, body := range [][]byte{
		rawFrame(u16(0), []byte{typeFloat32}),                                                            // no name
		rawFrame(u16(5), []byte("ab")),                                                                   // name longer than the frame
		rawFrame(u16(2), []byte("c\x00"), []byte{typeFloat32}),                                           // a bad name
		rawFrame(u16(1), []byte("d"), []byte{9}, []byte{1, 2, 3, 4}),                                     // a bad type
		append(binary.LittleEndian.AppendUint32(nil, 1<<31), u16(1)...),                                  // too long, cut short
		append(rawFrame(u16(1), []byte("e"), []byte{typeFloat32}), 0),                                    // a stray byte after
		slices.Concat([]byte{0xff, 0xff, 0xff, 0xff}, u16(1), []byte("f"), []byte{typeFloat32}, f32s(1)), // 2^32−1 bytes
		slices.Concat([]byte{0xfc, 0xff, 0xff, 0xff}, u16(0xffff), []byte("g")),                          // a name past the input
		slices.Concat([]byte{9, 0, 0, 0}, u16(7), []byte("h")),                                           // a name past the frame
		rawFrame(u16(2), []byte("ii"), []byte{typeItems}, u16(3), []byte("x")),                           // an item past the frame
		rawFrame(u16(2), []byte("jj"), []byte{typePairs64}, f32s(1, 2, 3)),                               // pairs cut short
	} {
		in := append([]byte(Magic), slices.Concat(good, body, good)...)
		for _, sizes := range [][]int{nil, {1}, {5, 3}} {
			want, werr := decodeAll(in, sizes, 0, 0, 0, nil)
			s, err := decodePrefetching(in, sizes, 0, 0, 0)
			if fmt.Sprint(err) != fmt.Sprint(werr) {
				t.Errorf("%q in reads of %v: error %v, want %v", body, sizes, err, werr)
			}
			if d := diff(s.result(), want); d != "" {
				t.Errorf("%q in reads of %v, with hints:\n%s", body, sizes, d)
			}
			if len(s.bad) > 0 {
				t.Errorf("%q in reads of %v: hints break the contract: %q", body, sizes, s.bad)
			}
		}
	}
}

// BenchmarkFramesPrefetch decodes frames of 20 values of 200,000
// streams in random order into a sink that takes hints and does nothing
// with them: the cost of reading the heads ahead.
func BenchmarkFramesPrefetch(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	vals := make([]float64, 20)
	for i := range vals {
		vals[i] = rng.Float64()
	}
	var in []byte
	for range 4096 {
		var err error
		if in, err = AppendFrame(in, fmt.Sprintf("host%07d.cpu", rng.IntN(200000)), vals, true); err != nil {
			b.Fatal(err)
		}
	}
	in = append([]byte(Magic), in...)
	for _, hints := range []bool{false, true} {
		b.Run(fmt.Sprint("hints=", hints), func(b *testing.B) {
			var sink Sink = new(discardSink)
			if hints {
				sink = hintDiscardSink{new(discardSink)}
			}
			d := Decoder{Sink: sink}
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if err := d.Decode(context.Background(), bytes.NewReader(in)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// hintDiscardSink is a discardSink that takes hints and ignores them.
type hintDiscardSink struct{ *discardSink }

func (hintDiscardSink) Prefetch(names [][]byte) int { return len(names) }

// TestConnCountsPrefetch checks that a TCP connection's counting sink
// passes hints on to a sink that takes them, with its count of streams
// found, and finds none for a sink that takes none.
func TestConnCountsPrefetch(t *testing.T) {
	ps := newPrefetchSink()
	names := [][]byte{[]byte("a"), []byte("b")}
	var pf Prefetcher = &connCounts{Sink: ps}
	if got := pf.Prefetch(names); got != 2 || len(ps.hints) != 1 || !slices.Equal(ps.hints[0], []string{"a", "b"}) {
		t.Errorf("Prefetch found %d, the sink was told %q; want 2, [[a b]]", got, ps.hints)
	}
	if got := (&connCounts{Sink: newRecordSink()}).Prefetch(names); got != 0 {
		t.Errorf("Prefetch through a sink that takes no hints found %d, want 0", got)
	}
}
