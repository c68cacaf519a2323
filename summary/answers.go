package summary

import (
	"streamd/lossy"
	"streamd/slidingwindow"
)

// Answers are what a stream's summaries answer about a set of its values
// at one moment: all of its history (View) or its last n values or a time
// window (slidingwindow.Snapshot). Every answer carries bounds that hold
// for those values exactly; Epsilon is the relative error the bounds are
// made to. Answers do not change once made and may be asked many times. A
// View made without counts answers quantiles and ranks only: Frequency,
// MaxCountError and HeavyHitters panic on it.
type Answers interface {
	// Count reports the number of values the answers are about.
	Count() int64
	// Epsilon reports the relative rank and count error of the answers,
	// against Count.
	Epsilon() float64
	// Quantile returns a value of the set whose rank is within
	// MaxRankError of ⌈φ·Count⌉, with bounds on that rank; all zero when
	// Count is 0.
	Quantile(phi float64) (v float64, rankMin, rankMax int64)
	// MaxRankError bounds the rank error of every quantile answer.
	MaxRankError() int64
	// Rank returns bounds on the number of values ≤ x.
	Rank(x float64) (lo, hi int64)
	// Frequency returns bounds on the count of x, at most MaxCountError
	// apart.
	Frequency(x float64) (lo, hi int64)
	// MaxCountError bounds the width of Frequency's bounds.
	MaxCountError() int64
	// HeavyHitters returns every value whose count may reach
	// support·Count: all values with count ≥ support·Count and none below
	// support·Count − MaxCountError, largest count first, each with its
	// count bounds (Count, Count+Delta).
	HeavyHitters(support float64) []lossy.Entry
}

var (
	_ Answers = (*View)(nil)
	_ Answers = (*slidingwindow.Snapshot)(nil)
)
