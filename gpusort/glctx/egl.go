//go:build gpu

package glctx

/*
#cgo LDFLAGS: -Wl,--as-needed -lEGL
#include <stdlib.h>
#include <string.h>
#include <EGL/egl.h>
#include <EGL/eglext.h>

// streamd_egl holds what gpusort needs of one EGL context.
typedef struct {
	EGLDisplay dpy;
	EGLContext ctx;
	int major, minor;
	int software;
	const char *where;
	EGLint err;
} streamd_egl;

static int has_ext(const char *list, const char *name) {
	size_t n = strlen(name);
	const char *p = list;
	while (p && (p = strstr(p, name)) != NULL) {
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) {
			return 1;
		}
		p += n;
	}
	return 0;
}

static int try_display(streamd_egl *e, EGLDisplay dpy) {
	EGLint maj, min;
	if (dpy == EGL_NO_DISPLAY) {
		return 0;
	}
	if (!eglInitialize(dpy, &maj, &min)) {
		return 0;
	}
	if (!eglBindAPI(EGL_OPENGL_API)) {
		e->where = "eglBindAPI";
		e->err = eglGetError();
		return 0;
	}
	EGLConfig cfg = (EGLConfig)0;
	const char *exts = eglQueryString(dpy, EGL_EXTENSIONS);
	if (!has_ext(exts, "EGL_KHR_no_config_context")) {
		EGLint attr[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
		EGLint n = 0;
		if (!eglChooseConfig(dpy, attr, &cfg, 1, &n) || n < 1) {
			e->where = "eglChooseConfig";
			e->err = eglGetError();
			return 0;
		}
	}
	static const int versions[][2] = {{4, 6}, {4, 5}, {4, 3}};
	for (int i = 0; i < 3; i++) {
		EGLint attr[] = {
			EGL_CONTEXT_MAJOR_VERSION, versions[i][0],
			EGL_CONTEXT_MINOR_VERSION, versions[i][1],
			EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
			EGL_NONE,
		};
		EGLContext ctx = eglCreateContext(dpy, cfg, EGL_NO_CONTEXT, attr);
		if (ctx == EGL_NO_CONTEXT) {
			e->where = "eglCreateContext";
			e->err = eglGetError();
			continue;
		}
		if (!eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) {
			e->where = "eglMakeCurrent";
			e->err = eglGetError();
			eglDestroyContext(dpy, ctx);
			continue;
		}
		e->dpy = dpy;
		e->ctx = ctx;
		e->major = versions[i][0];
		e->minor = versions[i][1];
		return 1;
	}
	return 0;
}

// streamd_egl_open makes a core context current on the calling thread
// without any display: a hardware EGL device first, a software one next,
// then Mesa's surfaceless platform.
static int streamd_egl_open(streamd_egl *e) {
	memset(e, 0, sizeof *e);
	e->where = "no EGL platform";
	PFNEGLGETPLATFORMDISPLAYEXTPROC getPlatformDisplay =
		(PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
	PFNEGLQUERYDEVICESEXTPROC queryDevices =
		(PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
	PFNEGLQUERYDEVICESTRINGEXTPROC queryDeviceString =
		(PFNEGLQUERYDEVICESTRINGEXTPROC)eglGetProcAddress("eglQueryDeviceStringEXT");
	if (getPlatformDisplay == NULL) {
		e->where = "eglGetProcAddress(eglGetPlatformDisplayEXT)";
		return 0;
	}
	if (queryDevices != NULL && queryDeviceString != NULL) {
		EGLDeviceEXT devs[16];
		EGLint n = 0;
		if (queryDevices(16, devs, &n) && n > 0) {
			// Two passes: hardware devices, then software ones.
			for (int pass = 0; pass < 2; pass++) {
				for (int i = 0; i < n; i++) {
					const char *ext = queryDeviceString(devs[i], EGL_EXTENSIONS);
					int sw = has_ext(ext, "EGL_MESA_device_software");
					if (sw != pass) {
						continue;
					}
					EGLDisplay dpy = getPlatformDisplay(EGL_PLATFORM_DEVICE_EXT, devs[i], NULL);
					if (try_display(e, dpy)) {
						e->software = sw;
						return 1;
					}
				}
			}
		}
	}
	EGLDisplay dpy = getPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
	if (try_display(e, dpy)) {
		e->software = -1;
		return 1;
	}
	return 0;
}

static void streamd_egl_close(streamd_egl *e) {
	eglMakeCurrent(e->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
	eglDestroyContext(e->dpy, e->ctx);
	eglReleaseThread();
}

static void *streamd_egl_proc(const char *name) {
	return (void *)eglGetProcAddress(name);
}

// glXGetProcAddress stands in for libGL's: go-gl/gl links -lGL only for
// its own GLX loader (gl.Init), which glctx never calls, loading GL
// through EGL instead (gl.InitWithProcAddrFunc). Defined here, and with
// --as-needed above (the linker sees glctx's flags before go-gl's
// -lGL), the binary does not depend on libGL.so.1 and its X libraries:
// libEGL and libglvnd's libGLdispatch are all it needs. Should anything
// call it, it answers as libglvnd's does: the same dispatch stubs.
void (*glXGetProcAddress(const unsigned char *name))(void) {
	return (void (*)(void))eglGetProcAddress((const char *)name);
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// eglContext is an OpenGL core context current on the OS thread that made
// it, with no surface: EGL's device platform, or Mesa's surfaceless one.
type eglContext struct {
	c C.streamd_egl
}

// openEGL makes a context current on the calling OS thread, which must stay
// locked to the calling goroutine until close.
func openEGL() (*eglContext, error) {
	e := new(eglContext)
	if C.streamd_egl_open(&e.c) == 0 {
		return nil, fmt.Errorf("egl: no OpenGL 4.3+ core context: %s failed (EGL error 0x%x)", C.GoString(e.c.where), int(e.c.err))
	}
	return e, nil
}

// version reports the context's requested core version.
func (e *eglContext) version() (major, minor int) { return int(e.c.major), int(e.c.minor) }

// platform describes how the display was opened.
func (e *eglContext) platform() string {
	switch e.c.software {
	case 0:
		return "EGL device"
	case 1:
		return "EGL software device"
	}
	return "EGL surfaceless"
}

// procAddr returns the address of a GL function, for gl.InitWithProcAddrFunc.
func procAddr(name string) unsafe.Pointer {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return C.streamd_egl_proc(cs)
}

// close releases the context; it must run on the context's thread.
func (e *eglContext) close() { C.streamd_egl_close(&e.c) }
