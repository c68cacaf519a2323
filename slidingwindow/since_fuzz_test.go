package slidingwindow

import (
	"bytes"
	"slices"
	"testing"

	"streamd/internal/codec"
)

// roomyPrev returns a window built by Add in small batches, so that its
// chunks have room past its values (as a live or decoded-after window's
// do), and encodings of windows that follow it.
func roomyPrev(t testing.TB) (*Window, [][]byte) {
	w, err := NewFloat32(0.1, 300)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 250 {
		w.Add(int64(i/7), float64(i%23))
	}
	var seeds [][]byte
	for _, k := range []int{0, 1, 6, 44, 50, 51, 120, 299, 300, 400} {
		next, _ := NewFloat32(0.1, 300)
		if err := next.UnmarshalBinary(mustEncode(t, w)); err != nil {
			t.Fatal(err)
		}
		next.KeepFloat32()
		for i := range k {
			next.Add(int64(40+i/5), float64(i%5))
		}
		enc, err := next.AppendBinarySince(nil, w.Added())
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, enc)
	}
	return w, seeds
}

// FuzzUnmarshalAfterPayload fuzzes UnmarshalBinaryAfter behind its checksum
// (the input is a version byte and a payload, sealed), after a window
// whose chunks have room past its values. A window decoded from values
// added since prev's position holds prev's newest values, then those:
// checked; prev is left as it was; the window decoded answers, takes
// values and encodes to what decodes again.
func FuzzUnmarshalAfterPayload(f *testing.F) {
	prev, seeds := roomyPrev(f)
	for _, s := range seeds {
		f.Add(s[len(magic) : len(s)-4])
	}
	before := mustEncode(f, prev)
	prevVals := prev.AppendNewest(nil, prev.RawLen())
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) == 0 {
			return
		}
		data := codec.End(append(codec.Begin(nil, magic, raw[0]), raw[1:]...), 0)
		var d Window
		err := d.UnmarshalBinaryAfter(data, prev)
		if !bytes.Equal(mustEncode(t, prev), before) {
			t.Fatalf("decoding after a window (%v) changed it", err)
		}
		if err != nil {
			return
		}
		if raw[0] == sinceVersion && d.pos-prev.pos < min(d.pos, d.ring.capacity) && d.pos >= prev.pos {
			kept := d.RawLen() - (d.pos - prev.pos)
			got := d.AppendNewest(nil, d.RawLen())[:kept]
			want := prevVals[len(prevVals)-int(kept):]
			if !slices.Equal(got, want) {
				t.Fatalf("the window decoded after prev holds %v before the values added, prev's newest are %v", got, want)
			}
		}
		checkDecoded(t, mustEncode(t, &d))
	})
}
