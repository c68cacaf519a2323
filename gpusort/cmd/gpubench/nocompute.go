//go:build !gpu

package main

import "streamd/gpusort"

// openCompute returns nil: this build has no compute back-ends.
func openCompute(string, config) (gpusort.Sorter, error) { return nil, nil }

// printChoices does nothing: this build has no compute back-ends.
func printChoices(*backend) {}
