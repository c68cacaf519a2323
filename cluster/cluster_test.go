package cluster

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"google.golang.org/protobuf/proto"

	pb "streamd/api/proto/streamd/v1"
	"streamd/feed"
	"streamd/gpusort"
	"streamd/internal/exact"
	"streamd/pipeline"
	"streamd/summary"
	"streamd/synth"
)

func tp(i int) feed.Source { return feed.Source{Topic: "t", Partition: i} }

// testPipeline returns an open pipeline whose stream "s", of ε 0.01, holds
// for each partition i in parts the values vals[i], and local values.
func testPipeline(t *testing.T, vals map[feed.Source][]float64) *pipeline.Pipeline {
	t.Helper()
	return testPipelineEps(t, 0.01, vals)
}

// testPipelineEps is testPipeline with a stream of ε eps.
func testPipelineEps(t *testing.T, eps float64, vals map[feed.Source][]float64) *pipeline.Pipeline {
	t.Helper()
	p, err := pipeline.New(pipeline.Config{Defaults: summary.Config{Epsilon: eps, WindowSize: 1000}, Sorter: gpusort.NewCPU(1)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := p.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(ctx) })
	for src, v := range vals {
		if src == feed.Local {
			_, err = p.Accept(ctx, &feed.Batch{Stream: "s", Values: slices.Clone(v)})
		} else {
			_, err = p.Accept(ctx, &feed.Batch{Stream: "s", Source: src, Values: slices.Clone(v)})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// member returns a member claiming parts in generation gen.
func member(id string, gen int64, parts ...int) *pb.ClusterMember {
	m := &pb.ClusterMember{Id: id, Address: id + ":1", Generation: gen}
	for _, i := range parts {
		m.Partitions = append(m.Partitions, &pb.PartitionCoverage{Partition: ToPB(tp(i)), NextOffset: 7})
	}
	return m
}

// remote returns the share a peer with pipeline p would send, through the
// encoding.
func remote(t *testing.T, p *pipeline.Pipeline, self *pb.ClusterMember, quantiles, counts bool) share {
	t.Helper()
	resp, err := Summaries(p, &pb.PeerSummariesRequest{Stream: "s", Quantiles: quantiles, Counts: counts}, self)
	if err != nil {
		t.Fatal(err)
	}
	sh, err := decodeShare(resp, quantiles, counts)
	if err != nil {
		t.Fatal(err)
	}
	return sh
}

func gen(seed uint64, n int) []float64 {
	x, _ := synth.Generate(synth.Spec{Dist: synth.Zipf, Seed: seed}, n)
	for i, v := range x {
		x[i] = float64(float32(v))
	}
	return x
}

// TestMerge: each partition is counted once, from the member that claims
// it in the newest generation; every answering member's local values are
// counted; members that do not answer make the answer partial when they
// belong to the current generation, and the partitions no one answers for
// are named.
func TestMerge(t *testing.T) {
	all := []feed.Source{tp(0), tp(1), tp(2), tp(3)}
	v := func(i int) []float64 { return gen(uint64(i+1), 3000+1000*i) }
	// a owns 0 and 1 in generation 5; b owns 2 and 3 in generation 5; c,
	// a zombie of generation 4, still claims 1 with stale values.
	pa := testPipeline(t, map[feed.Source][]float64{tp(0): v(0), tp(1): v(1), feed.Local: v(7)})
	pb1 := testPipeline(t, map[feed.Source][]float64{tp(2): v(2), tp(3): v(3), tp(0): v(9)})
	pc := testPipeline(t, map[feed.Source][]float64{tp(1): v(1)[:100], feed.Local: v(8)})
	ma, mb, mc := member("a", 5, 0, 1), member("b", 5, 2, 3), member("c", 4, 1)

	for _, kind := range []struct{ quantiles, counts bool }{{true, false}, {false, true}, {true, true}} {
		t.Run(fmt.Sprintf("quantiles=%v,counts=%v", kind.quantiles, kind.counts), func(t *testing.T) {
			replies := []reply{
				{share: localShare(pa, "s", kind.quantiles, kind.counts, ma)},
				{announced: Member{ID: "b"}, share: remote(t, pb1, mb, kind.quantiles, kind.counts)},
				{announced: Member{ID: "c"}, share: remote(t, pc, mc, kind.quantiles, kind.counts)},
				{announced: Member{ID: "b", Addr: "static"}, static: true, share: remote(t, pb1, mb, kind.quantiles, kind.counts)},
			}
			a := merge(all, replies)
			if a.Partial || len(a.Missing) != 0 || !a.Found {
				t.Fatalf("partial %v, missing %v", a.Partial, a.Missing)
			}
			// Partition 0 from a (b's stale part of it is not b's claim),
			// partition 1 from a (generation 5 beats c's 4), and every
			// member's local values.
			want := slices.Concat(v(0), v(1), v(2), v(3), v(7), v(8))
			if a.Stats.Count != int64(len(want)) {
				t.Fatalf("count %d, want %d", a.Stats.Count, len(want))
			}
			if len(a.Members) != 3 || len(a.Members[2].Partitions) != 0 || a.Members[2].Count != uint64(len(v(8))) {
				t.Fatalf("members %v", a.Members)
			}
			key := exact.New(want)
			if kind.quantiles {
				for _, phi := range []float64{0, 0.01, 0.5, 0.99, 1} {
					x, lo, hi := a.View.Quantile(phi)
					if err := key.CheckQuantile(phi, x, a.Epsilon, lo, hi); err != nil {
						t.Fatal(err)
					}
				}
			}
			if kind.counts {
				var got []float64
				for _, e := range a.View.HeavyHitters(0.05) {
					got = append(got, e.Value)
				}
				if err := key.CheckHeavyHitters(0.05, a.Epsilon, got); err != nil {
					t.Fatal(err)
				}
			}
		})
	}

	// b does not answer: its partitions are missing and the answer partial.
	replies := []reply{
		{share: localShare(pa, "s", true, false, ma)},
		{announced: Member{ID: "b", Addr: "b:1", Generation: 5}, err: errors.New("connection refused")},
	}
	a := merge(all, replies)
	if !a.Partial || !slices.Equal(a.Missing, []feed.Source{tp(2), tp(3)}) || a.Members[1].Answered || a.Members[1].Error == "" {
		t.Fatalf("b silent: partial %v, missing %v, members %v", a.Partial, a.Missing, a.Members)
	}
	// A member gone before the current generation, whose partitions others
	// took, leaves the answer complete; a static peer that does not answer
	// does not.
	replies = []reply{
		{share: localShare(pa, "s", true, false, member("a", 6, 0, 1))},
		{announced: Member{ID: "b"}, share: remote(t, pb1, member("b", 6, 2, 3), true, false)},
		{announced: Member{ID: "d", Addr: "d:1", Generation: 5}, err: errors.New("connection refused")},
	}
	if a := merge(all, replies); a.Partial {
		t.Fatalf("a departed member made the answer partial: %v", a.Members)
	}
	replies = append(replies, reply{announced: Member{Addr: "e:1"}, static: true, err: errors.New("connection refused")})
	if a := merge(all, replies); !a.Partial || len(a.Missing) != 0 {
		t.Fatalf("a silent static peer: partial %v, missing %v", a.Partial, a.Missing)
	}
}

// TestMergeMixedEpsilon: members whose streams have different ε merge
// into an answer within the count-weighted mean ε, which lies between
// them, for quantiles, ranks, frequencies and heavy hitters alike.
func TestMergeMixedEpsilon(t *testing.T) {
	all := []feed.Source{tp(0), tp(1), tp(2), tp(3)}
	v := func(i int) []float64 { return gen(uint64(i+11), 4000+2000*i) }
	pa := testPipelineEps(t, 0.01, map[feed.Source][]float64{tp(0): v(0), tp(1): v(1), feed.Local: v(4)})
	pb1 := testPipelineEps(t, 0.001, map[feed.Source][]float64{tp(2): v(2), tp(3): v(3), feed.Local: v(5)})
	ma, mb := member("a", 3, 0, 1), member("b", 3, 2, 3)
	want := slices.Concat(v(0), v(1), v(2), v(3), v(4), v(5))
	key := exact.New(want)
	nA := float64(len(v(0)) + len(v(1)) + len(v(4)))
	var probes []float64 // every 997th value, for ranks and frequencies
	for i, x := range key.Sorted() {
		if i%997 == 0 {
			probes = append(probes, x)
		}
	}
	wantEps := (0.01*nA + 0.001*(float64(len(want))-nA)) / float64(len(want))

	statsOnly := merge(all, []reply{
		{share: localShare(pa, "s", false, false, ma)},
		{announced: Member{ID: "b"}, share: remote(t, pb1, mb, false, false)},
	})
	for _, kind := range []struct{ quantiles, counts bool }{{true, false}, {false, true}, {true, true}} {
		t.Run(fmt.Sprintf("quantiles=%v,counts=%v", kind.quantiles, kind.counts), func(t *testing.T) {
			// Each member in turn answers for itself, the other through
			// the encoding.
			for _, replies := range [][]reply{
				{{share: localShare(pa, "s", kind.quantiles, kind.counts, ma)}, {announced: Member{ID: "b"}, share: remote(t, pb1, mb, kind.quantiles, kind.counts)}},
				{{share: localShare(pb1, "s", kind.quantiles, kind.counts, mb)}, {announced: Member{ID: "a"}, share: remote(t, pa, ma, kind.quantiles, kind.counts)}},
			} {
				a := merge(all, replies)
				if a.Partial || a.Stats.Count != int64(len(want)) {
					t.Fatalf("partial %v, count %d, want %d", a.Partial, a.Stats.Count, len(want))
				}
				if !(a.Epsilon > 0.001 && a.Epsilon < 0.01) || math.Abs(a.Epsilon-wantEps) > 1e-12 {
					t.Fatalf("ε %v, want %v, between 0.001 and 0.01", a.Epsilon, wantEps)
				}
				if a.Epsilon != statsOnly.Epsilon {
					t.Fatalf("ε %v, %v for statistics only", a.Epsilon, statsOnly.Epsilon)
				}
				if kind.quantiles {
					for _, phi := range []float64{0, 0.001, 0.01, 0.25, 0.5, 0.75, 0.99, 0.999, 1} {
						x, lo, hi := a.View.Quantile(phi)
						if err := key.CheckQuantile(phi, x, a.Epsilon, lo, hi); err != nil {
							t.Fatal(err)
						}
					}
					for _, x := range probes {
						lo, hi := a.View.Rank(x)
						if err := key.CheckRank(x, lo, hi, a.Epsilon); err != nil {
							t.Fatal(err)
						}
					}
				}
				if kind.counts {
					for _, support := range []float64{0.011, 0.05, 0.2} {
						var got []float64
						for _, e := range a.View.HeavyHitters(support) {
							got = append(got, e.Value)
							if err := key.CheckFrequency(e.Value, e.Count, e.Count+e.Delta, a.Epsilon); err != nil {
								t.Fatal(err)
							}
						}
						if err := key.CheckHeavyHitters(support, a.Epsilon, got); err != nil {
							t.Fatal(err)
						}
					}
					for _, x := range probes {
						lo, hi := a.View.Frequency(x)
						if err := key.CheckFrequency(x, lo, hi, a.Epsilon); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
		})
	}
}

// TestGatherNoPart: a stream that no member that answered has gives,
// when a member does not answer, a partial answer whose view is empty but
// answers every query asked for.
func TestGatherNoPart(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	silent := l.Addr().String()
	l.Close()
	peers := &Peers{}
	defer peers.Close()
	g := &Gatherer{
		Pipeline: testPipeline(t, nil),
		Self:     func() *pb.ClusterMember { return member("a", 1) },
		Static:   []string{silent},
		Peers:    peers,
		Timeout:  5 * time.Second,
	}
	for _, kind := range []struct{ quantiles, counts bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		a, err := g.Gather(context.Background(), "s", kind.quantiles, kind.counts)
		if err != nil {
			t.Fatal(err)
		}
		if a.Found || !a.Partial || a.Stats.Count != 0 {
			t.Fatalf("%+v: found %v, partial %v, count %d", kind, a.Found, a.Partial, a.Stats.Count)
		}
		if !kind.quantiles && !kind.counts {
			if a.View != nil {
				t.Fatalf("a view for stats only")
			}
			continue
		}
		if a.View == nil || a.View.Count() != 0 {
			t.Fatalf("%+v: view %v", kind, a.View)
		}
		if lo, hi := a.View.Rank(1); lo != 0 || hi != 0 {
			t.Fatalf("%+v: rank [%d, %d] in an empty view", kind, lo, hi)
		}
		if kind.counts {
			if lo, hi := a.View.Frequency(1); lo != 0 || hi != 0 {
				t.Fatalf("%+v: frequency [%d, %d] in an empty view", kind, lo, hi)
			}
			if hh := a.View.HeavyHitters(0.5); len(hh) != 0 {
				t.Fatalf("%+v: heavy hitters %v in an empty view", kind, hh)
			}
		}
	}
}

// TestDecodeShare refuses answers that do not add up.
func TestDecodeShare(t *testing.T) {
	p := testPipeline(t, map[feed.Source][]float64{tp(0): gen(1, 5000)})
	good, err := Summaries(p, &pb.PeerSummariesRequest{Stream: "s", Quantiles: true, Counts: true}, member("a", 1, 0))
	if err != nil {
		t.Fatal(err)
	}
	for name, spoil := range map[string]func(r *pb.PeerSummariesResponse){
		"no id":          func(r *pb.PeerSummariesResponse) { r.Member.Id = "" },
		"count":          func(r *pb.PeerSummariesResponse) { r.Parts[1].Count++ },
		"epsilon":        func(r *pb.PeerSummariesResponse) { r.Parts[1].Epsilon = 2 },
		"quantiles":      func(r *pb.PeerSummariesResponse) { r.Parts[1].Quantiles = r.Parts[1].Quantiles[:10] },
		"counts":         func(r *pb.PeerSummariesResponse) { r.Parts[1].Counts = nil },
		"twice":          func(r *pb.PeerSummariesResponse) { r.Parts = append(r.Parts, r.Parts[1]) },
		"no topic":       func(r *pb.PeerSummariesResponse) { r.Parts[1].Partition.Topic = "" },
		"tight epsilon":  func(r *pb.PeerSummariesResponse) { r.Parts[1].Epsilon = 1e-6 },
		"window too big": func(r *pb.PeerSummariesResponse) { r.Parts[1].WindowSize = 1 << 40 },
	} {
		r := cloneResponse(t, good)
		spoil(r)
		if _, err := decodeShare(r, true, true); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := decodeShare(good, true, true); err != nil {
		t.Fatal(err)
	}
}

func cloneResponse(t *testing.T, r *pb.PeerSummariesResponse) *pb.PeerSummariesResponse {
	t.Helper()
	b, err := proto.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	out := new(pb.PeerSummariesResponse)
	if err := proto.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func FuzzDecodeShare(f *testing.F) {
	p, _ := pipeline.New(pipeline.Config{Defaults: summary.Config{Epsilon: 0.1, WindowSize: 8}, Sorter: gpusort.NewCPU(1)})
	ctx := context.Background()
	_, _ = p.Accept(ctx, &feed.Batch{Stream: "s", Source: tp(1), Values: []float64{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5}})
	_, _ = p.Accept(ctx, &feed.Batch{Stream: "s", Values: []float64{2, 7, 1}})
	resp, _ := Summaries(p, &pb.PeerSummariesRequest{Stream: "s", Quantiles: true, Counts: true}, member("a", 1, 1))
	b, _ := proto.Marshal(resp)
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := new(pb.PeerSummariesResponse)
		if proto.Unmarshal(data, r) != nil {
			return
		}
		sh, err := decodeShare(r, true, true)
		if err != nil {
			return
		}
		a := merge([]feed.Source{tp(1)}, []reply{{share: sh}})
		if a.View != nil && a.Stats.Count > 0 {
			a.View.Quantile(0.5)
			a.View.HeavyHitters(0.5)
		}
	})
}

func FuzzDecodeMember(f *testing.F) {
	f.Add([]byte(`{"group":"g","id":"abc","addr":"127.0.0.1:7070","generation":3,"partitions":[{"Topic":"t","Partition":1}]}`))
	f.Add([]byte(`{"group":"g","id":"","addr":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeMember(data)
		if err == nil && (m.ID == "" || m.Group == "" || m.Generation < 0) {
			t.Fatalf("accepted %+v", m)
		}
	})
}

// TestDirectory: members of a group find each other through the
// announcements topic, see each other's generation and partitions, see a
// member that says it is leaving as such, forget a member that withdraws,
// and ignore other groups and bad announcements.
func TestDirectory(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(0))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	brokers := c.ListenAddrs()
	topic := fmt.Sprintf("members-%d", time.Now().UnixNano())
	run := func(group, id string) (*Directory, context.CancelFunc, chan struct{}) {
		d := &Directory{Brokers: brokers, Topic: topic, Self: Member{Group: group, ID: id, Addr: id + ".example:7070"}, AnnounceInterval: 50 * time.Millisecond}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := d.Run(ctx); err != nil {
				t.Error(err)
			}
		}()
		return d, cancel, done
	}
	a, stopA, doneA := run("g", "a")
	defer func() { stopA(); <-doneA }()
	b, stopB, doneB := run("g", "b")
	_, stopC, doneC := run("other", "c")
	defer func() { stopC(); <-doneC }()
	b.Update(4, []feed.Source{tp(2), tp(3)})
	wait := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s: %+v", what, a.Members())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	wait("b's generation 4", func() bool {
		ms := a.Members()
		return len(ms) == 1 && ms[0].ID == "b" && ms[0].Generation == 4 && len(ms[0].Partitions) == 2 && ms[0].Addr == "b.example:7070"
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	a.apply([]byte("x"), []byte("{not json"), time.Now())
	a.apply([]byte("y"), []byte(`{"group":"g","id":"z","addr":"z:1"}`), time.Now()) // key and id differ
	a.apply([]byte("old"), []byte(`{"group":"g","id":"old","addr":"old:1"}`), time.Now().Add(-time.Hour))
	if ms := a.Members(); len(ms) != 1 {
		t.Fatalf("bad or stale announcements listed: %+v", ms)
	}
	if a.Members()[0].Leaving {
		t.Fatal("b listed as leaving before it said so")
	}
	b.Leave()
	wait("b leaving", func() bool {
		ms := a.Members()
		return len(ms) == 1 && ms[0].Leaving && ms[0].Generation == 4 && len(ms[0].Partitions) == 2
	})
	stopB()
	<-doneB
	wait("b's withdrawal", func() bool { return len(a.Members()) == 0 })
}

// BenchmarkSummaries: a PeerSummaries answer for quantiles of a stream
// that does not change sends the cached compact encoding of each part.
func BenchmarkSummaries(b *testing.B) {
	p, err := pipeline.New(pipeline.Config{Defaults: summary.Config{Epsilon: 0.01, WindowSize: 1000}, Sorter: gpusort.NewCPU(1)})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := p.Open(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close(ctx) })
	if _, err := p.Accept(ctx, &feed.Batch{Stream: "s", Source: tp(0), Values: gen(1, 100000)}); err != nil {
		b.Fatal(err)
	}
	if _, err := p.Accept(ctx, &feed.Batch{Stream: "s", Values: gen(2, 100000)}); err != nil {
		b.Fatal(err)
	}
	req := &pb.PeerSummariesRequest{Stream: "s", Quantiles: true}
	self := member("a", 1, 0)
	for b.Loop() {
		if _, err := Summaries(p, req, self); err != nil {
			b.Fatal(err)
		}
	}
}
