// Package items turns the items of an item stream — strings such as URLs,
// client addresses, user IDs or error codes — into the 64-bit fingerprints
// that streamd's summaries count, and keeps the strings of the fingerprints
// that answers name (Names).
//
// # Fingerprints
//
// An item's fingerprint is a keyed SipHash-2-4 (Aumasson and Bernstein,
// 2012) of its bytes, under a 128-bit key that each daemon draws at random
// once and keeps in its checkpoints, so that fingerprints stay the same
// across restarts. A keyed hash matters: with an unkeyed one a client could
// craft items that collide and so merge or hide each other's counts; without
// the key, finding a collision takes about 2^32 tries of items sent to the
// daemon itself.
//
// Two distinct items share a fingerprint with probability about 2^-64, so
// among n distinct items some pair collides with probability at most about
// n²/2^65: 3·10^-8 for 10^6 distinct items, 3·10^-4 for 10^8. (A 2^-53
// share of the hashes is folded onto others to keep the carrier finite, see
// below; it changes the bound by a factor 1 + 2^-11.)
//
// Items that share a fingerprint are counted as one: the count bounds of a
// fingerprint bound the total count of its items. The upper bound therefore
// still bounds each item's own count; the lower bound bounds the total, not
// each item's share. An answer names a fingerprint by the string of one of
// its items, the first one the daemon kept for it.
//
// # Carrier
//
// The summaries and sorters of streamd order float64 values through the
// order-preserving key transform of internal/radix (Key64): they sort and
// compare 64-bit keys. A fingerprint travels as the float64 whose key it is
// (Value), so an item stream goes through the same windows, sorters (the
// GPU back-ends included, which sort the keys as two 32-bit channels) and
// summaries as a float64 stream, and its windows sort in fingerprint order.
// Only keys of finite floats other than −0 may be fingerprints (NaN and ±Inf
// are not values, and −0 equals +0): Fingerprint folds the 2^53 others onto
// valid ones.
//
// # Items
//
// An item is 1 to MaxLen (1024) bytes of valid UTF-8. Check says why an
// item is refused: the decoders count such items as rejected.
package items

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf8"

	"streamd/internal/radix"
)

// MaxLen is the length in bytes of the longest item.
const MaxLen = 1024

// Errors of Check.
var (
	// ErrEmpty is returned by Check for an empty item.
	ErrEmpty = errors.New("empty item")
	// ErrTooLong is returned by Check for an item longer than MaxLen.
	ErrTooLong = errors.New("item too long")
	// ErrBadUTF8 is returned by Check for an item that is not valid UTF-8.
	ErrBadUTF8 = errors.New("item is not valid UTF-8")
)

// Check reports whether item is a valid item: nil, or an error wrapping
// ErrEmpty, ErrTooLong or ErrBadUTF8.
func Check(item []byte) error {
	switch {
	case len(item) == 0:
		return ErrEmpty
	case len(item) > MaxLen:
		return fmt.Errorf("%w: %d bytes, limit %d", ErrTooLong, len(item), MaxLen)
	case !utf8.Valid(item):
		return ErrBadUTF8
	}
	return nil
}

// Key is the 128-bit key of the fingerprints.
type Key [16]byte

// NewKey returns a key drawn from crypto/rand.
func NewKey() (Key, error) {
	var k Key
	if _, err := rand.Read(k[:]); err != nil {
		return k, fmt.Errorf("draw item key: %w", err)
	}
	return k, nil
}

// Hash is a 64-bit hash of an item's bytes. It must not keep item.
type Hash func(item []byte) uint64

// SipHash returns the SipHash-2-4 hash under k: the hash of every item
// stream unless its configuration names another. It costs about 1 ns a
// byte plus 15 ns.
func SipHash(k Key) Hash {
	k0, k1 := binary.LittleEndian.Uint64(k[:8]), binary.LittleEndian.Uint64(k[8:])
	return func(item []byte) uint64 { return sipHash24(k0, k1, item) }
}

// Keys of radix.Key64 that are no fingerprint: below minKey are −Inf and
// the negative NaNs, above maxKey +Inf and the positive NaNs, and negZero
// is −0.
const (
	minKey  = 0x0010_0000_0000_0000
	maxKey  = 0xffef_ffff_ffff_ffff
	negZero = 0x7fff_ffff_ffff_ffff
	bit52   = 1 << 52
)

// Fingerprint returns the fingerprint of a hash h: h itself, unless it is
// the key of NaN, ±Inf or −0, which are folded onto neighbouring keys.
func Fingerprint(h uint64) uint64 {
	switch {
	case h < minKey:
		h |= bit52
	case h > maxKey:
		h &^= bit52
	case h == negZero:
		h--
	}
	return h
}

// Value returns the float64 that carries fingerprint fp: the float whose
// radix.Key64 is fp. It is finite and not −0 for every fingerprint.
func Value(fp uint64) float64 { return radix.FromKey64(fp) }

// FromValue returns the fingerprint that v carries (radix.Key64).
func FromValue(v float64) uint64 { return radix.Key64(v) }

// ASCII reports whether every byte of b is below 0x80. Every item of 1 to
// MaxLen such bytes is valid UTF-8: a decoder that finds a run of items
// (and of whatever lies between them) all ASCII may skip Check's UTF-8
// scan of each, which costs more than this scan of the run.
func ASCII(b []byte) bool {
	var acc uint64
	for len(b) >= 32 {
		acc |= binary.LittleEndian.Uint64(b) | binary.LittleEndian.Uint64(b[8:]) |
			binary.LittleEndian.Uint64(b[16:]) | binary.LittleEndian.Uint64(b[24:])
		b = b[32:]
	}
	for len(b) >= 8 {
		acc |= binary.LittleEndian.Uint64(b)
		b = b[8:]
	}
	for _, c := range b {
		acc |= uint64(c)
	}
	return acc&0x8080_8080_8080_8080 == 0
}
