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
// last. Adding or removing one moves at most maxBlock names, and the block
// list on a split or when a block empties (one block in maxBlock/2 adds):
// at a million names, thousands of block headers, not a million names.
type nameIndex struct {
	blocks   []nameBlock
	lasts    []string  // lasts[b] is the last name of blocks[b]
	lastKeys []nameKey // and its key
	n        int
}

// newNameIndex returns the index of names, which it sorts.
func newNameIndex(names []string) nameIndex {
	slices.Sort(names)
	x := nameIndex{n: len(names)}
	for len(names) > 0 {
		k := min(len(names), maxBlock/2)
		blk := nameBlock{names: slices.Clip(names[:k]), keys: make([]nameKey, k)}
		for i, name := range blk.names {
			blk.keys[i] = keyOf(name)
		}
		x.blocks = append(x.blocks, blk)
		x.lasts = append(x.lasts, names[k-1])
		x.lastKeys = append(x.lastKeys, blk.keys[k-1])
		names = names[k:]
	}
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

// add adds name, if it is not there.
func (x *nameIndex) add(name string) {
	nk := keyOf(name)
	if len(x.blocks) == 0 {
		x.blocks = []nameBlock{{names: []string{name}, keys: []nameKey{nk}}}
		x.lasts, x.lastKeys = []string{name}, []nameKey{nk}
		x.n = 1
		return
	}
	b, i, found := x.search(name, nk)
	if found {
		return
	}
	if b == len(x.blocks) { // after every name: the end of the last block
		b = len(x.blocks) - 1
		i = len(x.blocks[b].names)
	}
	blk := &x.blocks[b]
	blk.names = slices.Insert(blk.names, i, name)
	blk.keys = slices.Insert(blk.keys, i, nk)
	x.n++
	if len(blk.names) <= maxBlock {
		x.setLast(b)
		return
	}
	h := len(blk.names) / 2
	upper := nameBlock{names: slices.Clone(blk.names[h:]), keys: slices.Clone(blk.keys[h:])}
	blk.names, blk.keys = blk.names[:h:h], blk.keys[:h:h]
	x.blocks = slices.Insert(x.blocks, b+1, upper)
	x.lasts = slices.Insert(x.lasts, b+1, "")
	x.lastKeys = slices.Insert(x.lastKeys, b+1, nameKey{})
	x.setLast(b)
	x.setLast(b + 1)
}

// remove removes name, if it is there.
func (x *nameIndex) remove(name string) {
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
// names starting with prefix can hold.
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
