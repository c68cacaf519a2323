package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "streamd/api/proto/streamd/v1"
	"streamd/feed"
	"streamd/gksketch"
	"streamd/lossy"
	"streamd/pipeline"
	"streamd/summary"
)

// DefaultTimeout is how long a cluster answer waits for the members.
const DefaultTimeout = time.Second

// ErrItemStream is returned, wrapped, by Gather and Summaries for an item
// stream: each daemon counts items by their fingerprints under its own
// item key, so members' summaries of one item stream do not merge.
var ErrItemStream = errors.New("an item stream has no cluster answers")

// A share is one member's summaries of a stream.
type share struct {
	member *pb.ClusterMember // as it answered: id, address, generation, partitions
	found  bool
	parts  []partShare
}

// A partShare is the summaries of a stream's values from one source of a
// member.
type partShare struct {
	src      feed.Source // feed.Local for the member's local inputs
	cfg      summary.Config
	stats    summary.Stats
	rejected map[string]uint64
	// view is nil when neither quantiles nor counts were asked for. In
	// this daemon's share it is the part's own view, whose compact
	// encoding is cached (summary.View.CompactBinary).
	view *summary.View
}

// localShare returns this daemon's share of stream: its local inputs and
// the partitions self says it consumes. The parts of those partitions are
// taken whether or not they are released: each is the state of its
// partition up to some offset, which is what self claims.
func localShare(p *pipeline.Pipeline, stream string, quantiles, counts bool, self *pb.ClusterMember) share {
	sh := share{member: self}
	s, err := p.Stream(stream)
	if err != nil {
		return sh
	}
	sh.found = true
	claimed := make(map[feed.Source]bool, len(self.GetPartitions()))
	for _, pc := range self.GetPartitions() {
		claimed[FromPB(pc.Partition)] = true
	}
	for _, pv := range s.Parts(counts, func(src feed.Source) bool { return src == feed.Local || claimed[src] }) {
		ps := partShare{src: pv.Source, cfg: pv.Config, stats: pv.Stats, rejected: make(map[string]uint64, len(pv.Rejected))}
		for r, n := range pv.Rejected {
			ps.rejected[string(r)] = n
		}
		if quantiles || counts {
			ps.view = pv.View
		}
		sh.parts = append(sh.parts, ps)
	}
	return sh
}

// Summaries answers a PeerSummaries call for this daemon, self. It fails
// with ErrItemStream for an item stream.
func Summaries(p *pipeline.Pipeline, req *pb.PeerSummariesRequest, self *pb.ClusterMember) (*pb.PeerSummariesResponse, error) {
	if err := checkKind(p, req.Stream); err != nil {
		return nil, err
	}
	sh := localShare(p, req.Stream, req.Quantiles, req.Counts, self)
	resp := &pb.PeerSummariesResponse{Member: self, Found: sh.found}
	for _, ps := range sh.parts {
		part := &pb.PeerPart{
			Epsilon: ps.cfg.Epsilon, WindowSize: uint64(ps.cfg.WindowSize), SlidingWindow: uint64(ps.cfg.SlidingWindow), Float64: ps.cfg.Float64,
			Count: uint64(ps.stats.Count), Sum: ps.stats.Sum, Min: ps.stats.Min, Max: ps.stats.Max,
			SummaryEntries: uint64(ps.stats.Entries), SummaryBytes: uint64(ps.stats.Bytes), Rejected: ps.rejected,
		}
		if ps.src != feed.Local {
			part.Partition = ToPB(ps.src)
		}
		if req.Quantiles {
			part.Quantiles = ps.view.CompactBinary()
		}
		if req.Counts {
			var err error
			if part.Counts, err = ps.view.Counts().MarshalBinary(); err != nil {
				return nil, fmt.Errorf("encode count summary: %w", err)
			}
		}
		resp.Parts = append(resp.Parts, part)
	}
	return resp, nil
}

// decodeShare checks and decodes a member's answer to a PeerSummaries
// call that asked for quantiles and counts as given.
func decodeShare(resp *pb.PeerSummariesResponse, quantiles, counts bool) (share, error) {
	if resp.GetMember().GetId() == "" {
		return share{}, errors.New("answer without a member id")
	}
	sh := share{member: resp.Member, found: resp.Found}
	seen := make(map[feed.Source]bool)
	for _, part := range resp.Parts {
		ps := partShare{
			cfg:      summary.Config{Epsilon: part.Epsilon, WindowSize: int(min(part.WindowSize, summary.MaxWindowSize+1)), SlidingWindow: int64(min(part.SlidingWindow, summary.MaxSlidingWindow+1)), Float64: part.Float64},
			stats:    summary.Stats{Count: int64(min(part.Count, 1<<62)), Sum: part.Sum, Min: part.Min, Max: part.Max, Entries: int(min(part.SummaryEntries, 1<<40)), Bytes: int(min(part.SummaryBytes, 1<<40))},
			rejected: part.Rejected,
		}
		if part.Partition != nil {
			ps.src = FromPB(part.Partition)
			if ps.src == feed.Local {
				return share{}, errors.New("a part of a partition without a topic")
			}
		}
		if seen[ps.src] {
			return share{}, fmt.Errorf("two parts of %s", ps.src)
		}
		seen[ps.src] = true
		if err := ps.cfg.Validate(); err != nil {
			return share{}, fmt.Errorf("part of %s: %w", ps.src, err)
		}
		var q *gksketch.Summary
		var c *lossy.Summary
		if quantiles {
			q = new(gksketch.Summary)
			if err := q.UnmarshalBinary(part.Quantiles); err != nil {
				return share{}, fmt.Errorf("part of %s: %w", ps.src, err)
			}
			if q.Count() != ps.stats.Count || float64(q.MaxError()) > ps.cfg.Epsilon*float64(q.Count())+1 {
				return share{}, fmt.Errorf("part of %s: quantile summary of %d values, error %d, for %d values", ps.src, q.Count(), q.MaxError(), ps.stats.Count)
			}
		}
		if counts {
			c = new(lossy.Summary)
			if err := c.UnmarshalBinary(part.Counts); err != nil {
				return share{}, fmt.Errorf("part of %s: %w", ps.src, err)
			}
			if c.Count() != ps.stats.Count || float64(c.MaxError()) > ps.cfg.Epsilon*float64(c.Count())+1 {
				return share{}, fmt.Errorf("part of %s: count summary of %d values, error %d, for %d values", ps.src, c.Count(), c.MaxError(), ps.stats.Count)
			}
		}
		switch {
		case quantiles:
			ps.view = summary.NewView(ps.cfg.Epsilon, q, c)
		case counts:
			// A view needs a quantile summary; an empty one of the right
			// count is never queried for quantiles.
			ps.view = summary.NewView(ps.cfg.Epsilon, countOnly(ps.stats.Count), c)
		}
		sh.parts = append(sh.parts, ps)
	}
	return sh, nil
}

// countOnly returns a valid quantile summary of n values that knows only
// their count, for views asked only for frequencies.
func countOnly(n int64) *gksketch.Summary {
	if n == 0 {
		return new(gksketch.Summary)
	}
	s, err := gksketch.New(n, []gksketch.Tuple{{Value: 0, RMin: 1, RMax: 1}, {Value: 0, RMin: n, RMax: n}}[:min(n, 2)])
	if err != nil {
		panic(fmt.Sprintf("cluster: count-only summary: %v", err))
	}
	return &s
}

// An Answer is a stream's summaries over a cluster.
type Answer struct {
	// Found reports whether any member that answered has the stream.
	Found bool
	// View is the merge of the counted parts' views, an empty view (with
	// counts if they were asked for) when no part is counted; nil when
	// neither quantiles nor counts were asked for.
	View *summary.View
	// Epsilon is the answer's ε: Σ εᵢ·nᵢ / N over the counted parts, their
	// common ε when they agree.
	Epsilon float64
	// Stats add up the counted parts: Count, Sum, Min, Max, Entries, Bytes.
	Stats summary.Stats
	// Config is that of the first part counted: for window sizes in Stats.
	Config summary.Config
	// Rejected adds up the counted parts' rejects by reason.
	Rejected map[string]uint64
	// Partial is set when the answer misses values: partitions no member
	// that answered consumes (Missing), or a member of the current
	// generation that did not answer.
	Partial bool
	// Missing are the partitions no member that answered consumes.
	Missing []feed.Source
	// Members are the members asked, this daemon first, each with what it
	// contributed.
	Members []*pb.ClusterMember
}

// A reply is what one member asked gave: its share, or an error.
type reply struct {
	announced Member // from the directory; only Addr for a static peer
	static    bool
	share     share
	err       error
}

// merge combines the replies, this daemon's first, over all, every
// partition of the consumed topics (nil without Kafka). Each partition is
// counted once, from the member that answered claiming it in the newest
// generation (ties: the first in id order); each answering member's local
// inputs are counted.
func merge(all []feed.Source, replies []reply) *Answer {
	a := &Answer{Rejected: make(map[string]uint64)}
	// Members that answered, first by id, duplicates (a static peer also
	// announced) dropped.
	seen := make(map[string]bool)
	var answered []int
	maxGen := int64(0)
	for i, r := range replies {
		if r.err != nil {
			continue
		}
		if id := r.share.member.Id; seen[id] {
			replies[i].err = errDuplicate
			continue
		}
		seen[r.share.member.Id] = true
		answered = append(answered, i)
		maxGen = max(maxGen, r.share.member.Generation)
	}
	owner := make(map[feed.Source]int)
	for _, i := range answered {
		m := replies[i].share.member
		for _, pc := range m.Partitions {
			tp := FromPB(pc.Partition)
			if j, ok := owner[tp]; !ok || m.Generation > replies[j].share.member.Generation ||
				(m.Generation == replies[j].share.member.Generation && m.Id < replies[j].share.member.Id) {
				owner[tp] = i
			}
		}
	}

	var counted []partShare
	var views []*summary.View
	for _, i := range answered {
		r := replies[i]
		out := &pb.ClusterMember{Id: r.share.member.Id, Address: r.share.member.Address, Generation: r.share.member.Generation, Answered: true}
		for _, pc := range r.share.member.Partitions {
			if owner[FromPB(pc.Partition)] == i {
				out.Partitions = append(out.Partitions, pc)
			}
		}
		a.Found = a.Found || r.share.found
		for _, ps := range r.share.parts {
			if ps.src != feed.Local {
				if j, ok := owner[ps.src]; !ok || j != i {
					continue
				}
			}
			out.Count += uint64(ps.stats.Count)
			a.Stats.Add(ps.stats)
			for k, n := range ps.rejected {
				a.Rejected[k] += n
			}
			if ps.view != nil {
				views = append(views, ps.view)
			}
			counted = append(counted, ps)
		}
		a.Members = append(a.Members, out)
	}
	if len(counted) > 0 {
		a.Config = counted[0].cfg
	}
	if len(views) > 0 {
		a.View = summary.MergeViews(views)
		a.Epsilon = a.View.Epsilon()
	} else {
		a.Epsilon = mergedEpsilon(counted)
	}

	for _, r := range replies {
		if r.err == nil || errors.Is(r.err, errDuplicate) {
			continue
		}
		a.Members = append(a.Members, &pb.ClusterMember{Id: r.announced.ID, Address: r.announced.Addr, Generation: int64(r.announced.Generation), Error: r.err.Error()})
		// A member of the current generation (or a static peer, whose
		// generation is unknown) holds values no one else answers for: its
		// local inputs at least.
		if r.static || int64(r.announced.Generation) >= maxGen {
			a.Partial = true
		}
	}
	for _, tp := range all {
		if _, ok := owner[tp]; !ok {
			a.Missing = append(a.Missing, tp)
		}
	}
	if len(a.Missing) > 0 {
		a.Partial = true
	}
	return a
}

var errDuplicate = errors.New("answered twice")

// mergedEpsilon returns the ε of the union of parts' values, as
// summary.MergeViews gives it for their views: Σ εᵢ·nᵢ / N, their common ε
// when they agree, the largest when they hold no values; 0 for no parts.
func mergedEpsilon(parts []partShare) float64 {
	var errSum, maxEps float64
	var n int64
	same := true
	for _, ps := range parts {
		errSum += ps.cfg.Epsilon * float64(ps.stats.Count)
		n += ps.stats.Count
		maxEps = max(maxEps, ps.cfg.Epsilon)
		same = same && ps.cfg.Epsilon == parts[0].cfg.Epsilon
	}
	if same || n == 0 {
		return maxEps
	}
	return errSum / float64(n)
}

// A Gatherer answers for a stream over the whole cluster: it asks every
// member for its share, concurrently and within Timeout, and merges them.
type Gatherer struct {
	// Pipeline holds this daemon's streams; required.
	Pipeline *pipeline.Pipeline
	// Self returns this daemon as a member now: id, address, generation
	// and the partitions it consumes; required.
	Self func() *pb.ClusterMember
	// Members returns the other members of the group (a Directory's); nil
	// for none.
	Members func() []Member
	// Static are peer addresses asked besides Members, for clusters
	// without announcements.
	Static []string
	// Peers connects to the members; required when there are any.
	Peers *Peers
	// Partitions returns every partition of the consumed topics, so that
	// an answer can name those it misses; nil without Kafka.
	Partitions func(ctx context.Context) ([]feed.Source, error)
	// Timeout bounds the wait for the members; DefaultTimeout if zero.
	Timeout time.Duration
}

// checkKind returns an error wrapping ErrItemStream if stream is an item
// stream of p.
func checkKind(p *pipeline.Pipeline, stream string) error {
	if s, err := p.Stream(stream); err == nil && s.IsItems() {
		return fmt.Errorf("stream %q: %w", stream, ErrItemStream)
	}
	return nil
}

// Gather returns the cluster's answer for stream, with the quantile and the
// count summaries if asked for. It fails when the list of partitions cannot
// be had, and with ErrItemStream when this daemon or a member that answered
// has stream as an item stream; members that do not answer make the answer
// partial.
func (g *Gatherer) Gather(ctx context.Context, stream string, quantiles, counts bool) (*Answer, error) {
	if err := checkKind(g.Pipeline, stream); err != nil {
		return nil, fmt.Errorf("gather: %w", err)
	}
	timeout := g.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	self := g.Self()
	replies := []reply{{announced: Member{ID: self.Id, Addr: self.Address, Generation: int(self.Generation)}}}
	asked := map[string]bool{self.Address: true}
	if g.Members != nil {
		for _, m := range g.Members() {
			if !asked[m.Addr] && m.ID != self.Id {
				asked[m.Addr] = true
				replies = append(replies, reply{announced: m})
			}
		}
	}
	for _, addr := range g.Static {
		if !asked[addr] {
			asked[addr] = true
			replies = append(replies, reply{announced: Member{Addr: addr}, static: true})
		}
	}
	var all []feed.Source
	var allErr error
	var wg sync.WaitGroup
	if g.Partitions != nil {
		wg.Go(func() { all, allErr = g.Partitions(ctx) })
	}
	req := &pb.PeerSummariesRequest{Stream: stream, Quantiles: quantiles, Counts: counts}
	for i := 1; i < len(replies); i++ {
		wg.Go(func() {
			r := &replies[i]
			c, err := g.Peers.Client(r.announced.Addr)
			if err != nil {
				r.err = err
				return
			}
			resp, err := c.PeerSummaries(ctx, req)
			if err != nil {
				r.err = err
				return
			}
			r.share, r.err = decodeShare(resp, quantiles, counts)
		})
	}
	replies[0].share = localShare(g.Pipeline, stream, quantiles, counts, self)
	if quantiles && !counts {
		// Compressed to each part's error budget, as the members send
		// theirs: a few times fewer tuples to merge, within the same bound.
		for i := range replies[0].share.parts {
			ps := &replies[0].share.parts[i]
			ps.view = summary.NewView(ps.view.Epsilon(), ps.view.Compact(), nil)
		}
	}
	wg.Wait()
	if allErr != nil {
		return nil, fmt.Errorf("gather %q: %w", stream, allErr)
	}
	for _, r := range replies {
		if status.Code(r.err) == codes.FailedPrecondition {
			return nil, fmt.Errorf("gather: member %s: stream %q: %w", r.announced.Addr, stream, ErrItemStream)
		}
	}
	a := merge(all, replies)
	if a.View == nil && (quantiles || counts) {
		a.View = summary.NewView(a.Epsilon, new(gksketch.Summary), new(lossy.Summary))
	}
	return a, nil
}

// ToPB returns tp as the API names a partition.
func ToPB(tp feed.Source) *pb.KafkaPartition {
	return &pb.KafkaPartition{Topic: tp.Topic, Partition: int32(tp.Partition)}
}

// FromPB returns the partition the API names.
func FromPB(p *pb.KafkaPartition) feed.Source {
	return feed.Source{Topic: p.GetTopic(), Partition: int(p.GetPartition())}
}
