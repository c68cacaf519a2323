package pipeline

import (
	"encoding/binary"
	"slices"
)

// maxBlock is the most names a block of a nameIndex holds; a full block
// splits in two.
const maxBlock = 128

// A nameKey is the first 16 bytes of a name, big-endian, padded with
// zeros: names whose keys differ compare as their keys do, so a search
// compares keys held side by side and reads a name's bytes, which lie
// elsewhere in memory, only when the keys are equal.
type nameKey [2]uint64

// keyOf returns the key of name.
func keyOf(name string) nameKey {
	var b [16]byte
	copy(b[:], name)
	return nameKey{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
}

// before reports whether the name of key k and name (whose key is nk)
// comes before name.
func before(k nameKey, kname string, nk nameKey, name string) bool {
	switch {
	case k[0] != nk[0]:
		return k[0] < nk[0]
	case k[1] != nk[1]:
		return k[1] < nk[1]
	}
	return kname < name
}

// searchKeys returns the position of the first of names (sorted, with
// their keys) that is ≥ name, and whether it is name.
func searchKeys(keys []nameKey, names []string, name string, nk nameKey) (int, bool) {
	lo, hi := 0, len(keys)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if before(keys[m], names[m], nk, name) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(names) && keys[lo] == nk && names[lo] == name
}

// A nameBlock is a block of a nameIndex: names and their keys.
type nameBlock struct {
	names []string
	keys  []nameKey
}

// A nameIndex holds the stream names in increasing order, in blocks of at
// most maxBlock names: every block is sorted and not empty, and every name
// of a block comes before every name of the next. Finding a name is a
// binary search over the blocks' last names, then one in a block, both
// over keys held side by side (nameKey): O(log n), and for names that
// differ in their first 16 bytes, no cache miss on a name's bytes but the
// last.
//
// A name added goes first to recent, unsorted: a creation costs an append,
// not a search among blocks that are cold in a cache when streams are
// created by the million. fold sorts the recent names and merges them into
// the blocks they fall in, each block once; add folds once recent holds
// half as many names as the blocks (at least minFold). A fold rewrites
// the blocks it touches, most of them, so each name it adds costs a copy
// of about two others, and the fold's sort a log of the names. Readers
// (start, next) see the names of the last fold: they fold first, holding
// the index for writing.
type nameIndex struct {
	blocks   []nameBlock
	lasts    []string  // lasts[b] is the last name of blocks[b]
	lastKeys []nameKey // and its key
	n        int       // names in blocks
	recent   []string  // added since the last fold, in the order added
}

// minFold is the fewest recent names that make add fold them.
const minFold = 1024

// newNameIndex returns the index of names, which it sorts.
func newNameIndex(names []string) nameIndex {
	slices.Sort(names)
	names = slices.Compact(names)
	x := nameIndex{n: len(names)}
	for len(names) > 0 {
		k := min(len(names), maxBlock/2)
		blk := nameBlock{names: slices.Clip(names[:k]), keys: make([]nameKey, k)}
		for i, name := range blk.names {
			blk.keys[i] = keyOf(name)
		}
		x.blocks = append(x.blocks, blk)
		names = names[k:]
	}
	x.setLasts()
	return x
}

// search returns the position of the first name ≥ name: its block and its
// place in the block, b == len(x.blocks) if there is none, and whether it
// is name.
func (x *nameIndex) search(name string, nk nameKey) (b, i int, found bool) {
	b, _ = searchKeys(x.lastKeys, x.lasts, name, nk)
	if b == len(x.blocks) {
		return b, 0, false
	}
	i, found = searchKeys(x.blocks[b].keys, x.blocks[b].names, name, nk)
	return b, i, found
}

// setLast records the last name of block b.
func (x *nameIndex) setLast(b int) {
	blk := &x.blocks[b]
	x.lasts[b] = blk.names[len(blk.names)-1]
	x.lastKeys[b] = blk.keys[len(blk.keys)-1]
}

// setLasts records the last name of every block.
func (x *nameIndex) setLasts() {
	x.lasts = slices.Grow(x.lasts[:0], len(x.blocks))[:len(x.blocks)]
	x.lastKeys = slices.Grow(x.lastKeys[:0], len(x.blocks))[:len(x.blocks)]
	for b := range x.blocks {
		x.setLast(b)
	}
}

// add adds name, if it is not there, at the next fold.
func (x *nameIndex) add(name string) {
	x.recent = append(x.recent, name)
	if len(x.recent) >= max(minFold, x.n/2) {
		x.fold()
	}
}

// A keyedName is a name and its key.
type keyedName struct {
	key  nameKey
	name string
}

// compareKeyed orders keyed names as their names are ordered.
func compareKeyed(a, b keyedName) int {
	switch {
	case before(a.key, a.name, b.key, b.name):
		return -1
	case a.key == b.key && a.name == b.name:
		return 0
	}
	return 1
}

// fold sorts the recent names into the blocks, leaving out any already
// there. The recent names that fall in one block are merged into it in
// one pass from its end; a block that grows past maxBlock is then split
// into blocks of maxBlock/2. Blocks that get none are not touched.
func (x *nameIndex) fold() {
	if len(x.recent) == 0 {
		return
	}
	rs := make([]keyedName, len(x.recent))
	for i, name := range x.recent {
		rs[i] = keyedName{keyOf(name), name}
	}
	clear(x.recent)
	x.recent = x.recent[:0]
	slices.SortFunc(rs, compareKeyed)
	if len(x.blocks) == 0 {
		x.blocks = []nameBlock{{}}
		x.lasts, x.lastKeys = []string{""}, []nameKey{{}}
	}
	split := false
	for b, r := 0, 0; r < len(rs); b++ {
		// The first block whose last name is ≥ rs[r] takes the recent
		// names up to its last name; the last block takes the rest.
		last := len(x.blocks) - 1
		end := len(rs)
		if b < last {
			j, _ := searchKeys(x.lastKeys[b:last], x.lasts[b:last], rs[r].name, rs[r].key)
			b += j
		}
		if b < last {
			lo, hi := r+1, len(rs) // rs[r] ≤ lasts[b]
			for lo < hi {
				m := int(uint(lo+hi) >> 1)
				if before(x.lastKeys[b], x.lasts[b], rs[m].key, rs[m].name) {
					hi = m
				} else {
					lo = m + 1
				}
			}
			end = lo
		}
		x.merge(&x.blocks[b], rs[r:end])
		if len(x.blocks[b].names) > maxBlock {
			split = true
		} else {
			x.setLast(b)
		}
		r = end
	}
	if split {
		blocks := make([]nameBlock, 0, len(x.blocks)+len(rs)/(maxBlock/2)+1)
		for _, blk := range x.blocks {
			for len(blk.names) > maxBlock {
				blocks = append(blocks, nameBlock{names: slices.Clone(blk.names[:maxBlock/2]), keys: slices.Clone(blk.keys[:maxBlock/2])})
				blk.names, blk.keys = blk.names[maxBlock/2:], blk.keys[maxBlock/2:]
			}
			blocks = append(blocks, blk)
		}
		x.blocks = blocks
		x.setLasts()
	}
}

// merge merges into blk the names of add, sorted, that it does not hold,
// from its end, and counts them.
func (x *nameIndex) merge(blk *nameBlock, add []keyedName) {
	k := 0
	for _, a := range add {
		_, found := searchKeys(blk.keys, blk.names, a.name, a.key)
		if !found && (k == 0 || add[k-1] != a) {
			add[k] = a
			k++
		}
	}
	if k == 0 {
		return
	}
	n := len(blk.names)
	blk.names = slices.Grow(blk.names, k)[:n+k]
	blk.keys = slices.Grow(blk.keys, k)[:n+k]
	for i, j, o := n-1, k-1, n+k-1; j >= 0; o-- {
		if i >= 0 && before(add[j].key, add[j].name, blk.keys[i], blk.names[i]) {
			blk.names[o], blk.keys[o] = blk.names[i], blk.keys[i]
			i--
		} else {
			blk.names[o], blk.keys[o] = add[j].name, add[j].key
			j--
		}
	}
	x.n += k
}

// remove removes name, if it is there.
func (x *nameIndex) remove(name string) {
	x.fold()
	b, i, found := x.search(name, keyOf(name))
	if !found {
		return
	}
	x.n--
	blk := &x.blocks[b]
	if len(blk.names) == 1 {
		x.blocks = slices.Delete(x.blocks, b, b+1)
		x.lasts = slices.Delete(x.lasts, b, b+1)
		x.lastKeys = slices.Delete(x.lastKeys, b, b+1)
		return
	}
	blk.names = slices.Delete(blk.names, i, i+1)
	blk.keys = slices.Delete(blk.keys, i, i+1)
	x.setLast(b)
}

// start returns the position of the first name after the name after (""
// for none) that is not before prefix: the first a page after after of
// names starting with prefix can hold. Names added since the last fold are
// not seen.
func (x *nameIndex) start(after, prefix string) (b, i int) {
	if prefix > after {
		b, i, _ = x.search(prefix, keyOf(prefix)) // the first name ≥ prefix
		return b, i
	}
	b, i, found := x.search(after, keyOf(after))
	if found {
		i++ // the first name > after
	}
	return b, i
}

// next returns the name at position (b, i), whether there is one, and the
// position after it. Positions are those of start; i may be the length of
// its block.
func (x *nameIndex) next(b, i int) (name string, nb, ni int, ok bool) {
	for b < len(x.blocks) && i >= len(x.blocks[b].names) {
		b, i = b+1, 0
	}
	if b == len(x.blocks) {
		return "", b, i, false
	}
	return x.blocks[b].names[i], b, i + 1, true
}
