//go:build gpu && !glfw

package glctx

import (
	"fmt"

	"streamd/gpusort"
)

// openGLFW fails in builds without the "glfw" tag: GLFW needs the X11
// libraries, which the EGL server build does without.
func openGLFW() (currentContext, error) {
	return nil, fmt.Errorf("%w: glfw context: this binary was built without the glfw tag (go build -tags gpu,glfw)", gpusort.ErrNoGPU)
}
