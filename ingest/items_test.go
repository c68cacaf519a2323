package ingest

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"streamd/feed"
	"streamd/items"
)

// itemSink is a recordSink that takes items: the streams whose name starts
// with "i" are item streams; items sent to others fail with
// feed.ErrWrongKind, and so do values sent to item streams.
type itemSink struct {
	*recordSink
}

func newItemSink() *itemSink {
	s := newRecordSink()
	s.isItems = func(stream string) bool { return strings.HasPrefix(stream, "i") }
	return &itemSink{s}
}

func decodeItems(t testing.TB, in []byte, bufSize int, sizes []int) (*itemSink, error) {
	t.Helper()
	s := newItemSink()
	d := Decoder{Sink: s, bufSize: bufSize, MaxFrameBytes: 1 << 16}
	err := d.Decode(context.Background(), &chunkReader{data: in, sizes: sizes})
	return s, err
}

func itemFrame(stream string, list ...[]byte) []byte {
	body := []byte{}
	for _, x := range list {
		body = binary.LittleEndian.AppendUint16(body, uint16(len(x)))
		body = append(body, x...)
	}
	return rawFrame(u16(len(stream)), []byte(stream), []byte{typeItems}, body)
}

func checkItemResult(t *testing.T, s *itemSink, want map[string][]string, rejects map[reject]int) {
	t.Helper()
	if !maps.EqualFunc(s.items, want, slices.Equal) {
		t.Errorf("items %q, want %q", s.items, want)
	}
	got := s.result().rejects
	if !maps.Equal(got, rejects) && !(len(got) == 0 && len(rejects) == 0) {
		t.Errorf("rejects %v, want %v", got, rejects)
	}
}

func TestItemFrames(t *testing.T) {
	long := bytes.Repeat([]byte("x"), items.MaxLen+1)
	max := bytes.Repeat([]byte("é"), items.MaxLen/2)
	in := []byte(Magic)
	in = append(in, itemFrame("ia", []byte("/index.html"), []byte("a b"), []byte{}, long, []byte{0xff, 'x'}, max)...)
	in = append(in, itemFrame("ib")...)                                                      // no items: nothing
	in = append(in, itemFrame("values", []byte("x"))...)                                     // a value stream
	in = append(in, rawFrame(u16(2), []byte("ia"), []byte{typeItems}, []byte{5, 0, 'a'})...) // overruns its frame
	in = append(in, rawFrame(u16(2), []byte("ia"), []byte{typeItems}, []byte{1})...)         // a half header
	in = append(in, frames(t, false, "values", []float64{1})[len(Magic):]...)
	in = append(in, frames(t, false, "ia", []float64{2})[len(Magic):]...) // values to an item stream
	in = append(in, itemFrame("ia", []byte("last"))...)
	want := map[string][]string{"ia": {"/index.html", "a b", string(max), "last"}}
	rejects := map[reject]int{
		{"ia", feed.ReasonEmptyItem}: 1, {"ia", feed.ReasonItemTooLong}: 1, {"ia", feed.ReasonBadUTF8}: 1,
		{"ia", feed.ReasonMalformed}: 2, {"values", feed.ReasonWrongKind}: 1, {"ia", feed.ReasonWrongKind}: 1,
	}
	for _, sizes := range [][]int{nil, {1}, {7}, {1000}} {
		for _, buf := range []int{0, 16} {
			if buf == 16 && sizes == nil {
				continue
			}
			s, err := decodeItems(t, in, buf, sizes)
			if err != nil {
				t.Fatal(err)
			}
			checkItemResult(t, s, want, rejects)
			for _, at := range s.times {
				if !at.IsZero() {
					t.Errorf("items arrived at %v, want the sink's clock", at)
				}
			}
			if got := s.result().values["values"]; !slices.Equal(got, []float64{1}) {
				t.Errorf("values %v, want [1]", got)
			}
		}
	}
	// A sink without item streams refuses the items as of the wrong kind.
	got, err := decodeAll(in, nil, 0, 0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := got.rejects[reject{"ia", feed.ReasonWrongKind}]; n != 4 {
		t.Errorf("%d items refused by a sink without item streams, want 4", n)
	}
}

func TestAppendItemsFrame(t *testing.T) {
	list := []string{"a", "b c", "\u00e9"}
	in, err := AppendItemsFrame([]byte(Magic), "ix", list)
	if err != nil {
		t.Fatal(err)
	}
	s, err := decodeItems(t, in, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkItemResult(t, s, map[string][]string{"ix": list}, nil)
	if _, err := AppendItemsFrame(nil, "ix", []string{strings.Repeat("x", items.MaxLen+1)}); err == nil {
		t.Error("AppendItemsFrame took an item over the limit")
	}
	if _, err := AppendItemsFrame(nil, "bad name", list); err == nil {
		t.Error("AppendItemsFrame took a bad stream name")
	}
}

func TestItemLines(t *testing.T) {
	in := "ia /index.html  \"a b\" \"tab\\there\" \"quote\\\"d\" x#y\n" +
		"ia \"unterminated\n" +
		"ia \"bad\"end ok\n" +
		"ia \"\" \"\\xff\" " + strings.Repeat("x", items.MaxLen+1) + "\n" +
		"ia\n" +
		"values 1 2\n" +
		"ia \"caf\u00e9\"\n" +
		"ia \"raw\xffbyte\" after\n" +
		"ia \"unterminated then more\n"
	s, err := decodeItems(t, []byte(in), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A refused token is refused alone: "bad"end leaves ok, a token with a
	// raw invalid byte leaves after, and an unterminated quote ends at the
	// next blank, leaving then and more.
	want := map[string][]string{"ia": {"/index.html", "a b", "tab\there", "quote\"d", "x#y", "ok", "café", "after", "then", "more"}}
	rejects := map[reject]int{
		{"ia", feed.ReasonMalformed}: 4, // unterminated twice, "bad"end, an empty line
		{"ia", feed.ReasonEmptyItem}: 1, {"ia", feed.ReasonBadUTF8}: 2, {"ia", feed.ReasonItemTooLong}: 1,
	}
	checkItemResult(t, s, want, rejects)
	if got := s.result().values["values"]; !slices.Equal(got, []float64{1, 2}) {
		t.Errorf("values %v, want [1 2]", got)
	}
}

// FuzzItemFrames checks the item frames against a model of the protocol.
func FuzzItemFrames(f *testing.F) {
	f.Add(itemFrame("ia", []byte("x"), []byte{}, []byte{0xc3}), uint8(0), false)
	f.Add(append(itemFrame("ia", bytes.Repeat([]byte("y"), 40)), rawFrame(u16(2), []byte("ib"), []byte{typeItems}, []byte{3, 0, 'a'})...), uint8(3), true)
	f.Add(itemFrame("v", []byte("x")), uint8(1), false)
	f.Fuzz(func(t *testing.T, body []byte, chunk uint8, smallBuffer bool) {
		in := append([]byte(Magic), body...)
		var sizes []int
		if chunk > 0 {
			sizes = []int{int(chunk)}
		}
		buf := 0
		if smallBuffer {
			buf = 16
		}
		s, err := decodeItems(t, in, buf, sizes)
		// A sink that takes hints of the frames ahead gets the same.
		ps := newPrefetchSink()
		ps.isItems = s.isItems
		if _, perr := decodeInto(ps, in, sizes, buf, 0, 1<<16); fmt.Sprint(perr) != fmt.Sprint(err) {
			t.Fatalf("decoding %q with hints returned %v, without %v", in, perr, err)
		}
		if d := diff(ps.result(), s.result()); d != "" || !maps.EqualFunc(ps.items, s.items, slices.Equal) {
			t.Fatalf("decoding %q with hints: items %q, want %q\n%s", in, ps.items, s.items, d)
		}
		if len(ps.bad) > 0 {
			t.Fatalf("decoding %q: hints break the contract: %q", in, ps.bad)
		}
		want, rejects, fail, cut := itemFrameModel(body)
		if fail != (err != nil) {
			t.Fatalf("Decode returned %v, want failure %v", err, fail)
		}
		if !maps.EqualFunc(s.items, want.items, slices.Equal) {
			t.Fatalf("decoding %q: items %q, want %q", in, s.items, want.items)
		}
		got := s.result().rejects
		for k, n := range rejects {
			if got[k] != n && !(cut && k.reason == feed.ReasonMalformed) {
				t.Fatalf("decoding %q: rejects %v, want %v", in, got, rejects)
			}
		}
	})
}

type itemModel struct {
	items map[string][]string
}

// itemFrameModel decodes item frames plainly, and returns whether the
// input ends in a frame cut short, whose "malformed" it does not model.
// Other frames count only through their rejects, which it does not model
// either (FuzzFrameProtocol does).
func itemFrameModel(body []byte) (m itemModel, rejects map[reject]int, fail, cut bool) {
	m = itemModel{items: make(map[string][]string)}
	rejects = make(map[reject]int)
	for len(body) > 0 {
		if len(body) < 4 {
			return m, rejects, false, true
		}
		n := int(binary.LittleEndian.Uint32(body))
		body = body[4:]
		if n > 1<<16 {
			return m, rejects, true, false
		}
		if len(body) < n {
			// The whole items of a frame cut short are accepted.
			n, cut = len(body), true
		}
		frame := body[:n]
		body = body[n:]
		if n < 3 {
			continue
		}
		nl := int(binary.LittleEndian.Uint16(frame))
		if 2+nl+1 > n || !feed.IsValidName(frame[2:2+nl]) || frame[2+nl] != typeItems {
			continue
		}
		stream := string(frame[2 : 2+nl])
		rest := frame[2+nl+1:]
		var list []string
		for len(rest) > 0 {
			if len(rest) < 2 || 2+int(binary.LittleEndian.Uint16(rest)) > len(rest) {
				if !cut {
					rejects[reject{stream, feed.ReasonMalformed}]++
				}
				break
			}
			k := int(binary.LittleEndian.Uint16(rest))
			x := rest[2 : 2+k]
			rest = rest[2+k:]
			switch {
			case k == 0:
				rejects[reject{stream, feed.ReasonEmptyItem}]++
			case k > items.MaxLen:
				rejects[reject{stream, feed.ReasonItemTooLong}]++
			case !utf8.Valid(x):
				rejects[reject{stream, feed.ReasonBadUTF8}]++
			default:
				list = append(list, string(x))
			}
		}
		if len(list) > 0 {
			if strings.HasPrefix(stream, "i") {
				m.items[stream] = append(m.items[stream], list...)
			} else {
				rejects[reject{stream, feed.ReasonWrongKind}] += len(list)
			}
		}
	}
	return m, rejects, false, cut
}

// FuzzItemLines checks that every item the line protocol accepts is valid,
// and that lines of bare tokens give exactly their fields.
func FuzzItemLines(f *testing.F) {
	f.Add([]byte("ia a b \"c d\" \"e\\\"\" \"\\xff\"\nib \"x\ny z\n"), uint8(0))
	f.Add([]byte("ia \"\" x\n\tia\ty\r\n"), uint8(2))
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		if len(in) == 0 || in[0] != 'i' {
			in = append([]byte("ia "), in...)
		}
		var sizes []int
		if chunk > 0 {
			sizes = []int{int(chunk)}
		}
		s, err := decodeItems(t, in, 0, sizes)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.IndexByte(in, '"') >= 0 || bytes.IndexByte(in, '#') >= 0 || bytes.IndexByte(in, '\r') >= 0 {
			return
		}
		want := make(map[string][]string)
		for _, line := range strings.Split(string(in), "\n") {
			fields := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' })
			if len(fields) < 2 || !feed.IsValidName(fields[0]) || !strings.HasPrefix(fields[0], "i") {
				continue
			}
			for _, x := range fields[1:] {
				if items.Check([]byte(x)) == nil {
					want[fields[0]] = append(want[fields[0]], x)
				}
			}
		}
		if !maps.EqualFunc(s.items, want, slices.Equal) {
			t.Fatalf("decoding %q: items %q, want %q", in, s.items, want)
		}
	})
}
