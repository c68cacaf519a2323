//go:build gpu && glfw

package glctx

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/go-gl/gl/v4.5-core/gl"
	"github.com/go-gl/glfw/v3.3/glfw"
)

// glfwLib guards GLFW, whose state is process-wide: one library, one X
// connection and one error channel in go-gl/glfw for all back-ends. Like
// glInit, it cannot be avoided. Every GLFW call runs with mu held, so that
// two back-ends never call GLFW at once; the calls are made from the
// back-ends' own locked threads, which GLFW allows on X11 (it calls
// XInitThreads) as long as they never overlap. GLFW is initialized with
// the first GLFW context and never terminated: terminating closes the X
// connection, and when it is the server's last client (Xvfb in CI) the
// server resets and refuses the next connection for a moment.
var glfwLib struct {
	mu    sync.Mutex
	ready bool
}

// glfwContext is the context of a hidden GLFW window.
type glfwContext struct {
	win          *glfw.Window
	major, minor int
}

// glfwCall runs f, turning a panic of go-gl/glfw (which it raises for some
// GLX and X11 failures instead of returning an error) into an error.
func glfwCall(what string, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = fmt.Errorf("glfw: %s: %w", what, e)
			} else {
				err = fmt.Errorf("glfw: %s: %v", what, r)
			}
		}
	}()
	if err := f(); err != nil {
		return fmt.Errorf("glfw: %s: %w", what, err)
	}
	return nil
}

// openGLFW makes a hidden window with a core context of the best version
// the driver gives and makes it current on the calling OS thread.
func openGLFW() (currentContext, error) {
	c, err := openGLFWWindow()
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return c, nil
}

// openGLFWWindow makes the hidden window and its context current.
func openGLFWWindow() (*glfwContext, error) {
	if os.Getenv("DISPLAY") == "" {
		return nil, errors.New("glfw: DISPLAY is not set")
	}
	glfwLib.mu.Lock()
	defer glfwLib.mu.Unlock()
	if !glfwLib.ready {
		err := glfwCall("init", glfw.Init)
		if err == nil {
			// go-gl/glfw logs a platform error of glfwInit (an X display
			// that does not open) and returns nil: a call that needs the
			// library tells.
			err = glfwCall("init", func() error { glfw.GetTime(); return nil })
			if err != nil {
				err = fmt.Errorf("glfw: init failed on X display %q (cause logged above): %w", os.Getenv("DISPLAY"), errors.Unwrap(err))
			}
		}
		if err != nil {
			_ = glfwCall("terminate", func() error { glfw.Terminate(); return nil })
			return nil, err
		}
		glfwLib.ready = true
	}
	return createHidden()
}

// createHidden tries core 4.6, 4.5 and 4.3 in turn (Mesa's llvmpipe stops
// at 4.5: GLXBadFBConfig for 4.6); glfwLib.mu must be held.
func createHidden() (*glfwContext, error) {
	versions := [...][2]int{{4, 6}, {4, 5}, {4, 3}}
	err := glfwCall("window hints", func() error {
		glfw.DefaultWindowHints()
		glfw.WindowHint(glfw.Visible, glfw.False)
		glfw.WindowHint(glfw.Focused, glfw.False)
		glfw.WindowHint(glfw.ClientAPI, glfw.OpenGLAPI)
		glfw.WindowHint(glfw.ContextCreationAPI, glfw.NativeContextAPI)
		glfw.WindowHint(glfw.OpenGLProfile, glfw.OpenGLCoreProfile)
		glfw.WindowHint(glfw.OpenGLForwardCompatible, glfw.True)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, v := range versions {
		var win *glfw.Window
		err = glfwCall(fmt.Sprintf("create a hidden window with OpenGL %d.%d core", v[0], v[1]), func() error {
			glfw.WindowHint(glfw.ContextVersionMajor, v[0])
			glfw.WindowHint(glfw.ContextVersionMinor, v[1])
			w, err := glfw.CreateWindow(1, 1, "streamd gpusort", nil, nil)
			if err != nil {
				return err
			}
			if w == nil {
				// go-gl/glfw logs a platform error and returns no error.
				return errors.New("no window")
			}
			win = w
			w.MakeContextCurrent()
			return nil
		})
		if err == nil {
			return &glfwContext{win: win, major: v[0], minor: v[1]}, nil
		}
		if win != nil {
			_ = glfwCall("destroy window", func() error { win.Destroy(); return nil })
		}
	}
	return nil, err
}

// load loads GL through GLX (libGL), which the context is made with.
func (c *glfwContext) load() error { return gl.Init() }

// platform describes the context.
func (c *glfwContext) platform() string {
	return fmt.Sprintf("GLFW hidden window, GLX %d.%d core", c.major, c.minor)
}

// close destroys the window and its context; it must run on the context's
// thread.
func (c *glfwContext) close() {
	glfwLib.mu.Lock()
	defer glfwLib.mu.Unlock()
	_ = glfwCall("detach context", func() error { glfw.DetachCurrentContext(); return nil })
	_ = glfwCall("destroy window", func() error { c.win.Destroy(); return nil })
}
