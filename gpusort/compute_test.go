//go:build gpu

package gpusort

import "testing"

func newComputeSorter() (Sorter, error) { return NewCompute() }

func TestCompute(t *testing.T)       { testSorter(t, newComputeSorter) }
func TestComputeDigest(t *testing.T) { testDigester(t, newComputeSorter) }

func TestComputeInfo(t *testing.T) {
	c, err := NewCompute()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	t.Log(c.Info())
}

func TestAutoGPU(t *testing.T) {
	testSorter(t, func() (Sorter, error) { return newAuto(), nil })
}

func TestAutoConcurrentGPU(t *testing.T) {
	a := newAuto()
	defer a.Close()
	if err := a.GPUErr(); err != nil {
		t.Fatal(err)
	}
	testAutoConcurrent(t, a)
}
