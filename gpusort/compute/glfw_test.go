//go:build gpu && glfw

package compute

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"streamd/gpusort"
	"streamd/gpusort/glctx"
	"streamd/gpusort/internal/sorttest"
	"streamd/summary"
)

// The GLFW tests need an X display: run them under xvfb-run -a (Mesa's
// llvmpipe through GLX) or on a desktop. Without DISPLAY they skip.

// skipWithoutDisplay skips a GLFW test where there is no X display to open.
func skipWithoutDisplay(t *testing.T) {
	t.Helper()
	if os.Getenv("DISPLAY") == "" {
		t.Skip("DISPLAY is not set: no X display for GLFW (run under xvfb-run -a)")
	}
}

func newGLFWCompute(t *testing.T) *Sorter {
	t.Helper()
	c, err := NewWith(glctx.GLFW)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestGLFWCompute runs the shared table of sorttest.Sorter (every pattern,
// four windows of different lengths to a batch) at the sizes up to 2^16, and
// the Bentley–McIlroy grid, on a compute back-end with a GLFW context.
func TestGLFWCompute(t *testing.T) {
	patterns := sorttest.Patterns()
	skipWithoutDisplay(t)
	c := newGLFWCompute(t)
	if !strings.Contains(c.Info(), "GLFW") {
		t.Errorf("Info() = %q, want a GLFW context", c.Info())
	}
	t.Log(c.Info())
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range sorttest.Sizes() {
		if n > 1<<16 {
			continue
		}
		for pi, p := range patterns {
			var b gpusort.Quad
			lens := [gpusort.Channels]int{n, max(n-1, 0), n / 2, n/3 + 1}
			for i := range gpusort.Channels {
				b.F32[i] = make([]float32, lens[i])
				patterns[(pi+i)%len(patterns)].Fill(r, b.F32[i])
			}
			sorttest.SortBatch(t, c, fmt.Sprintf("%s/n=%d", p.Name, n), &b)
		}
	}
	t.Run("bentley-mcilroy", func(t *testing.T) { sorttest.BentleyMcIlroy(t, c) })
}

// TestGLFWDigest checks one Digest of a GLFW-context compute back-end
// against summary.DigestSorted.
func TestGLFWDigest(t *testing.T) {
	patterns := sorttest.Patterns()
	skipWithoutDisplay(t)
	c := newGLFWCompute(t)
	r := rand.New(rand.NewPCG(5, 6))
	var b, ref gpusort.Quad
	var specs [gpusort.Channels]summary.WindowSpec
	for i := range gpusort.Channels {
		n := []int{5000, 1000, 21, 1 << 12}[i]
		b.F32[i] = make([]float32, n)
		patterns[(3*i)%len(patterns)].Fill(r, b.F32[i])
		ref.F32[i] = slices.Clone(b.F32[i])
		sorttest.KeyOrder(ref.F32[i])
		specs[i] = summary.WindowSpec{
			Spacing:   summary.SampleSpacing(0.01, n),
			Threshold: int64(n / 10),
			Known:     []float64{-3, 0, 2, 42.5},
		}
	}
	var out [gpusort.Channels]summary.Digest
	if err := c.Digest(context.Background(), &b, &specs, &out); err != nil {
		t.Fatal(err)
	}
	for i := range gpusort.Channels {
		var want summary.Digest
		summary.DigestSorted(ref.F32[i], specs[i], &want)
		sorttest.CheckDigest(t, fmt.Sprintf("ch%d", i), &out[i], &want)
	}
}

// TestGLFWNoDisplay checks that without a display a GLFW context is an
// error wrapping ErrNoGPU, not a panic.
func TestGLFWNoDisplay(t *testing.T) {
	t.Setenv("DISPLAY", "")
	if _, err := NewWith(glctx.GLFW); !errors.Is(err, gpusort.ErrNoGPU) {
		t.Fatalf("NewWith(glctx.GLFW) without DISPLAY: %v, want ErrNoGPU", err)
	}
}

// TestGLFWMixed keeps an EGL and a GLFW context open at once, sorting on
// both: the GL function pointers are loaded once per process.
func TestGLFWMixed(t *testing.T) {
	patterns := sorttest.Patterns()
	skipWithoutDisplay(t)
	e, err := NewWith(glctx.EGL)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	g := newGLFWCompute(t)
	a, err := NewWith(glctx.Auto)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	r := rand.New(rand.NewPCG(3, 4))
	for k, s := range []gpusort.Sorter{e, g, a, g, e} {
		var b gpusort.Quad
		for i := range gpusort.Channels {
			b.F32[i] = make([]float32, 1000+i)
			patterns[0].Fill(r, b.F32[i])
		}
		sorttest.SortBatch(t, s, fmt.Sprintf("sorter %d", k), &b)
	}
}
