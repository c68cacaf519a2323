package soak

import (
	"context"
	"fmt"
	"time"

	pb "streamd/api/proto/streamd/v1"
	"streamd/internal/exact"
)

// grid is the number of distinct values: every value is k/16 with k below
// grid, exact in float32.
const grid = 1 << 16

// seq is one stream's sequence of values: a pure function of the seed, the
// stream and the position.
type seq struct {
	seed uint64
	id   int
}

// at returns the value at position i: one in five is one of eight heavy
// values, the others drift upwards with the position.
func (s seq) at(i int64) float64 { return float64(s.k(i)) / 16 }

func (s seq) k(i int64) uint64 {
	h := mix(s.seed ^ uint64(s.id)<<48 ^ uint64(i)*0x9e3779b97f4a7c15)
	if h%5 == 0 {
		return (h >> 8) % 8
	}
	return (uint64(i)>>7 + (h>>8)%16384) % grid
}

// mix is splitmix64's finaliser.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// span is the positions [lo, hi) of a sequence.
type span struct{ lo, hi int64 }

// lineage is what a stream holds: ranges of its sequence, in the order the
// daemon accepted them.
type lineage []span

// n returns the number of values held.
func (l lineage) n() int64 {
	var n int64
	for _, s := range l {
		n += s.hi - s.lo
	}
	return n
}

// truncate returns the first n values of l.
func (l lineage) truncate(n int64) lineage {
	var out lineage
	for _, s := range l {
		if n <= 0 {
			break
		}
		k := min(s.hi-s.lo, n)
		out = append(out, span{s.lo, s.lo + k})
		n -= k
	}
	return out
}

// add returns l followed by the positions [lo, lo+n), merged with the last
// range when they join.
func (l lineage) add(lo, n int64) lineage {
	if n <= 0 {
		return l
	}
	out := append(lineage(nil), l...)
	if k := len(out); k > 0 && out[k-1].hi == lo {
		out[k-1].hi += n
		return out
	}
	return append(out, span{lo, lo + n})
}

// suffix returns the last n values of l (all of them if it holds fewer).
func (l lineage) suffix(n int64) lineage {
	var out lineage
	for i := len(l) - 1; i >= 0 && n > 0; i-- {
		s := l[i]
		k := min(s.hi-s.lo, n)
		out = append(lineage{{s.hi - k, s.hi}}, out...)
		n -= k
	}
	return out
}

func (l lineage) String() string {
	out := ""
	for i, s := range l {
		if i > 0 {
			out += " "
		}
		out += fmt.Sprintf("[%d,%d)", s.lo, s.hi)
	}
	return out
}

// key returns the exact answer key of the values of q at the positions of
// l.
func (q seq) key(l lineage) *exact.Stream {
	counts := make([]int64, grid)
	for _, s := range l {
		for i := s.lo; i < s.hi; i++ {
			counts[q.k(i)]++
		}
	}
	var vals []float64
	var cs []int64
	for k, c := range counts {
		if c > 0 {
			vals = append(vals, float64(k)/16)
			cs = append(cs, c)
		}
	}
	return exact.NewCounted(vals, cs)
}

var phis = []float64{0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1}

// checkAnswers asks every query of stream, over all history (lastN 0) or
// its last lastN values, and checks each answer against key, the exact
// answer of the values it covers, within eps. It returns the first
// violation.
func checkAnswers(ctx context.Context, c pb.StreamdClient, stream string, key *exact.Stream, eps float64, lastN uint64) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	where := "all history"
	if lastN > 0 {
		where = fmt.Sprintf("last %d", lastN)
	}
	n := key.N()
	q, err := c.Quantiles(ctx, &pb.QuantilesRequest{Stream: stream, Phis: phis, LastN: lastN})
	if err != nil {
		return fmt.Errorf("%s: quantiles: %w", where, err)
	}
	if int64(q.Count) != n {
		return fmt.Errorf("%s: quantiles cover %d values, want %d", where, q.Count, n)
	}
	if len(q.Quantiles) != len(phis) {
		return fmt.Errorf("%s: %d quantiles for %d φs", where, len(q.Quantiles), len(phis))
	}
	for i, a := range q.Quantiles {
		if a.Phi != phis[i] {
			return fmt.Errorf("%s: quantile %d answers φ %v, asked %v", where, i, a.Phi, phis[i])
		}
		if err := key.CheckQuantile(a.Phi, a.Value, eps, int64(a.RankMin), int64(a.RankMax)); err != nil {
			return fmt.Errorf("%s: quantile %v of %d values: %w", where, a.Phi, n, err)
		}
	}
	probe := []float64{key.Quantile(0.1), key.Quantile(0.5), key.Quantile(0.9), 0, 7.0 / 16, 1000, -1, 1e9}
	r, err := c.Ranks(ctx, &pb.RanksRequest{Stream: stream, Values: probe, LastN: lastN})
	if err != nil {
		return fmt.Errorf("%s: ranks: %w", where, err)
	}
	if len(r.Ranks) != len(probe) {
		return fmt.Errorf("%s: %d ranks for %d values", where, len(r.Ranks), len(probe))
	}
	for i, a := range r.Ranks {
		if a.Value != probe[i] {
			return fmt.Errorf("%s: rank %d answers %v, asked %v", where, i, a.Value, probe[i])
		}
		if err := key.CheckRank(a.Value, int64(a.RankMin), int64(a.RankMax), eps); err != nil {
			return fmt.Errorf("%s: rank of %v among %d values: %w", where, a.Value, n, err)
		}
	}
	f, err := c.Frequencies(ctx, &pb.FrequenciesRequest{Stream: stream, Values: probe, LastN: lastN})
	if err != nil {
		return fmt.Errorf("%s: frequencies: %w", where, err)
	}
	if len(f.Items) != len(probe) {
		return fmt.Errorf("%s: %d frequencies for %d values", where, len(f.Items), len(probe))
	}
	for i, a := range f.Items {
		if a.Value != probe[i] {
			return fmt.Errorf("%s: frequency %d answers %v, asked %v", where, i, a.Value, probe[i])
		}
		if err := key.CheckFrequency(a.Value, int64(a.CountMin), int64(a.CountMax), eps); err != nil {
			return fmt.Errorf("%s: frequency of %v among %d values: %w", where, a.Value, n, err)
		}
	}
	for _, s := range []float64{0.01, 0.02, 0.05, 0.3} {
		hh, err := c.HeavyHitters(ctx, &pb.HeavyHittersRequest{Stream: stream, Support: s, LastN: lastN})
		if err != nil {
			return fmt.Errorf("%s: heavy hitters %v: %w", where, s, err)
		}
		var got []float64
		for _, it := range hh.Items {
			got = append(got, it.Value)
			if err := key.CheckFrequency(it.Value, int64(it.CountMin), int64(it.CountMax), eps); err != nil {
				return fmt.Errorf("%s: heavy hitter %v among %d values: %w", where, it.Value, n, err)
			}
		}
		if err := key.CheckHeavyHitters(s, eps, got); err != nil {
			return fmt.Errorf("%s: heavy hitters at support %v of %d values: %w", where, s, n, err)
		}
	}
	return nil
}
