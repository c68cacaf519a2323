package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	pb "streamd/api/proto/streamd/v1"
)

// sumFlags are the flags of query sum: the threshold, as a constant (--at)
// or an aggregate of x (--quantile, --min, --max, --mean) times --factor,
// and the side (--below, --above, both by default).
type sumFlags struct {
	at, quantile   optFloat
	min, max, mean bool
	factor         float64
	below, above   bool
}

func (f *sumFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.at, "at", "sum: the threshold, a constant")
	fs.Var(&f.quantile, "quantile", "sum: the threshold is --factor times the φ-quantile of x")
	fs.BoolVar(&f.min, "min", false, "sum: the threshold is --factor times the smallest x")
	fs.BoolVar(&f.max, "max", false, "sum: the threshold is --factor times the largest x")
	fs.BoolVar(&f.mean, "mean", false, "sum: the threshold is --factor times the mean of x")
	fs.Float64Var(&f.factor, "factor", 1, "sum: what the threshold's aggregate is multiplied by")
	fs.BoolVar(&f.below, "below", false, "sum: the pairs with x ≤ the threshold")
	fs.BoolVar(&f.above, "above", false, "sum: the pairs with x ≥ the threshold")
}

// request returns the CorrelatedSum request the flags ask for.
func (f *sumFlags) request(stream string) (*pb.CorrelatedSumRequest, error) {
	req := &pb.CorrelatedSumRequest{Stream: stream, Factor: &f.factor}
	n := 0
	if f.at.set {
		n++
		req.Aggregate, req.Constant = pb.SumAggregate_SUM_AGGREGATE_CONSTANT, f.at.v
	}
	if f.quantile.set {
		n++
		req.Aggregate, req.Phi = pb.SumAggregate_SUM_AGGREGATE_QUANTILE, f.quantile.v
	}
	for _, a := range []struct {
		set bool
		agg pb.SumAggregate
	}{{f.min, pb.SumAggregate_SUM_AGGREGATE_MIN}, {f.max, pb.SumAggregate_SUM_AGGREGATE_MAX}, {f.mean, pb.SumAggregate_SUM_AGGREGATE_MEAN}} {
		if a.set {
			n++
			req.Aggregate = a.agg
		}
	}
	if n != 1 {
		return nil, &usageError{err: errors.New("sum: want one threshold: --at T, --quantile φ, --min, --max or --mean")}
	}
	switch {
	case f.below && !f.above:
		req.Side = pb.SumSide_SUM_SIDE_AT_MOST
	case f.above && !f.below:
		req.Side = pb.SumSide_SUM_SIDE_AT_LEAST
	}
	return req, nil
}

// optFloat is a float flag that knows whether it was set.
type optFloat struct {
	v   float64
	set bool
}

func (o *optFloat) String() string {
	if !o.set {
		return ""
	}
	return strconv.FormatFloat(o.v, 'g', -1, 64)
}

func (o *optFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("bad number %q", s)
	}
	o.v, o.set = v, true
	return nil
}

// printSum prints a correlated sum: the threshold and what it is made of,
// the totals, each side's bounds, and the guaranteed widths.
func printSum(out io.Writer, r *pb.CorrelatedSumResponse) {
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	switch {
	case r.AggregateRankMax == 0:
		fmt.Fprintf(out, "threshold %s\n", g(r.Threshold))
	case r.Aggregate == r.Threshold:
		fmt.Fprintf(out, "threshold %s, of rank %d to %d among x\n", g(r.Threshold), r.AggregateRankMin, r.AggregateRankMax)
	default:
		fmt.Fprintf(out, "threshold %s, from %s of rank %d to %d among x\n", g(r.Threshold), g(r.Aggregate), r.AggregateRankMin, r.AggregateRankMax)
	}
	fmt.Fprintf(out, "pairs %d, x from %s to %s, Σy %s, Σ|y| %s, ε %v\n", r.Count, g(r.MinX), g(r.MaxX), g(r.SumY), g(r.SumAbsY), r.Epsilon)
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "pairs\tcount min\tcount max\tΣy min\tΣy max\t")
	for _, side := range []struct {
		name string
		b    *pb.CorrelatedSumBounds
	}{{"x ≤ t", r.AtMost}, {"x ≥ t", r.AtLeast}} {
		if side.b != nil {
			fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%s\t\n", side.name, side.b.CountMin, side.b.CountMax, g(side.b.SumMin), g(side.b.SumMax))
		}
	}
	w.Flush()
	fmt.Fprintf(out, "guaranteed widths: count %s (ε·pairs), Σy %s (ε·Σ|y|)\n", g(r.CountWidth), g(r.SumWidth))
}
