package registry

import (
	"slices"
	"testing"

	"streamd/gpusort"
)

// TestLookup makes every compiled-in back-end by its name and checks that
// it is the back-end of that name, and that "gpu" and unknown names are
// answered as documented.
func TestLookup(t *testing.T) {
	names := Names()
	for _, want := range []string{"cpu", "auto"} {
		if !slices.Contains(names, want) {
			t.Errorf("Names() = %v, want %q among them", names, want)
		}
	}
	for _, name := range names {
		newSorter, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		s, err := newSorter()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.Name() != name {
			t.Errorf("Lookup(%q) made %q", name, s.Name())
		}
		if a, ok := s.(*gpusort.Auto); ok && gpuBuild != (a.GPUErr() == nil) {
			t.Errorf("auto: GPUErr() = %v in a build with the gpu tag %v", a.GPUErr(), gpuBuild)
		}
		if err := s.Close(); err != nil {
			t.Errorf("%s: Close: %v", name, err)
		}
	}
	newSorter, err := Lookup("gpu")
	if gpuBuild {
		if err != nil {
			t.Fatal(err)
		}
		s, err := newSorter()
		if err != nil {
			t.Fatal(err)
		}
		if s.Name() != "compute" {
			t.Errorf(`Lookup("gpu") made %q, want "compute"`, s.Name())
		}
		s.Close()
	} else if err == nil {
		t.Error(`Lookup("gpu") succeeded in a build without the gpu tag`)
	}
	if _, err := Lookup("quicksort"); err == nil {
		t.Error(`Lookup("quicksort") succeeded`)
	}
}
