package pipeline

import (
	"hash/maphash"
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
// The map is split into shards by a hash of the name, each under its own
// lock, so that every accept's lookup takes a read lock no other shard's
// creation holds, and no one lock's counter bounces between all cores.
// The ordered index has a lock of its own. A creation or deletion changes
// the index while it holds its shard's lock, so the index always names the
// streams of the map as of the last change done: a page never names a
// stream deleted before it, nor misses one created before it.
//
// Locks are taken in this order: shards (in increasing index), namesMu,
// then Pipeline.mu.
type streamTable struct {
	seed   maphash.Seed
	shards [streamShards]streamShard
	count  atomic.Int64 // streams in the map, or reserved by a creation under way

	namesMu sync.RWMutex
	names   nameIndex
}

// A streamShard is one shard of a streamTable: its streams under its lock.
type streamShard struct {
	mu sync.RWMutex
	m  map[string]*Stream
	_  [96]byte // keeps neighbouring shards' locks off one cache line
}

// newStreamTable returns an empty table.
func newStreamTable() *streamTable {
	t := &streamTable{seed: maphash.MakeSeed()}
	for i := range t.shards {
		t.shards[i].m = make(map[string]*Stream)
	}
	return t
}

// shard returns the shard of name.
func (t *streamTable) shard(name string) *streamShard {
	return &t.shards[maphash.String(t.seed, name)%streamShards]
}

// get returns the named stream, or nil.
func (t *streamTable) get(name string) *Stream {
	sh := t.shard(name)
	sh.mu.RLock()
	s := sh.m[name]
	sh.mu.RUnlock()
	return s
}

// getLocked is get for a caller that holds name's shard's lock, or all of
// them.
func (t *streamTable) getLocked(name string) *Stream {
	return t.shard(name).m[name]
}

// len returns the number of streams, counting those being created.
func (t *streamTable) len() int { return int(t.count.Load()) }

// reserve counts a stream about to be created, unless there are max
// already; it reports whether it did. A creation that fails after it
// gives its place back with unreserve.
func (t *streamTable) reserve(max int) bool {
	if t.count.Add(1) > int64(max) {
		t.count.Add(-1)
		return false
	}
	return true
}

// unreserve gives back a place reserve took.
func (t *streamTable) unreserve() { t.count.Add(-1) }

// putLocked adds s under name, into the map and the index; the caller holds
// name's shard's lock, or all of them, and has counted s (reserve, or
// recountLocked after).
func (t *streamTable) putLocked(name string, s *Stream) {
	t.shard(name).m[name] = s
	t.namesMu.Lock()
	t.names.add(name)
	t.namesMu.Unlock()
}

// deleteLocked removes the named stream from the map, the index and the
// count, and returns it (nil if there is none); the caller holds name's
// shard's lock, or all of them.
func (t *streamTable) deleteLocked(name string) *Stream {
	sh := t.shard(name)
	s := sh.m[name]
	if s == nil {
		return nil
	}
	delete(sh.m, name)
	t.count.Add(-1)
	t.namesMu.Lock()
	t.names.remove(name)
	t.namesMu.Unlock()
	return s
}

// all returns every stream. It is no snapshot of one instant: a stream
// created or deleted while it runs may be in it or not.
func (t *streamTable) all() []*Stream {
	streams := make([]*Stream, 0, t.len())
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.RLock()
		for _, s := range sh.m {
			streams = append(streams, s)
		}
		sh.mu.RUnlock()
	}
	return streams
}

// allLocked is all for a caller that holds every shard's lock: the streams
// of one instant.
func (t *streamTable) allLocked() []*Stream {
	streams := make([]*Stream, 0, t.len())
	for i := range t.shards {
		for _, s := range t.shards[i].m {
			streams = append(streams, s)
		}
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
	for i := range t.shards {
		clear(t.shards[i].m)
	}
	names := make([]string, 0, len(streams))
	for name, s := range streams {
		t.shard(name).m[name] = s
		names = append(names, name)
	}
	t.count.Store(int64(len(streams)))
	t.namesMu.Lock()
	t.names = newNameIndex(names)
	t.namesMu.Unlock()
	return old
}

// recountLocked sets the count to the streams in the map; the caller holds
// every shard's lock.
func (t *streamTable) recountLocked() {
	var n int
	for i := range t.shards {
		n += len(t.shards[i].m)
	}
	t.count.Store(int64(n))
}

// page appends to dst the names after the name after ("" for none), in
// increasing order, that start with prefix, at most n of them, and returns
// dst (nameIndex.appendPage).
func (t *streamTable) page(dst []string, after, prefix string, n int) []string {
	t.namesMu.RLock()
	defer t.namesMu.RUnlock()
	return t.names.appendPage(dst, after, prefix, n)
}

// list returns every name, in increasing order.
func (t *streamTable) list() []string {
	t.namesMu.RLock()
	defer t.namesMu.RUnlock()
	return t.names.appendAll(make([]string, 0, t.names.n))
}
