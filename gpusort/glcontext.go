//go:build gpu

package gpusort

// How a GPU back-end gets its OpenGL context: EGL without a display (the
// server path and the default), or GLFW with a hidden window on an X
// display (for desktops with one; in builds with the "glfw" tag too),
// chosen by a GLContext given to NewComputeWith, NewPBSNWith or
// NewBitonicWith. The registry (Backends,
// Lookup) reads the choice from $STREAMD_GL through ContextFromEnv, the one
// place that reads it.

import (
	"fmt"
	"os"

	"github.com/go-gl/gl/v4.5-core/gl"
)

// GLContext names a way to get the OpenGL context of a GPU back-end.
type GLContext string

const (
	// ContextEGL makes the context with EGL and no display: a hardware EGL
	// device, a software one, then Mesa's surfaceless platform. It needs
	// no X server and is what NewCompute, NewPBSN and NewBitonic use.
	ContextEGL GLContext = "egl"
	// ContextGLFW makes the context with GLFW (GLX) in a hidden window on
	// the X display that $DISPLAY names: for desktops with a display, or
	// under Xvfb. Linux/X11 only: GLFW runs on the back-end's own locked
	// thread, not on the main thread that macOS requires.
	ContextGLFW GLContext = "glfw"
	// ContextAuto tries EGL, then GLFW if EGL fails and $DISPLAY is set.
	ContextAuto GLContext = "auto"
)

// GLContextEnv is the environment variable that ContextFromEnv reads:
// "egl", "glfw" or "auto".
const GLContextEnv = "STREAMD_GL"

// ContextFromEnv returns the context kind that $STREAMD_GL names, or
// ContextEGL when it is unset or empty. An unknown value is an error.
func ContextFromEnv() (GLContext, error) {
	v := os.Getenv(GLContextEnv)
	if v == "" {
		return ContextEGL, nil
	}
	kind := GLContext(v)
	switch kind {
	case ContextEGL, ContextGLFW, ContextAuto:
		return kind, nil
	}
	return "", fmt.Errorf("gpusort: %s=%q: want %q, %q or %q", GLContextEnv, v, ContextEGL, ContextGLFW, ContextAuto)
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
func openContext(kind GLContext) (currentContext, error) {
	switch kind {
	case ContextEGL, "":
		e, err := openEGL()
		if err != nil {
			return nil, err
		}
		return eglCurrent{e}, nil
	case ContextGLFW:
		return openGLFW()
	case ContextAuto:
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
