//go:build gpu && glfw

package glctx

import (
	"errors"
	"os"
	"testing"

	"streamd/gpusort"
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

// TestGLFWBadDisplay checks that an X display that does not open is an error
// wrapping gpusort.ErrNoGPU, not a panic of go-gl/glfw. It comes first: once
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
	th, err := NewThread(GLFW, nil)
	if err == nil {
		th.Close(nil)
	}
	if !errors.Is(err, gpusort.ErrNoGPU) {
		t.Fatalf("NewThread(GLFW) on a missing display: %v, want ErrNoGPU", err)
	}
	t.Log(err)
}

func TestGLFWFromEnv(t *testing.T) {
	for v, want := range map[string]Kind{"": EGL, "egl": EGL, "glfw": GLFW, "auto": Auto} {
		t.Setenv(Env, v)
		got, err := FromEnv()
		if err != nil || got != want {
			t.Errorf("%s=%q: %q, %v; want %q", Env, v, got, err, want)
		}
	}
	t.Setenv(Env, "wgl")
	if _, err := FromEnv(); err == nil {
		t.Errorf("%s=wgl: no error", Env)
	}
}
