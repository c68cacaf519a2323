//go:build gpu

package compute

import (
	"fmt"
	"strings"
)

// Compute shaders of the compute back-end. Keys are the order-preserving
// unsigned keys of gpusort.Key32 and gpusort.Key64: one uint per float32,
// a uvec2 (low word, high word) per float64, so a float64 key spans two 32-bit
// channels. The windows of a submission (the four of a batch, or those of
// many batches at once) are its segments: they lie one after the other in
// one shader storage buffer, each padded to N keys, and gl_WorkGroupID.z
// is the segment (ch: a colour channel of the paper's texture when there
// are four). The padding is never uploaded: the first pass reads it as the
// largest key. Each segment's length and digest parameters are in the
// segment table (binding 8).

// Work-group sizes. localSize threads sort 2·localSize keys in shared
// memory: 2048 keys are 8 KiB of 32-bit or 16 KiB of 64-bit keys, under
// llvmpipe's 32 KiB and NVIDIA's 48 KiB.
const (
	localSize  = 1024
	localKeys  = 2 * localSize
	stepSize   = 256
	gatherSize = 256
	searchSize = 64
)

// glslPrelude is shared by every compute shader.
const glslPrelude = `
#if KEY64
#define KEY uvec2
#define MAXKEY uvec2(0xFFFFFFFFu, 0xFFFFFFFFu)
bool lessK(KEY a, KEY b) { return a.y < b.y || (a.y == b.y && a.x < b.x); }
KEY toKey(KEY u) { return (u.y & 0x80000000u) != 0u ? ~u : uvec2(u.x, u.y ^ 0x80000000u); }
KEY fromKey(KEY k) { return (k.y & 0x80000000u) != 0u ? uvec2(k.x, k.y ^ 0x80000000u) : ~k; }
bool isZeroK(KEY k) { return k == uvec2(0xFFFFFFFFu, 0x7FFFFFFFu) || k == uvec2(0u, 0x80000000u); }
uvec2 wordsK(KEY k) { return k; }
#else
#define KEY uint
#define MAXKEY 0xFFFFFFFFu
bool lessK(KEY a, KEY b) { return a < b; }
KEY toKey(KEY u) { return (u & 0x80000000u) != 0u ? ~u : u ^ 0x80000000u; }
KEY fromKey(KEY k) { return (k & 0x80000000u) != 0u ? k ^ 0x80000000u : ~k; }
bool isZeroK(KEY k) { return k == 0x7FFFFFFFu || k == 0x80000000u; }
uvec2 wordsK(KEY k) { return uvec2(k, 0u); }
#endif
// eqK is the equality of the floats behind two keys: −0 equals +0.
bool eqK(KEY a, KEY b) { return a == b || (isZeroK(a) && isZeroK(b)); }

layout(std430, binding = 0) buffer Keys { KEY k[]; };
uniform uint N; // keys per segment
// The segment table: SEGW words per segment (window): its length, then
// for the digest shaders its run threshold min(max(T, 0), length), its
// first run slot, its first Known-value query and its number of queries.
layout(std430, binding = 8) readonly buffer Segs { uint segs[]; };
#define SEGW 8u
uint segWord(uint ch, uint w) { return segs[ch * SEGW + w]; }
uint segLen(uint ch) { return segs[ch * SEGW]; }

// groupIndex flattens a 2-D grid of work groups (x·y); z is the channel.
uint groupIndex() { return gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x; }
`

// srcLocal sorts (stage 0) or merges (stage 1) blocks of localKeys keys in
// shared memory. Stage 0 reads raw float bits, turns them into keys and
// pads past the window's end; it runs the whole bitonic network of the
// block, each stage a mirror step then half-cleaners. Stage 1 runs the
// half-cleaners of strides localSize … 1 of a larger stage. With finish set
// it writes floats back instead of keys.
const srcLocal = `
layout(local_size_x = LOCAL) in;
uniform uint stage;
uniform uint finish;
shared KEY s[2 * LOCAL];

void cmpswap(uint a, uint b) {
	KEY x = s[a], y = s[b];
	if (lessK(y, x)) { s[a] = y; s[b] = x; }
}

void main() {
	uint ch = gl_WorkGroupID.z;
	uint blk = groupIndex();
	uint t = gl_LocalInvocationID.x;
	uint base = ch * N + blk * (2u * LOCAL);
	uint len = segLen(ch);
	for (uint r = 0u; r < 2u; r++) {
		uint i = t + r * LOCAL;
		if (stage == 0u) {
			uint gi = blk * (2u * LOCAL) + i;
			s[i] = gi < len ? toKey(k[base + i]) : MAXKEY;
		} else {
			s[i] = k[base + i];
		}
	}
	barrier();
	if (stage == 0u) {
		for (uint size = 2u; size <= 2u * LOCAL; size <<= 1) {
			uint h = size >> 1;
			uint o = t & (h - 1u);
			uint b0 = (t / h) * size;
			cmpswap(b0 + o, b0 + size - 1u - o);
			barrier();
			for (uint j = h >> 1; j > 0u; j >>= 1) {
				uint a = (t / j) * 2u * j + (t & (j - 1u));
				cmpswap(a, a + j);
				barrier();
			}
		}
	} else {
		for (uint j = LOCAL; j > 0u; j >>= 1) {
			uint a = (t / j) * 2u * j + (t & (j - 1u));
			cmpswap(a, a + j);
			barrier();
		}
	}
	for (uint r = 0u; r < 2u; r++) {
		uint i = t + r * LOCAL;
		k[base + i] = finish != 0u ? fromKey(s[i]) : s[i];
	}
}
`

// srcStep runs steps of the network at strides too long for shared
// memory, one thread per comparator (mode 0: the mirror step of a stage,
// key i of each block of size against size−1−i; mode 1: a half-cleaner at
// stride j) or two steps at once, one thread per four keys that only
// compare among themselves (mode 2: the mirror step and the half-cleaner
// at size/4; mode 3: half-cleaners at j and j/2). Fusing halves the
// passes over device memory.
const srcStep = `
layout(local_size_x = STEP) in;
uniform uint size;
uniform uint j;
uniform uint mode;

void cmpswap(uint a, uint b) {
	KEY x = k[a], y = k[b];
	if (lessK(y, x)) { k[a] = y; k[b] = x; }
}

void main() {
	uint ch = gl_WorkGroupID.z;
	uint t = groupIndex() * STEP + gl_LocalInvocationID.x;
	uint base = ch * N;
	if (mode == 0u) {
		uint h = size >> 1;
		uint o = t & (h - 1u);
		uint b0 = base + (t / h) * size;
		cmpswap(b0 + o, b0 + size - 1u - o);
	} else if (mode == 1u) {
		uint a = base + (t / j) * 2u * j + (t & (j - 1u));
		cmpswap(a, a + j);
	} else {
		uint e0, e1, e2, e3;
		if (mode == 2u) {
			uint q = size >> 2;
			uint o = t & (q - 1u);
			uint b0 = base + (t / q) * size;
			e0 = b0 + o; e1 = e0 + q;
			e3 = b0 + size - 1u - o; e2 = e3 - q;
		} else {
			uint h = j >> 1;
			e0 = base + (t / h) * 4u * h + (t & (h - 1u));
			e1 = e0 + h; e2 = e0 + 2u * h; e3 = e0 + 3u * h;
		}
		KEY v0 = k[e0], v1 = k[e1], v2 = k[e2], v3 = k[e3], x;
		// First step: e0–e3, e1–e2 (mirror) or e0–e2, e1–e3 (stride j).
		if (mode == 2u) {
			if (lessK(v3, v0)) { x = v0; v0 = v3; v3 = x; }
			if (lessK(v2, v1)) { x = v1; v1 = v2; v2 = x; }
		} else {
			if (lessK(v2, v0)) { x = v0; v0 = v2; v2 = x; }
			if (lessK(v3, v1)) { x = v1; v1 = v3; v3 = x; }
		}
		// Second step: e0–e1, e2–e3.
		if (lessK(v1, v0)) { x = v0; v0 = v1; v1 = x; }
		if (lessK(v3, v2)) { x = v2; v2 = v3; v3 = x; }
		k[e0] = v0; k[e1] = v1; k[e2] = v2; k[e3] = v3;
	}
}
`

// srcRunFlags (pass 0) counts, per block of localSize keys, the starts of
// runs longer than the channel's threshold T: key i starts such a run when
// it differs from key i−1 and equals key i+T, an O(1) test on sorted keys.
// srcRunScatter (pass 2) writes each such run's start, length (its end
// found by binary search) and key, in order, at its block's offset plus its
// rank in the block. Pass 1 (srcScan) turns block counts into offsets.
const srcRunFlags = `
layout(local_size_x = LOCAL) in;
layout(std430, binding = 1) buffer Blocks { uint blockSum[]; };
layout(std430, binding = 2) buffer Runs { uvec4 runs[]; };
uniform uint NB;      // blocks per channel
uniform uint pass;
shared uint sh[LOCAL];
shared uint cnt;

bool flagAt(uint ch, uint i) {
	uint len = segLen(ch);
	uint T = segWord(ch, 1u);
	if (i >= len || i + T >= len) return false;
	uint base = ch * N;
	KEY v = k[base + i];
	if (i > 0u && eqK(k[base + i - 1u], v)) return false;
	return eqK(v, k[base + i + T]);
}

void main() {
	uint ch = gl_WorkGroupID.z;
	uint blk = groupIndex();
	uint t = gl_LocalInvocationID.x;
	uint i = blk * LOCAL + t;
	bool f = flagAt(ch, i);
	if (pass == 0u) {
		if (t == 0u) cnt = 0u;
		barrier();
		if (f) atomicAdd(cnt, 1u);
		barrier();
		if (t == 0u) blockSum[ch * NB + blk] = cnt;
		return;
	}
	uint fv = f ? 1u : 0u;
	sh[t] = fv;
	barrier();
	for (uint off = 1u; off < LOCAL; off <<= 1) {
		uint v = t >= off ? sh[t - off] : 0u;
		barrier();
		sh[t] += v;
		barrier();
	}
	if (f) {
		uint pos = segWord(ch, 2u) + blockSum[ch * NB + blk] + sh[t] - 1u;
		uint base = ch * N;
		KEY v = k[base + i];
		uint lo = i + segWord(ch, 1u) + 1u, hi = segLen(ch);
		while (lo < hi) {
			uint mid = (lo + hi) >> 1;
			if (eqK(k[base + mid], v)) lo = mid + 1u; else hi = mid;
		}
		uvec2 w = wordsK(v);
		runs[pos] = uvec4(i, lo - i, w.x, w.y);
	}
}
`

// srcScan turns each channel's block counts into exclusive offsets, and
// writes each channel's total: one work group per channel.
const srcScan = `
layout(local_size_x = LOCAL) in;
layout(std430, binding = 1) buffer Blocks { uint blockSum[]; };
layout(std430, binding = 3) buffer Totals { uint totals[]; };
uniform uint NB;
shared uint sh[LOCAL];

void main() {
	uint ch = gl_WorkGroupID.z;
	uint t = gl_LocalInvocationID.x;
	uint chunk = (NB + LOCAL - 1u) / LOCAL;
	uint lo = min(t * chunk, NB), hi = min(lo + chunk, NB);
	uint sum = 0u;
	for (uint i = lo; i < hi; i++) sum += blockSum[ch * NB + i];
	sh[t] = sum;
	barrier();
	for (uint off = 1u; off < LOCAL; off <<= 1) {
		uint v = t >= off ? sh[t - off] : 0u;
		barrier();
		sh[t] += v;
		barrier();
	}
	uint run = sh[t] - sum;
	for (uint i = lo; i < hi; i++) {
		uint v = blockSum[ch * NB + i];
		blockSum[ch * NB + i] = run;
		run += v;
	}
	if (t == LOCAL - 1u) totals[ch] = sh[t];
}
`

// srcSearch finds, for each query (lo, hi) of keys, the range of keys
// between them in its channel's sorted window by two binary searches: the
// run of a Known value (lo = hi, or −0 … +0 for zero).
const srcSearch = `
layout(local_size_x = SEARCH) in;
layout(std430, binding = 4) buffer Queries { KEY q[]; };
layout(std430, binding = 5) buffer Found { uvec4 found[]; };

void main() {
	uint ch = gl_WorkGroupID.z;
	uint i = groupIndex() * SEARCH + gl_LocalInvocationID.x;
	if (i >= segWord(ch, 4u)) return;
	uint qi = segWord(ch, 3u) + i;
	KEY qlo = q[2u * qi], qhi = q[2u * qi + 1u];
	uint base = ch * N;
	uint lo = 0u, hi = segLen(ch);
	while (lo < hi) {
		uint mid = (lo + hi) >> 1;
		if (lessK(k[base + mid], qlo)) lo = mid + 1u; else hi = mid;
	}
	uint first = lo;
	hi = segLen(ch);
	while (lo < hi) {
		uint mid = (lo + hi) >> 1;
		if (lessK(qhi, k[base + mid])) hi = mid; else lo = mid + 1u;
	}
	uvec2 w = first < segLen(ch) ? wordsK(k[base + first]) : uvec2(0u);
	found[qi] = uvec4(first, lo - first, w.x, w.y);
}
`

// srcGather copies the keys at given positions: the quantile sample.
const srcGather = `
layout(local_size_x = GATHER) in;
layout(std430, binding = 6) buffer Index { uint idx[]; };
layout(std430, binding = 7) buffer Out { KEY gathered[]; };
uniform uint count;

void main() {
	uint i = groupIndex() * GATHER + gl_LocalInvocationID.x;
	if (i >= count) return;
	gathered[i] = k[idx[i]];
}
`

// srcFill writes pseudo-random float bits (a hash of the position) into
// each window: the calibration batch, made on the GPU. Some are NaN bits;
// the sorts order bits, so that does not matter.
const srcFill = `
layout(local_size_x = GATHER) in;
uniform uint seed;

uint hash(uint x) {
	x ^= x >> 16; x *= 0x7feb352du;
	x ^= x >> 15; x *= 0x846ca68bu;
	x ^= x >> 16;
	return x;
}

void main() {
	uint ch = gl_WorkGroupID.z;
	uint i = groupIndex() * GATHER + gl_LocalInvocationID.x;
	if (i >= segLen(ch)) return;
	uint h = hash(i ^ (ch << 28) ^ seed);
#if KEY64
	k[ch * N + i] = uvec2(hash(h), h);
#else
	k[ch * N + i] = h;
#endif
}
`

// computeSource assembles one compute shader.
func computeSource(body string, key64 bool) string { return computeSourceExt("", body, key64) }

// computeSourceExt assembles one compute shader that enables the GLSL
// extensions in ext (#extension lines).
func computeSourceExt(ext, body string, key64 bool) string {
	var b strings.Builder
	b.WriteString("#version 430\n")
	b.WriteString(ext)
	fmt.Fprintf(&b, "#define KEY64 %d\n#define LOCAL %d\n#define STEP %d\n#define GATHER %d\n#define SEARCH %d\n",
		map[bool]int{false: 0, true: 1}[key64], localSize, stepSize, gatherSize, searchSize)
	b.WriteString(glslPrelude)
	b.WriteString(body)
	return b.String()
}
