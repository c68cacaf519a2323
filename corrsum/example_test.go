package corrsum_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"streamd/corrsum"
)

// How many bytes did the requests at or below the p99 latency carry, and
// how many the slowest 1%? Pairs are (latency in ms, response bytes),
// added in windows of 4096.
func ExampleSummary_Correlated() {
	s, err := corrsum.New(0.001)
	if err != nil {
		panic(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	latency, bytes := make([]float64, 4096), make([]float64, 4096)
	for range 100 {
		for i := range latency {
			latency[i] = math.Round(rng.ExpFloat64()*20*10) / 10 // ms, 0.1 ms steps
			bytes[i] = math.Round(500 + latency[i]*100)          // slow requests carry more
		}
		if err := s.AddWindow(latency, bytes); err != nil {
			panic(err)
		}
	}
	a, err := s.Correlated(corrsum.Query{Agg: corrsum.AggQuantile, Phi: 0.99, Factor: 1})
	if err != nil {
		panic(err)
	}
	fmt.Printf("p99 = %v ms, rank in [%d, %d] of %d\n", a.Threshold, a.AggRankLo, a.AggRankHi, s.Count())
	fmt.Printf("at or below: %d to %d requests, %.0f to %.0f bytes\n", a.AtMost.CountLo, a.AtMost.CountHi, a.AtMost.SumLo, a.AtMost.SumHi)
	fmt.Printf("at or above: %d to %d requests, %.0f to %.0f bytes\n", a.AtLeast.CountLo, a.AtLeast.CountHi, a.AtLeast.SumLo, a.AtLeast.SumHi)
	t := s.Totals()
	fmt.Printf("all: %d requests, %.0f bytes\n", t.Count, t.SumY)

	// Requests slower than twice the mean latency.
	a, err = s.Correlated(corrsum.Query{Agg: corrsum.AggMean, Factor: 2})
	if err != nil {
		panic(err)
	}
	fmt.Printf("2×mean = %.2f ms: %d to %d requests, %.0f to %.0f bytes\n", a.Threshold, a.AtLeast.CountLo, a.AtLeast.CountHi, a.AtLeast.SumLo, a.AtLeast.SumHi)
	// Output:
	// p99 = 92.3 ms, rank in [405467, 405546] of 409600
	// at or below: 405475 to 405561 requests, 978113550 to 978951340 bytes
	// at or above: 4073 to 4159 requests, 48066520 to 48903250 bytes
	// all: 409600 requests, 1026686480 bytes
	// 2×mean = 40.13 ms: 55336 to 55534 requests, 361149940 to 362043930 bytes
}
