package exact

import (
	"fmt"

	"streamd/synth"
)

// Named is a test stream.
type Named struct {
	Name   string
	Values []float64
}

// Synthetic returns n values of every distribution of synth in each of the
// given arrival orders (every order when none is given), seeded by seed.
func Synthetic(n int, seed uint64, orders ...synth.Order) []Named {
	if len(orders) == 0 {
		orders = synth.Orders
	}
	var out []Named
	for _, d := range synth.Dists {
		for _, o := range orders {
			x, err := synth.Generate(synth.Spec{Dist: d, Order: o, Seed: seed, Period: max(1, n/37)}, n)
			if err != nil {
				panic(err) // the specs above are valid
			}
			out = append(out, Named{fmt.Sprintf("%s/%s/n=%d", d, o, n), x})
		}
	}
	return out
}
