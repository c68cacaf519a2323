//go:build gpu && !glfw

package glctx

import (
	"debug/elf"
	"os"
	"slices"
	"testing"
)

// TestLinkedLibraries checks that a gpu build needs libEGL and not libGL
// (with its X libraries): on a GPU server the driver brings its EGL vendor
// library, and libEGL and libglvnd's libGLdispatch are the only others to
// add. The test binary links like every binary that imports glctx (through
// a GPU back-end).
func TestLinkedLibraries(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Skipf("not an ELF executable: %v", err)
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	t.Log(libs)
	if !slices.Contains(libs, "libEGL.so.1") {
		t.Errorf("libEGL.so.1 not among the needed libraries %v", libs)
	}
	for _, lib := range []string{"libGL.so.1", "libGLX.so.0", "libX11.so.6"} {
		if slices.Contains(libs, lib) {
			t.Errorf("%s among the needed libraries %v", lib, libs)
		}
	}
}
