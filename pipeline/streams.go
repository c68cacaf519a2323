package pipeline

import (
	"container/heap"
	"hash/maphash"
	"math"
	"strings"
	"sync"
	"sync/atomic"
)

// streamShards is how many shards a streamTable splits its streams into.
// A stream's creation or deletion stalls only the lookups of its shard:
// with 64, sixteen connections creating streams at once rarely meet.
const streamShards = 64

// A streamTable maps names to streams, and keeps the names in order for
// pages of them.
//
// The streams are split into shards by a hash of the name, each with its
// map and its ordered name index under its own lock, so that a creation
// or a deletion stalls only its shard, and no one lock's counter bounces
// between all cores as every accept looks its stream up. A page of names
// folds each shard's recent names into its index, then merges the shards'
// indexes, read-locking them all: it sees every stream created before it
// and none deleted before it. A lookup by name reads the table's cache
// (streamCache) first, without a lock, and takes its shard's read lock
// only for a stream the cache does not hold.
//
// Locks are taken in this order: shards (in increasing index), then
// Pipeline.mu.
type streamTable struct {
	seed   maphash.Seed
	shards [streamShards]streamShard
	count  atomic.Int64 // streams in the map, or reserved by a creation under way
	cache  streamCache  // finds most streams without a shard's lock
}

// A streamShard is one shard of a streamTable: its streams and their
// names in order, under its lock.
//
// Its map is keyed by the hash of a stream's name (streamTable.hash),
// which also picks the shard, so that a lookup hashes the name once, and
// the map, as it grows, moves 8-byte keys without reading the names
// again. A stream whose name's hash is another's goes to overflow, by
// name: with a random seed, among a million names, that happens in
// about one process in 10^7.
type streamShard struct {
	mu       sync.RWMutex
	m        map[uint64]*Stream
	overflow map[string]*Stream // nil until a hash is shared
	names    nameIndex
	_        [64]byte // keeps neighbouring shards' locks off one cache line
}

// newStreamTable returns an empty table.
func newStreamTable() *streamTable {
	t := &streamTable{seed: maphash.MakeSeed()}
	for i := range t.shards {
		t.shards[i].m = make(map[uint64]*Stream)
	}
	t.cache.reset(0)
	return t
}

// hash returns the hash of name, which keys it in its shard's map.
func (t *streamTable) hash(name string) uint64 { return maphash.String(t.seed, name) }

// locate returns the shard of name and the hash of name.
func (t *streamTable) locate(name string) (*streamShard, uint64) {
	h := t.hash(name)
	return t.shardOf(h), h
}

// shardOf returns the shard of the names whose hash is h.
func (t *streamTable) shardOf(h uint64) *streamShard { return &t.shards[h%streamShards] }

// find returns the stream of sh named name, whose hash is h, or nil; the
// caller holds sh's lock.
func (sh *streamShard) find(h uint64, name string) *Stream {
	s := sh.m[h]
	if s == nil || s.name == name {
		return s
	}
	return sh.overflow[name]
}

// put adds s, whose name's hash is h and which sh does not hold; the
// caller holds sh's lock.
func (sh *streamShard) put(h uint64, s *Stream) {
	if sh.m[h] == nil {
		sh.m[h] = s
		return
	}
	if sh.overflow == nil {
		sh.overflow = make(map[string]*Stream)
	}
	sh.overflow[s.name] = s
}

// remove removes and returns the stream of sh named name, whose hash is
// h (nil if there is none); hash hashes the names in overflow, one of
// which takes the removed stream's place in m if its hash is h. The
// caller holds sh's lock.
func (sh *streamShard) remove(h uint64, name string, hash func(string) uint64) *Stream {
	s := sh.m[h]
	switch {
	case s == nil:
		return nil
	case s.name != name:
		s = sh.overflow[name]
		delete(sh.overflow, name)
		return s
	}
	delete(sh.m, h)
	for n, o := range sh.overflow {
		if hash(n) == h {
			sh.m[h] = o
			delete(sh.overflow, n)
			break
		}
	}
	return s
}

// len returns the number of streams sh holds; the caller holds sh's lock.
func (sh *streamShard) len() int { return len(sh.m) + len(sh.overflow) }

// get returns the named stream, or nil.
func (t *streamTable) get(name string) *Stream {
	h := t.hash(name)
	if s := t.cache.get(h, name); s != nil {
		return s
	}
	sh := t.shardOf(h)
	sh.mu.RLock()
	s := sh.find(h, name)
	if s != nil {
		t.cache.put(h, s)
	}
	sh.mu.RUnlock()
	return s
}

// hashBytes returns the hash of name, as hash(string(name)).
func (t *streamTable) hashBytes(name []byte) uint64 { return maphash.Bytes(t.seed, name) }

// peekHash returns the stream whose name's hash is h, or nil: the stream
// of that name but in the rare case of a hash shared (see streamShard),
// which it does not check, so as not to read the stream or its name.
func (t *streamTable) peekHash(h uint64) *Stream {
	if s := t.cache.peek(h); s != nil {
		return s
	}
	sh := t.shardOf(h)
	sh.mu.RLock()
	s := sh.m[h]
	if s != nil {
		t.cache.put(h, s)
	}
	sh.mu.RUnlock()
	return s
}

// getLocked is get for a caller that holds name's shard's lock, or all of
// them.
func (t *streamTable) getLocked(name string) *Stream {
	sh, h := t.locate(name)
	return sh.find(h, name)
}

// len returns the number of streams, counting those being created.
func (t *streamTable) len() int { return int(t.count.Load()) }

// reserve counts a stream about to be created, unless there are max
// already; it reports whether it did. A creation that fails after it
// gives its place back with unreserve. The count never passes max, not
// even for a moment: Len reads it.
func (t *streamTable) reserve(max int) bool {
	for {
		n := t.count.Load()
		if n >= int64(max) {
			return false
		}
		if t.count.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// unreserve gives back a place reserve took.
func (t *streamTable) unreserve() { t.count.Add(-1) }

// putLocked adds s, which sh does not hold, to sh's map and index; sh
// and h are what locate returns for s's name. The caller holds sh's lock,
// or all of them, and has counted s (reserve, or recountLocked after).
func (t *streamTable) putLocked(sh *streamShard, h uint64, s *Stream) {
	sh.put(h, s)
	sh.names.add(s.name)
	t.cache.fit(t.count.Load())
	t.cache.put(h, s)
}

// deleteLocked removes the named stream from sh and from the count, and
// returns it (nil if there is none); sh and h are what locate returns for
// name. The caller holds sh's lock, or all of them.
func (t *streamTable) deleteLocked(sh *streamShard, h uint64, name string) *Stream {
	s := sh.remove(h, name, t.hash)
	if s == nil {
		return nil
	}
	sh.names.remove(name)
	t.count.Add(-1)
	t.cache.remove(h, s)
	return s
}

// appendStreams appends the streams of sh to dst and returns dst; the
// caller holds sh's lock.
func (sh *streamShard) appendStreams(dst []*Stream) []*Stream {
	for _, s := range sh.m {
		dst = append(dst, s)
	}
	for _, s := range sh.overflow {
		dst = append(dst, s)
	}
	return dst
}

// all returns every stream. It is no snapshot of one instant: a stream
// created or deleted while it runs may be in it or not.
func (t *streamTable) all() []*Stream {
	streams := make([]*Stream, 0, t.len())
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.RLock()
		streams = sh.appendStreams(streams)
		sh.mu.RUnlock()
	}
	return streams
}

// allLocked is all for a caller that holds every shard's lock: the streams
// of one instant.
func (t *streamTable) allLocked() []*Stream {
	streams := make([]*Stream, 0, t.len())
	for i := range t.shards {
		streams = t.shards[i].appendStreams(streams)
	}
	return streams
}

// lockAll locks every shard, stopping every creation, deletion and lookup.
func (t *streamTable) lockAll() {
	for i := range t.shards {
		t.shards[i].mu.Lock()
	}
}

// unlockAll undoes lockAll.
func (t *streamTable) unlockAll() {
	for i := range t.shards {
		t.shards[i].mu.Unlock()
	}
}

// foldAll sorts the names each shard's index holds unsorted into its
// blocks (nameIndex.fold), for a reader of every shard's index: names
// added after it are left to the next.
func (t *streamTable) foldAll() {
	for i := range t.shards {
		t.shards[i].fold()
	}
}

// fold sorts the names sh's index holds unsorted into its blocks, under
// sh's lock, for a reader of the index. It takes the lock for writing only
// when there are some: the pages of a listing read every shard's index.
func (sh *streamShard) fold() {
	sh.mu.RLock()
	none := len(sh.names.recent) == 0
	sh.mu.RUnlock()
	if none {
		return
	}
	sh.mu.Lock()
	sh.names.fold()
	sh.mu.Unlock()
}

// rlockAll read-locks every shard, stopping every creation and deletion.
func (t *streamTable) rlockAll() {
	for i := range t.shards {
		t.shards[i].mu.RLock()
	}
}

// runlockAll undoes rlockAll.
func (t *streamTable) runlockAll() {
	for i := range t.shards {
		t.shards[i].mu.RUnlock()
	}
}

// replaceLocked replaces every stream by those of streams, indexes them,
// and returns those it replaced; the caller holds every shard's lock.
func (t *streamTable) replaceLocked(streams map[string]*Stream) []*Stream {
	old := t.allLocked()
	var names [streamShards][]string
	for i := range t.shards {
		clear(t.shards[i].m)
		t.shards[i].overflow = nil
	}
	for name, s := range streams {
		sh, h := t.locate(name)
		sh.put(h, s)
		k := h % streamShards
		names[k] = append(names[k], name)
	}
	for i := range t.shards {
		t.shards[i].names = newNameIndex(names[i])
	}
	t.count.Store(int64(len(streams)))
	t.cache.reset(int64(len(streams)))
	return old
}

// recountLocked sets the count to the streams in the map; the caller holds
// every shard's lock.
func (t *streamTable) recountLocked() {
	var n int
	for i := range t.shards {
		n += t.shards[i].len()
	}
	t.count.Store(int64(n))
	t.cache.fit(int64(n))
}

// page appends to dst the names after the name after ("" for none), in
// increasing order, that start with prefix, at most n of them, and returns
// dst: the shards' names merged, in O(S log N + n log S) for N names in S
// shards.
func (t *streamTable) page(dst []string, after, prefix string, n int) []string {
	t.foldAll()
	t.rlockAll()
	defer t.runlockAll()
	var m nameMerge
	for i := range t.shards {
		x := &t.shards[i].names
		b, i := x.start(after, prefix)
		m.push(x, b, i, prefix)
	}
	heap.Init(&m)
	for ; n > 0 && len(m) > 0; n-- {
		c := &m[0]
		dst = append(dst, c.name)
		if m.advance(c, prefix) {
			heap.Fix(&m, 0)
		} else {
			heap.Pop(&m)
		}
	}
	return dst
}

// shardStreams appends to dst the streams of shard i, in no order. It
// read-locks that shard alone: a walk over every stream, shard by shard,
// holds no lock across shards.
func (t *streamTable) shardStreams(i int, dst []*Stream) []*Stream {
	sh := &t.shards[i]
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	return sh.appendStreams(dst)
}

// list returns every name, in increasing order. The count read before the
// page's locks only sizes the slice: streams created meanwhile may
// outnumber it, and a page cut at it would leave out names that sort
// after theirs.
func (t *streamTable) list() []string {
	return t.page(make([]string, 0, t.len()), "", "", math.MaxInt)
}

// A nameCursor is a position in one shard's name index, and the name
// there.
type nameCursor struct {
	x    *nameIndex
	b, i int // the position after name
	name string
}

// A nameMerge is a min-heap of cursors, by name: the merge of the shards'
// indexes for a page.
type nameMerge []nameCursor

func (m nameMerge) Len() int           { return len(m) }
func (m nameMerge) Less(a, b int) bool { return m[a].name < m[b].name }
func (m nameMerge) Swap(a, b int)      { m[a], m[b] = m[b], m[a] }
func (m *nameMerge) Push(c any)        { *m = append(*m, c.(nameCursor)) }
func (m *nameMerge) Pop() any {
	old := *m
	c := old[len(old)-1]
	*m = old[:len(old)-1]
	return c
}

// push adds a cursor at position (b, i) of x, if a name with prefix is
// there.
func (m *nameMerge) push(x *nameIndex, b, i int, prefix string) {
	c := nameCursor{x: x, b: b, i: i}
	if m.advance(&c, prefix) {
		*m = append(*m, c)
	}
}

// advance moves c to its index's next name, and reports whether it has
// one with prefix.
func (m *nameMerge) advance(c *nameCursor, prefix string) bool {
	name, b, i, ok := c.x.next(c.b, c.i)
	if !ok || !strings.HasPrefix(name, prefix) {
		return false
	}
	c.name, c.b, c.i = name, b, i
	return true
}
