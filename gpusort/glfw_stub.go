//go:build gpu && !glfw

package gpusort

import "fmt"

// openGLFW fails in builds without the "glfw" tag: GLFW needs the X11
// libraries, which the EGL server build does without.
func openGLFW() (currentContext, error) {
	return nil, fmt.Errorf("%w: glfw context: this binary was built without the glfw tag (go build -tags gpu,glfw)", ErrNoGPU)
}
