//go:build gpu && glfw

package gpusort

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

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

// TestGLFWBadDisplay checks that an X display that does not open is an
// error wrapping ErrNoGPU, not a panic of go-gl/glfw. It comes first: once
// GLFW is initialized, it keeps its display and ignores DISPLAY.
func TestGLFWBadDisplay(t *testing.T) {
	skipWithoutDisplay(t)
	glfwLib.mu.Lock()
	ready := glfwLib.ready
	glfwLib.mu.Unlock()
	if ready {
		t.Skip("GLFW is already initialized on an X display")
	}
	t.Setenv("DISPLAY", ":4242")
	_, err := NewComputeWith(ContextGLFW)
	if !errors.Is(err, ErrNoGPU) {
		t.Fatalf("NewComputeWith(ContextGLFW) on a missing display: %v, want ErrNoGPU", err)
	}
	t.Log(err)
}

func newGLFWCompute(t *testing.T) *Compute {
	t.Helper()
	c, err := NewComputeWith(ContextGLFW)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestGLFWCompute runs the shared table of testSorter (every pattern, four
// windows of different lengths to a batch) at the sizes up to 2^16, and
// the Bentley–McIlroy grid, on a compute back-end with a GLFW context.
func TestGLFWCompute(t *testing.T) {
	skipWithoutDisplay(t)
	c := newGLFWCompute(t)
	if !strings.Contains(c.Info(), "GLFW") {
		t.Errorf("Info() = %q, want a GLFW context", c.Info())
	}
	t.Log(c.Info())
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range testSizes() {
		if n > 1<<16 {
			continue
		}
		for pi, p := range patterns {
			var b Batch
			lens := [Channels]int{n, max(n-1, 0), n / 2, n/3 + 1}
			for i := range Channels {
				b.F32[i] = make([]float32, lens[i])
				patterns[(pi+i)%len(patterns)].fill(r, b.F32[i])
			}
			sortBatch(t, c, fmt.Sprintf("%s/n=%d", p.name, n), &b)
		}
	}
	t.Run("bentley-mcilroy", func(t *testing.T) { testBentleyMcIlroy(t, c) })
}

// TestGLFWDigest checks one Digest of a GLFW-context compute back-end
// against summary.DigestSorted.
func TestGLFWDigest(t *testing.T) {
	skipWithoutDisplay(t)
	c := newGLFWCompute(t)
	r := rand.New(rand.NewPCG(5, 6))
	var b, ref Batch
	var specs [Channels]summary.WindowSpec
	for i := range Channels {
		n := []int{5000, 1000, 21, 1 << 12}[i]
		b.F32[i] = make([]float32, n)
		patterns[(3*i)%len(patterns)].fill(r, b.F32[i])
		ref.F32[i] = slices.Clone(b.F32[i])
		keyOrder(ref.F32[i])
		specs[i] = summary.WindowSpec{
			Spacing:   summary.SampleSpacing(0.01, n),
			Threshold: int64(n / 10),
			Known:     []float64{-3, 0, 2, 42.5},
		}
	}
	var out [Channels]summary.Digest
	if err := c.Digest(context.Background(), &b, &specs, &out); err != nil {
		t.Fatal(err)
	}
	for i := range Channels {
		var want summary.Digest
		summary.DigestSorted(ref.F32[i], specs[i], &want)
		checkDigest(t, fmt.Sprintf("ch%d", i), &out[i], &want)
	}
}

// TestGLFWNoDisplay checks that without a display a GLFW context is an
// error wrapping ErrNoGPU, not a panic.
func TestGLFWNoDisplay(t *testing.T) {
	t.Setenv("DISPLAY", "")
	if _, err := NewComputeWith(ContextGLFW); !errors.Is(err, ErrNoGPU) {
		t.Fatalf("NewComputeWith(ContextGLFW) without DISPLAY: %v, want ErrNoGPU", err)
	}
}

// TestGLFWMixed keeps an EGL and a GLFW context open at once, sorting on
// both: the GL function pointers are loaded once per process.
func TestGLFWMixed(t *testing.T) {
	skipWithoutDisplay(t)
	e, err := NewComputeWith(ContextEGL)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	g := newGLFWCompute(t)
	a, err := NewComputeWith(ContextAuto)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	r := rand.New(rand.NewPCG(3, 4))
	for k, s := range []Sorter{e, g, a, g, e} {
		var b Batch
		for i := range Channels {
			b.F32[i] = make([]float32, 1000+i)
			patterns[0].fill(r, b.F32[i])
		}
		sortBatch(t, s, fmt.Sprintf("sorter %d", k), &b)
	}
}

func TestGLFWContextFromEnv(t *testing.T) {
	for v, want := range map[string]GLContext{"": ContextEGL, "egl": ContextEGL, "glfw": ContextGLFW, "auto": ContextAuto} {
		t.Setenv(GLContextEnv, v)
		got, err := ContextFromEnv()
		if err != nil || got != want {
			t.Errorf("%s=%q: %q, %v; want %q", GLContextEnv, v, got, err, want)
		}
	}
	t.Setenv(GLContextEnv, "wgl")
	if _, err := ContextFromEnv(); err == nil {
		t.Errorf("%s=wgl: no error", GLContextEnv)
	}
}
