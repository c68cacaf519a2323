//go:build gpu

package compute

import (
	"fmt"
	"strings"
)

// Compute shaders of the LSD radix sort (radix.go). Each pass sorts
// the keys of every channel stably by one 8-bit digit with three kernels,
// reduce then scan then scatter (Merrill and Grimshaw's design, which CUB's
// DeviceRadixSort follows):
//
//  1. srcRadixCount: each work group counts the digits of one tile of
//     radixTile keys into shared memory and writes the 256 counts to
//     counts[ch][digit][tile]; it also adds them to the channel's digit
//     totals (hist).
//  2. srcRadixScan: one work group per (digit, channel) turns that digit's
//     row of tile counts into global destinations: the keys of all smaller
//     digits (from the totals) plus the same digit's keys in earlier tiles.
//  3. srcRadixScatter: each work group sorts its tile by the digit in
//     shared memory, stably, in two 4-bit split steps, then writes each
//     key to its tile's destination for its digit plus its rank among the
//     tile's keys of that digit. Writes of one digit are contiguous.
//
// A float32 key is one uint; a float64 key a uvec2 (low word, high word),
// its low word sorted by passes 0–3 and its high word by passes 4–7. The
// first pass reads raw float bits and applies toKey; with finish set, the
// last writes floats (fromKey) instead of keys.
//
// The scatter kernels compiled with PAIRS set (SortPairs, 64-bit keys only)
// also move a 64-bit value with each key, from a second pair of buffers:
// the tile's shared memory holds, next to each key, the key's place in the
// input tile, and the tile's write reads each value from there.
//
// Shared memory per work group: 16.5 KiB of keys or counters (they take
// turns in one array), 1 KiB of digit offsets and 2 KiB of scan space,
// under llvmpipe's 32 KiB and NVIDIA's 48 KiB; with PAIRS, 8.25 KiB more of
// input places (27.75 KiB; 31 KiB in srcRadixScatterSubgroup).

// Radix sort geometry. radixThreads must be 256, one thread per digit
// value in srcRadixCount and srcRadixScan.
const (
	radixThreads = 256
	radixKeys32  = 16 // keys per thread, 32-bit keys: tiles of 4096
	radixKeys64  = 8  // keys per thread, 64-bit keys: tiles of 2048 (the same 16 KiB)
)

// radixTile returns the keys per tile for the given key width.
func radixTile(key64 bool) int {
	if key64 {
		return radixThreads * radixKeys64
	}
	return radixThreads * radixKeys32
}

// glslRadix is shared by the three radix kernels.
const glslRadix = `
layout(local_size_x = RT) in;
layout(std430, binding = 1) buffer Out { KEY o[]; };
layout(std430, binding = 2) buffer Counts { uint counts[]; }; // [ch][256][NT]
layout(std430, binding = 3) buffer Hist { uint hist[]; };     // [ch][PASSES][256]
uniform uint NT;     // tiles per channel
uniform uint pass;   // 0 … PASSES-1
uniform uint shift;  // the digit's lowest bit within its word
uniform uint hiWord; // 64-bit keys: the digit lies in the high word
uniform uint raw;    // the keys are float bits still (the first pass)

#define TILE (RT * RK)
// pad spreads consecutive shared words of one thread over the banks.
#define pad(i) ((i) + ((i) >> 5))

uint wordOf(KEY x) {
#if KEY64
	return hiWord != 0u ? x.y : x.x;
#else
	return x;
#endif
}

uint digitOf(KEY x) { return (wordOf(x) >> shift) & 0xFFu; }

KEY loadKey(uint i) {
	KEY x = k[i];
	return raw != 0u ? toKey(x) : x;
}
`

// srcRadixCount counts one tile's digits. Each thread adds runs of equal
// digits at once, so that equal keys (sorted or constant windows) do not
// all contend for one shared counter.
const srcRadixCount = `
shared uint h[256];

void main() {
	uint ch = gl_WorkGroupID.z;
	uint tile = groupIndex();
	if (tile >= NT) return;
	uint t = gl_LocalInvocationID.x;
	h[t] = 0u;
	barrier();
	uint len = segLen(ch);
	uint last = 0u, run = 0u;
	for (uint j = 0u; j < RK; j++) {
		uint i = tile * TILE + j * RT + t;
		if (i < len) {
			uint d = digitOf(loadKey(ch * N + i));
			if (d != last && run != 0u) {
				atomicAdd(h[last], run);
				run = 0u;
			}
			last = d;
			run++;
		}
	}
	if (run != 0u) atomicAdd(h[last], run);
	barrier();
	uint c = h[t];
	counts[(ch * 256u + t) * NT + tile] = c;
	if (c != 0u) atomicAdd(hist[(ch * PASSES + pass) * 256u + t], c);
}
`

// srcRadixScan turns the tile counts of each channel into destinations,
// in place, in one of two ways. With one work group per (digit, channel)
// (gl_WorkGroupID.x the digit, for many tiles): each thread sums a run of
// the digit's tiles, an inclusive scan over the threads (Hillis–Steele,
// ping-pong buffers) gives each run's offset, and the same scan sums the
// channel's totals of the smaller digits. With one work group per channel
// (rows set, for few tiles): thread d walks digit d's row of tiles alone,
// and one scan over the threads sums the totals.
const srcRadixScan = `
uniform uint rows;
shared uvec2 sc[2][RT];
shared uvec2 scTotal;

// scan2 returns the inclusive prefix sum of v over the work group's
// threads, and leaves the total in scTotal.
uvec2 scan2(uvec2 v) {
	uint t = gl_LocalInvocationID.x;
	sc[0][t] = v;
	barrier();
	uint src = 0u;
	for (uint off = 1u; off < RT; off <<= 1) {
		uvec2 x = sc[src][t];
		if (t >= off) x += sc[src][t - off];
		sc[src ^ 1u][t] = x;
		src ^= 1u;
		barrier();
	}
	if (t == RT - 1u) scTotal = sc[src][t];
	barrier();
	return sc[src][t];
}

void main() {
	uint ch = gl_WorkGroupID.z;
	uint t = gl_LocalInvocationID.x;
	uint totals = (ch * PASSES + pass) * 256u;
	uint row, lo, hi, at;
	if (rows != 0u) {
		row = (ch * 256u + t) * NT;
		lo = 0u;
		hi = NT;
		at = scan2(uvec2(hist[totals + t], 0u)).x - hist[totals + t];
	} else {
		uint d = gl_WorkGroupID.x;
		uint chunk = (NT + RT - 1u) / RT;
		lo = min(t * chunk, NT);
		hi = min(lo + chunk, NT);
		row = (ch * 256u + d) * NT;
		uint s = 0u;
		for (uint i = lo; i < hi; i++) s += counts[row + i];
		at = scan2(uvec2(s, t < d ? hist[totals + t] : 0u)).x - s;
		at += scTotal.y;
	}
	for (uint i = lo; i < hi; i++) {
		uint c = counts[row + i];
		counts[row + i] = at;
		at += c;
	}
}
`

// glslRadixTile is the shared memory in which the scatter kernels sort a
// tile, with its accessors: a float64 tile keeps its low words, then its
// high words. It also holds srcRadixScatter's 16 counters per thread,
// 16·RT words, which fit since a tile is 16·RT words of keys. Both
// kernels write the sorted tile out with writeTile, once each has set
// delta. With PAIRS, putIdx records the input place of the key at each
// place of the tile (8.25 KiB more), and writeTile moves the values; else
// putIdx does nothing.
const glslRadixTile = `
uniform uint finish;
#if PAIRS
layout(std430, binding = 4) readonly buffer ValIn { uvec2 vin[]; };
layout(std430, binding = 5) writeonly buffer ValOut { uvec2 vout[]; };
shared uint sidx[pad(TILE)];
void putIdx(uint p, uint i) { sidx[pad(p)] = i; }
#else
void putIdx(uint p, uint i) {}
#endif
shared uint delta[256]; // a digit's destination minus its first place in the sorted tile
#if KEY64
shared uint sh[2u * pad(TILE)];
void putKey(uint p, KEY x) { sh[pad(p)] = x.x; sh[pad(TILE) + pad(p)] = x.y; }
KEY getKey(uint p) { return uvec2(sh[pad(p)], sh[pad(TILE) + pad(p)]); }
#define NOKEY uvec2(0u)
#else
shared uint sh[pad(TILE)];
void putKey(uint p, KEY x) { sh[pad(p)] = x; }
KEY getKey(uint p) { return sh[pad(p)]; }
#define NOKEY 0u
#endif

// writeTile writes the sorted tile's valid keys out to the channel that
// starts at base, coalesced: the key in place p, of digit d, goes to
// delta[d] + p; with finish set, as floats again. With PAIRS the key's
// value goes to the same place of vout, from the key's input place in the
// tile that starts at from.
void writeTile(uint base, uint from, uint valid, uint t) {
	for (uint j = 0u; j < RK; j++) {
		uint p = j * RT + t;
		if (p < valid) {
			KEY x = getKey(p);
			uint at = base + delta[digitOf(x)] + p;
			o[at] = finish != 0u ? fromKey(x) : x;
#if PAIRS
			vout[at] = vin[from + sidx[pad(p)]];
#endif
		}
	}
}
`

// srcRadixScatter sorts one tile by the pass's digit and writes it out.
//
// The tile is loaded coalesced into shared memory, then each thread takes
// RK consecutive keys (a blocked arrangement, so that thread order is key
// order). The places past the window's end (in a channel's last tile)
// count as keys of nibble 15 that come last, so they sort to the tile's
// end, after every real key; they are counted but never moved. Each of
// the two split steps sorts stably by 4 bits: a thread counts its keys'
// nibbles in registers
// (16 counters of 8 bits, which RK ≤ 16 keys cannot overflow), the block
// writes the counters digit-major (counter[d][thread]) and scans them, and
// a key's new place is its counter's prefix plus its rank among the
// thread's keys of that nibble. The counters and the keys take turns in
// one shared array. The sorted tile is written out coalesced: the first
// key of each digit records where the digit goes, every key its place
// relative to that.
const srcRadixScatter = glslRadixTile + `
shared uint sc[2][RT];

void main() {
	uint ch = gl_WorkGroupID.z;
	uint tile = groupIndex();
	uint len = segLen(ch);
	if (tile >= NT || tile * TILE >= len) return;
	uint t = gl_LocalInvocationID.x;
	uint valid = min(len - tile * TILE, TILE);
	uint base = ch * N;
	for (uint j = 0u; j < RK; j++) {
		uint p = j * RT + t;
		if (p < valid) putKey(p, loadKey(base + tile * TILE + p));
	}
	barrier();
	// The keys past the window's end sort last, into the tile's last
	// places, whatever the digit: only their count matters, in the
	// counters of nibble 15. Their places in shared memory are never
	// written or read.
	uint mine = min(valid - min(valid, t * RK), RK); // this thread's real keys
	KEY v[RK];
	uint r[RK], ix[RK]; // ix: the keys' places in the input tile (PAIRS)
	for (uint j = 0u; j < RK; j++) {
		if (j < mine) {
			v[j] = getKey(t * RK + j);
			ix[j] = t * RK + j;
		}
	}
	for (uint step = 0u; step < 2u; step++) {
		uint sub = shift + 4u * step;
		uvec4 c = uvec4(0u);
		for (uint j = 0u; j < RK; j++) {
			if (j < mine) {
				uint d = (wordOf(v[j]) >> sub) & 0xFu;
				uint q = d >> 2, b = (d & 3u) * 8u;
				r[j] = (c[q] >> b) & 0xFFu;
				c[q] += 1u << b;
			}
		}
		c.w += (RK - mine) << 24; // the places past the end, after this thread's keys
		barrier(); // every thread has read its keys
		for (uint d = 0u; d < 16u; d++) sh[pad(d * RT + t)] = (c[d >> 2] >> ((d & 3u) * 8u)) & 0xFFu;
		barrier();
		uint sum = 0u;
		for (uint i = 0u; i < 16u; i++) sum += sh[pad(t * 16u + i)];
		sc[0][t] = sum;
		barrier();
		uint src = 0u;
		for (uint off = 1u; off < RT; off <<= 1) {
			uint x = sc[src][t];
			if (t >= off) x += sc[src][t - off];
			sc[src ^ 1u][t] = x;
			src ^= 1u;
			barrier();
		}
		uint at = sc[src][t] - sum;
		for (uint i = 0u; i < 16u; i++) {
			uint x = sh[pad(t * 16u + i)];
			sh[pad(t * 16u + i)] = at;
			at += x;
		}
		barrier();
		for (uint j = 0u; j < RK; j++) {
			if (j < mine) r[j] += sh[pad(((wordOf(v[j]) >> sub) & 0xFu) * RT + t)];
		}
		barrier(); // every thread has read its counters
		for (uint j = 0u; j < RK; j++) {
			if (j < mine) {
				putKey(r[j], v[j]);
				putIdx(r[j], ix[j]);
			}
		}
		barrier();
		if (step == 0u) {
			for (uint j = 0u; j < RK; j++) {
				if (j < mine) {
					v[j] = getKey(t * RK + j);
#if PAIRS
					ix[j] = sidx[pad(t * RK + j)];
#endif
				}
			}
		}
	}
	for (uint j = 0u; j < RK; j++) {
		uint p = j * RT + t;
		if (p < valid) {
			uint d = digitOf(getKey(p));
			if (p == 0u || digitOf(getKey(p - 1u)) != d) {
				delta[d] = counts[(ch * 256u + d) * NT + tile] - p;
			}
		}
	}
	barrier();
	writeTile(base, base + tile * TILE, valid, t);
}
`

// radixSource assembles one radix shader, with the GLSL extensions in ext;
// with pairs, a scatter that moves a value with each key.
func radixSource(ext, body string, key64, pairs bool) string {
	rk, passes := radixKeys32, 4
	if key64 {
		rk, passes = radixKeys64, 8
	}
	var b strings.Builder
	b.WriteString(computeSourceExt(ext, "", key64))
	fmt.Fprintf(&b, "#define RT %d\n#define RK %du\n#define PASSES %du\n#define PAIRS %d\n", radixThreads, rk, passes, b2u(pairs))
	b.WriteString(glslRadix)
	b.WriteString(body)
	return b.String()
}

// srcRadixScatterSubgroup is srcRadixScatter for GPUs with subgroups of 32
// invocations and ballots. It ranks each key by its whole 8-bit digit in
// one step, as Onesweep's warp-level multisplit does, instead of two 4-bit
// split steps with a work-group-wide scan each: eight ballots, one per bit
// of the digit, give each invocation the mask of those holding its digit.
// (GL_NV_shader_subgroup_partitioned gives that mask in one operation, but
// on an H100 it made the sort 1.5 times slower than the split steps.)
//
// Subgroup w takes the tile's keys w·RK·32 … (w+1)·RK·32−1 in RK rounds of
// 32 consecutive keys, one per invocation. In a round, the invocations
// holding one digit learn from the ballots how many of them hold it and
// which of them come first; the first of them adds their number to the
// subgroup's count of that digit in shared memory. A key's rank is that
// count before the round plus the number of earlier invocations with its
// digit, so keys keep their order within a subgroup. The first of them
// adds with an atomic and hands the count before to the others by a
// shuffle. Nothing in GLSL orders one round's atomic before the next
// round's on the same counter but the subgroup running in lockstep, as
// NVIDIA's warps of 32 do; a subgroupBarrier there (a barrier over all
// memory) made the sort twice as slow on an H100. So the kernel is used on
// NVIDIA only (radixSubgroups), where the tests compare it with the CPU's
// sort. Then thread d sums digit d's counts over the subgroups into
// offsets (keys of earlier subgroups first), a scan over the digits gives
// each digit's start in the sorted tile, each key is written there, and
// the tile goes out coalesced as in srcRadixScatter.
const srcRadixScatterSubgroup = glslRadixTile + `
// NVIDIA's compiler otherwise keeps v and rank in local memory, which made
// the kernel 1.5 times slower on an H100; other compilers ignore it.
#pragma optionNV(unroll all)
#define WARPS (RT / 32u)
// wh holds 16-bit counts, two digits a word ([subgroup][digit/2]), then
// in their place each subgroup's offsets: 16 bits suffice for a tile of at
// most 2^16 keys, and halving it lets more work groups share an SM.
shared uint wh[WARPS * 128u];
shared uint start[256];       // where each digit starts in the sorted tile
shared uint wsum[WARPS];

void main() {
	uint ch = gl_WorkGroupID.z;
	uint tile = groupIndex();
	uint len = segLen(ch);
	if (tile >= NT || tile * TILE >= len) return;
	uint t = gl_LocalInvocationID.x;
	uint w = gl_SubgroupID, l = gl_SubgroupInvocationID;
	uint valid = min(len - tile * TILE, TILE);
	uint base = ch * N;
	for (uint i = t; i < WARPS * 128u; i += RT) wh[i] = 0u;
	barrier();

	KEY v[RK];
	uint rank[RK];
	for (uint j = 0u; j < RK; j++) {
		uint p = (w * RK + j) * 32u + l;
		bool ok = p < valid;
		v[j] = ok ? loadKey(base + tile * TILE + p) : NOKEY;
		uint d = digitOf(v[j]);
		uint same = subgroupBallot(ok).x;
		for (uint b = 0u; b < 8u; b++) {
			bool one = ((d >> b) & 1u) != 0u;
			uint m = subgroupBallot(one).x;
			same &= one ? m : ~m;
		}
		uint before = bitCount(same & gl_SubgroupLtMask.x);
		uint prev = 0u;
		uint hw = (d & 1u) * 16u;
		if (ok && before == 0u) prev = (atomicAdd(wh[w * 128u + (d >> 1)], bitCount(same) << hw) >> hw) & 0xFFFFu;
		rank[j] = subgroupShuffle(prev, uint(findLSB(same))) + before;
	}
	barrier();

	// Digit d = w·32 + l, so that a subgroup scan runs in digit order.
	// The two digits of a word belong to neighbouring invocations: the
	// even one writes both offsets.
	uint d = w * 32u + l;
	uint hw = (d & 1u) * 16u;
	uint total = 0u;
	for (uint k = 0u; k < WARPS; k++) {
		// The shuffle carries the odd invocation's count too, so that
		// the even one's write depends on its partner's read of the word.
		uint c = (wh[k * 128u + (d >> 1)] >> hw) & 0xFFFFu;
		uint pair = subgroupShuffleXor(total | c << 16, 1u);
		if (hw == 0u) wh[k * 128u + (d >> 1)] = total | (pair & 0xFFFFu) << 16;
		total += c;
	}
	uint incl = subgroupInclusiveAdd(total);
	if (l == 31u) wsum[w] = incl;
	barrier();
	uint at = incl - total;
	for (uint k = 0u; k < w; k++) at += wsum[k];
	start[d] = at;
	delta[d] = counts[(ch * 256u + d) * NT + tile] - at;
	barrier();

	for (uint j = 0u; j < RK; j++) {
		if ((w * RK + j) * 32u + l < valid) {
			uint dj = digitOf(v[j]);
			uint off = (wh[w * 128u + (dj >> 1)] >> ((dj & 1u) * 16u)) & 0xFFFFu;
			putKey(start[dj] + off + rank[j], v[j]);
			putIdx(start[dj] + off + rank[j], (w * RK + j) * 32u + l);
		}
	}
	barrier();
	writeTile(base, base + tile * TILE, valid, t);
}
`

// radixSubgroupExtensions are the GLSL extensions srcRadixScatterSubgroup
// needs.
const radixSubgroupExtensions = `#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require
`
