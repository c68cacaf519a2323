package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"text/tabwriter"

	pb "streamd/api/proto/streamd/v1"
)

// DefaultSumAt is the constant threshold at which Verify checks the
// correlated sums of a pair stream by default.
const DefaultSumAt = 100

// SumCheck is one correlated sum of a pair stream: the daemon's answer for
// one threshold, both sides, against the exact counts and sums at the
// threshold it used.
type SumCheck struct {
	Name      string  // what the threshold is: "at 100", "p50", "p99", "2×mean", "min", "max"
	Threshold float64 // the threshold the daemon used
	// AtMost and AtLeast are the exact count and sum of y of the pairs
	// with x ≤ Threshold and x ≥ Threshold, with the daemon's bounds.
	AtMost, AtLeast SideCheck
	Err             error
}

// SideCheck is one side of a SumCheck.
type SideCheck struct {
	Count              int64
	Sum                float64
	CountMin, CountMax uint64
	SumMin, SumMax     float64
}

// pairKey answers exact correlated sums over pairs: x sorted, with the
// running sums of y in that order.
type pairKey struct {
	x      []float64 // ascending
	prefix []float64 // prefix[i] = Σ y of the first i pairs by x
	sumX   float64
	absY   float64
}

func newPairKey(x, y []float64) *pairKey {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	k := &pairKey{x: make([]float64, len(x)), prefix: make([]float64, len(x)+1)}
	for i, j := range idx {
		k.x[i] = x[j]
		k.prefix[i+1] = k.prefix[i] + y[j]
		k.sumX += x[j]
		k.absY += math.Abs(y[j])
	}
	return k
}

// below returns the number of pairs with x < t and with x ≤ t.
func (k *pairKey) below(t float64) (lt, le int) {
	lt = sort.SearchFloat64s(k.x, t)
	le = sort.Search(len(k.x), func(i int) bool { return k.x[i] > t })
	return lt, le
}

// sides returns the exact answers for t.
func (k *pairKey) sides(t float64) (atMost, atLeast SideCheck) {
	lt, le := k.below(t)
	n := len(k.x)
	atMost = SideCheck{Count: int64(le), Sum: k.prefix[le]}
	atLeast = SideCheck{Count: int64(n - lt), Sum: k.prefix[n] - k.prefix[lt]}
	return atMost, atLeast
}

// verifyPairs checks the correlated sums of the pair stream name against
// the pairs sent (x[i], y[i]): at the constant at, at the p50 and p99 of
// x, at twice its mean, at its minimum and maximum, each side's count and
// sum of y must lie in the daemon's bounds, which must be at most ε·N and
// ε·Σ|y| wide (with a relative slack of 10^-9 for rounding); a quantile's
// rank within ⌊(εN+1)/2⌋ of ⌈φN⌉, the minimum and maximum exact.
func verifyPairs(ctx context.Context, client pb.StreamdClient, name string, x, y []float64, at float64, cfg VerifyConfig) (*StreamCheck, error) {
	sc := &StreamCheck{Stream: name, N: int64(len(x)), Pairs: true}
	stats, err := waitCount(ctx, client, name, func(*pb.StatsResponse) int64 { return sc.N }, cfg)
	if err != nil {
		return failed(ctx, sc, err)
	}
	sc.Epsilon, sc.Rejected = stats.Epsilon, stats.RejectedTotal
	if stats.Kind != pb.StreamKind_STREAM_KIND_PAIRS {
		sc.Err = fmt.Errorf("stream is of kind %v, not pairs", stats.Kind)
		return sc, nil
	}
	key := newPairKey(x, y)
	n := float64(len(x))
	two := 2.0
	for _, q := range []struct {
		name string
		req  *pb.CorrelatedSumRequest
	}{
		{"at " + strconv.FormatFloat(at, 'g', -1, 64), &pb.CorrelatedSumRequest{Constant: at}},
		{"p50", &pb.CorrelatedSumRequest{Aggregate: pb.SumAggregate_SUM_AGGREGATE_QUANTILE, Phi: 0.5}},
		{"p99", &pb.CorrelatedSumRequest{Aggregate: pb.SumAggregate_SUM_AGGREGATE_QUANTILE, Phi: 0.99}},
		{"2×mean", &pb.CorrelatedSumRequest{Aggregate: pb.SumAggregate_SUM_AGGREGATE_MEAN, Factor: &two}},
		{"min", &pb.CorrelatedSumRequest{Aggregate: pb.SumAggregate_SUM_AGGREGATE_MIN}},
		{"max", &pb.CorrelatedSumRequest{Aggregate: pb.SumAggregate_SUM_AGGREGATE_MAX}},
	} {
		q.req.Stream = name
		r, err := client.CorrelatedSum(ctx, q.req)
		if err != nil {
			return nil, fmt.Errorf("verify %s: correlated sum %s: %w", name, q.name, err)
		}
		c := SumCheck{Name: q.name, Threshold: r.Threshold}
		c.AtMost, c.AtLeast = key.sides(r.Threshold)
		var errs []error
		if r.Count != uint64(len(x)) {
			errs = append(errs, fmt.Errorf("answer covers %d pairs, %d sent", r.Count, len(x)))
		}
		switch q.req.Aggregate {
		case pb.SumAggregate_SUM_AGGREGATE_CONSTANT:
			if r.Threshold != at {
				errs = append(errs, fmt.Errorf("threshold %v, asked %v", r.Threshold, at))
			}
		case pb.SumAggregate_SUM_AGGREGATE_MIN:
			if r.Threshold != key.x[0] {
				errs = append(errs, fmt.Errorf("minimum %v, exact %v", r.Threshold, key.x[0]))
			}
		case pb.SumAggregate_SUM_AGGREGATE_MAX:
			if r.Threshold != key.x[len(x)-1] {
				errs = append(errs, fmt.Errorf("maximum %v, exact %v", r.Threshold, key.x[len(x)-1]))
			}
		case pb.SumAggregate_SUM_AGGREGATE_MEAN:
			if want := 2 * key.sumX / n; math.Abs(r.Threshold-want) > 1e-9*math.Abs(want) {
				errs = append(errs, fmt.Errorf("2×mean %v, exact %v", r.Threshold, want))
			}
		case pb.SumAggregate_SUM_AGGREGATE_QUANTILE:
			lt, le := key.below(r.Aggregate)
			want := int64(math.Ceil(q.req.Phi * n))
			slack := int64((sc.Epsilon*n + 1) / 2)
			if int64(le) < want-slack || int64(lt)+1 > want+slack {
				errs = append(errs, fmt.Errorf("quantile %v has ranks %d to %d, want %d ± %d", r.Aggregate, lt+1, le, want, slack))
			}
		}
		sideErr := func(side string, got *pb.CorrelatedSumBounds, want *SideCheck) {
			if got == nil {
				errs = append(errs, fmt.Errorf("%s: no answer", side))
				return
			}
			want.CountMin, want.CountMax, want.SumMin, want.SumMax = got.CountMin, got.CountMax, got.SumMin, got.SumMax
			slackY := 1e-9 * key.absY
			switch {
			case want.Count < int64(got.CountMin) || want.Count > int64(got.CountMax):
				errs = append(errs, fmt.Errorf("%s: count %d outside [%d, %d]", side, want.Count, got.CountMin, got.CountMax))
			case float64(got.CountMax-got.CountMin) > sc.Epsilon*n:
				errs = append(errs, fmt.Errorf("%s: count bounds %d wide, more than εN = %v", side, got.CountMax-got.CountMin, sc.Epsilon*n))
			case want.Sum < got.SumMin-slackY || want.Sum > got.SumMax+slackY:
				errs = append(errs, fmt.Errorf("%s: sum %v outside [%v, %v]", side, want.Sum, got.SumMin, got.SumMax))
			case got.SumMax-got.SumMin > sc.Epsilon*key.absY+slackY:
				errs = append(errs, fmt.Errorf("%s: sum bounds %v wide, more than εΣ|y| = %v", side, got.SumMax-got.SumMin, sc.Epsilon*key.absY))
			}
		}
		sideErr("x ≤ t", r.AtMost, &c.AtMost)
		sideErr("x ≥ t", r.AtLeast, &c.AtLeast)
		c.Err = errors.Join(errs...)
		sc.Sums = append(sc.Sums, c)
	}
	return sc, nil
}

// writeSums writes the correlated-sum checks of s as a table.
func writeSums(w io.Writer, s *StreamCheck) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	fmt.Fprintln(tw, "threshold\tt\tside\texact count\tcount min\tcount max\texact Σy\tΣy min\tΣy max\tok\t")
	for _, c := range s.Sums {
		for i, side := range []SideCheck{c.AtMost, c.AtLeast} {
			name, t, label := c.Name, g(c.Threshold), "x ≤ t"
			if i == 1 {
				name, t, label = "", "", "x ≥ t"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", name, t, label, side.Count, side.CountMin, side.CountMax,
				g(side.Sum), g(side.SumMin), g(side.SumMax), okString(c.Err), errString(c.Err))
		}
	}
	tw.Flush()
}
