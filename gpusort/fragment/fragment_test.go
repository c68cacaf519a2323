//go:build gpu

package fragment

import (
	"testing"

	"streamd/gpusort"
	"streamd/gpusort/internal/sorttest"
)

func newPBSNSorter() (gpusort.Sorter, error)    { return NewPBSN() }
func newBitonicSorter() (gpusort.Sorter, error) { return NewBitonic() }

func TestPBSN(t *testing.T)          { sorttest.Sorter(t, newPBSNSorter) }
func TestPBSNDigest(t *testing.T)    { sorttest.Digester(t, newPBSNSorter) }
func TestBitonic(t *testing.T)       { sorttest.Sorter(t, newBitonicSorter) }
func TestBitonicDigest(t *testing.T) { sorttest.Digester(t, newBitonicSorter) }
