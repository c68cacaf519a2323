package items

import (
	"encoding/binary"
	"fmt"
	"slices"

	"streamd/internal/codec"
)

// Names keeps the strings of an item stream's fingerprints that answers
// may name:
//
//   - the fingerprints in the stream's lossy-counting table, which answer
//     all-history frequencies and heavy hitters: Sync keeps them in step
//     with the table after each window is summarised, and drops the strings
//     of the fingerprints the table prunes;
//   - the newest items, raw, in chunks of one window each: the windows not
//     yet summarised (the partial window and the windows being sorted),
//     whose values queries count exactly, and the newest Retain items (the
//     raw part of the sliding window), for last-n and time-window answers.
//
// Its memory is the table's strings plus the raw items kept: about
// max(Retain, pending items) × (item length + 16) bytes. Cost says, before
// Append, how much more it will hold.
//
// A stream whose values are summarised apart for each of their sources
// (one lossy table per source) keeps one Names per source, with retain 0,
// for its table and its windows not yet summarised, and one Names of its
// newest items from every source without a table (NewRecentNames) for
// its last-n and time-window answers. That one may be given a limit on its
// bytes: it then keeps the newest items that fit, which may be fewer than
// Retain.
//
// Names is a library: no goroutines, not safe for concurrent use.
type Names struct {
	window int64 // items per chunk: the stream's window size
	retain int64 // summarised items kept raw
	pos    int64 // items appended
	recent bool  // no table: chunks count as summarised (NewRecentNames)
	limit  int64 // most bytes held, 0 for none (NewRecentNames)

	known     map[uint64]string // strings of the table's fingerprints
	knownSize int               // bytes of known: its strings and 32 per entry
	table     []uint64          // the table's fingerprints at the last Sync, ascending

	chunks []*chunk // oldest first; chunk i starts at a multiple of window
	spares []*chunk // expired chunks whose memory later ones reuse, at most maxSpares
}

// chunk is the items of one window, in arrival order; with a limit on the
// bytes, a chunk ends early when its items reach an eighth of it.
type chunk struct {
	start  int64
	fps    []uint64
	items  Batch
	synced bool // its window is in the lossy table
}

func (c *chunk) end() int64 { return c.start + int64(len(c.fps)) }

// bytes reports the memory c holds, approximately.
func (c *chunk) bytes() int64 { return int64(8*cap(c.fps) + c.items.Bytes() + 64) }

// maxSpares is the most expired chunks a Names keeps for reuse: windows
// are summarised in batches of four, so that many chunks may expire at
// once.
const maxSpares = 4

// maxSpareData is the largest buffer of item bytes a spare chunk keeps: a
// chunk of long items gives its buffer back when it expires, so that the
// spares hold little beyond their fingerprints (8 bytes an item).
const maxSpareData = 1 << 20

// NewNames returns an empty Names for a stream of windows of window items
// (≥ 1) that keeps the newest retain summarised items raw.
func NewNames(window int, retain int64) *Names {
	return &Names{window: int64(max(window, 1)), retain: max(retain, 0), known: make(map[uint64]string)}
}

// NewRecentNames returns an empty Names that keeps only the newest retain
// items raw, in chunks of window items, and no table: for the last-n and
// time-window answers of a stream whose lossy tables keep their strings
// apart. Sync panics on it. With limit > 0 it holds at most limit bytes
// (see SetLimit).
func NewRecentNames(window int, retain, limit int64) *Names {
	n := NewNames(window, retain)
	n.recent = true
	n.limit = max(limit, 0)
	return n
}

// SetLimit makes n, a Names without a table, hold at most limit bytes (0:
// no limit; Bytes, after each Append): it keeps the newest items that fit,
// in chunks of at most window items and limit/8 bytes, dropping the oldest
// chunks first, but always the newest item. It drops what passes a new
// limit at once. It panics on a Names with a table, whose strings answers
// need.
func (n *Names) SetLimit(limit int64) {
	if !n.recent {
		panic("items: SetLimit on names with a table")
	}
	n.limit = max(limit, 0)
	n.expire()
}

// Limit reports the most bytes n holds, 0 for no limit.
func (n *Names) Limit() int64 { return n.limit }

// Pos reports the number of items appended.
func (n *Names) Pos() int64 { return n.pos }

// Window reports the number of items of a chunk.
func (n *Names) Window() int { return int(n.window) }

// Retain reports the number of summarised items kept raw.
func (n *Names) Retain() int64 { return n.retain }

// IsRecent reports whether n has no table (NewRecentNames).
func (n *Names) IsRecent() bool { return n.recent }

// Len reports the number of strings kept for the lossy table.
func (n *Names) Len() int { return len(n.known) }

// Raw reports the number of items kept raw.
func (n *Names) Raw() int64 {
	var r int64
	for _, c := range n.chunks {
		r += int64(len(c.fps))
	}
	return r
}

// Bytes reports the memory held, approximately, the spare chunks kept for
// reuse included.
func (n *Names) Bytes() int {
	b := int64(8*cap(n.table) + n.knownSize)
	for _, c := range n.chunks {
		b += c.bytes()
	}
	for _, c := range n.spares {
		b += c.bytes()
	}
	return int(b)
}

// Cost returns at least how much Append of b's items adds to Bytes: the
// items and their fingerprints, with room for the growth of their buffers
// (which may double, and are rounded up to the allocator's sizes), and the
// chunks it starts; with a limit, no more than what the limit leaves. It
// is what to charge before Append; it costs O(chunks).
func (n *Names) Cost(b *Batch) int64 {
	const slack = 8 << 10 // the allocator's rounding of a large buffer
	cost := 3*int64(b.Size()+16*b.Len()) + slack
	room := 0 // items the newest chunk takes
	if k := len(n.chunks); k > 0 {
		c := n.chunks[k-1]
		room = min(int(n.window)-len(c.fps), b.Len())
		if room > 0 && (len(c.fps)+room > cap(c.fps) || c.items.Size()+b.ends[room-1] > cap(c.items.data)) {
			cost += c.bytes() + c.bytes()/8 // its buffers may double
		}
	}
	if b.Len() > room || n.limit > 0 {
		count, size := n.chunkHint(n.pos + int64(room))
		chunks := int64((b.Len()-room-1)/int(n.window) + 1)
		if n.limit > 0 { // chunks end at an eighth of the limit too
			chunks += int64(b.Size())/max(n.limit/8, 1) + 1
		}
		cost += chunks * (16*int64(count) + int64(size) + 64 + slack)
	}
	if n.limit > 0 {
		// Append ends within the limit: expire drops what passes it.
		cost = min(cost, max(n.limit-int64(n.Bytes()), 0))
	}
	return cost
}

// chunkHint returns the items and bytes to make room for in a new chunk
// that starts at item at: those of the newest chunk, or a whole window of
// 16-byte items if there is none; nothing during the stream's first
// window, so that small streams stay small.
func (n *Names) chunkHint(at int64) (count, size int) {
	if at < n.window {
		return 0, 0
	}
	if k := len(n.chunks); k > 0 {
		c := n.chunks[k-1]
		return len(c.fps), c.items.Size()
	}
	return int(n.window), int(n.window) * 16
}

// Append adds the items of b, in arrival order; fps are their
// fingerprints.
func (n *Names) Append(fps []uint64, b *Batch) {
	if len(fps) != b.Len() {
		panic("items: Append with fingerprints and items of different lengths")
	}
	for i := 0; i < len(fps); {
		var c *chunk
		if k := len(n.chunks); k > 0 && !n.full(n.chunks[k-1]) {
			c = n.chunks[k-1]
		} else {
			c = n.newChunk()
			n.chunks = append(n.chunks, c)
		}
		k := min(int(n.window)-len(c.fps), len(fps)-i)
		if n.limit > 0 {
			// End the chunk at an eighth of the limit, with one item at least.
			room := int(n.limit/8) - c.items.Size()
			start := 0
			if i > 0 {
				start = b.ends[i-1]
			}
			j := i + 1
			for j < i+k && b.ends[j]-start <= room {
				j++
			}
			k = j - i
		}
		c.fps = append(c.fps, fps[i:i+k]...)
		c.items.AppendBatch(b, i, i+k)
		n.pos += int64(k)
		i += k
	}
	n.expire()
}

// full reports whether c takes no more items: it has a window of them, or
// with a limit, an eighth of the limit's bytes.
func (n *Names) full(c *chunk) bool {
	return int64(len(c.fps)) >= n.window || (n.limit > 0 && int64(c.items.Size()) >= n.limit/8)
}

// newChunk returns an empty chunk starting at the next item: a spare one
// if there is one, else a new one, with room for as many items and bytes
// as the newest chunk (chunkHint).
func (n *Names) newChunk() *chunk {
	count, size := n.chunkHint(n.pos)
	var c *chunk
	if k := len(n.spares); k > 0 {
		c = n.spares[k-1]
		n.spares[k-1] = nil
		n.spares = n.spares[:k-1]
	} else {
		c = new(chunk)
	}
	c.start, c.fps, c.synced = n.pos, slices.Grow(c.fps[:0], count), n.recent
	c.items.Reset()
	c.items.Grow(count, size)
	return c
}

// Sync brings the strings in step with the lossy table after the window
// that starts at item start was added to it; table lists the table's
// fingerprints in ascending order. The strings of fingerprints that left
// the table are dropped. Those that entered it are taken from the window's
// chunk: a fingerprint enters the table only from a window it occurs in,
// and its string is the first item of that window with that fingerprint.
// The window's chunk is then kept only while Retain covers it.
func (n *Names) Sync(start int64, table []uint64) {
	if n.recent {
		panic("items: Sync of recent names")
	}
	var missing []uint64
	old := n.table
	i, j := 0, 0
	for i < len(old) || j < len(table) {
		switch {
		case j == len(table) || (i < len(old) && old[i] < table[j]):
			n.forget(old[i])
			i++
		case i == len(old) || table[j] < old[i]:
			missing = append(missing, table[j])
			j++
		default:
			i++
			j++
		}
	}
	n.table = append(n.table[:0], table...)
	var c *chunk
	for _, x := range n.chunks {
		if x.start == start {
			c = x
			x.synced = true
		}
	}
	if len(missing) > 0 {
		found := n.find(missing, c)
		for fp, s := range found {
			n.remember(fp, s)
		}
	}
	n.expire()
}

// remember keeps s as the string of fingerprint fp.
func (n *Names) remember(fp uint64, s string) {
	n.forget(fp)
	n.known[fp] = s
	n.knownSize += len(s) + 32
}

// forget drops the string of fingerprint fp, if n has one.
func (n *Names) forget(fp uint64) {
	if s, ok := n.known[fp]; ok {
		delete(n.known, fp)
		n.knownSize -= len(s) + 32
	}
}

// find returns the strings of the fingerprints of want that the raw
// chunks hold, looking in first (if not nil) first, then in every chunk
// from the newest. Each string is the first item with its fingerprint in
// the chunk it is found in.
func (n *Names) find(want []uint64, first *chunk) map[uint64]string {
	left := make(map[uint64]struct{}, len(want))
	for _, fp := range want {
		left[fp] = struct{}{}
	}
	found := make(map[uint64]string, len(want))
	scan := func(c *chunk) {
		for i, fp := range c.fps {
			if _, ok := left[fp]; ok {
				found[fp] = string(c.items.Item(i))
				delete(left, fp)
				if len(left) == 0 {
					return
				}
			}
		}
	}
	if first != nil {
		scan(first)
	}
	for k := len(n.chunks) - 1; k >= 0 && len(left) > 0; k-- {
		if c := n.chunks[k]; c != first {
			scan(c)
		}
	}
	return found
}

// Lookup returns the strings of fps, "" for a fingerprint whose string is
// not kept: the table's strings first, then the raw items, newest first.
func (n *Names) Lookup(fps []uint64) []string {
	out := make([]string, len(fps))
	var want []uint64
	for i, fp := range fps {
		if s, ok := n.known[fp]; ok && s != "" {
			out[i] = s
		} else {
			want = append(want, fp)
		}
	}
	if len(want) == 0 {
		return out
	}
	found := n.find(want, nil)
	for i, fp := range fps {
		if out[i] == "" {
			out[i] = found[fp]
		}
	}
	return out
}

// AppendPending appends to dst the fingerprints of the items whose windows
// are not yet summarised (not synced), oldest first: the values of a
// stream's windows in flight and of its partial window, for a Names with
// a table.
func (n *Names) AppendPending(dst []uint64) []uint64 {
	for _, c := range n.chunks {
		if !c.synced {
			dst = append(dst, c.fps...)
		}
	}
	return dst
}

// PendingStarts returns the positions of the first items of the windows not
// yet summarised (the chunks not synced), oldest first: the starts of
// the windows that AppendPending's items fill, W items each but for the
// last, which may be partial.
func (n *Names) PendingStarts() []int64 {
	var out []int64
	for _, c := range n.chunks {
		if !c.synced {
			out = append(out, c.start)
		}
	}
	return out
}

// Rekey recomputes the fingerprint of every item kept under hash, for a
// stream whose fingerprints move to another key (another daemon's), and
// returns the new fingerprint of each fingerprint of the table that has a
// string. A fingerprint of the table without a string keeps its value.
// Fingerprints of the table that fall together under hash keep one string,
// as colliding items do. It costs one hash of each string and item kept.
func (n *Names) Rekey(hash Hash) map[uint64]uint64 {
	moved := make(map[uint64]uint64, len(n.known))
	old := n.known
	n.known, n.knownSize = make(map[uint64]string, len(old)), 0
	table := make([]uint64, 0, len(n.table))
	for _, fp := range n.table {
		if s, ok := old[fp]; ok {
			nfp := Fingerprint(hash([]byte(s)))
			moved[fp] = nfp
			if _, dup := n.known[nfp]; !dup {
				n.remember(nfp, s)
			}
			fp = nfp
		}
		table = append(table, fp)
	}
	slices.Sort(table)
	n.table = slices.Compact(table)
	for _, c := range n.chunks {
		for i := range c.fps {
			c.fps[i] = Fingerprint(hash(c.items.Item(i)))
		}
	}
	return moved
}

// expire drops the chunks that are summarised and older than the newest
// retain items, and with a limit, the oldest chunks while the chunks hold
// more than 7/8 of it; it keeps a few of them as spares, those that fit
// the limit with the chunks.
func (n *Names) expire() {
	k := 0
	for k < len(n.chunks) && n.chunks[k].synced && n.chunks[k].end() <= n.pos-n.retain {
		k++
	}
	n.spare(n.chunks[:k])
	n.chunks = slices.Delete(n.chunks, 0, k)
	if n.limit == 0 {
		return
	}
	var used int64
	for _, c := range n.chunks {
		used += c.bytes()
	}
	k = 0
	for k < len(n.chunks)-1 && used > n.limit-n.limit/8 {
		used -= n.chunks[k].bytes()
		k++
	}
	n.spare(n.chunks[:k])
	n.chunks = slices.Delete(n.chunks, 0, k)
	j := 0
	for _, c := range n.spares {
		if used+c.bytes() <= n.limit {
			used += c.bytes()
			n.spares[j] = c
			j++
		}
	}
	clear(n.spares[j:])
	n.spares = n.spares[:j]
}

// spare keeps expired chunks for reuse, up to maxSpares, without the
// buffers of their item bytes larger than maxSpareData (or an eighth of
// the limit, the most a chunk takes under one).
func (n *Names) spare(cs []*chunk) {
	for _, c := range cs[max(0, len(cs)-(maxSpares-len(n.spares))):] {
		if cap(c.items.data) > max(maxSpareData, int(n.limit/8)) {
			c.items.data = nil
		}
		n.spares = append(n.spares, c)
	}
}

// Encoding (see streamd/internal/codec for the envelope), magic "NAME",
// version 2:
//
//	window uvarint, retain uvarint, pos uvarint,
//	flags uint8 (1: recent, no table: NewRecentNames)
//	table  uvarint count, then per fingerprint, ascending: fingerprint
//	       uint64 LE, its string length-prefixed ("" when not kept)
//	chunks uvarint count, then per chunk, oldest first: start uvarint,
//	       synced uint8, uvarint count, then per item its fingerprint
//	       uint64 LE and its bytes length-prefixed
//
// Version 1 has no flags: a Names with a table.
const (
	namesMagic   = "NAME"
	namesVersion = 2
	namesRecent  = 1 // flag: no table
)

// AppendBinary appends n's encoding to dst.
func (n *Names) AppendBinary(dst []byte) ([]byte, error) {
	start := len(dst)
	dst = codec.Begin(dst, namesMagic, namesVersion)
	dst = binary.AppendUvarint(dst, uint64(n.window))
	dst = binary.AppendUvarint(dst, uint64(n.retain))
	dst = binary.AppendUvarint(dst, uint64(n.pos))
	var flags byte
	if n.recent {
		flags |= namesRecent
	}
	dst = append(dst, flags)
	dst = binary.AppendUvarint(dst, uint64(len(n.table)))
	for _, fp := range n.table {
		dst = binary.LittleEndian.AppendUint64(dst, fp)
		dst = codec.AppendBytes(dst, []byte(n.known[fp]))
	}
	dst = binary.AppendUvarint(dst, uint64(len(n.chunks)))
	for _, c := range n.chunks {
		dst = binary.AppendUvarint(dst, uint64(c.start))
		var synced byte
		if c.synced {
			synced = 1
		}
		dst = append(dst, synced)
		dst = binary.AppendUvarint(dst, uint64(len(c.fps)))
		for i, fp := range c.fps {
			dst = binary.LittleEndian.AppendUint64(dst, fp)
			dst = codec.AppendBytes(dst, c.items.Item(i))
		}
	}
	return codec.End(dst, start), nil
}

// MarshalBinary returns n's encoding.
func (n *Names) MarshalBinary() ([]byte, error) { return n.AppendBinary(nil) }

// UnmarshalBinary replaces n with the Names encoded in data, checking its
// structure; bad input gives an error wrapping codec.ErrCorrupt, never a
// panic.
func (n *Names) UnmarshalBinary(data []byte) error {
	p, version, err := codec.OpenVersions(data, namesMagic, 1, namesVersion)
	if err != nil {
		return fmt.Errorf("decode names: %w", err)
	}
	r := codec.NewReader(p)
	d := Names{known: make(map[uint64]string)}
	d.window = r.Int("window", 1<<40)
	d.retain = r.Int("retain", 1<<62)
	d.pos = r.Int("pos", 1<<62)
	if version >= 2 {
		switch r.Byte() {
		case 0:
		case namesRecent:
			d.recent = true
		default:
			return fmt.Errorf("decode names: %w: bad flags", codec.ErrCorrupt)
		}
	}
	nt := r.Int("table", int64(r.Remaining()/9))
	if d.recent && nt > 0 {
		return fmt.Errorf("decode names: %w: a table in recent names", codec.ErrCorrupt)
	}
	d.table = make([]uint64, 0, nt)
	for range nt {
		fp := r.Uint64()
		s := r.Bytes("item", MaxLen)
		if len(d.table) > 0 && fp <= d.table[len(d.table)-1] {
			return fmt.Errorf("decode names: %w: table out of order", codec.ErrCorrupt)
		}
		d.table = append(d.table, fp)
		if len(s) > 0 {
			d.remember(fp, string(s))
		}
	}
	nc := r.Int("chunks", int64(r.Remaining()/3))
	next := int64(-1)
	for range nc {
		c := &chunk{start: r.Int("start", 1<<62)}
		switch r.Byte() {
		case 0:
		case 1:
			c.synced = true
		default:
			return fmt.Errorf("decode names: %w: bad synced flag", codec.ErrCorrupt)
		}
		if d.recent && !c.synced {
			return fmt.Errorf("decode names: %w: a recent chunk not summarised", codec.ErrCorrupt)
		}
		k := r.Int("items", min(d.window, int64(r.Remaining()/9)))
		c.fps = make([]uint64, 0, k)
		for range k {
			c.fps = append(c.fps, r.Uint64())
			c.items.Append(r.Bytes("item", MaxLen))
		}
		if err := r.Err(); err != nil {
			return fmt.Errorf("decode names: %w", err)
		}
		if (next >= 0 && c.start != next) || (!d.recent && c.start%d.window != 0) || len(c.fps) == 0 {
			return fmt.Errorf("decode names: %w: chunk at %d out of place", codec.ErrCorrupt, c.start)
		}
		next = c.end()
		d.chunks = append(d.chunks, c)
	}
	if err := r.Done(); err != nil {
		return fmt.Errorf("decode names: %w", err)
	}
	if d.window < 1 || (next >= 0 && next != d.pos) {
		return fmt.Errorf("decode names: %w: chunks end at %d of %d items", codec.ErrCorrupt, next, d.pos)
	}
	*n = d
	return nil
}
