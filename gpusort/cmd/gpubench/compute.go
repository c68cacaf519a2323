//go:build gpu

package main

import (
	"fmt"
	"math/bits"

	"streamd/gpusort"
	"streamd/gpusort/compute"
	"streamd/gpusort/glctx"
)

// openCompute starts the named compute back-end with staging memory for
// every batch this run stages at the largest size, or returns nil for
// other names.
func openCompute(name string, cfg config) (gpusort.Sorter, error) {
	alg, ok := map[string]compute.Algorithm{
		"compute":         compute.Measured,
		"compute-bitonic": compute.Bitonic,
		"compute-radix":   compute.Radix,
	}[name]
	if !ok {
		return nil, nil
	}
	kind, err := glctx.FromEnv()
	if err != nil {
		return nil, err
	}
	staging := (cfg.workers + 1) * gpusort.Channels * 4 << cfg.maxLog
	return compute.NewWithConfig(compute.Config{Context: kind, Algorithm: alg, StagingBytes: staging})
}

// printChoices prints what a measured compute back-end chose per size.
func printChoices(b *backend) {
	c, ok := b.s.(*compute.Sorter)
	if !ok || len(c.Choices()) == 0 {
		return
	}
	fmt.Printf("\n%s chose, per size (sort alone, four windows of random keys):\n\n", b.name)
	fmt.Println("| n | choice | bitonic Mkeys/s | radix Mkeys/s |")
	fmt.Println("|---|---|---|---|")
	for _, ch := range c.Choices() {
		fmt.Printf("| 2^%d | %v | %s | %s |\n", log2(ch.N), ch.Algorithm, mega(ch.BitonicRate), mega(ch.RadixRate))
		if ch.Err != nil {
			fmt.Printf("|  | %v |  |  |\n", ch.Err)
		}
	}
}

func log2(n int) int { return bits.Len(uint(n - 1)) }
