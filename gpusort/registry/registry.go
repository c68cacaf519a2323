// Package registry lists the gpusort back-ends compiled into this binary,
// by name, so that the daemon and the tools pick one with Lookup: "cpu"
// (gpusort.CPU) and "auto" (gpusort.Auto) always, and in builds with the
// "gpu" build tag the OpenGL back-ends of gpusort/compute and
// gpusort/fragment too. It is the one package that imports them all; each
// back-end imports gpusort for the Sorter interface and the Batch type, so
// the list cannot live in gpusort itself.
package registry

import (
	"fmt"

	"streamd/gpusort"
)

// Lookup returns the constructor of the back-end with the given name, among
// those compiled into this binary. "cpu" and "auto" are always present; the
// GPU back-ends are present in builds with the "gpu" tag, and "gpu" names
// the fastest of them, "compute".
func Lookup(name string) (gpusort.Constructor, error) {
	want := name
	if name == "gpu" {
		want = "compute"
	}
	for _, b := range Backends() {
		if b.Name == want {
			return b.New, nil
		}
	}
	if name == "gpu" {
		return nil, fmt.Errorf("gpusort: sorter %q: this binary was built without the gpu tag (have %v)", name, Names())
	}
	return nil, fmt.Errorf("gpusort: unknown sorter %q (have %v)", name, Names())
}

// Backend names a compiled-in back-end and its constructor.
type Backend struct {
	Name string
	New  gpusort.Constructor
}

// Names lists the names of the compiled-in back-ends.
func Names() []string {
	var names []string
	for _, b := range Backends() {
		names = append(names, b.Name)
	}
	return names
}
