//go:build gpu

package fragment

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"time"

	"github.com/go-gl/gl/v4.5-core/gl"

	"streamd/gpusort"
	"streamd/gpusort/glctx"
	"streamd/summary"
)

// Sorter is a sorting network drawn with the fixed-function pipeline, as
// the 2005 papers do it: the four windows of a batch are the four channels
// of one RGBA32F texture of W×H texels (W and H powers of two, W·H = N, the
// longest window rounded up to a power of two; shorter windows are padded
// with +Inf). Each step of the network draws quads whose texture
// coordinates map every texel to its comparator partner; GL_MIN blending
// keeps the smaller value on one side of each comparator and GL_MAX the
// larger on the other. Between steps the framebuffer texture is copied to
// the texture that the quads sample.
//
// Two networks are drawn:
//
//   - "pbsn" (NewPBSN), the periodic balanced sorting network of
//     Govindaraju, Raghuvanshi and Manocha (SIGMOD 2005, Routines 4.3 and
//     4.4): log N identical stages of log N steps, step j comparing element
//     i of each block of 2^j with element 2^j−1−i. Blocks narrower than
//     the texture are column quads of full height (ComputeRowMin/Max);
//     wider ones span whole rows and mirror both coordinates
//     (ComputeMin/Max).
//   - "bitonic" (NewBitonic), the cache-efficient bitonic network of
//     Govindaraju, Raghuvanshi, Henson, Tuft and Manocha (2005): stage i
//     begins with the mirror step on blocks of 2^i and continues with
//     comparisons at distance 2^(j−1) in one direction only, no reversals.
//     Column-aligned quads are cut into tiles of 64 rows.
//
// Blending compares floats, so it cannot order −0 and +0, and a GPU may
// flush denormals to zero when it blends. Sorter therefore uploads every
// value of magnitude below the smallest normal float32 (±0 and denormals)
// as +0, remembers those values, and writes them back, sorted by key, over
// the run of zeros after readback. The result is bit for bit the CPU
// back-end's: −0 before +0, denormals kept.
//
// Float64 batches are sorted on the CPU (a blended texture holds float32).
// Digest reads the sorted texture back and runs summary.DigestSorted on
// the CPU. A Sorter is safe for concurrent use; batches run one at a time
// on the thread that owns its GL context.
type Sorter struct {
	name string
	t    *glctx.Thread
	cpu  *gpusort.CPU
	// The fields below belong to the GL thread.
	prog, vao, fbo uint32
	tex            [2]uint32 // 0: framebuffer, 1: sampled copy
	w, h           int
	maxTex         int
	rgba           []float32
	tiny           [gpusort.Channels][]float32
	uni            map[string]int32
	profile        bool
	phases         gpusort.Phases
}

const fragmentVS = `#version 430
// Quad q of the current step, two triangles; mode 0: mirror in blocks of B
// ≤ W texels (column quads, cut into tiles of tileH rows); 1: mirror in
// blocks of B > W texels (row quads, both coordinates reversed); 2: compare
// at distance B < W (column quads, tiled); 3: compare at distance B ≥ W
// (row quads). part 0 draws the minimum side, 1 the maximum side.
uniform int mode;
uniform int B;
uniform int W;
uniform int H;
uniform int tileH;
uniform int part;
noperspective out vec2 tc;

void main() {
	int q = gl_VertexID / 6;
	int c = gl_VertexID % 6;
	int cx = (c == 1 || c == 2 || c == 4) ? 1 : 0;
	int cy = (c == 2 || c == 4 || c == 5) ? 1 : 0;
	int tilesY = H / tileH;
	float x0, x1, y0, y1;
	float ax = 1.0, bx = 0.0, ay = 1.0, by = 0.0;
	if (mode == 0) {
		int o = (q / tilesY) * B;
		int t = q % tilesY;
		x0 = float(o + part * (B / 2)); x1 = x0 + float(B / 2);
		y0 = float(t * tileH); y1 = y0 + float(tileH);
		ax = -1.0; bx = float(2 * o + B);
	} else if (mode == 1) {
		int bh = B / W;
		int r0 = q * bh;
		x0 = 0.0; x1 = float(W);
		y0 = float(r0 + part * (bh / 2)); y1 = y0 + float(bh / 2);
		ax = -1.0; bx = float(W); ay = -1.0; by = float(2 * r0 + bh);
	} else if (mode == 2) {
		int o = (q / tilesY) * 2 * B;
		int t = q % tilesY;
		x0 = float(o + part * B); x1 = x0 + float(B);
		y0 = float(t * tileH); y1 = y0 + float(tileH);
		bx = part == 0 ? float(B) : -float(B);
	} else {
		int dr = B / W;
		int r0 = q * 2 * dr;
		x0 = 0.0; x1 = float(W);
		y0 = float(r0 + part * dr); y1 = y0 + float(dr);
		by = part == 0 ? float(dr) : -float(dr);
	}
	float x = cx == 1 ? x1 : x0;
	float y = cy == 1 ? y1 : y0;
	tc = vec2(ax * x + bx, ay * y + by);
	gl_Position = vec4(2.0 * x / float(W) - 1.0, 2.0 * y / float(H) - 1.0, 0.0, 1.0);
}
`

const fragmentFS = `#version 430
uniform sampler2D src;
noperspective in vec2 tc;
out vec4 color;

void main() {
	color = texelFetch(src, ivec2(floor(tc)), 0);
}
`

// bitonicTile is the tile height of the bitonic back-end's column quads:
// the paper found 64×64 tiles best.
const bitonicTile = 64

// NewPBSN returns the periodic balanced sorting network back-end, with a GL
// context of its own from EGL. It returns an error wrapping gpusort.ErrNoGPU
// when there is no OpenGL 4.3 core context to be had.
func NewPBSN() (*Sorter, error) { return newFragment("pbsn", glctx.EGL) }

// NewPBSNWith is NewPBSN with the context made the way kind says.
func NewPBSNWith(kind glctx.Kind) (*Sorter, error) { return newFragment("pbsn", kind) }

// NewBitonic returns the cache-efficient bitonic back-end, with a GL context
// of its own from EGL. It returns an error wrapping gpusort.ErrNoGPU when
// there is no OpenGL 4.3 core context to be had.
func NewBitonic() (*Sorter, error) { return newFragment("bitonic", glctx.EGL) }

// NewBitonicWith is NewBitonic with the context made the way kind says.
func NewBitonicWith(kind glctx.Kind) (*Sorter, error) { return newFragment("bitonic", kind) }

func newFragment(name string, kind glctx.Kind) (*Sorter, error) {
	f := &Sorter{name: name, cpu: gpusort.NewCPU(0), uni: make(map[string]int32)}
	t, err := glctx.NewThread(kind, func() error {
		prog, err := glctx.CompileProgram(name, glctx.Shader{Kind: gl.VERTEX_SHADER, Src: fragmentVS}, glctx.Shader{Kind: gl.FRAGMENT_SHADER, Src: fragmentFS})
		if err != nil {
			return fmt.Errorf("%s sorter: %w", name, err)
		}
		f.prog = prog
		gl.GenVertexArrays(1, &f.vao)
		gl.GenFramebuffers(1, &f.fbo)
		var n int32
		gl.GetIntegerv(gl.MAX_TEXTURE_SIZE, &n)
		f.maxTex = int(n)
		return glctx.CheckError(name + " setup")
	})
	if err != nil {
		return nil, err
	}
	f.t = t
	return f, nil
}

// Name returns "pbsn" or "bitonic".
func (f *Sorter) Name() string { return f.name }

// Info describes the GL renderer and version in use.
func (f *Sorter) Info() string { return f.t.Info() }

// SetProfile turns phase timing on or off (see compute.Sorter.SetProfile).
func (f *Sorter) SetProfile(on bool) {
	_ = f.t.Do(func() error { f.profile = on; return nil })
}

// LastPhases reports the phase times of the last batch.
func (f *Sorter) LastPhases() gpusort.Phases {
	var p gpusort.Phases
	_ = f.t.Do(func() error { p = f.phases; return nil })
	return p
}

// Close releases the GL context. Sort fails with gpusort.ErrClosed afterwards.
func (f *Sorter) Close() error {
	f.t.Close(func() {
		gl.DeleteProgram(f.prog)
		gl.DeleteVertexArrays(1, &f.vao)
		gl.DeleteFramebuffers(1, &f.fbo)
		f.freeTextures()
	})
	return nil
}

func (f *Sorter) freeTextures() {
	if f.tex[0] != 0 {
		gl.DeleteTextures(2, &f.tex[0])
		f.tex = [2]uint32{}
		f.w, f.h = 0, 0
	}
}

// Sort sorts each window of b in place: float32 windows on the GPU,
// float64 windows on the CPU.
func (f *Sorter) Sort(ctx context.Context, b *gpusort.Quad) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s sort: %w", f.name, err)
	}
	n := 0
	for i := range gpusort.Channels {
		n = max(n, len(b.F32[i]))
	}
	if n > 1 {
		if err := f.t.Do(func() error { return f.sort(ctx, &b.F32, n) }); err != nil {
			return fmt.Errorf("%s sort: %w", f.name, err)
		}
	}
	has64 := false
	for i := range gpusort.Channels {
		has64 = has64 || len(b.F64[i]) > 1
	}
	if has64 {
		f64 := gpusort.Quad{F64: b.F64}
		return f.cpu.Sort(ctx, &f64)
	}
	return nil
}

// Digest sorts a copy of b's float32 windows (see Sort), reads them back
// and runs summary.DigestSorted on each on the CPU; float64 windows are
// digested by the CPU back-end. b is left as it was.
func (f *Sorter) Digest(ctx context.Context, b *gpusort.Quad, specs *[gpusort.Channels]summary.WindowSpec, out *[gpusort.Channels]summary.Digest) error {
	if err := gpusort.CheckSpecs(b, specs); err != nil {
		return err
	}
	var sorted gpusort.Quad
	n := 0
	for i := range gpusort.Channels {
		sorted.F32[i] = slices.Clone(b.F32[i])
		n = max(n, len(b.F32[i]))
	}
	if n > 1 {
		if err := f.t.Do(func() error { return f.sort(ctx, &sorted.F32, n) }); err != nil {
			return fmt.Errorf("%s digest: %w", f.name, err)
		}
	}
	for i := range gpusort.Channels {
		if len(sorted.F32[i]) > 0 {
			summary.DigestSorted(sorted.F32[i], specs[i], &out[i])
		}
	}
	if err := f.cpu.DigestWindows(ctx, b, specs, out, func(i int) bool { return len(b.F64[i]) > 0 }); err != nil {
		return err
	}
	gpusort.EmptyDigests(b, out)
	return nil
}

// sort runs on the GL thread. n is the longest window.
func (f *Sorter) sort(ctx context.Context, ws *[gpusort.Channels][]float32, n int) error {
	np := 1 << bits.Len(uint(n-1))
	lg := bits.Len(uint(np)) - 1
	w := 1 << (lg / 2)
	h := np / w
	if h > f.maxTex {
		// Too large for one texture on this GPU.
		return f.cpu.Sort(ctx, &gpusort.Quad{F32: *ws})
	}
	start := time.Now()
	mark := func(d *time.Duration) {
		if f.profile {
			gl.Finish()
			now := time.Now()
			*d = now.Sub(start)
			start = now
		}
	}
	f.phases = gpusort.Phases{}
	if f.w != w || f.h != h {
		f.freeTextures()
		gl.GenTextures(2, &f.tex[0])
		for _, t := range f.tex {
			gl.BindTexture(gl.TEXTURE_2D, t)
			gl.TexStorage2D(gl.TEXTURE_2D, 1, gl.RGBA32F, int32(w), int32(h))
			gl.TexParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST)
			gl.TexParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST)
		}
		gl.BindFramebuffer(gl.FRAMEBUFFER, f.fbo)
		gl.FramebufferTexture2D(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.TEXTURE_2D, f.tex[0], 0)
		if s := gl.CheckFramebufferStatus(gl.FRAMEBUFFER); s != gl.FRAMEBUFFER_COMPLETE {
			return fmt.Errorf("framebuffer incomplete: 0x%x", s)
		}
		f.w, f.h = w, h
	}

	// Interleave the windows as RGBA, padding with +Inf and setting aside
	// the values that blending cannot order (|x| below the smallest normal).
	if cap(f.rgba) < 4*np {
		f.rgba = make([]float32, 4*np)
	}
	rgba := f.rgba[:4*np]
	inf := float32(math.Inf(1))
	for c := range gpusort.Channels {
		x := ws[c]
		tiny := f.tiny[c][:0]
		for i, v := range x {
			if v > -minNormal32 && v < minNormal32 {
				tiny = append(tiny, v)
				v = 0
			}
			rgba[4*i+c] = v
		}
		for i := len(x); i < np; i++ {
			rgba[4*i+c] = inf
		}
		f.tiny[c] = tiny
	}
	gl.BindFramebuffer(gl.FRAMEBUFFER, f.fbo)
	gl.BindTexture(gl.TEXTURE_2D, f.tex[0])
	gl.PixelStorei(gl.UNPACK_ALIGNMENT, 4)
	gl.TexSubImage2D(gl.TEXTURE_2D, 0, 0, 0, int32(w), int32(h), gl.RGBA, gl.FLOAT, gl.Ptr(rgba))
	mark(&f.phases.Upload)

	gl.Viewport(0, 0, int32(w), int32(h))
	gl.UseProgram(f.prog)
	gl.BindVertexArray(f.vao)
	gl.ActiveTexture(gl.TEXTURE0)
	gl.BindTexture(gl.TEXTURE_2D, f.tex[1])
	gl.Uniform1i(f.uniform("src"), 0)
	gl.Uniform1i(f.uniform("W"), int32(w))
	gl.Uniform1i(f.uniform("H"), int32(h))
	gl.Enable(gl.BLEND)
	gl.Disable(gl.DEPTH_TEST)
	gl.Disable(gl.DITHER)
	if f.name == "pbsn" {
		for range lg {
			for j := lg; j >= 1; j-- {
				f.mirrorStep(1<<j, h)
			}
		}
	} else {
		tile := min(bitonicTile, h)
		for i := 1; i <= lg; i++ {
			f.mirrorStep(1<<i, tile)
			for j := i - 1; j >= 1; j-- {
				f.shiftStep(1<<(j-1), tile)
			}
		}
	}
	gl.Disable(gl.BLEND)
	if err := glctx.CheckError(f.name + " network"); err != nil {
		return err
	}
	mark(&f.phases.Sort)
	if err := ctx.Err(); err != nil {
		return err // the windows still hold their input
	}

	rows := (n + w - 1) / w
	gl.PixelStorei(gl.PACK_ALIGNMENT, 4)
	gl.ReadPixels(0, 0, int32(w), int32(rows), gl.RGBA, gl.FLOAT, gl.Ptr(rgba))
	if err := glctx.CheckError("read back"); err != nil {
		return err
	}
	for c := range gpusort.Channels {
		x := ws[c]
		for i := range x {
			x[i] = rgba[4*i+c]
		}
		if tiny := f.tiny[c]; len(tiny) > 0 {
			gpusort.SortFloat32(tiny, nil)
			lo := sort.Search(len(x), func(i int) bool { return x[i] >= 0 })
			copy(x[lo:], tiny)
		}
	}
	mark(&f.phases.Readback)
	return nil
}

// minNormal32 is the smallest normal float32.
const minNormal32 = 0x1p-126

func (f *Sorter) uniform(name string) int32 {
	if l, ok := f.uni[name]; ok {
		return l
	}
	l := gl.GetUniformLocation(f.prog, gl.Str(name+"\x00"))
	f.uni[name] = l
	return l
}

// prepare copies the framebuffer texture into the sampled one: the quads
// of the next step read the values as they were before it.
func (f *Sorter) prepare() {
	gl.CopyImageSubData(f.tex[0], gl.TEXTURE_2D, 0, 0, 0, 0, f.tex[1], gl.TEXTURE_2D, 0, 0, 0, 0, int32(f.w), int32(f.h), 1)
}

// draw draws the minimum side then the maximum side of a step of the given
// mode made of quads quads (each of 6 vertices).
func (f *Sorter) draw(mode, b, tile, quads int) {
	gl.Uniform1i(f.uniform("mode"), int32(mode))
	gl.Uniform1i(f.uniform("B"), int32(b))
	gl.Uniform1i(f.uniform("tileH"), int32(tile))
	for part, eq := range []uint32{gl.MIN, gl.MAX} {
		gl.BlendEquation(eq)
		gl.Uniform1i(f.uniform("part"), int32(part))
		gl.DrawArrays(gl.TRIANGLES, 0, int32(6*quads))
	}
}

// mirrorStep compares element i of each block of b elements with element
// b−1−i (Routine 4.4's SortStep). Column quads are cut into tiles of tile
// rows.
func (f *Sorter) mirrorStep(b, tile int) {
	f.prepare()
	if b <= f.w {
		f.draw(0, b, tile, f.w/b*(f.h/tile))
	} else {
		f.draw(1, b, tile, f.w*f.h/b)
	}
}

// shiftStep compares element i with i+d in each block of 2d elements.
func (f *Sorter) shiftStep(d, tile int) {
	f.prepare()
	if d < f.w {
		f.draw(2, d, tile, f.w/(2*d)*(f.h/tile))
	} else {
		f.draw(3, d, tile, f.h/(2*d/f.w))
	}
}
