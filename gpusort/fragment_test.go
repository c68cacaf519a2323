//go:build gpu

package gpusort

import "testing"

func newPBSNSorter() (Sorter, error)    { return NewPBSN() }
func newBitonicSorter() (Sorter, error) { return NewBitonic() }

func TestPBSN(t *testing.T)          { testSorter(t, newPBSNSorter) }
func TestPBSNDigest(t *testing.T)    { testDigester(t, newPBSNSorter) }
func TestBitonic(t *testing.T)       { testSorter(t, newBitonicSorter) }
func TestBitonicDigest(t *testing.T) { testDigester(t, newBitonicSorter) }
