package pipeline

import (
	"math/bits"
	"sync/atomic"
	"unsafe"

	"streamd/internal/prefetch"
)

// cacheWays is how many streams a streamCache bucket holds: 4 of 16
// bytes, one cache line.
const cacheWays = 4

// minCacheBuckets is the fewest buckets a streamCache has: 1 KiB.
const minCacheBuckets = 16

// A streamCache finds a stream by the hash of its name without taking a
// lock: every accept looks its stream up, and among many streams the
// shard's map costs a chain of cache misses, and its read lock a counter
// that every core writes. It holds some of a streamTable's streams, about
// all of them: a bucket of cacheWays for each two streams the table
// counts, so that few buckets overflow. A lookup reads one bucket, one
// cache line, and checks the name; a stream it does not find is looked
// up in the table, which puts it back.
//
// The cache holds only streams the table holds: a stream is put under
// its shard's lock (read-locked when the table finds it, locked when it
// is created), and taken out under the same lock locked, when it leaves
// the table. A lookup that overlaps a deletion may find the stream, as a
// lookup in the table that returns just before it does. Buckets are
// replaced, empty, when the table outgrows them, and when every stream is
// replaced (streamTable.replaceLocked); they fill again as streams are
// looked up.
type streamCache struct {
	buckets atomic.Pointer[[]cacheBucket]
}

// A cacheBucket holds up to cacheWays streams whose names' hashes fall
// in it. A way's hash is a filter that spares reading the names of other
// streams; the name checks. A way's two words are written apart, so a
// reader may see the hash of one stream and another stream: the name
// tells it.
type cacheBucket [cacheWays]struct {
	hash   atomic.Uint64
	stream atomic.Pointer[Stream]
}

// bucket returns the bucket of h among buckets, a power of two of them.
// It takes the hash's high bits: the low ones pick the shard.
func bucket(buckets []cacheBucket, h uint64) *cacheBucket {
	return &buckets[h>>(64-bits.TrailingZeros(uint(len(buckets))))]
}

// get returns the stream named name, whose hash is h, if the cache holds
// it, or nil.
func (c *streamCache) get(h uint64, name string) *Stream {
	b := bucket(*c.buckets.Load(), h)
	for i := range b {
		if b[i].hash.Load() != h {
			continue
		}
		if s := b[i].stream.Load(); s != nil && s.name == name {
			return s
		}
	}
	return nil
}

// peek returns a stream whose name's hash is h, if the cache holds one,
// without reading the stream: a hint, as streamTable.peekHash.
func (c *streamCache) peek(h uint64) *Stream {
	b := bucket(*c.buckets.Load(), h)
	for i := range b {
		if b[i].hash.Load() == h {
			if s := b[i].stream.Load(); s != nil {
				return s
			}
		}
	}
	return nil
}

// prefetch asks the processor for the bucket of h.
func (c *streamCache) prefetch(h uint64) {
	prefetch.Range(unsafe.Pointer(bucket(*c.buckets.Load(), h)), unsafe.Sizeof(cacheBucket{}))
}

// put puts s, whose name's hash is h, in the cache: in a free way of its
// bucket, or in place of a stream picked by the bits of h above the
// bucket's. The caller holds the lock of s's shard, read-locked or
// locked, and s is in the table.
func (c *streamCache) put(h uint64, s *Stream) {
	b := bucket(*c.buckets.Load(), h)
	victim := -1
	for i := range b {
		switch b[i].stream.Load() {
		case s:
			// Two puts into one way at once store its words apart, and
			// may leave s beside the other stream's hash, where get does
			// not find it, and so the caller puts s: its hash goes beside
			// it again.
			if b[i].hash.Load() != h {
				b[i].hash.Store(h)
			}
			return
		case nil:
			if victim < 0 {
				victim = i
			}
		}
	}
	if victim < 0 {
		victim = int(h>>32) % cacheWays
	}
	b[victim].stream.Store(s)
	b[victim].hash.Store(h)
}

// remove takes s, whose name's hash is h, out of the cache. The caller
// holds the lock of s's shard, locked, and s has left the table.
func (c *streamCache) remove(h uint64, s *Stream) {
	b := bucket(*c.buckets.Load(), h)
	for i := range b {
		b[i].stream.CompareAndSwap(s, nil)
	}
}

// fit gives the cache a bucket for each two of n streams, if it has fewer,
// as empty buckets.
func (c *streamCache) fit(n int64) {
	want := cacheBuckets(n)
	for {
		old := c.buckets.Load()
		if old != nil && len(*old) >= want {
			return
		}
		fresh := make([]cacheBucket, want)
		if c.buckets.CompareAndSwap(old, &fresh) {
			return
		}
	}
}

// reset empties the cache, its buckets sized for n streams. The caller
// holds every shard's lock.
func (c *streamCache) reset(n int64) {
	fresh := make([]cacheBucket, cacheBuckets(n))
	c.buckets.Store(&fresh)
}

// cacheBuckets returns the buckets of a cache for n streams: the fewest,
// a power of two, that make one for each two streams, and at least
// minCacheBuckets. So a stream costs the cache 32 to 64 bytes.
func cacheBuckets(n int64) int {
	pairs := max(n/2, 1)
	return max(minCacheBuckets, 1<<bits.Len64(uint64(pairs-1)))
}
