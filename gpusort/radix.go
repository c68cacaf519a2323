package gpusort

import "streamd/internal/radix"

// Key32 returns the order-preserving unsigned key of f: a float's bits,
// read as an unsigned integer, order non-negative floats correctly and
// negative ones backwards, so the sign bit of non-negative floats and every
// bit of negative ones are flipped. −0 gets the key just below +0.
func Key32(f float32) uint32 { return radix.Key32(f) }

// Float32 inverts Key32.
func Float32(k uint32) float32 { return radix.FromKey32(k) }

// Key64 returns the order-preserving unsigned key of f, as Key32 does.
func Key64(f float64) uint64 { return radix.Key64(f) }

// Float64 inverts Key64.
func Float64(k uint64) float64 { return radix.FromKey64(k) }

// SortFloat32 sorts x in ascending order with an LSD radix sort of three
// 11-bit passes (radix.Float32s), using scratch (grown when the sort needs
// it and it is shorter than x) as the second buffer, and returns the
// scratch buffer for reuse. It runs in O(len(x)) time and allocates only
// when scratch is too short.
func SortFloat32(x []float32, scratch []uint32) []uint32 { return radix.Float32s(x, scratch) }

// SortFloat64 sorts x like SortFloat32, on 64-bit keys: 11-bit passes, or
// 8-bit ones above 2^19 keys, skipping those whose digit is the same for
// every key (radix.Float64s).
func SortFloat64(x []float64, scratch []uint64) []uint64 { return radix.Float64s(x, scratch) }
