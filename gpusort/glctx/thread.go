//go:build gpu

package glctx

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/go-gl/gl/v4.5-core/gl"

	"streamd/gpusort"
)

// glInit loads the OpenGL function pointers once per process. go-gl keeps
// them in its own package-level variables, so this is process-wide state
// that cannot be avoided (glfwLib in glfw.go is the other such piece). The
// pointers do not depend on the context: with libglvnd both
// eglGetProcAddress and glXGetProcAddress return the same dispatch stubs,
// which call into whichever context is current on the thread, so the first
// context's loader serves EGL and GLFW contexts alike.
var glInit struct {
	once sync.Once
	err  error
}

// Thread owns one OpenGL context. Its goroutine is locked to its OS
// thread for its whole life and runs the jobs sent to it, one at a time:
// every GL call of a back-end happens inside such a job. A job may leave
// a fence behind (Await) instead of waiting for the GPU: between jobs, the
// thread polls the oldest fence and reports it when it signals, so that it
// stays free to issue the next batch's commands while the GPU works.
type Thread struct {
	jobs chan func()
	quit chan struct{}
	done chan struct{}
	info string // renderer and version, as the driver reports them

	mu     sync.Mutex
	closed bool

	fences []fenceWait // in order of issue; the thread's own
}

// fenceWait is a fence and what to do once it has signalled.
type fenceWait struct {
	sync uintptr
	done func(error)
}

// fencePoll is how long the GL thread sleeps between two looks at the
// oldest fence while batches are in flight, unless a job comes first. It
// sleeps rather than wait in glClientWaitSync, which a driver may spin in
// (NVIDIA's does), taking a core from the daemon while the GPU works.
const fencePoll = 50 * time.Microsecond

// NewThread starts the goroutine, makes the context of the given kind on
// it and loads GL. setup, when not nil, runs next on that thread (compiling
// shaders, say); its error closes the thread and is returned. Without an
// OpenGL 4.3 core context to be had, the error wraps gpusort.ErrNoGPU.
func NewThread(kind Kind, setup func() error) (*Thread, error) {
	t := &Thread{jobs: make(chan func()), quit: make(chan struct{}), done: make(chan struct{})}
	ready := make(chan error, 1)
	go t.loop(kind, setup, ready)
	if err := <-ready; err != nil {
		<-t.done
		return nil, err
	}
	return t, nil
}

// Info describes the context: the renderer and the version, as the driver
// reports them, and how the context was made.
func (t *Thread) Info() string { return t.info }

func (t *Thread) loop(kind Kind, setup func() error, ready chan<- error) {
	defer close(t.done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ctx, err := openContext(kind)
	if err != nil {
		ready <- fmt.Errorf("%w: %v", gpusort.ErrNoGPU, err)
		return
	}
	defer ctx.close()
	glInit.once.Do(func() { glInit.err = ctx.load() })
	if glInit.err != nil {
		ready <- fmt.Errorf("%w: load OpenGL functions: missing %v", gpusort.ErrNoGPU, glInit.err)
		return
	}
	var major, minor int32
	gl.GetIntegerv(gl.MAJOR_VERSION, &major)
	gl.GetIntegerv(gl.MINOR_VERSION, &minor)
	if major < 4 || major == 4 && minor < 3 {
		ready <- fmt.Errorf("%w: OpenGL %d.%d, need 4.3", gpusort.ErrNoGPU, major, minor)
		return
	}
	t.info = fmt.Sprintf("%s / %s (%s)", gl.GoStr(gl.GetString(gl.RENDERER)), gl.GoStr(gl.GetString(gl.VERSION)), ctx.platform())
	if setup != nil {
		if err := setup(); err != nil {
			ready <- err
			return
		}
	}
	ready <- nil
	timer := time.NewTimer(fencePoll)
	timer.Stop()
	for {
		var wake <-chan time.Time
		if len(t.fences) > 0 {
			if t.poll(0) {
				continue // look at the next fence at once
			}
			timer.Reset(fencePoll)
			wake = timer.C
		}
		select {
		case job := <-t.jobs:
			job()
		case <-wake:
		case <-t.quit:
			for len(t.fences) > 0 {
				t.poll(time.Second)
			}
			return
		}
	}
}

// Await issues a fence after the commands so far, and arranges for done to
// be called on the GL thread once it has signalled (or failed). It must be
// called on the GL thread, in a job; done must not block.
func (t *Thread) Await(done func(error)) {
	s := gl.FenceSync(gl.SYNC_GPU_COMMANDS_COMPLETE, 0)
	gl.Flush()
	t.fences = append(t.fences, fenceWait{s, done})
}

// poll waits up to timeout for the oldest fence, and reports it if it has
// signalled, returning true then. Fences signal in the order they were
// issued.
func (t *Thread) poll(timeout time.Duration) bool {
	f := t.fences[0]
	var err error
	switch gl.ClientWaitSync(f.sync, gl.SYNC_FLUSH_COMMANDS_BIT, uint64(timeout)) {
	case gl.ALREADY_SIGNALED, gl.CONDITION_SATISFIED:
	case gl.WAIT_FAILED:
		err = CheckError("wait for GPU")
		if err == nil {
			err = errors.New("wait for GPU: glClientWaitSync failed")
		}
	default:
		return false // timed out
	}
	gl.DeleteSync(f.sync)
	t.fences = t.fences[1:]
	f.done(err)
	return true
}

// Do runs f on the GL thread and waits for it. It returns gpusort.ErrClosed
// once the thread is closed.
func (t *Thread) Do(f func() error) error {
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return gpusort.ErrClosed
	}
	errc := make(chan error, 1)
	select {
	case t.jobs <- func() { errc <- f() }:
	case <-t.done:
		return gpusort.ErrClosed
	}
	return <-errc
}

// Close runs cleanup (if not nil) on the GL thread, then destroys the
// context and ends the goroutine. Later calls do nothing.
func (t *Thread) Close(cleanup func()) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.closed = true
	t.mu.Unlock()
	if cleanup != nil {
		done := make(chan struct{})
		select {
		case t.jobs <- func() { cleanup(); close(done) }:
			<-done
		case <-t.done:
		}
	}
	close(t.quit)
	<-t.done
}

// CheckError returns the first pending GL error, if any, naming what was done.
func CheckError(what string) error {
	if e := gl.GetError(); e != gl.NO_ERROR {
		for gl.GetError() != gl.NO_ERROR {
		}
		return fmt.Errorf("%s: GL error 0x%x", what, e)
	}
	return nil
}

// CompileProgram links one program from shader sources of the given kinds.
func CompileProgram(name string, stages ...Shader) (uint32, error) {
	prog := gl.CreateProgram()
	var shaders []uint32
	defer func() {
		for _, s := range shaders {
			gl.DeleteShader(s)
		}
	}()
	for _, st := range stages {
		s := gl.CreateShader(st.Kind)
		shaders = append(shaders, s)
		src, free := gl.Strs(st.Src + "\x00")
		gl.ShaderSource(s, 1, src, nil)
		free()
		gl.CompileShader(s)
		var ok int32
		gl.GetShaderiv(s, gl.COMPILE_STATUS, &ok)
		if ok == gl.FALSE {
			gl.DeleteProgram(prog)
			return 0, fmt.Errorf("compile %s: %s", name, shaderLog(s, false))
		}
		gl.AttachShader(prog, s)
	}
	gl.LinkProgram(prog)
	var ok int32
	gl.GetProgramiv(prog, gl.LINK_STATUS, &ok)
	if ok == gl.FALSE {
		msg := shaderLog(prog, true)
		gl.DeleteProgram(prog)
		return 0, fmt.Errorf("link %s: %s", name, msg)
	}
	return prog, nil
}

// Shader is the source of one shader stage: Kind is gl.VERTEX_SHADER,
// gl.FRAGMENT_SHADER, gl.COMPUTE_SHADER and so on.
type Shader struct {
	Kind uint32
	Src  string
}

func shaderLog(obj uint32, program bool) string {
	var n int32
	if program {
		gl.GetProgramiv(obj, gl.INFO_LOG_LENGTH, &n)
	} else {
		gl.GetShaderiv(obj, gl.INFO_LOG_LENGTH, &n)
	}
	if n <= 0 {
		return "no log"
	}
	buf := make([]byte, n+1)
	if program {
		gl.GetProgramInfoLog(obj, n, nil, &buf[0])
	} else {
		gl.GetShaderInfoLog(obj, n, nil, &buf[0])
	}
	return strings.TrimRight(string(buf), "\x00\n")
}
