package pipeline

import (
	"slices"
	"sort"
	"strings"
)

// maxBlock is the most names a block of a nameIndex holds; a full block
// splits in two.
const maxBlock = 512

// A nameIndex holds the stream names in increasing order, in blocks of at
// most maxBlock names: every block is sorted and not empty, and every name
// of a block comes before every name of the next. Finding a name is a
// binary search over the blocks' last names, then one in a block: O(log
// n). Adding or removing one moves at most maxBlock names, and the block
// list on a split or when a block empties (one block in maxBlock/2 adds):
// at a million names, thousands of block headers, not a million names.
type nameIndex struct {
	blocks [][]string
	n      int
}

// newNameIndex returns the index of names, which it sorts.
func newNameIndex(names []string) nameIndex {
	slices.Sort(names)
	x := nameIndex{n: len(names)}
	for len(names) > 0 {
		k := min(len(names), maxBlock/2)
		x.blocks = append(x.blocks, slices.Clip(names[:k]))
		names = names[k:]
	}
	return x
}

// search returns the position of the first name ≥ name: its block and its
// place in the block, b == len(x.blocks) if there is none, and whether it
// is name.
func (x *nameIndex) search(name string) (b, i int, found bool) {
	b = sort.Search(len(x.blocks), func(j int) bool {
		blk := x.blocks[j]
		return blk[len(blk)-1] >= name
	})
	if b == len(x.blocks) {
		return b, 0, false
	}
	i, found = slices.BinarySearch(x.blocks[b], name)
	return b, i, found
}

// add adds name, if it is not there.
func (x *nameIndex) add(name string) {
	if len(x.blocks) == 0 {
		x.blocks = [][]string{{name}}
		x.n = 1
		return
	}
	b, i, found := x.search(name)
	if found {
		return
	}
	if b == len(x.blocks) { // after every name: the end of the last block
		b = len(x.blocks) - 1
		i = len(x.blocks[b])
	}
	blk := slices.Insert(x.blocks[b], i, name)
	x.n++
	if len(blk) <= maxBlock {
		x.blocks[b] = blk
		return
	}
	h := len(blk) / 2
	x.blocks[b] = blk[:h:h]
	x.blocks = slices.Insert(x.blocks, b+1, slices.Clone(blk[h:]))
}

// remove removes name, if it is there.
func (x *nameIndex) remove(name string) {
	b, i, found := x.search(name)
	if !found {
		return
	}
	x.n--
	if len(x.blocks[b]) == 1 {
		x.blocks = slices.Delete(x.blocks, b, b+1)
		return
	}
	x.blocks[b] = slices.Delete(x.blocks[b], i, i+1)
}

// appendPage appends to dst the names after the name after ("" for
// none), in increasing order, that start with prefix, at most n of them,
// and returns dst. It costs O(log N + n) for N names.
func (x *nameIndex) appendPage(dst []string, after, prefix string, n int) []string {
	var b, i int
	if prefix > after {
		b, i, _ = x.search(prefix) // the first name ≥ prefix
	} else {
		var found bool
		if b, i, found = x.search(after); found {
			i++ // the first name > after
		}
	}
	for ; b < len(x.blocks) && n > 0; b, i = b+1, 0 {
		for _, name := range x.blocks[b][i:] {
			if n == 0 || !strings.HasPrefix(name, prefix) {
				return dst
			}
			dst = append(dst, name)
			n--
		}
	}
	return dst
}
