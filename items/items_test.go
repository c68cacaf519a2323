package items

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"streamd/internal/radix"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		item string
		want error
	}{
		{"/index.html", nil},
		{"café", nil},
		{strings.Repeat("x", MaxLen), nil},
		{"", ErrEmpty},
		{strings.Repeat("x", MaxLen+1), ErrTooLong},
		{"\xff", ErrBadUTF8},
		{"a\xc3", ErrBadUTF8},
	} {
		if err := Check([]byte(c.item)); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("Check(%.20q) = %v, want %v", c.item, err, c.want)
		}
	}
}

// TestFingerprint checks that every fingerprint is carried by a finite
// float64 other than −0 whose key it is, and that the carriers order like
// the fingerprints.
func TestFingerprint(t *testing.T) {
	hashes := []uint64{0, 1, minKey - 1, minKey, maxKey, maxKey + 1, math.MaxUint64, negZero, negZero + 1, negZero - 1, 1 << 63}
	for i := range 1000 {
		hashes = append(hashes, uint64(i)*0x9e3779b97f4a7c15)
	}
	var fps []uint64
	for _, h := range hashes {
		fp := Fingerprint(h)
		v := Value(fp)
		if math.IsNaN(v) || math.IsInf(v, 0) || (v == 0 && math.Signbit(v)) {
			t.Fatalf("hash %#x: fingerprint %#x carried by %v", h, fp, v)
		}
		if FromValue(v) != fp || radix.Key64(v) != fp {
			t.Fatalf("hash %#x: fingerprint %#x, back from %v: %#x", h, fp, v, FromValue(v))
		}
		if h >= minKey && h <= maxKey && h != negZero && fp != h {
			t.Fatalf("valid hash %#x changed to %#x", h, fp)
		}
		fps = append(fps, fp)
	}
	slices.Sort(fps)
	fps = slices.Compact(fps)
	for i := 1; i < len(fps); i++ {
		if !(Value(fps[i-1]) < Value(fps[i])) {
			t.Fatalf("carriers of %#x and %#x out of order", fps[i-1], fps[i])
		}
	}
	h := SipHash(Key{1})
	if h([]byte("a")) == h([]byte("b")) || h([]byte("a")) == SipHash(Key{2})([]byte("a")) {
		t.Error("SipHash does not depend on its input and key")
	}
}

func TestBatch(t *testing.T) {
	var b, c Batch
	list := []string{"a", "bc", "", "def"}
	for _, x := range list {
		b.AppendString(x)
	}
	c.Append([]byte("z"))
	c.AppendBatch(&b, 1, 4)
	want := []string{"z", "bc", "", "def"}
	for i, x := range want {
		if string(c.Item(i)) != x {
			t.Errorf("item %d = %q, want %q", i, c.Item(i), x)
		}
	}
	if c.Len() != 4 || c.Size() != 6 {
		t.Errorf("Len %d, Size %d", c.Len(), c.Size())
	}
	h := SipHash(Key{})
	fps := c.AppendFingerprints(nil, h)
	for i, x := range want {
		if fps[i] != Fingerprint(h([]byte(x))) {
			t.Errorf("fingerprint %d", i)
		}
	}
	c.Reset()
	if c.Len() != 0 || c.Size() != 0 {
		t.Error("Reset left items")
	}
}

func batchOf(list ...string) (*Batch, []uint64) {
	var b Batch
	h := SipHash(Key{7})
	for _, x := range list {
		b.AppendString(x)
	}
	return &b, b.AppendFingerprints(nil, h)
}

// checkKnownSize checks the running size of n's strings against a count of
// them.
func checkKnownSize(t *testing.T, n *Names) {
	t.Helper()
	want := 0
	for _, s := range n.known {
		want += len(s) + 32
	}
	if n.knownSize != want {
		t.Fatalf("knownSize %d, want %d", n.knownSize, want)
	}
}

// TestNames follows the strings through windows: new table entries get
// the string of their window, pruned ones lose it, raw chunks expire once
// summarised and older than retain, and everything survives encoding.
func TestNames(t *testing.T) {
	n := NewNames(4, 4)
	b, fps := batchOf("a", "b", "a", "c", "d", "a", "e", "f", "g", "a")
	n.Append(fps, b)
	fp := func(x string) uint64 { _, f := batchOf(x); return f[0] }
	// Before any Sync the strings come from the raw chunks.
	if got := n.Lookup([]uint64{fp("a"), fp("g"), fp("zz")}); !slices.Equal(got, []string{"a", "g", ""}) {
		t.Fatalf("Lookup before Sync = %q", got)
	}
	table := []uint64{fp("a"), fp("c")}
	slices.Sort(table)
	n.Sync(0, table)
	if n.Len() != 2 {
		t.Fatalf("%d strings after Sync, want 2", n.Len())
	}
	// The window at 4 brings d and drops c.
	table = []uint64{fp("a"), fp("d")}
	slices.Sort(table)
	n.Sync(4, table)
	if got := n.Lookup([]uint64{fp("a"), fp("d")}); !slices.Equal(got, []string{"a", "d"}) {
		t.Fatalf("Lookup = %q", got)
	}
	if _, ok := n.known[fp("c")]; ok {
		t.Fatal("the string of a pruned fingerprint is kept")
	}
	checkKnownSize(t, n)
	// Chunk 0 is summarised and older than the newest 4 items: gone.
	if n.Raw() != 6 {
		t.Fatalf("%d raw items, want 6 (chunks at 4 and 8)", n.Raw())
	}
	if got := n.Lookup([]uint64{fp("b")}); got[0] != "" {
		t.Fatalf("string of b kept after its chunk expired: %q", got[0])
	}
	data, err := n.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var d Names
	if err := d.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if got := d.Lookup([]uint64{fp("a"), fp("d"), fp("g")}); !slices.Equal(got, []string{"a", "d", "g"}) || d.Raw() != 6 || d.pos != 10 {
		t.Fatalf("decoded: Lookup %q, %d raw, pos %d", got, d.Raw(), d.pos)
	}
	checkKnownSize(t, &d)
	d.Rekey(func(b []byte) uint64 { return uint64(len(b)) }) // "a" and "d" fall together
	if d.Len() != 1 {
		t.Fatalf("%d strings after a rekey that joins both, want 1", d.Len())
	}
	checkKnownSize(t, &d)
	b2, fps2 := batchOf("h", "i")
	d.Append(fps2, b2)
	if d.pos != 12 || len(d.chunks) != 1 { // the chunk at 4 expired
		t.Fatalf("after decoding and appending: pos %d, %d chunks", d.pos, len(d.chunks))
	}
	for i := range data {
		bad := slices.Clone(data)
		bad[i] ^= 0x40
		if err := new(Names).UnmarshalBinary(bad); err == nil {
			t.Fatalf("corrupt byte %d accepted", i)
		}
	}
}

func FuzzNamesUnmarshal(f *testing.F) {
	n := NewNames(3, 3)
	b, fps := batchOf("x", "y", "x", "z")
	n.Append(fps, b)
	n.Sync(0, []uint64{fps[0]})
	data, _ := n.MarshalBinary()
	f.Add(data)
	f.Add([]byte("NAME\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var d Names
		if err := d.UnmarshalBinary(data); err != nil {
			return
		}
		// A valid decoded Names takes more items and encodes again.
		b, fps := batchOf("p", "q")
		d.Append(fps, b)
		d.Lookup(fps)
		if _, err := d.MarshalBinary(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestASCII(t *testing.T) {
	for n := range 70 {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + i%26)
		}
		if !ASCII(b) {
			t.Errorf("ASCII(%q) = false", b)
		}
		for i := range b {
			for _, c := range []byte{0x80, 0xc3, 0xff} {
				b[i] = c
				if ASCII(b) {
					t.Errorf("ASCII of %d bytes with %#x at %d = true", n, c, i)
				}
			}
			b[i] = 0x7f
		}
	}
}

func TestPutFingerprints(t *testing.T) {
	var b Batch
	for i := range 100 {
		b.AppendString(strings.Repeat("x", i%13+1) + string(rune('a'+i%26)))
	}
	h := SipHash(Key{1, 2, 3})
	want := b.AppendFingerprints(nil, h)
	got := make([]uint64, b.Len())
	for _, cut := range []int{0, 1, 37, 99, 100} {
		clear(got)
		b.PutFingerprints(got[:cut], h, 0)
		b.PutFingerprints(got[cut:], h, cut)
		if !slices.Equal(got, want) {
			t.Errorf("fingerprints put in two parts cut at %d differ from AppendFingerprints", cut)
		}
	}
}

// TestRecentNames follows the names a stream keeps for its last-n and
// time-window answers (NewRecentNames): no table, so Sync panics, and its
// chunks expire once older than the newest retain items, without any
// Sync; the strings of the items kept are found, older ones are not, and
// it survives encoding.
func TestRecentNames(t *testing.T) {
	n := NewRecentNames(3, 4, 0)
	if !n.IsRecent() {
		t.Fatal("not recent")
	}
	items := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	for i := 0; i < len(items); i += 2 {
		b, fps := batchOf(items[i : i+2]...)
		n.Append(fps, b)
	}
	fp := func(x string) uint64 { _, f := batchOf(x); return f[0] }
	// 8 items in chunks of 3 starting at 0, 3 and 6: the chunk at 0 ends
	// at 3, older than the newest 4 (items 4–7), and is gone.
	if n.Raw() != 5 {
		t.Fatalf("%d raw items, want 5 (chunks at 3 and 6)", n.Raw())
	}
	if got := n.Lookup([]uint64{fp("a"), fp("d"), fp("h")}); !slices.Equal(got, []string{"", "d", "h"}) {
		t.Fatalf("Lookup = %q", got)
	}
	data, err := n.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var d Names
	if err := d.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if !d.IsRecent() || d.Raw() != 5 || d.Pos() != 8 {
		t.Fatalf("decoded: recent %v, %d raw, pos %d", d.IsRecent(), d.Raw(), d.Pos())
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Sync of recent names did not panic")
		}
	}()
	n.Sync(0, nil)
}

// longItems returns count distinct items of size bytes, numbered from
// first.
func longItems(first, count, size int) []string {
	out := make([]string, count)
	for i := range out {
		id := strconv.Itoa(first + i)
		out[i] = id + strings.Repeat("x", size-len(id))
	}
	return out
}

// TestRecentNamesLimit checks that recent names with a limit on their bytes
// hold no more than it after each Append however long the items, keep the
// newest items that fit (and always the newest one), cost no more than
// Cost says, and survive encoding
// with chunks that end before a window's end.
func TestRecentNamesLimit(t *testing.T) {
	const limit = 64 << 10
	n := NewRecentNames(1000, 1_000_000, limit)
	next := 0
	for range 100 {
		b, fps := batchOf(longItems(next, 50, MaxLen)...)
		next += 50
		before, cost := n.Bytes(), n.Cost(b)
		n.Append(fps, b)
		if got := n.Bytes(); got > limit {
			t.Fatalf("after %d items: %d bytes, limit %d", next, got, limit)
		}
		if grew := int64(n.Bytes() - before); grew > cost {
			t.Fatalf("after %d items: Append grew %d bytes, Cost %d", next, grew, cost)
		}
	}
	raw := n.Raw()
	if raw < limit/2/(MaxLen+16) || raw >= int64(next) {
		t.Fatalf("%d raw items of %d kept under a limit of %d bytes", raw, next, limit)
	}
	newest, oldest := longItems(next-int(raw), int(raw), MaxLen), longItems(0, 1, MaxLen)[0]
	for _, x := range newest {
		if _, fps := batchOf(x); n.Lookup(fps)[0] != x {
			t.Fatalf("item %.8s… of the newest %d not found", x, raw)
		}
	}
	if _, fps := batchOf(oldest); n.Lookup(fps)[0] != "" {
		t.Fatal("the oldest item is still kept")
	}
	data, err := n.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var d Names
	if err := d.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if d.Raw() != raw || d.Pos() != int64(next) {
		t.Fatalf("decoded: %d raw of %d, want %d of %d", d.Raw(), d.Pos(), raw, next)
	}

	// One item longer than an eighth of the limit is kept on its own.
	small := NewRecentNames(1000, 1000, 500)
	b, fps := batchOf(longItems(0, 3, 300)...)
	small.Append(fps, b)
	if small.Raw() != 1 || small.Lookup(fps[2:])[0] == "" {
		t.Fatalf("%d raw items kept of 300 bytes each under a limit of 800, want the newest", small.Raw())
	}
}

// TestNamesCost checks that Cost bounds what Append adds to the bytes of
// names with a table, from the first item on and across chunks, and that
// chunks of long items keep no buffer of their bytes once they expire.
func TestNamesCost(t *testing.T) {
	n := NewNames(100, 0)
	next := 0
	for i := range 40 {
		size, count := 10+i*25, 7+i*3
		b, fps := batchOf(longItems(next, count, size)...)
		next += count
		before, cost := n.Bytes(), n.Cost(b)
		n.Append(fps, b)
		if grew := int64(n.Bytes() - before); grew > cost {
			t.Fatalf("batch %d: Append of %d items of %d bytes grew %d bytes, Cost %d", i, count, size, grew, cost)
		}
	}
	// Summarise every full window: their chunks expire, and their
	// buffers of item bytes go.
	for _, start := range n.PendingStarts() {
		if start+100 <= n.Pos() {
			n.Sync(start, nil)
		}
	}
	for _, c := range n.spares {
		if cap(c.items.data) > maxSpareData {
			t.Errorf("a spare chunk keeps %d bytes of items", cap(c.items.data))
		}
	}
}
