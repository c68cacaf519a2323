package ingest

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"streamd/feed"
)

// discardSink counts values and throws them away.
type discardSink struct{ values, rejected int }

func (s *discardSink) Accept(ctx context.Context, b *feed.Batch) (int, error) {
	s.values += b.Len()
	return b.Len(), nil
}

func (s *discardSink) Reject(stream string, src feed.Source, reason feed.Reason, n int) {
	s.rejected += n
}

func (s *discardSink) IsItemStream(string) bool { return false }

// benchSink keeps benchmark results alive.
var benchSink discardSink

// benchValues is the number of values each benchmark input holds.
const benchValues = 1 << 20

// benchDecode decodes in, which holds benchValues values, once per
// iteration, and reports values per second.
func benchDecode(b *testing.B, in []byte) {
	var r bytes.Reader
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	d := Decoder{Sink: &benchSink}
	for b.Loop() {
		r.Reset(in)
		if err := d.Decode(context.Background(), &r); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchValues)*float64(b.N)/b.Elapsed().Seconds(), "values/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchValues, "ns/value")
}

// BenchmarkLineDecode decodes lines of 1 to 100 values of a latency-like
// distribution with 3 decimals, such as "12.345", in runs of one stream.
func BenchmarkLineDecode(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, perLine := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("values=%d", perLine), func(b *testing.B) {
			var in []byte
			for i := 0; i < benchValues; {
				in = fmt.Appendf(in, "latency.p%d", i/(perLine*50)%8)
				for range perLine {
					in = append(in, ' ')
					in = strconv.AppendFloat(in, math.Round(rng.ExpFloat64()*20e3)/1e3, 'f', -1, 64)
					i++
				}
				in = append(in, '\n')
			}
			benchDecode(b, in)
		})
	}
}

// BenchmarkFrameDecode decodes frames of 1 to 65536 float32 or float64
// values.
func BenchmarkFrameDecode(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	vals := make([]float64, benchValues)
	for i := range vals {
		vals[i] = rng.NormFloat64() * 100
	}
	for _, f32 := range []bool{true, false} {
		for _, perFrame := range []int{1, 64, 4096, 65536} {
			name := fmt.Sprintf("float64/values=%d", perFrame)
			if f32 {
				name = fmt.Sprintf("float32/values=%d", perFrame)
			}
			b.Run(name, func(b *testing.B) {
				in := []byte(Magic)
				for i := 0; i < len(vals); i += perFrame {
					var err error
					in, err = AppendFrame(in, "latency", vals[i:i+perFrame], f32)
					if err != nil {
						b.Fatal(err)
					}
				}
				benchDecode(b, in)
			})
		}
	}
}

// BenchmarkDecodeFloat32s compares encoding/binary with shifting bytes by
// hand to decode float32 values.
func BenchmarkDecodeFloat32s(b *testing.B) {
	src := make([]byte, 4*4096)
	for i := range 4096 {
		binary.LittleEndian.PutUint32(src[4*i:], math.Float32bits(float32(i)))
	}
	dst := make([]float64, 0, 4096)
	b.Run("binary", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			dst = dst[:len(src)/4]
			for i := range dst {
				dst[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:])))
			}
		}
	})
	b.Run("bytes", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			dst = dst[:len(src)/4]
			for i := range dst {
				p := src[4*i : 4*i+4]
				dst[i] = float64(math.Float32frombits(uint32(p[0]) | uint32(p[1])<<8 | uint32(p[2])<<16 | uint32(p[3])<<24))
			}
		}
	})
}

// BenchmarkDecodeValues decodes a frame of 65,536 finite float32 values
// into float32 and float64 slices, as the framed decoder and the Kafka
// consumer do, and one of 65,536 float64 values.
func BenchmarkDecodeValues(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	src := make([]byte, 4*65536)
	for i := 0; i < len(src); i += 4 {
		binary.LittleEndian.PutUint32(src[i:], math.Float32bits(float32(r.NormFloat64())))
	}
	b.Run("float32", func(b *testing.B) {
		dst := make([]float32, 0, len(src)/4)
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			dst, _, _, _ = DecodeFloat32(dst[:0], src)
		}
	})
	b.Run("float64", func(b *testing.B) {
		dst := make([]float64, 0, len(src)/4)
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			dst, _, _, _ = DecodeFloat32(dst[:0], src)
		}
	})
	src64 := make([]byte, 8*65536)
	for i := 0; i < len(src64); i += 8 {
		binary.LittleEndian.PutUint64(src64[i:], math.Float64bits(r.NormFloat64()))
	}
	b.Run("float64 frames", func(b *testing.B) {
		dst := make([]float64, 0, len(src64)/8)
		b.SetBytes(int64(len(src64)))
		for b.Loop() {
			dst, _, _ = DecodeFloat64(dst[:0], src64)
		}
	})
}
