package ingest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"testing"

	"streamd/feed"
)

// The limits of the fuzz targets are small, so that the fuzzer reaches
// them.
const (
	fuzzMaxLine  = 40
	fuzzMaxFrame = 256
)

// fuzzDecode decodes in, read in reads of chunk bytes (0: at once), and
// checks it against the model.
func fuzzDecode(t *testing.T, in []byte, chunk uint8, smallBuffer bool) {
	var sizes []int
	if chunk > 0 {
		sizes = []int{int(chunk)}
	}
	bufSize := 0
	if smallBuffer {
		bufSize = 16
	}
	got, err := decodeAll(in, sizes, bufSize, fuzzMaxLine, fuzzMaxFrame, nil)
	want, fail := model(in, fuzzMaxLine, fuzzMaxFrame)
	if fail != (errors.Is(err, ErrUnknownFormat) || errors.Is(err, ErrFrameTooLarge)) || !fail && err != nil {
		t.Fatalf("Decode returned %v, want failure %v", err, fail)
	}
	if d := diff(got, want); d != "" {
		t.Fatalf("decoding %q:\n%s", in, d)
	}
	// A sink that takes hints of the frames ahead gets the same.
	ps, perr := decodePrefetching(in, sizes, bufSize, fuzzMaxLine, fuzzMaxFrame)
	if fmt.Sprint(perr) != fmt.Sprint(err) {
		t.Fatalf("decoding %q with hints returned %v, without %v", in, perr, err)
	}
	if d := diff(ps.result(), got); d != "" {
		t.Fatalf("decoding %q with hints:\n%s", in, d)
	}
	if len(ps.bad) > 0 {
		t.Fatalf("decoding %q: hints break the contract: %q", in, ps.bad)
	}
}

func FuzzLineProtocol(f *testing.F) {
	for _, tt := range lineTests(f) {
		if len(tt.in) < 1<<10 && tt.full == nil {
			f.Add(tt.in, uint8(0), false)
			f.Add(tt.in, uint8(1), true)
		}
	}
	f.Add([]byte("a 1 2 3\nb 4\r\n# x\n\n"), uint8(3), true)
	f.Add([]byte("stream.with-many:chars/0 0x1p-3 -0 1e-320 NaN\tInf 1_000\n"), uint8(5), false)
	f.Add([]byte("a 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\na 1\r\n  b  2  \r"), uint8(2), true)
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8, smallBuffer bool) {
		if len(in) > 0 && in[0] == 0 {
			// FuzzFrameProtocol covers the framed protocol.
			in = append([]byte{'x'}, in[1:]...)
		}
		fuzzDecode(t, in, chunk, smallBuffer)
	})
}

func FuzzFrameProtocol(f *testing.F) {
	for _, tt := range frameTests(f) {
		if len(tt.in) < 1<<10 && tt.full == nil && (tt.maxFrame == 0 || tt.maxFrame == fuzzMaxFrame) {
			f.Add(tt.in[len(Magic):], uint8(0), false)
			f.Add(tt.in[len(Magic):], uint8(1), true)
		}
	}
	in := frames(f, true, "a", []float64{1, 2, math.NaN(), math.Inf(1)}, "b", []float64{-0.5})
	in = append(in, frames(f, false, "c:d", []float64{math.Copysign(0, -1), math.MaxFloat64}, "a", []float64(nil))[len(Magic):]...)
	f.Add(in[len(Magic):], uint8(3), true)
	// Item frames, to a sink without item streams.
	items := append(itemFrame("ia", []byte("x"), []byte{}, []byte{0xff}), rawFrame(u16(1), []byte("b"), []byte{typeItems}, []byte{3, 0, 'a'})...)
	f.Add(items, uint8(0), false)
	f.Add(items[:len(items)-2], uint8(1), true)
	f.Fuzz(func(t *testing.T, body []byte, chunk uint8, smallBuffer bool) {
		in := append([]byte(Magic), body...)
		fuzzDecode(t, in, chunk, smallBuffer)
	})
}

// FuzzDecodeValues checks DecodeFloat32 and DecodeFloat64 against
// decoding each value with encoding/binary and feed.CleanValues.
func FuzzDecodeValues(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x7f, 0, 0, 0, 0x80, 1, 2, 3, 4, 0, 0, 0xc0, 0xff, 9, 9, 9, 9}, true)
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0xf0, 0x7f, 0, 0, 0, 0, 0, 0, 0, 0x80}, false)
	f.Fuzz(func(t *testing.T, data []byte, f32 bool) {
		size := 8
		if f32 {
			size = 4
		}
		data = data[:len(data)-len(data)%size]
		var want []float64
		for i := 0; i < len(data); i += size {
			if f32 {
				want = append(want, float64(math.Float32frombits(binary.LittleEndian.Uint32(data[i:]))))
			} else {
				want = append(want, math.Float64frombits(binary.LittleEndian.Uint64(data[i:])))
			}
		}
		want, wantNaN, wantInf := feed.CleanValues(want)
		var got []float64
		var nan, inf int
		if f32 {
			var m feed.Moments
			got, m, nan, inf = DecodeFloat32[float64](nil, data)
			checkMoments(t, fmt.Sprintf("DecodeFloat32(%x)", data), got, m)
			got32, m32, _, _ := DecodeFloat32[float32](nil, data)
			checkMoments(t, fmt.Sprintf("DecodeFloat32[float32](%x)", data), got32, m32)
		} else {
			got, nan, inf = DecodeFloat64(nil, data)
		}
		if nan != wantNaN || inf != wantInf || !sameBits(got, want) {
			t.Fatalf("decoding %x = %v, %d NaN, %d Inf; want %v, %d, %d", data, got, nan, inf, want, wantNaN, wantInf)
		}
	})
}
