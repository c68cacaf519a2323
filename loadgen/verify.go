package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"sync"
	"text/tabwriter"
	"time"

	pb "streamd/api/proto/streamd/v1"
	"streamd/hhh"
	"streamd/internal/exact"
	"streamd/loadgen/hhhexact"
)

// DefaultPhis returns the φ at which Verify checks quantiles by default:
// 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99 and 0.999.
func DefaultPhis() []float64 {
	return []float64{0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999}
}

// VerifyConfig configures Verify.
type VerifyConfig struct {
	// Phis are the quantiles to check (default DefaultPhis()).
	Phis []float64
	// Support is the heavy-hitter support to check (default 0.01). It
	// must be above the streams' ε.
	Support float64
	// Timeout bounds the wait for the daemon to count every value of
	// every stream, all together (default 1m); the daemon's Stats are
	// polled every Poll (default 50ms).
	Timeout time.Duration
	Poll    time.Duration
	// SumAt is the constant threshold at which the correlated sums of a
	// pair stream are checked, besides its p50, p99, twice its mean, its
	// minimum and maximum (default DefaultSumAt).
	SumAt float64

	// deadline is when the wait that Timeout bounds ends, set by Verify:
	// one for every stream, so that a daemon that is gone fails them all
	// within Timeout, not each after Timeout in turn.
	deadline time.Time
}

// Verification holds the checks of every stream.
type Verification struct {
	Streams []*StreamCheck
}

// OK reports whether every answer holds its guarantee.
func (v *Verification) OK() bool {
	for _, s := range v.Streams {
		if !s.OK() {
			return false
		}
	}
	return true
}

// Err returns nil if v is OK, else an error wrapping ErrVerify.
func (v *Verification) Err() error {
	bad := 0
	for _, s := range v.Streams {
		if !s.OK() {
			bad++
		}
	}
	if bad == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d streams: %w", bad, len(v.Streams), ErrVerify)
}

// StreamCheck compares the daemon's answers for one stream with the exact
// answers over the values sent.
type StreamCheck struct {
	Stream  string
	N       int64   // values sent that the stream keeps
	Epsilon float64 // the stream's ε, from the daemon
	Float32 bool    // the stream keeps float32 values: answers are compared with the values rounded so
	Items   bool    // an item stream: heavy hitters only, by item
	Pairs   bool    // a pair stream: correlated sums only (Sums)

	// Rejected is the daemon's count of the stream's values it refused,
	// over the stream's life (StatsResponse.rejected_total).
	Rejected uint64

	Quantiles    []QuantileCheck
	HeavyHitters []HeavyHitterCheck
	Sums         []SumCheck // the correlated sums of a pair stream
	Support      float64
	Err          error // an error of the whole check or of the heavy-hitter set, if any

	// Hierarchy is the prefix hierarchy of a hierarchy stream, whose
	// hierarchical heavy hitters HHH checks; empty for any other.
	Hierarchy string
	HHH       []HHHCheck
}

// OK reports whether every answer for the stream holds its guarantee.
func (s *StreamCheck) OK() bool {
	if s.Err != nil {
		return false
	}
	for _, q := range s.Quantiles {
		if q.Err != nil {
			return false
		}
	}
	for _, h := range s.HeavyHitters {
		if h.Err != nil {
			return false
		}
	}
	for _, h := range s.HHH {
		if h.Err != nil {
			return false
		}
	}
	for _, c := range s.Sums {
		if c.Err != nil {
			return false
		}
	}
	return true
}

// HHHCheck is one answer of hierarchical heavy hitters of a hierarchy
// stream at the check's support, discounted or plain, checked against the
// exact counts of the items sent (hhhexact): none missing, none below its
// precision, every bound holding.
type HHHCheck struct {
	Plain     bool
	Hitters   int     // the prefixes reported
	Precision float64 // the answer's stated precision
	Err       error
}

// QuantileCheck is one quantile: the exact one and the daemon's answer,
// with its rank error against the bound εN.
type QuantileCheck struct {
	Phi              float64
	LastN            uint64 // the answer is over the last LastN values; 0 for all history
	Exact            float64
	Got              float64
	RankMin, RankMax uint64 // the daemon's rank bounds of Got
	RankError        int64
	Bound            float64 // εN, with N the values the answer covers
	Err              error
}

// HeavyHitterCheck is a value that is a heavy hitter exactly, or was
// reported as one by the daemon, or both.
type HeavyHitterCheck struct {
	Value              float64
	Item               string // the item, for an item stream
	Exact              int64  // its count in the values sent
	Reported           bool
	CountMin, CountMax uint64 // the daemon's bounds, when reported
	Err                error
}

// Verify waits until the daemon counts exactly the values sent to each
// stream of res (which needs Runner.Keep or FrameRunner.Keep), then asks it for the quantiles
// and heavy hitters of each stream and checks them against the exact
// answers: every quantile's rank error must be at most εN and its rank
// bounds must hold its true rank; the heavy hitters must include every
// value of count ≥ sN and no value of count < (s − ε)N, each within its
// reported count bounds. A stream that holds other values than those sent
// fails the check. Verify returns an error only when it cannot ask; a
// failed check is in the Verification.
//
// Streams keep float32 values unless created with float64 precision; Verify
// asks the daemon's Stats which, rounds the values sent likewise, and
// leaves out of the exact answers the values a float32 stream rejects as
// beyond its range. It sorts a copy of each stream's values.
func Verify(ctx context.Context, client pb.StreamdClient, res *Result, cfg VerifyConfig) (*Verification, error) {
	if len(cfg.Phis) == 0 {
		cfg.Phis = DefaultPhis()
	}
	if cfg.Support == 0 {
		cfg.Support = 0.01
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = time.Minute
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 50 * time.Millisecond
	}
	if cfg.SumAt == 0 {
		cfg.SumAt = DefaultSumAt
	}
	cfg.deadline = time.Now().Add(cfg.Timeout)
	var names []string
	for _, name := range res.Names() {
		st := res.Streams[name]
		if st.Sent == 0 {
			continue
		}
		if !st.kept() {
			return nil, fmt.Errorf("verify %s: the values sent were not kept", name)
		}
		names = append(names, name)
	}
	// The streams are checked verifyParallel at a time, as each waits
	// for its count at a poll or two.
	checks := make([]*StreamCheck, len(names))
	errs := make([]error, len(names))
	sem := make(chan struct{}, verifyParallel)
	var wg sync.WaitGroup
	for i, name := range names {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			checks[i], errs[i] = verifyOne(ctx, client, name, res.Streams[name], cfg)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Verification{Streams: checks}, nil
}

// verifyParallel is how many streams Verify checks at a time.
const verifyParallel = 8

// verifyOne checks the stream name, which was sent st, by its kind.
func verifyOne(ctx context.Context, client pb.StreamdClient, name string, st *StreamResult, cfg VerifyConfig) (*StreamCheck, error) {
	switch {
	case len(st.Items) > 0:
		return verifyItems(ctx, client, name, st.Items, cfg)
	case len(st.PairX) > 0:
		return verifyPairs(ctx, client, name, st.PairX, st.PairY, cfg.SumAt, cfg)
	}
	return verifyStream(ctx, client, name, st, cfg)
}

// waitCount polls the daemon's Stats of stream until it counts want(stats)
// values at two polls in a row, or at one past cfg's deadline, when it
// gives up otherwise. want gets the stream's Stats, so that it can take
// the stream's precision into account.
func waitCount(ctx context.Context, client pb.StreamdClient, stream string, want func(*pb.StatsResponse) int64, cfg VerifyConfig) (*pb.StatsResponse, error) {
	ctx, cancel := context.WithDeadline(ctx, cfg.deadline)
	defer cancel()
	t := time.NewTicker(cfg.Poll)
	defer t.Stop()
	var last *pb.StatsResponse
	seen := false // the count was n at the last poll
	for {
		resp, err := client.Stats(ctx, &pb.StatsRequest{Stream: stream})
		if err == nil {
			last = resp
			switch c, n := int64(resp.Count), want(resp); {
			case c == n && (seen || !time.Now().Before(cfg.deadline)):
				// Past the deadline, the values sent have had the
				// whole Timeout to arrive: one poll is enough.
				return resp, nil
			case c == n:
				// Values sent over TCP may still be on their way, on
				// top of values that were there before: the count
				// must hold for one more poll.
				seen = true
			case c > n:
				return resp, fmt.Errorf("daemon counts %d values, more than the %d sent: verify needs a new stream", c, n)
			}
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			if last == nil {
				return nil, fmt.Errorf("stats: %w", err)
			}
			return last, fmt.Errorf("daemon counts %d values of the %d sent after %v", last.Count, want(last), cfg.Timeout)
		}
	}
}

// failed ends the check sc with err, the daemon's failure to count the
// values sent, or, when ctx has ended, with no check and ctx's error.
func failed(ctx context.Context, sc *StreamCheck, err error) (*StreamCheck, error) {
	if ctx.Err() != nil {
		return nil, fmt.Errorf("verify %s: %w", sc.Stream, ctx.Err())
	}
	sc.Err = err
	return sc, nil
}

// kept reports whether st holds every value sent: as many values as sent,
// or values with counts that add up to them.
func (st *StreamResult) kept() bool {
	if st.Counts == nil {
		return int64(len(st.Values)+len(st.Items)+len(st.PairX)) == st.Sent && len(st.PairX) == len(st.PairY)
	}
	var n int64
	for _, c := range st.Counts {
		n += c
	}
	return len(st.Counts) == len(st.Values) && n == st.Sent
}

func verifyStream(ctx context.Context, client pb.StreamdClient, name string, sent *StreamResult, cfg VerifyConfig) (*StreamCheck, error) {
	sc := &StreamCheck{Stream: name, N: sent.Sent, Support: cfg.Support}
	// The values sent at least once, with their counts.
	values, counts := slices.Clone(sent.Values), slices.Clone(sent.Counts)
	if counts != nil {
		j := 0
		for i, c := range counts {
			if c > 0 {
				values[j], counts[j] = values[i], c
				j++
			}
		}
		values, counts = values[:j], counts[:j]
	}
	// A float32 stream rounds each value as it arrives and rejects those
	// beyond float32's range, which round to ±Inf.
	accepted := func(stats *pb.StatsResponse) int64 {
		if stats.Float64 {
			return sent.Sent
		}
		var n int64
		for i, x := range values {
			if !math.IsInf(float64(float32(x)), 0) {
				n += countAt(counts, i)
			}
		}
		return n
	}
	stats, err := waitCount(ctx, client, name, accepted, cfg)
	if err != nil {
		return failed(ctx, sc, err)
	}
	sc.Epsilon, sc.Rejected, sc.Float32 = stats.Epsilon, stats.RejectedTotal, !stats.Float64
	if sc.Float32 {
		sc.N = accepted(stats)
		j := 0
		for i, x := range values {
			if r := float64(float32(x)); !math.IsInf(r, 0) {
				values[j] = r
				if counts != nil {
					counts[j] = counts[i]
				}
				j++
			}
		}
		values = values[:j]
		if counts != nil {
			counts = counts[:j]
		}
	}
	var key *exact.Stream
	if counts != nil {
		key = exact.NewCounted(values, counts)
	} else {
		key = exact.New(values)
	}
	qr, err := client.Quantiles(ctx, &pb.QuantilesRequest{Stream: name, Phis: cfg.Phis})
	if err != nil {
		return nil, fmt.Errorf("verify %s: quantiles: %w", name, err)
	}
	if qr.Count != uint64(sc.N) {
		sc.Err = fmt.Errorf("quantiles cover %d values, %d sent", qr.Count, sc.N)
	}
	if sc.N == 0 {
		// The stream rejected every value sent: nothing to compare.
		return sc, nil
	}
	sc.Quantiles = checkQuantiles(key, qr, cfg.Phis, sc.Epsilon, 0)
	if sent.Ordered && counts == nil && stats.SlidingWindow > 0 {
		last, err := verifyLastN(ctx, client, name, values, int64(stats.SlidingWindow), cfg.Phis, sc.Epsilon)
		if err != nil {
			return nil, fmt.Errorf("verify %s: %w", name, err)
		}
		sc.Quantiles = append(sc.Quantiles, last...)
	}

	hr, err := client.HeavyHitters(ctx, &pb.HeavyHittersRequest{Stream: name, Support: cfg.Support})
	if err != nil {
		sc.Err = errors.Join(sc.Err, fmt.Errorf("heavy hitters: %w", err))
		return sc, nil
	}
	reported := make(map[float64]bool)
	for _, it := range hr.Items {
		reported[it.Value] = true
		h := HeavyHitterCheck{Value: it.Value, Exact: key.Count(it.Value), Reported: true, CountMin: it.CountMin, CountMax: it.CountMax}
		h.Err = key.CheckFrequency(it.Value, int64(it.CountMin), int64(it.CountMax), sc.Epsilon)
		if h.Err == nil {
			h.Err = key.CheckHeavyHitter(it.Value, cfg.Support, sc.Epsilon)
		}
		sc.HeavyHitters = append(sc.HeavyHitters, h)
	}
	for _, r := range key.HeavyHitters(cfg.Support) {
		if !reported[r.Value] {
			sc.HeavyHitters = append(sc.HeavyHitters, HeavyHitterCheck{Value: r.Value, Exact: r.Count, Err: missing(r.Count, sc.N, cfg.Support)})
		}
	}
	return sc, nil
}

// checkQuantiles checks the answer qr at phis against the exact quantiles
// of key: each value must be one of key's, within eps·N ranks of its φ,
// and hold its stated rank bounds. lastN is what the answer covers (0 for
// all history).
func checkQuantiles(key *exact.Stream, qr *pb.QuantilesResponse, phis []float64, eps float64, lastN uint64) []QuantileCheck {
	checks := make([]QuantileCheck, len(phis))
	for i, phi := range phis {
		q := &checks[i]
		*q = QuantileCheck{Phi: phi, LastN: lastN, Exact: key.Quantile(phi), Bound: eps * float64(key.N())}
		if i >= len(qr.Quantiles) {
			q.Err = errors.New("no answer")
			continue
		}
		a := qr.Quantiles[i]
		q.Got, q.RankMin, q.RankMax = a.Value, a.RankMin, a.RankMax
		q.RankError, q.Err = key.RankError(phi, a.Value)
		if q.Err == nil {
			q.Err = key.CheckQuantile(phi, a.Value, eps, int64(a.RankMin), int64(a.RankMax))
		}
	}
	return checks
}

// verifyLastN checks the quantiles at phis over the last n values of the
// stream name, for a few n up to its sliding window w, against the exact
// quantiles of the last n of values, which arrived in that order: each
// answer must cover min(n, len(values)) values, state an ε no larger than
// the stream's eps, and hold its rank bounds and that ε. The n include one
// past the first chunks of the window's raw ring (slidingwindow), and w
// itself.
func verifyLastN(ctx context.Context, client pb.StreamdClient, name string, values []float64, w int64, phis []float64, eps float64) ([]QuantileCheck, error) {
	var checks []QuantileCheck
	top := min(w, int64(len(values)))
	ns := []int64{1, 257, 4097, top / 3, top, w}
	slices.Sort(ns)
	for _, n := range slices.Compact(ns) {
		if n < 1 || n > w || (n > top && n != w) {
			continue
		}
		qr, err := client.Quantiles(ctx, &pb.QuantilesRequest{Stream: name, Phis: phis, LastN: uint64(n)})
		if err != nil {
			return nil, fmt.Errorf("quantiles over the last %d values: %w", n, err)
		}
		covered := min(n, int64(len(values)))
		key := exact.New(values[int64(len(values))-covered:])
		qs := checkQuantiles(key, qr, phis, qr.Epsilon, uint64(n))
		for i := range qs {
			switch {
			case qr.Count != uint64(covered):
				qs[i].Err = fmt.Errorf("the answer covers %d values, not the last %d", qr.Count, covered)
			case qr.Epsilon > eps:
				qs[i].Err = fmt.Errorf("the answer states ε = %v, above the stream's %v", qr.Epsilon, eps)
			}
		}
		checks = append(checks, qs...)
	}
	return checks, nil
}

// missing is the error of a heavy hitter of count c among n that the
// daemon did not report at support.
func missing(c, n int64, support float64) error {
	return fmt.Errorf("missing: count %d ≥ sN = %v", c, support*float64(n))
}

// verifyItems checks the heavy hitters of the item stream name against
// the items sent: every item of count ≥ sN, named by its string, none of
// count < (s − ε)N, each within its reported bounds. For a hierarchy
// stream it leaves out the items not in its hierarchy, which the daemon
// rejects, and checks its hierarchical heavy hitters too (checkHHH).
func verifyItems(ctx context.Context, client pb.StreamdClient, name string, sent []string, cfg VerifyConfig) (*StreamCheck, error) {
	sc := &StreamCheck{Stream: name, N: int64(len(sent)), Support: cfg.Support, Items: true}
	// A hierarchy stream rejects the items not in its hierarchy and
	// counts the others in canonical form: tree counts their prefixes.
	var tree *hhhexact.Counts
	want := func(st *pb.StatsResponse) int64 {
		h, err := hhh.Parse(st.Hierarchy)
		if st.Hierarchy == "" || err != nil {
			return sc.N
		}
		if tree == nil {
			tree = hhhexact.New(h)
			var kept []string
			for _, x := range sent {
				if p, err := h.Prefixes(x); err == nil {
					_ = tree.Add(x)
					kept = append(kept, p[0])
				}
			}
			sent, sc.N = kept, int64(len(kept))
		}
		return sc.N
	}
	stats, err := waitCount(ctx, client, name, want, cfg)
	if err != nil {
		return failed(ctx, sc, err)
	}
	sc.Epsilon, sc.Rejected = stats.Epsilon, stats.RejectedTotal
	key := exact.CountKeys(sent)
	hr, err := client.HeavyHitters(ctx, &pb.HeavyHittersRequest{Stream: name, Support: cfg.Support})
	if err != nil {
		sc.Err = fmt.Errorf("heavy hitters: %w", err)
		return sc, nil
	}
	reported := make(map[string]bool)
	for _, it := range hr.Items {
		reported[it.Item] = true
		h := HeavyHitterCheck{Item: it.Item, Exact: key.Count(it.Item), Reported: true, CountMin: it.CountMin, CountMax: it.CountMax}
		if !key.Has(it.Item) {
			h.Err = errors.New("not an item sent")
		} else if h.Err = key.CheckFrequency(it.Item, int64(it.CountMin), int64(it.CountMax), sc.Epsilon); h.Err == nil {
			h.Err = key.CheckHeavyHitter(it.Item, cfg.Support, sc.Epsilon)
		}
		sc.HeavyHitters = append(sc.HeavyHitters, h)
	}
	for _, r := range key.HeavyHitters(cfg.Support) {
		if !reported[r.Key] {
			sc.HeavyHitters = append(sc.HeavyHitters, HeavyHitterCheck{Item: r.Key, Exact: r.Count, Err: missing(r.Count, sc.N, cfg.Support)})
		}
	}
	if stats.Hierarchy != "" && tree != nil {
		sc.Hierarchy = stats.Hierarchy
		for _, plain := range []bool{false, true} {
			sc.HHH = append(sc.HHH, checkHHH(ctx, client, name, tree, cfg.Support, plain))
		}
	}
	return sc, nil
}

// checkHHH asks the hierarchy stream name for its hierarchical heavy
// hitters at support over all history, discounted or plain, and checks
// them against tree, the exact counts of the items sent.
func checkHHH(ctx context.Context, client pb.StreamdClient, name string, tree *hhhexact.Counts, support float64, plain bool) HHHCheck {
	c := HHHCheck{Plain: plain}
	resp, err := client.HierarchicalHeavyHitters(ctx, &pb.HierarchicalHeavyHittersRequest{Stream: name, Support: support, Plain: plain})
	if err != nil {
		c.Err = fmt.Errorf("hierarchical heavy hitters: %w", err)
		return c
	}
	c.Hitters, c.Precision = len(resp.Hitters), resp.Precision
	if resp.Count != uint64(tree.N()) {
		c.Err = fmt.Errorf("the answer counts %d items, %d were sent", resp.Count, tree.N())
		return c
	}
	got := hhhexact.Hitters(resp)
	if plain {
		c.Err = tree.CheckHeavy(got, support, resp.Epsilon)
	} else {
		c.Err = tree.CheckDiscounted(got, support, resp.Epsilon, resp.Precision)
	}
	return c
}

// countAt returns the count of the ith value: counts[i], or 1 when every
// value was sent once (counts is nil).
func countAt(counts []int64, i int) int64 {
	if counts == nil {
		return 1
	}
	return counts[i]
}

// WriteTo writes the checks side by side with the exact answers, as
// tables, to w.
func (v *Verification) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	for _, s := range v.Streams {
		writeStream(cw, s)
	}
	if v.OK() {
		fmt.Fprintf(cw, "\nverify: every answer within its bound (%s)\n", plural(len(v.Streams), "stream"))
	} else {
		fmt.Fprintf(cw, "\nverify: %v\n", v.Err())
	}
	return cw.n, cw.err
}

// WriteBrief writes one line for each stream whose answers all hold their
// bounds, its worst rank error against εN and its heavy hitters, and the
// tables of WriteTo for the others: for checks of many streams.
func (v *Verification) WriteBrief(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	for _, s := range v.Streams {
		if !s.OK() || len(s.Quantiles) == 0 {
			writeStream(cw, s)
			continue
		}
		var worst int64
		lastNs := make(map[uint64]bool)
		for _, q := range s.Quantiles {
			if q.LastN > 0 {
				lastNs[q.LastN] = true
				continue
			}
			worst = max(worst, q.RankError, -q.RankError)
		}
		last := ""
		if len(lastNs) > 0 {
			last = fmt.Sprintf(", over the last n values for %s of n", plural(len(lastNs), "size"))
		}
		fmt.Fprintf(cw, "stream %s: N=%d ε=%v: worst rank error %d ≤ εN=%.1f%s, %s at support %v: ok\n",
			s.Stream, s.N, s.Epsilon, worst, s.Epsilon*float64(s.N), last, plural(len(s.HeavyHitters), "heavy hitter"), s.Support)
	}
	if v.OK() {
		fmt.Fprintf(cw, "\nverify: every answer within its bound (%s)\n", plural(len(v.Streams), "stream"))
	} else {
		fmt.Fprintf(cw, "\nverify: %v\n", v.Err())
	}
	return cw.n, cw.err
}

// writeStream writes the check of one stream as tables.
func writeStream(cw io.Writer, s *StreamCheck) {
	if s.Epsilon == 0 && s.Err != nil {
		// The check failed before the daemon answered anything.
		fmt.Fprintf(cw, "\nstream %s: %s sent\nFAIL: %v\n", s.Stream, plural(int(s.N), "value"), s.Err)
		return
	}
	prec := "float64"
	switch {
	case s.Items:
		prec = "item"
	case s.Float32:
		prec = "float32"
	}
	what := prec + " values"
	if s.Pairs {
		what = "pairs of float64"
	}
	fmt.Fprintf(cw, "\nstream %s: N=%d ε=%v εN=%.1f (%s), rejected by the daemon %d\n",
		s.Stream, s.N, s.Epsilon, s.Epsilon*float64(s.N), what, s.Rejected)
	if len(s.Quantiles) > 0 {
		tw := tabwriter.NewWriter(cw, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "over\tφ\texact\tstreamd\trank min\trank max\trank error\t≤ εN\t")
		for _, q := range s.Quantiles {
			over := "all"
			if q.LastN > 0 {
				over = fmt.Sprintf("last %d", q.LastN)
			}
			fmt.Fprintf(tw, "%s\t%v\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", over, q.Phi, f32(q.Exact, s.Float32), f32(q.Got, s.Float32),
				q.RankMin, q.RankMax, q.RankError, okString(q.Err), errString(q.Err))
		}
		tw.Flush()
	}
	if len(s.Sums) > 0 {
		writeSums(cw, s)
	}
	if !s.Pairs && (len(s.HeavyHitters) > 0 || s.Err == nil) {
		fmt.Fprintf(cw, "heavy hitters at support %v (count ≥ %.1f):\n", s.Support, s.Support*float64(s.N))
		tw := tabwriter.NewWriter(cw, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "value\texact count\tcount min\tcount max\tok\t")
		for _, h := range s.HeavyHitters {
			lo, hi := "-", "-"
			if h.Reported {
				lo, hi = strconv.FormatUint(h.CountMin, 10), strconv.FormatUint(h.CountMax, 10)
			}
			label := f32(h.Value, s.Float32)
			if s.Items {
				label = strconv.Quote(h.Item)
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", label, h.Exact, lo, hi, okString(h.Err), errString(h.Err))
		}
		if len(s.HeavyHitters) == 0 {
			fmt.Fprintln(tw, "(none)\t\t\t\t\t")
		}
		tw.Flush()
	}
	for _, h := range s.HHH {
		what := "discounted hierarchical heavy hitters"
		if h.Plain {
			what = "heavy prefixes"
		}
		fmt.Fprintf(cw, "%s (%s) at support %v: %d, precision %.3g: %s %s\n", what, s.Hierarchy, s.Support, h.Hitters, h.Precision, okString(h.Err), errString(h.Err))
	}
	if s.Err != nil {
		fmt.Fprintf(cw, "FAIL: %v\n", s.Err)
	}
}

// plural formats n and noun, adding an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// f32 formats x with the precision of its stream.
func f32(x float64, float32 bool) string {
	if math.IsNaN(x) {
		return "-"
	}
	if float32 {
		return strconv.FormatFloat(x, 'g', -1, 32)
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

func okString(err error) string {
	if err != nil {
		return "FAIL"
	}
	return "ok"
}

// errString returns err's text, set off from the column before it, or ""
// for nil.
func errString(err error) string {
	if err != nil {
		return "  " + err.Error()
	}
	return ""
}

type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}
