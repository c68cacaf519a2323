package ingest

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestAppendFrame(t *testing.T) {
	b, err := AppendFrame([]byte("x"), "ab", []float64{1, -2}, true)
	if err != nil {
		t.Fatal(err)
	}
	want := "x" + "\x0d\x00\x00\x00" + "\x02\x00ab" + "\x01" + "\x00\x00\x80\x3f" + "\x00\x00\x00\xc0"
	if string(b) != want {
		t.Errorf("AppendFrame = %q, want %q", b, want)
	}
	b, err = AppendFrame(nil, "c", []float64{0.5}, false)
	if err != nil {
		t.Fatal(err)
	}
	want = "\x0c\x00\x00\x00" + "\x01\x00c" + "\x02" + "\x00\x00\x00\x00\x00\x00\xe0\x3f"
	if string(b) != want {
		t.Errorf("AppendFrame = %q, want %q", b, want)
	}

	if b, err := AppendFrame([]byte("x"), "a b", nil, true); err == nil || string(b) != "x" {
		t.Errorf("AppendFrame with a bad name = %q, %v", b, err)
	}
	head := 2 + 1 + 1
	most := make([]float64, (MaxFrameLen-head)/8)
	b, err = AppendFrame(nil, "a", most, false)
	if err != nil || len(b) != 4+head+8*len(most) {
		t.Errorf("AppendFrame of the most values: %d bytes, %v", len(b), err)
	}
	if _, err := AppendFrame(nil, "a", append(most, 1), false); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("AppendFrame of one value too many: %v, want %v", err, ErrFrameTooLarge)
	}
	if n, m := FrameHeadLen("a"), MaxFrameValues("a", 8); n != 4+head || m != len(most) || MaxFrameValues("a", 4) != (MaxFrameLen-head)/4 {
		t.Errorf("FrameHeadLen = %d, MaxFrameValues = %d; want %d and %d", n, m, 4+head, len(most))
	}
}

// TestParseFloat checks that parseFloat agrees with strconv.ParseFloat.
func TestParseFloat(t *testing.T) {
	toks := []string{
		"0", "-0", "+0", "0.0", "-0.0", ".5", "5.", "-.5", "+5.", ".", "-", "+", "", "..5", "5..", "1.2.3",
		"123456789012345", "1234567890123456", "12345678901234567", "0.000000000000001", "0.0000000000000001",
		"99999999999999.9", "9007199254740993", "0.1", "0.2", "0.3", "1.7976931348623157", "4.9406564584124654",
		"1e5", "1E-5", "0x10p0", "0x1p-2", "0X10", "1_000", "1_0.5", "inf", "-Inf", "NaN", "1e309", "-1e309", "1e-400", "00000000000000012",
		" 1", "1 ", "1,5", "٣",
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 100000 {
		var b []byte
		if rng.IntN(2) == 0 {
			b = append(b, "+-"[rng.IntN(2)])
		}
		for range rng.IntN(18) {
			b = append(b, "0123456789012345678."[rng.IntN(20)])
		}
		toks = append(toks, string(b))
		toks = append(toks, strconv.FormatFloat(rng.NormFloat64()*math.Pow(10, float64(rng.IntN(30)-15)), 'f', -1, 64))
	}
	for _, tok := range toks {
		got, ok := parseFloat([]byte(tok))
		want, err := strconv.ParseFloat(tok, 64)
		// Values are decimal: no digit separators, no hexadecimal.
		wantOK := (err == nil || math.IsInf(want, 0)) && !strings.ContainsAny(tok, "_xX")
		if ok != wantOK || ok && math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Errorf("parseFloat(%q) = %v, %v; strconv says %v, %v", tok, got, ok, want, err)
		}
	}
	if n := testing.AllocsPerRun(100, func() { parseFloat([]byte("12345.678")) }); n != 0 {
		t.Errorf("parseFloat allocates %v times", n)
	}
}
