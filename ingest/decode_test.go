package ingest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"streamd/feed"
)

// A decodeTest is one input and what decoding it must give.
type decodeTest struct {
	name     string
	in       []byte
	maxLine  int
	maxFrame int
	full     func(string) bool // streams at the stream limit
	want     result
	err      error // the error Decode wraps, if any
}

// vals returns a result with the given values: stream, []float64, ...
func vals(streamValues ...any) result {
	var r result
	for i := 0; i < len(streamValues); i += 2 {
		r.add(streamValues[i].(string), streamValues[i+1].([]float64)...)
	}
	return r
}

func (r result) with(stream string, reason feed.Reason, n int) result {
	r.reject(stream, reason, n)
	return r
}

func lineTests(t testing.TB) []decodeTest {
	longName := strings.Repeat("n", feed.MaxNameLen)
	longLine := "big " + strings.Repeat("1 ", DefaultMaxLineBytes/2) + "\n" // just over the limit
	limitLine := "ok " + strings.Repeat("2 ", (DefaultMaxLineBytes-4)/2) + "3\n"
	ones := make([]float64, (DefaultMaxLineBytes-4)/2)
	for i := range ones {
		ones[i] = 2
	}
	ones = append(ones, 3)
	return []decodeTest{
		{name: "empty", in: nil},
		{name: "one line", in: []byte("latency 12.5 13.1\n"), want: vals("latency", []float64{12.5, 13.1})},
		{name: "no final newline", in: []byte("a 1 2\nb 3"), want: vals("a", []float64{1, 2}, "b", []float64{3})},
		{name: "crlf", in: []byte("a 1\r\nb 2 3\r\na 4\r"), want: vals("a", []float64{1, 4}, "b", []float64{2, 3})},
		{name: "comments and blank lines", in: []byte("# header\n\n \t \r\n\t# indented\n#\na 1 # 2\n"),
			want: vals("a", []float64{1, 2}).with("a", feed.ReasonMalformed, 1)},
		{name: "blanks", in: []byte(" \ta\t 1 \t2  \n\t\tb 3\t\n"), want: vals("a", []float64{1, 2}, "b", []float64{3})},
		// Decimal only: hexadecimal and Go's digit separators are malformed.
		{name: "number syntax", in: []byte("a 1e3 -2.5E-1 +7 .5 5. 0x1p-2 0X1.8P1 1_0 1_000.5 1e 0x1 - + . 0b1\n"),
			want: vals("a", []float64{1000, -0.25, 7, 0.5, 5}).with("a", feed.ReasonMalformed, 10)},
		{name: "malformed values", in: []byte("a 1 x 2 1.2.3 1,5\n"),
			want: vals("a", []float64{1, 2}).with("a", feed.ReasonMalformed, 3)},
		{name: "nan and inf", in: []byte("a NaN 1 +Inf -inf Infinity 1e400 -1e309 2 nan\n"),
			want: vals("a", []float64{1, 2}).with("a", feed.ReasonNaN, 2).with("a", feed.ReasonInf, 5)},
		{name: "negative zero", in: []byte("a -0 0 -0.0 -1e-400\n"), want: vals("a", []float64{0, 0, 0, 0})},
		// A line whose first token is x:y carries pairs; a token that is not
		// a pair is malformed on its own, and a pair with a NaN or ±Inf is
		// rejected whole.
		{name: "pairs", in: []byte("lat 12.5:300 -0:-0 1:-7\nlat 2:NaN Inf:1 3 4:5:6 x:1 1e400:2 6:7\nv 1 2:3\n"),
			want: vals(pairsKey("lat"), []float64{12.5, 300, 0, 0, 1, -7, 6, 7}, "v", []float64{1}).
				with("lat", feed.ReasonNaN, 1).with("lat", feed.ReasonInf, 2).with("lat", feed.ReasonMalformed, 3).with("v", feed.ReasonMalformed, 1)},
		{name: "pairs and values of one stream", in: []byte("a 1:2\na 3\na 4:5 6:7\n"),
			want: vals(pairsKey("a"), []float64{1, 2, 4, 5, 6, 7}, "a", []float64{3})},
		{name: "bad stream name", in: []byte("bad!name 1 2 3\nb 4\né 5\n"),
			want: vals("b", []float64{4}).with("", feed.ReasonBadStreamName, 4)},
		{name: "bad stream name without values", in: []byte("bad!\n"), want: result{}.with("", feed.ReasonBadStreamName, 1)},
		{name: "longest stream name", in: []byte(longName + " 1\n" + longName + "n 2 3\n"),
			want: vals(longName, []float64{1}).with("", feed.ReasonBadStreamName, 2)},
		{name: "stream name bytes", in: []byte("a.b_c-d:e/F9 1\n"), want: vals("a.b_c-d:e/F9", []float64{1})},
		{name: "name without values", in: []byte("a\n  a  \r\nb 1\n"), want: vals("b", []float64{1}).with("a", feed.ReasonMalformed, 2)},
		{name: "line at the limit", in: []byte("a 12345678\r\nb 123456789\nc 1 2\n"), maxLine: 10,
			want: vals("a", []float64{12345678}, "c", []float64{1, 2}).with("b", feed.ReasonLineTooLong, 1)},
		{name: "too long without a name", in: []byte("abcdef 1\n  a 1\nx 1\n"), maxLine: 3,
			want: vals("x", []float64{1}).with("", feed.ReasonLineTooLong, 1).with("a", feed.ReasonLineTooLong, 1)},
		{name: "too long comment", in: []byte("# a comment longer than the limit\na 1\n"), maxLine: 10,
			want: vals("a", []float64{1}).with("", feed.ReasonLineTooLong, 1)},
		{name: "too long last line", in: []byte("a 1\nb 1 2 3 4 5 6 7"), maxLine: 8,
			want: vals("a", []float64{1}).with("b", feed.ReasonLineTooLong, 1)},
		{name: "very long line", in: []byte("a 1\n" + longLine + "a 2\n"),
			want: vals("a", []float64{1, 2}).with("big", feed.ReasonLineTooLong, 1)},
		{name: "longest line", in: []byte(limitLine + "ok 4\n"), want: vals("ok", append(ones, 4))},
		{name: "stream limit", in: []byte("full 1 2\na 3\nfull 4\n"), full: func(s string) bool { return s == "full" },
			want: vals("a", []float64{3}).with("full", feed.ReasonStreamLimit, 3)},
		{name: "interleaved streams", in: interleavedLines(t), want: interleavedWant(t)},
		{name: "mixed", in: []byte("a 1 2\r\nb!ad 3\n# c\nb 4 x NaN\n\n" + strings.Repeat("z", 100) + " 1\nb\na -0 +Inf 5"), maxLine: 64,
			want: vals("a", []float64{1, 2, 0, 5}, "b", []float64{4}).
				with("", feed.ReasonBadStreamName, 1).with("b", feed.ReasonMalformed, 2).with("b", feed.ReasonNaN, 1).
				with("", feed.ReasonLineTooLong, 1).with("a", feed.ReasonInf, 1)},
		{name: "tls handshake", in: []byte("\x16\x03\x01\x02\x00"), want: result{}.with("", feed.ReasonUnknownFormat, 1), err: ErrUnknownFormat},
		{name: "nul", in: []byte("\x00"), want: result{}.with("", feed.ReasonUnknownFormat, 1), err: ErrUnknownFormat},
		{name: "short magic", in: []byte("\x00SD"), want: result{}.with("", feed.ReasonUnknownFormat, 1), err: ErrUnknownFormat},
		{name: "wrong magic", in: []byte("\x00SDX\x00\x00\x00\x00"), want: result{}.with("", feed.ReasonUnknownFormat, 1), err: ErrUnknownFormat},
		{name: "high byte", in: []byte("\xffa 1\n"), want: result{}.with("", feed.ReasonUnknownFormat, 1), err: ErrUnknownFormat},
	}
}

// interleavedLines returns lines of 50 streams in a random order; stream
// "s<i>" holds 0, 1, 2, ... in order.
func interleavedLines(t testing.TB) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	next := make([]int, 50)
	var b bytes.Buffer
	for range 5000 {
		s := rng.IntN(len(next))
		if rng.IntN(2) == 0 {
			s = 0 // runs of one stream, to batch
		}
		fmt.Fprintf(&b, "s%d", s)
		for range rng.IntN(4) + 1 {
			fmt.Fprintf(&b, " %d", next[s])
			next[s]++
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func interleavedWant(t testing.TB) result {
	r := lineModel(interleavedLines(t), DefaultMaxLineBytes)
	if len(r.values) != 50 || len(r.rejects) != 0 {
		t.Fatalf("interleaved lines: %d streams, %d rejects", len(r.values), len(r.rejects))
	}
	for s, v := range r.values {
		for i, x := range v {
			if x != float64(i) {
				t.Fatalf("interleaved lines: stream %s value %d is %v", s, i, x)
			}
		}
	}
	return r
}

func frameTests(t testing.TB) []decodeTest {
	magic := []byte(Magic)
	big := make([]float64, 3*batchLen+7)
	for i := range big {
		big[i] = float64(i)
	}
	good := frames(t, true, "g", []float64{7})[len(Magic):]
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	return []decodeTest{
		{name: "magic only", in: magic},
		{name: "pairs", in: cat(magic, pairFrame(t, "lat", []float64{1, math.NaN(), 2, math.Copysign(0, -1)}, []float64{-5, 1, math.Inf(1), 3}),
			good, pairFrame(t, "lat", []float64{4}, []float64{40}), rawFrame(u16(1), []byte("b"), []byte{4}, f64s(1, 2, 3))),
			want: vals(pairsKey("lat"), []float64{1, -5, 0, 3, 4, 40}, "g", []float64{7}).
				with("lat", feed.ReasonNaN, 1).with("lat", feed.ReasonInf, 1).with("b", feed.ReasonMalformed, 1)},
		{name: "float32", in: frames(t, true, "a", []float64{1, 2.5}, "b", []float64{-3}, "a", []float64{4}),
			want: vals("a", []float64{1, 2.5, 4}, "b", []float64{-3})},
		{name: "float64", in: frames(t, false, "a", []float64{0.1, math.MaxFloat64, math.SmallestNonzeroFloat64}),
			want: vals("a", []float64{0.1, math.MaxFloat64, math.SmallestNonzeroFloat64})},
		{name: "float32 rounding", in: frames(t, true, "a", []float64{0.1, 1e300}),
			want: vals("a", []float64{float64(float32(0.1))}).with("a", feed.ReasonInf, 1)},
		{name: "nan inf and negative zero", in: frames(t, false, "a", []float64{math.NaN(), math.Inf(1), math.Copysign(0, -1), 1, math.Inf(-1)}),
			want: vals("a", []float64{0, 1}).with("a", feed.ReasonNaN, 1).with("a", feed.ReasonInf, 2)},
		{name: "empty frame", in: frames(t, true, "a", []float64(nil), "b", []float64{1}), want: vals("b", []float64{1})},
		{name: "big frame", in: frames(t, true, "a", big), want: vals("a", big)},
		{name: "bad stream name", in: cat(magic, rawFrame(u16(3), []byte("a!b"), []byte{1}, f32s(1, 2)), good),
			want: vals("g", []float64{7}).with("", feed.ReasonBadStreamName, 1)},
		{name: "empty stream name", in: cat(magic, rawFrame(u16(0), []byte{1}, f32s(1)), good),
			want: vals("g", []float64{7}).with("", feed.ReasonBadStreamName, 1)},
		{name: "long stream name", in: cat(magic, rawFrame(u16(201), bytes.Repeat([]byte("n"), 201), []byte{2}, f64s(1)), good),
			want: vals("g", []float64{7}).with("", feed.ReasonBadStreamName, 1)},
		{name: "bad value type", in: cat(magic, rawFrame(u16(1), []byte("a"), []byte{9}, f32s(1)), rawFrame(u16(1), []byte("a"), []byte{0}), good),
			want: vals("g", []float64{7}).with("a", feed.ReasonBadValueType, 2)},
		{name: "ragged values", in: cat(magic, rawFrame(u16(1), []byte("a"), []byte{1}, f32s(1), []byte{0}), rawFrame(u16(1), []byte("b"), []byte{2}, f32s(1)), good),
			want: vals("g", []float64{7}).with("a", feed.ReasonMalformed, 1).with("b", feed.ReasonMalformed, 1)},
		{name: "short body", in: cat(magic, rawFrame(), rawFrame([]byte{1}), rawFrame(u16(0)), good),
			want: vals("g", []float64{7}).with("", feed.ReasonMalformed, 3)},
		{name: "name past the body", in: cat(magic, rawFrame(u16(3), []byte("ab"), []byte{1}), good),
			want: vals("g", []float64{7}).with("", feed.ReasonMalformed, 1)},
		{name: "frame too large", in: cat(magic, good, rawFrame(u16(1), []byte("a"), []byte{1}, f32s(make([]float32, 16)...)), good), maxFrame: 64,
			want: vals("g", []float64{7}).with("", feed.ReasonFrameTooLarge, 1), err: ErrFrameTooLarge},
		{name: "largest frame", in: cat(magic, good, rawFrame(u16(1), []byte("a"), []byte{2}, f32s(make([]float32, 15)...)), good), maxFrame: 64,
			want: vals("g", []float64{7, 7}).with("a", feed.ReasonMalformed, 1)},
		{name: "huge length", in: cat(magic, good, []byte{0xff, 0xff, 0xff, 0xff}, good),
			want: vals("g", []float64{7}).with("", feed.ReasonFrameTooLarge, 1), err: ErrFrameTooLarge},
		{name: "cut in values", in: cat(magic, good, frames(t, false, "a", []float64{1, 2, 3})[len(magic):][:4+3+1+8*2+5]),
			want: vals("g", []float64{7}, "a", []float64{1, 2}).with("a", feed.ReasonMalformed, 1)},
		{name: "cut in name", in: cat(magic, good, frames(t, false, "abc", []float64{1})[len(magic):][:4+2+2]),
			want: vals("g", []float64{7}).with("", feed.ReasonMalformed, 1)},
		{name: "cut in length", in: cat(magic, good, []byte{9, 0}),
			want: vals("g", []float64{7}).with("", feed.ReasonMalformed, 1)},
		{name: "cut in a rejected frame", in: cat(magic, good, rawFrame(u16(1), []byte("a"), []byte{5}, f32s(1, 2))[:10]),
			want: vals("g", []float64{7}).with("a", feed.ReasonBadValueType, 1)},
		{name: "stream limit", in: frames(t, true, "full", []float64{1, 2}, "a", []float64{3}, "full", []float64{4}),
			full: func(s string) bool { return s == "full" },
			want: vals("a", []float64{3}).with("full", feed.ReasonStreamLimit, 3)},
		{name: "interleaved streams", in: interleavedFrames(t), want: interleavedWant(t)},
		{name: "mixed", in: cat(frames(t, false, "a", []float64{1, math.NaN()}), rawFrame(u16(2), []byte("b?"), []byte{1}), rawFrame(u16(1), []byte("b"), []byte{1}, f32s(2)),
			rawFrame(u16(1), []byte("b"), []byte{9}), rawFrame(u16(1), []byte("c"), []byte{2}, f32s(2)), frames(t, true, "a", []float64{3})[len(magic):]),
			want: vals("a", []float64{1, 3}, "b", []float64{2}).with("a", feed.ReasonNaN, 1).with("", feed.ReasonBadStreamName, 1).
				with("b", feed.ReasonBadValueType, 1).with("c", feed.ReasonMalformed, 1)},
	}
}

// interleavedFrames holds the values of interleavedLines in frames.
func interleavedFrames(t testing.TB) []byte {
	r := lineModel(interleavedLines(t), DefaultMaxLineBytes)
	rng := rand.New(rand.NewPCG(3, 4))
	b := []byte(Magic)
	for len(r.values) > 0 {
		for s, v := range r.values { // random order
			n := min(len(v), rng.IntN(5)+1)
			var err error
			b, err = AppendFrame(b, s, v[:n], n%2 == 0)
			if err != nil {
				t.Fatal(err)
			}
			if r.values[s] = v[n:]; len(v) == n {
				delete(r.values, s)
			}
			break
		}
	}
	return b
}

// readers lists the ways each test input is read: reads of the given sizes
// through a read buffer of the given size.
var readers = []struct {
	name    string
	sizes   []int
	bufSize int
}{
	{"whole", nil, 0},
	{"one byte", []int{1}, 0},
	{"7 bytes", []int{7}, 0},
	{"small buffer", nil, 16},
	{"one byte small buffer", []int{1}, 16},
}

func TestDecode(t *testing.T) {
	for _, proto := range []struct {
		name  string
		tests func(testing.TB) []decodeTest
	}{{"line", lineTests}, {"frame", frameTests}} {
		for _, tt := range proto.tests(t) {
			t.Run(proto.name+"/"+tt.name, func(t *testing.T) {
				if tt.full == nil {
					maxLine, maxFrame := cmpOr(tt.maxLine, DefaultMaxLineBytes), cmpOr(tt.maxFrame, MaxFrameLen)
					if m, fail := model(tt.in, maxLine, maxFrame); diff(m, tt.want) != "" || fail != (tt.err != nil) {
						t.Errorf("the model disagrees with the test (fail %v):\n%s", fail, diff(m, tt.want))
					}
				}
				for _, rd := range readers {
					if len(tt.in) > 1<<20 && rd.sizes != nil && rd.sizes[0] == 1 && testing.Short() {
						continue
					}
					got, err := decodeAll(tt.in, rd.sizes, rd.bufSize, tt.maxLine, tt.maxFrame, tt.full)
					if tt.err == nil && err != nil || tt.err != nil && !errors.Is(err, tt.err) {
						t.Errorf("%s: Decode returned %v, want %v", rd.name, err, tt.err)
					}
					if d := diff(got, tt.want); d != "" {
						t.Errorf("%s:\n%s", rd.name, d)
					}
				}
			})
		}
	}
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// TestDecodeSplit splits mixed input in two reads at every byte.
func TestDecodeSplit(t *testing.T) {
	for _, proto := range []struct {
		name  string
		tests func(testing.TB) []decodeTest
	}{{"line", lineTests}, {"frame", frameTests}} {
		t.Run(proto.name, func(t *testing.T) {
			var tt decodeTest
			for _, x := range proto.tests(t) {
				if x.name == "mixed" {
					tt = x
				}
			}
			for i := range len(tt.in) + 1 {
				for _, bufSize := range []int{0, 16} {
					got, err := decodeAll(tt.in, []int{i, len(tt.in)}, bufSize, tt.maxLine, tt.maxFrame, nil)
					if err != nil {
						t.Fatalf("split at %d: %v", i, err)
					}
					if d := diff(got, tt.want); d != "" {
						t.Fatalf("split at %d, buffer %d:\n%s", i, bufSize, d)
					}
				}
			}
		})
	}
}

// TestDecodeReadError checks that a read error ends decoding after the
// values already read are delivered, and that a cut line or frame is
// counted.
func TestDecodeReadError(t *testing.T) {
	errBroken := errors.New("broken")
	for _, tt := range []struct {
		name string
		in   []byte
		want result
	}{
		{"line", []byte("a 1\na 2"), vals("a", []float64{1}).with("", feed.ReasonMalformed, 1)},
		{"whole lines", []byte("a 1\na 2\n"), vals("a", []float64{1, 2})},
		{"long line", []byte("a 1\nb 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20"), vals("a", []float64{1}).with("", feed.ReasonMalformed, 1)},
		{"frame", frames(t, true, "a", []float64{1, 2, 3})[:len(Magic)+4+4+4*2+1], vals("a", []float64{1, 2}).with("a", feed.ReasonMalformed, 1)},
		{"whole frames", frames(t, true, "a", []float64{1, 2, 3}), vals("a", []float64{1, 2, 3})},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newRecordSink()
			d := Decoder{Sink: s, bufSize: 16}
			err := d.Decode(context.Background(), &errAfterReader{data: tt.in, err: errBroken})
			if !errors.Is(err, errBroken) {
				t.Errorf("Decode returned %v, want %v", err, errBroken)
			}
			if d := diff(s.result(), tt.want); d != "" {
				t.Error(d)
			}
		})
	}
}

// TestDecodeAcceptError checks that an error of Accept other than
// feed.ErrStreamLimit stops decoding.
func TestDecodeAcceptError(t *testing.T) {
	errStop := errors.New("stop")
	for _, in := range [][]byte{
		[]byte("a 1\nb 2\nb 3\n"),
		frames(t, true, "a", []float64{1}, "b", []float64{2}, "b", []float64{3}),
	} {
		var calls int
		s := &funcSink{accept: func(ctx context.Context, b *feed.Batch) (int, error) {
			calls++
			return 0, errStop
		}}
		d := Decoder{Sink: s}
		if err := d.Decode(context.Background(), bytes.NewReader(in)); !errors.Is(err, errStop) {
			t.Errorf("Decode returned %v, want %v", err, errStop)
		}
		if calls != 1 {
			t.Errorf("Accept called %d times after failing, want once", calls)
		}
	}
}

// funcSink is a Sink of functions that takes no items.
type funcSink struct {
	accept func(ctx context.Context, b *feed.Batch) (int, error)
	reject func(stream string, reason feed.Reason, n int)
}

func (s *funcSink) Accept(ctx context.Context, b *feed.Batch) (int, error) {
	return s.accept(ctx, b)
}

func (s *funcSink) Reject(stream string, _ feed.Source, reason feed.Reason, n int) {
	if s.reject != nil {
		s.reject(stream, reason, n)
	}
}

func (s *funcSink) IsItemStream(string) bool { return false }

// TestDecodeNoDelay checks that values are handed over as soon as their
// line or frame has arrived, while the rest of the input is still to come,
// also to a sink that takes hints of the frames ahead.
func TestDecodeNoDelay(t *testing.T) {
	for _, tt := range []struct {
		name  string
		parts [][]byte
		hints bool
	}{
		{"line", [][]byte{[]byte("a 1\na"), []byte(" 2\na 3"), []byte("\n")}, false},
		{"frame", [][]byte{frames(t, true, "a", []float64{1, 2})[:len(Magic)+4+4+4+3], {0x40}, frames(t, false, "a", []float64{3})[len(Magic):]}, false},
		{"frame with hints", [][]byte{frames(t, true, "a", []float64{1, 2})[:len(Magic)+4+4+4+3], {0x40}, frames(t, false, "a", []float64{3})[len(Magic):]}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newRecordSink()
			var sink Sink = s
			if tt.hints {
				sink = &prefetchSink{recordSink: s, hinted: make(map[string]bool)}
			}
			pr, pw := io.Pipe()
			done := make(chan error, 1)
			go func() {
				d := Decoder{Sink: sink}
				done <- d.Decode(context.Background(), pr)
			}()
			var want result
			for i, p := range tt.parts {
				if _, err := pw.Write(p); err != nil {
					t.Fatal(err)
				}
				want.add("a", float64(i+1)) // the value completed by part i
				s.waitFor(t, want)
			}
			pw.Close()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if s.accepts != len(tt.parts) {
				t.Errorf("%d calls of Accept, want %d", s.accepts, len(tt.parts))
			}
		})
	}
}

// TestDecodeBatches checks that consecutive lines of one stream are handed
// over in one call when they arrive together.
func TestDecodeBatches(t *testing.T) {
	var in bytes.Buffer
	for i := range 3 * batchLen {
		fmt.Fprintf(&in, "a %d\n", i)
	}
	in.WriteString("b 1\na 1\n")
	// A batch ends when it is full, when the stream changes, and when a
	// read of 64 KiB ends in a partial line.
	max := in.Len()/readBufferSize + 1 + 3 + 2
	s := newRecordSink()
	d := Decoder{Sink: s}
	if err := d.Decode(context.Background(), &in); err != nil {
		t.Fatal(err)
	}
	if s.accepts > max {
		t.Errorf("%d calls of Accept, want at most %d", s.accepts, max)
	}
}

func TestDecoderLimits(t *testing.T) {
	for _, d := range []Decoder{
		{Sink: newRecordSink(), MaxLineBytes: -1},
		{Sink: newRecordSink(), MaxFrameBytes: -1},
		{Sink: newRecordSink(), MaxFrameBytes: MaxFrameLen + 1},
		{},
	} {
		if err := d.Decode(context.Background(), strings.NewReader("a 1\n")); err == nil {
			t.Errorf("Decode with %+v: no error", d)
		}
	}
}

// TestDecodeValues: DecodeFloat32 and DecodeFloat64 give what decoding
// each value and feed.CleanValues give, DecodeFloat32 the moments
// feed.Measure gives of them, into both types, special values included,
// dense and sparse, and never store −0.
func TestDecodeValues(t *testing.T) {
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, -1e-50, 1e-50, 3.5e38, -1e300, 1, math.SmallestNonzeroFloat32}
	r := rand.New(rand.NewPCG(1, 2))
	// One value in three special, then one in a thousand: most blocks of
	// the float32 decoding hold one, then few do.
	var in []float64
	for _, every := range []int{3, 1000} {
		for range 5000 {
			if r.IntN(every) == 0 {
				in = append(in, specials[r.IntN(len(specials))])
			} else {
				in = append(in, r.NormFloat64()*1e3)
			}
		}
	}
	for _, size := range []int{4, 8} {
		var data []byte
		var decoded []float64
		for _, v := range in {
			if size == 4 {
				data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(v)))
				decoded = append(decoded, float64(float32(v)))
			} else {
				data = binary.LittleEndian.AppendUint64(data, math.Float64bits(v))
				decoded = append(decoded, v)
			}
		}
		clean, wantNaN, wantInf := feed.CleanValues(slices.Clone(decoded))

		var got64 []float64
		var nan, inf int
		if size == 8 {
			got64, nan, inf = DecodeFloat64([]float64{7}, data)
		} else {
			var m64 feed.Moments
			got64, m64, nan, inf = DecodeFloat32([]float64{7}, data)
			checkMoments(t, "float32 into float64", got64[1:], m64)
		}
		if nan != wantNaN || inf != wantInf {
			t.Errorf("size %d: counted %d NaN, %d Inf; want %d, %d", size, nan, inf, wantNaN, wantInf)
		}
		if !slices.Equal(got64[:1], []float64{7}) || !sameBits(got64[1:], clean) {
			t.Errorf("size %d: values differ from CleanValues'", size)
		}
		wide := got64[1:]
		if size == 8 {
			// Parts that end inside, at and past a block.
			for _, part := range []int{1, 3, decodeBlock - 1, decodeBlock, decodeBlock + 5, 3*decodeBlock + 2} {
				part := data[:min(len(data), part*size)]
				want, wantNaN, wantInf := feed.CleanValues(slices.Clone(decoded[:len(part)/size]))
				got, nan, inf := DecodeFloat64(nil, part)
				if nan != wantNaN || inf != wantInf || !sameBits(got, want) {
					t.Errorf("float64, %d bytes: %d values, %d NaN, %d Inf; want %d, %d, %d", len(part), len(got), nan, inf, len(want), wantNaN, wantInf)
				}
			}
		}
		if size == 4 {
			got32, m32, nan, inf := DecodeFloat32[float32](nil, data)
			if nan != wantNaN || inf != wantInf {
				t.Errorf("float32: counted %d NaN, %d Inf; want %d, %d", nan, inf, wantNaN, wantInf)
			}
			checkMoments(t, "float32", got32, m32)
			// Every block free of NaN and ±Inf, and none: the two ways of
			// measuring a block.
			for _, part := range []int{1, 3, decodeBlock - 1, decodeBlock, decodeBlock + 5, 3*decodeBlock + 2} {
				part := data[:min(len(data), part*size)]
				vals, m, _, _ := DecodeFloat32[float32](nil, part)
				checkMoments(t, fmt.Sprintf("float32, %d bytes", len(part)), vals, m)
			}
			wide = nil
			for _, v := range got32 {
				wide = append(wide, float64(v))
			}
			if !sameBits(wide, clean) {
				t.Errorf("float32: values differ from CleanValues'")
			}
		}
		for _, v := range wide {
			if v == 0 && math.Signbit(v) {
				t.Fatalf("size %d: stored −0", size)
			}
			if math.IsInf(v, 0) || math.IsNaN(v) {
				t.Fatalf("size %d: stored %v", size, v)
			}
		}
	}
}

// sameBits reports whether a and b hold the same values bit for bit.
func sameBits(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// checkMoments checks the moments that DecodeFloat32 returned with the
// values it decoded against feed.Measure's: count, min and max exactly,
// the sum up to the rounding of adding in another order.
func checkMoments[T float32 | float64](t *testing.T, name string, vals []T, m feed.Moments) {
	t.Helper()
	want := feed.Measure(vals)
	var abs float64
	for _, v := range vals {
		abs += math.Abs(float64(v))
	}
	if m.Count != want.Count || m.Min != want.Min || m.Max != want.Max || math.Abs(m.Sum-want.Sum) > 1e-12*abs {
		t.Errorf("%s: moments %+v, want %+v", name, m, want)
	}
}

// pairFrame returns a frame of the pairs (x[i], y[i]) for stream.
func pairFrame(t testing.TB, stream string, x, y []float64) []byte {
	t.Helper()
	f, err := AppendPairsFrame(nil, stream, x, y)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
