package ingest

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

func TestParsePair(t *testing.T) {
	for _, c := range []struct {
		tok  string
		x, y float64
		ok   bool
	}{
		{"1:2", 1, 2, true},
		{"-0.5:1e3", -0.5, 1000, true},
		{"12.5:-7", 12.5, -7, true},
		{"1e999:3", math.Inf(1), 3, true},
		{"NaN:1", math.NaN(), 1, true},
		{"1:2:3", 0, 0, false},
		{"1:", 0, 0, false},
		{":1", 0, 0, false},
		{"1", 0, 0, false},
		{"0x1p-2:1", 0, 0, false},
		{"a:b", 0, 0, false},
	} {
		x, y, ok := parsePair([]byte(c.tok))
		same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
		if ok != c.ok || ok && (!same(x, c.x) || !same(y, c.y)) {
			t.Errorf("parsePair(%q) = %v, %v, %v; want %v, %v, %v", c.tok, x, y, ok, c.x, c.y, c.ok)
		}
	}
}

func TestPairsText(t *testing.T) {
	x, y, tokens, bad := appendPairsText(nil, nil, []byte("1:2, 3:-4\n5:6 bad 7\t8:9e1,"))
	if !slices.Equal(x, []float64{1, 3, 5, 8}) || !slices.Equal(y, []float64{2, -4, 6, 90}) || tokens != 6 || bad != 2 {
		t.Fatalf("pairs %v %v, %d tokens, %d bad", x, y, tokens, bad)
	}
}

func TestAppendPairsFrame(t *testing.T) {
	x, y := []float64{1, -2.5, 3}, []float64{10, 20, -30}
	f, err := AppendPairsFrame(nil, "lat", x, y)
	if err != nil {
		t.Fatal(err)
	}
	if n := binary.LittleEndian.Uint32(f); int(n) != len(f)-4 || f[4] != 3 || string(f[6:9]) != "lat" || f[9] != typePairs64 {
		t.Fatalf("frame head % x", f[:10])
	}
	gx, gy := appendPairs64(nil, nil, f[10:])
	if !slices.Equal(gx, x) || !slices.Equal(gy, y) {
		t.Fatalf("decoded %v %v", gx, gy)
	}
	if _, err := AppendPairsFrame(nil, "lat", x, y[:2]); err == nil {
		t.Fatal("a frame of x and y of different lengths")
	}
	if _, err := AppendPairsFrame(nil, "", x, y); err == nil {
		t.Fatal("a frame without a stream name")
	}
}
