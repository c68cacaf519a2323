package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"time"

	"google.golang.org/grpc"

	pb "streamd/api/proto/streamd/v1"
	"streamd/internal/membudget"
	"streamd/loadgen"
	"streamd/synth"
)

// defaultPool is the default of --pool: values per stream rendered ahead
// for the tcp-binary target.
const defaultPool = 1 << 22

// defaultRenderMax is the default of --render-max: the most bytes of a
// run with --stream-sizes rendered ahead for the tcp-binary target.
const defaultRenderMax = 2 << 30

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

	// --stream-sizes: the distribution, and the size of each stream
	// drawn from it; nil without.
	sizesSpec    string
	sizeDist     synth.Sizes
	sizes        []int64
	verifySample int
	verifyBig    int64
	renderMax    int64 // --render-max
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
	fs.StringVar(&f.sizesSpec, "stream-sizes", "", "values per stream drawn from a bounded power law, zipf:MIN:MAX or zipf:MIN:MAX:S (exponent S, default 1: Zipf's law; zipf:5:1000000 gives 90% of the streams 5 to 50 values, one in 200,000 a million, 60.5 on average), with --seed; the streams' batches of --batch values go in a random interleaving, each stream over one connection, and --count is their sum; over tcp-binary the values are drawn and rendered ahead (--render-max), else sent batch by batch as they are drawn")
	fs.IntVar(&f.verifySample, "verify-sample", 1000, "with --stream-sizes, --verify checks this many of the streams smaller than --verify-big, drawn at random, besides the larger ones")
	fs.Int64Var(&f.verifyBig, "verify-big", 0, "with --stream-sizes, --verify checks every stream of at least this many values (default: a tenth of the largest size of --stream-sizes)")
	f.renderMax = defaultRenderMax
	fs.Func("render-max", "tcp-binary with --stream-sizes: the most memory for the frames drawn and rendered ahead, their index (16 bytes a frame) and the values kept for --verify (such as 512MiB); a larger run, or 0, is drawn batch by batch as it is sent (default 2GiB)", func(v string) error {
		n, err := membudget.ParseSize(v)
		f.renderMax = n
		return err
	})
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
	if f.sizesSpec != "" {
		if err := f.drawSizes(name); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// drawSizes checks the flags that go with --stream-sizes and draws the
// size of each stream.
func (f *synthFlags) drawSizes(name string) error {
	z, err := synth.ParseSizes(f.sizesSpec)
	if err != nil {
		return usageErrorf("%s: --stream-sizes: %v", name, err)
	}
	switch {
	case f.send.count != 0:
		return usageErrorf("%s: --count with --stream-sizes: the count is the sum of the sizes", name)
	case f.spec.Order != synth.Random:
		return usageErrorf("%s: --order %q with --stream-sizes: only random", name, f.spec.Order)
	case f.pairs || f.addresses != nil || f.perConn || f.file != "":
		return usageErrorf("%s: --stream-sizes goes with values or --items, without --pairs, --dist %s, --stream-per-conn or --file", name, distIPv4)
	case f.verifySample < 0 || f.verifyBig < 0:
		return usageErrorf("%s: --verify-sample and --verify-big must not be negative", name)
	}
	f.sizeDist = z
	f.sizes = z.Draw(f.spec.Seed, f.streams)
	if f.verifyBig == 0 {
		f.verifyBig = max(z.Max/10, 1)
	}
	return nil
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
	if f.send.count == 0 && f.sizes == nil && (f.send.duration == 0 || f.spec.Order != synth.Random) {
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
	if f.sizes != nil {
		res, err := m.runSized(ctx, f, dst)
		return m.finishSized(ctx, f, cc, res, err)
	}
	res, err := m.runSynth(ctx, f, dst)
	return m.finish(ctx, &f.send, cc, res, err)
}

// runSynth sends the synthetic streams of f, or the recording f.file in a
// loop, to dst: to the tcp-binary target as pre-rendered frames, else
// (items, pairs, recordings and the other targets) batch by batch through
// a Runner.
func (m *Main) runSynth(ctx context.Context, f *synthFlags, dst destination) (*loadgen.Result, error) {
	if f.sizes != nil {
		return m.runSized(ctx, f, dst)
	}
	if f.send.target != "tcp-binary" || f.items || f.pairs || f.file != "" {
		var src loadgen.Source = &loadgen.Synth{Spec: f.spec, Count: f.send.count, Streams: f.names(), Items: f.items, Addresses: f.addresses, Pairs: f.pairs}
		if f.file != "" {
			src = &loadgen.Loop{Source: &loadgen.Recording{Path: f.file}}
		}
		m.logSending(f)
		return m.run(ctx, &f.send, dst, src)
	}
	payloads, err := m.renderSynth(f)
	if err != nil {
		return nil, err
	}
	m.logSending(f)
	return m.runFrames(ctx, &f.send, dst, payloads)
}

// logSending logs that the run of f begins to send, once its frames are
// rendered: the time scripts/bench-lib.sh measures the daemon's intake
// from.
func (m *Main) logSending(f *synthFlags) {
	m.logger().Info("loadgen sending", "target", f.send.target, "conns", f.send.conns, "streams", f.streams, "rate", f.send.rate, "count", f.send.count, "duration", f.send.duration)
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

// runSized sends the streams of --stream-sizes to dst in batches of
// --batch values in a random interleaving, each stream over one of the
// connections: rendered ahead for tcp-binary when the frames take at most
// --render-max (runSizedFrames), else through a Runner. The Result holds
// the streams that --verify checks (sample), and only those.
func (m *Main) runSized(ctx context.Context, f *synthFlags, dst destination) (*loadgen.Result, error) {
	names := f.names()
	var total, big int64
	for _, n := range f.sizes {
		total += n
		if n >= f.verifyBig {
			big++
		}
	}
	m.logger().Info("loadgen stream sizes", "sizes", f.sizeDist.String(), "streams", len(f.sizes), "values", total,
		"largest", slices.Max(f.sizes), "mean", float64(total)/float64(len(f.sizes)), "expected_mean", f.sizeDist.Mean(), "at_least_verify_big", big)
	tracked := make(map[string]bool)
	if f.send.verify {
		for _, i := range f.sample() {
			tracked[names[i]] = true
		}
	}
	batch := f.send.batch
	if batch == 0 {
		batch = loadgen.DefaultBatch
	}
	src := &loadgen.Synth{Spec: f.spec, Streams: names, Sizes: f.sizes, Batch: batch, Items: f.items}
	if f.send.target == "tcp-binary" && !f.items {
		var track func(string) bool
		if len(tracked) > 0 {
			track = func(s string) bool { return tracked[s] }
		}
		bytes := loadgen.SizedFramesBytes(src, f.send.float32, track)
		if bytes <= f.renderMax {
			return m.runSizedFrames(ctx, f, dst, src, track)
		}
		if f.renderMax > 0 {
			m.logger().Info("loadgen drawing as it sends: the frames would take more than --render-max",
				"bytes", membudget.Size(bytes), "render_max", membudget.Size(f.renderMax))
		}
	}
	m.logSending(f)
	r := &loadgen.Runner{
		Source: src,
		Target: dst.target,
		Conns:  f.send.conns, SplitStreams: true, Rate: f.send.rate, Duration: f.send.duration, Batch: batch,
		Keep: f.send.verify, Track: func(s string) bool { return tracked[s] },
	}
	if dst.pp != nil {
		r.Progress, r.ProgressInterval = dst.pp.Print, dst.every
		defer dst.pp.Done()
	}
	return r.Run(ctx)
}

// runSizedFrames draws and renders the streams of src, then sends them
// to the tcp-binary address of f through a FrameRunner, keeping the
// values of the streams that track reports (nil: none) for --verify.
func (m *Main) runSizedFrames(ctx context.Context, f *synthFlags, dst destination, src *loadgen.Synth, track func(string) bool) (*loadgen.Result, error) {
	start := time.Now()
	frames, err := loadgen.RenderSized(src, f.send.conns, f.send.float32, track)
	if err != nil {
		return nil, err
	}
	m.logger().Info("loadgen rendered", "streams", len(src.Streams), "values", frames.Len(), "bytes", frames.Bytes(), "elapsed", time.Since(start).Round(time.Millisecond))
	m.logSending(f)
	r := &loadgen.FrameRunner{
		Addr: f.send.addr, Sized: frames, Token: dst.token, TLS: dst.tls,
		Conns: f.send.conns, Rate: f.send.rate, Duration: f.send.duration,
	}
	if dst.pp != nil {
		r.Progress, r.ProgressInterval = dst.pp.Print, dst.every
		defer dst.pp.Done()
	}
	return r.Run(ctx)
}

// sample returns the indices of the streams that --verify checks with
// --stream-sizes: every one of at least --verify-big values, and
// --verify-sample of the others, drawn with --seed.
func (f *synthFlags) sample() []int {
	return loadgen.SampleStreams(f.sizes, f.verifyBig, f.verifySample, f.spec.Seed)
}

// finishSized ends a run of --stream-sizes: it prints the totals (unless
// the run failed before sending anything) and, with --verify and no
// error, checks the daemon's answers for the sample of streams, a line
// for each (the tables of those that fail).
func (m *Main) finishSized(ctx context.Context, f *synthFlags, cc *grpc.ClientConn, res *loadgen.Result, err error) error {
	if res != nil && (err == nil || res.Sent > 0) {
		fmt.Fprintf(m.Stdout, "streams %s: %d\n", f.sizeDist, len(f.sizes))
		res.WriteTotals(m.Stdout)
	}
	if err != nil || !f.send.verify {
		return err
	}
	v, err := loadgen.Verify(ctx, pb.NewStreamdClient(cc), res, loadgen.VerifyConfig{
		Support: f.send.support, Timeout: f.send.verifyTimeout,
	})
	if err != nil {
		return err
	}
	v.WriteBrief(m.Stdout)
	var big, small int
	for _, s := range f.sizes {
		if s >= f.verifyBig {
			big++
		}
	}
	small = len(v.Streams) - big
	fmt.Fprintf(m.Stdout, "verify: checked %d of %d streams: all %d of at least %d values, and %d of the %d smaller at random\n",
		len(v.Streams), len(f.sizes), big, f.verifyBig, small, len(f.sizes)-big)
	return v.Err()
}
