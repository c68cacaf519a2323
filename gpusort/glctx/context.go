//go:build gpu

package glctx

// How a GPU back-end gets its OpenGL context: EGL without a display (the
// server path and the default), or GLFW with a hidden window on an X
// display (for desktops with one; in builds with the "glfw" tag too),
// chosen by a Kind given to the back-end's constructor. The registry of
// back-ends reads the choice from $STREAMD_GL through FromEnv, the one
// place that reads it.

import (
	"fmt"
	"os"

	"github.com/go-gl/gl/v4.5-core/gl"
)

// Kind names a way to get the OpenGL context of a GPU back-end.
type Kind string

const (
	// EGL makes the context with EGL and no display: a hardware EGL device, a
	// software one, then Mesa's surfaceless platform. It needs no X server
	// and is what compute.New, fragment.NewPBSN and fragment.NewBitonic use.
	EGL Kind = "egl"
	// GLFW makes the context with GLFW (GLX) in a hidden window on
	// the X display that $DISPLAY names: for desktops with a display, or
	// under Xvfb. Linux/X11 only: GLFW runs on the back-end's own locked
	// thread, not on the main thread that macOS requires.
	GLFW Kind = "glfw"
	// Auto tries EGL, then GLFW if EGL fails and $DISPLAY is set.
	Auto Kind = "auto"
)

// Env is the environment variable that FromEnv reads:
// "egl", "glfw" or "auto".
const Env = "STREAMD_GL"

// FromEnv returns the context kind that $STREAMD_GL names, or
// EGL when it is unset or empty. An unknown value is an error.
func FromEnv() (Kind, error) {
	v := os.Getenv(Env)
	if v == "" {
		return EGL, nil
	}
	kind := Kind(v)
	switch kind {
	case EGL, GLFW, Auto:
		return kind, nil
	}
	return "", fmt.Errorf("gpusort: %s=%q: want %q, %q or %q", Env, v, EGL, GLFW, Auto)
}

// currentContext is an OpenGL context current on the calling OS thread.
type currentContext interface {
	// load loads the GL function pointers through the context's API.
	load() error
	// platform describes how the context was made.
	platform() string
	// close releases the context; it must run on the context's thread.
	close()
}

// eglCurrent adds the EGL loader to an EGL context.
type eglCurrent struct{ *eglContext }

func (eglCurrent) load() error { return gl.InitWithProcAddrFunc(procAddr) }

// openContext makes a context of the given kind current on the calling OS
// thread, which must stay locked to the calling goroutine until close.
func openContext(kind Kind) (currentContext, error) {
	switch kind {
	case EGL, "":
		e, err := openEGL()
		if err != nil {
			return nil, err
		}
		return eglCurrent{e}, nil
	case GLFW:
		return openGLFW()
	case Auto:
		e, err := openEGL()
		if err == nil {
			return eglCurrent{e}, nil
		}
		if os.Getenv("DISPLAY") == "" {
			return nil, fmt.Errorf("%w (and DISPLAY is not set for glfw)", err)
		}
		g, gerr := openGLFW()
		if gerr != nil {
			return nil, fmt.Errorf("%w; %w", err, gerr)
		}
		return g, nil
	}
	return nil, fmt.Errorf("unknown GL context kind %q", kind)
}
