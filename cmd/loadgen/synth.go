package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"time"

	"streamd/loadgen"
	"streamd/synth"
)

// defaultPool is the default of --pool: values per stream rendered ahead
// for the tcp-binary target.
const defaultPool = 1 << 22

// synthFlags are the flags of synth and bench-sink.
type synthFlags struct {
	dist, order, stream string
	spec                synth.Spec
	streams             int
	perConn             bool
	pool                int
	items, pairs        bool
	file                string // bench-sink: a recording to replay instead
	send                sendFlags
	// addresses, for --dist ipv4: IPv4 addresses with a flood (--items).
	addresses *synth.AddrSpec
	flood     synth.AddrSpec
}

// distIPv4 is the --dist of IPv4 address items (synth.AddrSpec).
const distIPv4 = "ipv4"

// parseSynth parses the flags of the command name (synth or bench-sink);
// what is the command's description for its usage.
func (m *Main) parseSynth(name, what string, args []string, defaultTarget string) (*synthFlags, error) {
	fs := flag.NewFlagSet("loadgen "+name, flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	f := &synthFlags{}
	fs.StringVar(&f.dist, "dist", "uniform", fmt.Sprintf("value distribution: one of %v; or, with --items, %s: IPv4 addresses whose /8, /16 and /24 bytes are Zipf-distributed (--zipf-s), with a flood from one /24 (--flood-share, --flood-after), for hierarchy streams", synth.Dists, distIPv4))
	fs.Float64Var(&f.flood.FloodShare, "flood-share", 0, "--dist ipv4: the share of the items from the flood's /24 (203.0.113.0/24) once it has started, in [0, 1)")
	fs.Int64Var(&f.flood.FloodAfter, "flood-after", 0, "--dist ipv4: the items of each stream before its flood starts")
	fs.StringVar(&f.order, "order", "random", fmt.Sprintf("arrival order: one of %v", synth.Orders))
	fs.Uint64Var(&f.spec.Seed, "seed", 1, "random seed; stream i gets seed+i")
	fs.Float64Var(&f.spec.S, "zipf-s", 1.2, "Zipf exponent, above 1")
	fs.Uint64Var(&f.spec.Distinct, "zipf-distinct", 1000, "number of Zipf values (0 to n-1)")
	fs.Float64Var(&f.spec.Alpha, "pareto-alpha", 1.5, "Pareto shape")
	fs.IntVar(&f.spec.Period, "period", 1000, "block length of the sawtooth and alternating orders")
	fs.IntVar(&f.streams, "streams", 1, "number of streams, named <stream>.0, <stream>.1, ... when more than one")
	fs.BoolVar(&f.perConn, "stream-per-conn", false, "one stream per connection: --streams set to --conns, so connection i feeds <stream>.i")
	fs.StringVar(&f.stream, "stream", "synth", "stream name, or prefix of the stream names")
	fs.IntVar(&f.pool, "pool", defaultPool, "tcp-binary: values per stream drawn and rendered ahead, then sent over and over (streams in an order other than random are drawn whole)")
	fs.BoolVar(&f.items, "items", false, `send items (strings "item-<n in base 36>" for the values n drawn; Zipf-distributed with --dist zipf) to item streams, batch by batch to any target`)
	fs.BoolVar(&f.pairs, "pairs", false, "send pairs x:y to pair streams: a request's latency in ms (x, lognormal, median 20) and its response's bytes (y, about 2000·x with noise, one in 1000 a huge 1e8 to 2e8); --dist is not used, --order is random, sorted or reverse (by x); batch by batch to any target")
	if name == "bench-sink" {
		fs.StringVar(&f.file, "file", "", "replay this recording (of values or items) in a loop instead of synthetic values")
	}
	f.send.register(fs)
	if defaultTarget != "" {
		fs.Lookup("target").DefValue = defaultTarget
		f.send.target = defaultTarget
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: loadgen %s [flags]\n\n%s\n\nFlags:\n", name, what)
		fs.PrintDefaults()
	}
	if err := m.parseFlags(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return nil, usageErrorf("%s: takes no arguments", name)
	}
	f.spec.Dist, f.spec.Order = synth.Dist(f.dist), synth.Order(f.order)
	if f.dist == distIPv4 {
		if !f.items {
			return nil, usageErrorf("%s: --dist %s sends items: it needs --items", name, distIPv4)
		}
		spec := f.flood
		spec.Seed, spec.S = f.spec.Seed, f.spec.S
		if _, err := synth.NewAddrSource(spec); err != nil {
			return nil, err
		}
		f.addresses = &spec
		f.spec.Dist = synth.Uniform // unused
	} else if _, err := synth.NewSource(f.spec); err != nil {
		return nil, err
	}
	if err := synth.Arrange(nil, f.spec.Order, 0); err != nil {
		return nil, err
	}
	if f.items && f.pairs {
		return nil, usageErrorf("%s: --items or --pairs, not both", name)
	}
	if o := f.spec.Order; f.pairs && o != synth.Random && o != synth.Sorted && o != synth.Reverse {
		return nil, usageErrorf("%s: --order %q with --pairs: want random, sorted or reverse", name, o)
	}
	if f.perConn {
		f.streams = f.send.conns
	}
	if f.streams < 1 {
		return nil, usageErrorf("%s: --streams %d: must be at least 1", name, f.streams)
	}
	if f.pool < 1 {
		return nil, usageErrorf("%s: --pool %d: must be at least 1", name, f.pool)
	}
	return f, nil
}

// names returns the stream names.
func (f *synthFlags) names() []string {
	if f.streams == 1 {
		return []string{f.stream}
	}
	var names []string
	for i := range f.streams {
		names = append(names, f.stream+"."+strconv.Itoa(i))
	}
	return names
}

func (m *Main) synth(ctx context.Context, args []string) error {
	f, err := m.parseSynth("synth", "Send synthetic values into streamd.", args, "")
	if err != nil {
		return err
	}
	if f.send.count == 0 && (f.send.duration == 0 || f.spec.Order != synth.Random) {
		return usageErrorf("synth: --count is required (the random order may instead run for a --duration)")
	}
	return m.sendSynth(ctx, f)
}

// sendSynth sends the synthetic streams of f to its target, prints the
// summary and, with --verify, the verification.
func (m *Main) sendSynth(ctx context.Context, f *synthFlags) error {
	cc, dst, err := m.open(&f.send)
	if err != nil {
		return err
	}
	if cc != nil {
		defer cc.Close()
	}
	m.logger().Info("loadgen sending", "target", f.send.target, "conns", f.send.conns, "streams", f.streams, "rate", f.send.rate, "count", f.send.count, "duration", f.send.duration)
	res, err := m.runSynth(ctx, f, dst)
	return m.finish(ctx, &f.send, cc, res, err)
}

// runSynth sends the synthetic streams of f, or the recording f.file in a
// loop, to dst: to the tcp-binary target as pre-rendered frames, else
// (items, pairs, recordings and the other targets) batch by batch through
// a Runner.
func (m *Main) runSynth(ctx context.Context, f *synthFlags, dst destination) (*loadgen.Result, error) {
	if f.send.target != "tcp-binary" || f.items || f.pairs || f.file != "" {
		var src loadgen.Source = &loadgen.Synth{Spec: f.spec, Count: f.send.count, Streams: f.names(), Items: f.items, Addresses: f.addresses, Pairs: f.pairs}
		if f.file != "" {
			src = &loadgen.Loop{Source: &loadgen.Recording{Path: f.file}}
		}
		return m.run(ctx, &f.send, dst, src)
	}
	payloads, err := m.renderSynth(f)
	if err != nil {
		return nil, err
	}
	return m.runFrames(ctx, &f.send, dst, payloads)
}

// renderSynth draws and renders each stream's payload: its whole share of
// --count when that is at most --pool or the order is not random, else
// --pool values.
func (m *Main) renderSynth(f *synthFlags) ([]*loadgen.Payload, error) {
	start := time.Now()
	names := f.names()
	per := f.send.batch
	if per == 0 && f.send.rate > 0 {
		// Frames of about a hundredth of a second of a connection's
		// values, so that the pace is smooth.
		per = int(min(max(f.send.rate/float64(f.send.conns)/100, 1), loadgen.DefaultFrameValues))
	}
	k := int64(len(names))
	var payloads []*loadgen.Payload
	var values, bytes int
	for i, name := range names {
		spec := f.spec
		spec.Seed += uint64(i)
		n := int64(f.pool)
		if c := f.send.count; c > 0 {
			share := c / k
			if int64(i) < c%k {
				share++
			}
			if share <= n || spec.Order != synth.Random {
				n = share
			}
		}
		if n == 0 {
			continue // more streams than values
		}
		p, err := loadgen.SynthPayload(spec, name, int(n), f.send.float32, per)
		if err != nil {
			return nil, err
		}
		payloads = append(payloads, p)
		values += p.Len()
		bytes += p.Bytes()
	}
	m.logger().Info("loadgen rendered", "streams", len(payloads), "values", values, "bytes", bytes, "elapsed", time.Since(start).Round(time.Millisecond))
	return payloads, nil
}
