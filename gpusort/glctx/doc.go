// Package glctx gives the GPU back-ends of gpusort their OpenGL context:
// made with EGL and no display (the server path and the default), or with
// GLFW in a hidden window on an X display (builds with the "glfw" tag
// too), the way a Kind says; FromEnv reads the choice from $STREAMD_GL.
//
// A Thread owns one context: its goroutine is locked to one OS thread for
// the context's whole life and runs every GL call of its back-end as a job
// (Do), polling GPU fences between jobs (Await). CompileProgram and
// CheckError are the GL helpers the back-ends share: gpusort/compute and
// gpusort/fragment. Its errors are gpusort's (ErrNoGPU, ErrClosed).
//
// Everything but this comment is built only with the "gpu" build tag, and
// needs cgo and libEGL.
package glctx
