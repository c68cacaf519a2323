package soak

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

var (
	seedFlag     = flag.String("seed", "", "seed of the soak: a number, or \"random\" (default 1, or $SOAK_SEED)")
	durationFlag = flag.Duration("duration", 0, "how long the soak injects faults (default 45s, 10s with -short, or $SOAK_DURATION)")
	faultsFlag   = flag.String("faults", "", "comma-separated fault kinds to inject (default all, or $SOAK_FAULTS): "+strings.Join(faultKinds, ","))
)

// faultKinds are the faults the driver injects.
var faultKinds = []string{"kill", "term", "corrupt", "full", "double-start"}

// binDir holds the daemon built for the test.
var binDir string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "soak-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const (
	maxLineBytes = 4096
	partitions   = 4
	topic        = "soak"
)

// config is a soak's settings, from flags or the environment.
type config struct {
	seed     uint64
	duration time.Duration
	faults   map[string]bool
}

func soakConfig(t *testing.T) config {
	c := config{seed: 1, duration: 45 * time.Second, faults: map[string]bool{}}
	if testing.Short() {
		c.duration = 10 * time.Second
	}
	s := *seedFlag
	if s == "" {
		s = os.Getenv("SOAK_SEED")
	}
	switch s {
	case "":
	case "random":
		c.seed = rand.Uint64() >> 1
	default:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("seed %q: %v", s, err)
		}
		c.seed = n
	}
	if *durationFlag > 0 {
		c.duration = *durationFlag
	} else if env := os.Getenv("SOAK_DURATION"); env != "" {
		d, err := time.ParseDuration(env)
		if err != nil {
			t.Fatalf("SOAK_DURATION %q: %v", env, err)
		}
		c.duration = d
	}
	f := *faultsFlag
	if f == "" {
		f = os.Getenv("SOAK_FAULTS")
	}
	if f == "" || f == "all" {
		f = strings.Join(faultKinds, ",")
	}
	for _, k := range strings.Split(f, ",") {
		if k = strings.TrimSpace(k); k == "" {
			continue
		}
		if !slices.Contains(faultKinds, k) {
			t.Fatalf("fault kind %q: want some of %v", k, faultKinds)
		}
		c.faults[k] = true
	}
	return c
}

// TestSoak runs the daemon under faults while producers write over every
// way in, and checks what survives against the README (see the package
// documentation).
func TestSoak(t *testing.T) {
	cfg := soakConfig(t)
	t.Logf("soak seed %d, duration %v, faults %v", cfg.seed, cfg.duration, slices.Sorted(mapKeys(cfg.faults)))
	bin := filepath.Join(binDir, "streamd")
	if out, err := exec.Command("go", "build", "-o", bin, "streamd/cmd/streamd").CombinedOutput(); err != nil {
		t.Fatalf("build streamd: %v\n%s", err, out)
	}
	w := newWorld(t, cfg, bin)
	w.run()
	w.report()
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// world is the soak's state: the daemon, the producers, and what the
// checker knows.
type world struct {
	t       *testing.T
	cfg     config
	rng     *rand.Rand // the driver's: the schedule of faults
	bin     string
	root    string // the tmpfs (or plain directory) holding the data dir
	dataDir string
	tmpfs   bool
	brokers []string

	producers []*producer
	kafkas    []*kafkaProducer
	gate      *gate
	stop      chan struct{}
	wg        sync.WaitGroup

	cur      *proc
	epochN   int
	lineages map[string]lineage

	mu         sync.Mutex
	fences     []fence
	fenceFails int
	corrupt    map[uint64]uint64 // checkpoints damaged on purpose: seq → inode

	injected   map[string]int
	skipped    map[string]string
	violations []string
	hard       bool // a violation that leaves the model unusable: stop

	retentionSeen bool // the retention violation is reported once
}

func newWorld(t *testing.T, cfg config, bin string) *world {
	w := &world{t: t, cfg: cfg, bin: bin, rng: rand.New(rand.NewPCG(cfg.seed, 0x50a4)),
		gate: newGate(), stop: make(chan struct{}), lineages: map[string]lineage{},
		corrupt: map[uint64]uint64{}, injected: map[string]int{}, skipped: map[string]string{}}
	w.root = t.TempDir()
	if cfg.faults["full"] {
		if err := mountTmpfs(w.root, 48<<20); err != nil {
			w.skipped["full"] = err.Error()
			t.Logf("soak: the disk-full fault is skipped: %v", err)
		} else {
			w.tmpfs = true
			t.Cleanup(func() {
				if err := unmount(w.root); err != nil {
					t.Error(err)
				}
			})
		}
	}
	w.dataDir = filepath.Join(w.root, "data")
	if err := os.MkdirAll(w.dataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(0), kfake.SeedTopics(partitions, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	w.brokers = kc.ListenAddrs()

	rate := 8000.0
	for i, p := range []struct {
		stream string
		way    way
		rate   float64
	}{
		{"tcp.lines", tcpLines, rate},
		{"tcp.frames", tcpFrames, rate},
		{"tcp.hostile", tcpHostile, rate / 2},
		{"push.plain", push, rate},
		{"push.durable", pushDurable, rate / 4},
		{"soak.fence", fenceWay, 4},
	} {
		w.producers = append(w.producers, &producer{stream: p.stream, way: p.way, q: seq{cfg.seed, i}, rate: p.rate,
			rng: rand.New(rand.NewPCG(cfg.seed, uint64(i))), recs: map[int]*record{}})
	}
	for i, k := range []struct {
		stream string
		binary bool
	}{{"kafka.bin", true}, {"kafka.text", false}} {
		id := 100 + i
		w.kafkas = append(w.kafkas, &kafkaProducer{stream: k.stream, q: seq{cfg.seed, id}, binary: k.binary,
			rate: rate / 2, rng: rand.New(rand.NewPCG(cfg.seed, uint64(id)))})
	}
	return w
}

func (w *world) args() []string {
	return []string{"serve", "--grpc-addr", "127.0.0.1:0", "--tcp-addr", "127.0.0.1:0", "--metrics-addr", "",
		"--data-dir", w.dataDir, "--sorter", "cpu", "--epsilon", "0.001", "--window-size", "4096",
		"--sliding-window", "20000", "--checkpoint-interval", "300ms", "--max-line-bytes", strconv.Itoa(maxLineBytes),
		"--max-memory", "1GiB", "--shutdown-timeout", "10s", "--queue", "4",
		"--kafka-brokers", strings.Join(w.brokers, ","), "--kafka-topic", topic, "--kafka-group", "soak",
		"--kafka-session-timeout", "6s"}
}

// violate records a broken invariant; hard ones stop the soak, since the
// checker's model no longer holds.
func (w *world) violate(hard bool, format string, args ...any) {
	msg := fmt.Sprintf("seed %d, epoch %d: ", w.cfg.seed, w.epochN) + fmt.Sprintf(format, args...)
	w.violations = append(w.violations, msg)
	w.t.Errorf("VIOLATION %s\nreplay: go test ./soak -run TestSoak -count 1 -v -args -seed %d -duration %v -faults %s",
		msg, w.cfg.seed, w.cfg.duration, strings.Join(slices.Sorted(mapKeys(w.cfg.faults)), ","))
	if hard {
		w.hard = true
	}
}

// fatal stops the soak on a failure of the soak itself (not of the
// daemon), with the seed.
func (w *world) fatal(err error) {
	w.t.Helper()
	w.t.Fatalf("seed %d, epoch %d: %v", w.cfg.seed, w.epochN, err)
}

// logf logs a step of the schedule.
func (w *world) logf(format string, args ...any) {
	w.t.Logf("epoch %d: %s", w.epochN, fmt.Sprintf(format, args...))
}

func (w *world) fenceFailed(int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fenceFails++
}

// addFence keeps f if its epoch is still the open one.
func (w *world) addFence(f fence) {
	if !w.gate.isOpen(f.epoch) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fences = append(w.fences, f)
}

// newestValid returns the newest checkpoint of files not damaged on
// purpose, 0 if none.
func (w *world) newestValid(files []ckptFile) uint64 {
	for _, f := range w.valid(files) {
		return f.seq
	}
	return 0
}

// valid returns the files not damaged on purpose, newest first.
func (w *world) valid(files []ckptFile) []ckptFile {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []ckptFile
	for _, f := range files {
		if ino, ok := w.corrupt[f.seq]; ok && ino == f.ino {
			continue
		}
		out = append(out, f)
	}
	return out
}

// lowerBound returns the most of stream that a checkpoint at least as new
// as seq holds, by the fences, and when that fence was taken.
func (w *world) lowerBound(stream string, seq uint64) (int64, fence) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var best int64
	var at fence
	for _, f := range w.fences {
		if f.seq <= seq && f.counts[stream] > best {
			best, at = f.counts[stream], f
		}
	}
	return best, at
}

// wait lets the daemon run for d.
func (w *world) wait(d time.Duration) { time.Sleep(d) }

// uptime is how long the daemon runs between faults.
func (w *world) uptime() time.Duration {
	if testing.Short() {
		return time.Duration(300+w.rng.IntN(1200)) * time.Millisecond
	}
	return time.Duration(500+w.rng.IntN(3500)) * time.Millisecond
}

// ending is how one life of the daemon ended.
type ending struct {
	kind      string // "kill" or "term"
	epoch     int
	code      int              // exit code after a SIGTERM
	pre       map[string]int64 // counts read before a SIGTERM
	full      bool             // the disk was full when it ended
	damaged   uint64           // the checkpoint damaged while down, 0 if none
	expectSeq uint64           // the newest valid checkpoint on disk at restart
	files     []ckptFile
	logTail   string
}

func (w *world) run() {
	ctx := context.Background()
	for _, p := range w.producers {
		w.wg.Go(func() { p.run(w.gate, w.stop, w) })
	}
	for _, k := range w.kafkas {
		w.wg.Go(func() { k.run(w.brokers, topic, w.stop) })
	}
	defer func() {
		select {
		case <-w.stop:
		default:
			close(w.stop)
		}
		w.gate.set(nil)
		if w.cur != nil {
			w.cur.kill()
		}
		w.wg.Wait()
	}()
	w.start(ctx, nil)
	deadline := time.Now().Add(w.cfg.duration)
	for !w.hard && time.Now().Before(deadline) {
		w.checkProducers()
		w.wait(w.uptime())
		full := false
		r := w.rng.Float64()
		_, err := os.Stat(filepath.Join(w.root, "filler"))
		switch {
		case err == nil:
			// Restarted with the disk full: checkpoints failed meanwhile,
			// and a damaged checkpoint may be the newest file. Free it,
			// watch retention as checkpoints resume, and end this life
			// soon after, with a kill.
			w.freeAndResume()
			r = 1
		case r < 0.3 && w.cfg.faults["full"] && w.tmpfs:
			full = w.fullEpisode()
		case r < 0.4 && w.cfg.faults["double-start"]:
			w.doubleStart(ctx)
		}
		if w.hard {
			break
		}
		var kinds []string
		for _, k := range []string{"kill", "term"} {
			if w.cfg.faults[k] {
				kinds = append(kinds, k)
			}
		}
		if len(kinds) == 0 {
			if full {
				w.free()
			}
			continue
		}
		kind := kinds[w.rng.IntN(len(kinds))]
		if err == nil && w.cfg.faults["kill"] {
			kind = "kill"
		}
		end := w.end(ctx, kind, full)
		if full {
			w.free()
		}
		w.whileDown(end)
		w.start(ctx, end)
	}
	if !w.hard {
		w.finish(ctx)
	}
}

// start starts the daemon on the data dir, checks what it restored after
// end (nil at the first start), and opens the gate to producers.
func (w *world) start(ctx context.Context, end *ending) {
	w.epochN++
	p, err := startProc(ctx, w.bin, w.args())
	if _, full := os.Stat(filepath.Join(w.root, "filler")); err != nil && full == nil {
		w.logf("the daemon did not start with the disk full (%v); freeing it. Its log:\n%s", err, p.log.tail(5))
		w.free()
		p, err = startProc(ctx, w.bin, w.args())
	}
	if err != nil {
		w.violate(true, "the daemon did not start: %v\nits log:\n%s", err, p.log.tail(40))
		return
	}
	w.cur = p
	if end != nil {
		w.checkRestart(ctx, end)
	} else {
		for _, s := range w.producers {
			w.lineages[s.stream] = nil
		}
	}
	if w.hard {
		return
	}
	w.gate.set(&epoch{n: w.epochN, grpc: p.grpc, tcp: p.tcp})
	// Faults wait until the daemon consumes every partition: kfake keeps
	// a member killed before its first join in the group for good.
	if err := p.waitJoined(ctx, partitions, 90*time.Second); err != nil {
		w.violate(true, "kafka: %v\nthe daemon's log:\n%s", err, p.log.tail(40))
	}
}

// end closes the gate and ends the daemon's life with kind.
func (w *world) end(ctx context.Context, kind string, full bool) *ending {
	w.gate.set(nil)
	end := &ending{kind: kind, epoch: w.epochN, full: full}
	w.injected[kind]++
	switch kind {
	case "kill":
		w.logf("SIGKILL")
		w.cur.kill()
	case "term":
		end.pre = map[string]int64{}
		for _, s := range w.producers {
			n, err := count(ctx, w.cur.client, s.stream)
			if err != nil {
				end.pre = nil
				break
			}
			end.pre[s.stream] = n
		}
		var before uint64
		if full {
			w.topUp()
			files, _ := listCheckpoints(w.dataDir)
			before = w.newestValid(files)
		}
		w.logf("SIGTERM (disk full: %v)", full)
		exited, code := w.cur.term(30 * time.Second)
		if !exited {
			w.violate(false, "SIGTERM: the daemon did not exit within 30s (--shutdown-timeout 10s); killed. Its log:\n%s", w.cur.log.tail(30))
			w.cur.kill()
			end.kind = "kill"
			break
		}
		end.code = code
		w.logf("the daemon exited with %d", code)
		switch {
		case code != 0 && !full:
			w.violate(false, "SIGTERM: the daemon exited with %d though nothing was wrong; its log:\n%s", code, w.cur.log.tail(20))
		case code == 0 && full:
			files, _ := listCheckpoints(w.dataDir)
			if after := w.newestValid(files); after == before {
				w.violate(false, "SIGTERM with the data dir full: the daemon wrote no final checkpoint (the newest is still %d) yet exited 0, saying nothing of it. Its log:\n%s",
					after, w.cur.log.tail(20))
			}
		}
	}
	end.logTail = w.cur.log.tail(25)
	return end
}

// whileDown damages the newest checkpoint, or fills the disk, at random,
// and works out which checkpoint the daemon must restore.
func (w *world) whileDown(end *ending) {
	files, err := listCheckpoints(w.dataDir)
	if err != nil {
		w.fatal(err)
	}
	// Damage more often while damaged checkpoints are left on disk, and
	// restart with the disk full more often after damage: together they
	// leave damaged checkpoints among the newest.
	pDamage := 0.4
	if w.damagedLeft(files) {
		pDamage = 0.8
	}
	if w.cfg.faults["corrupt"] && w.rng.Float64() < pDamage {
		if valid := w.valid(files); len(valid) >= 2 {
			n := valid[0].seq
			what, err := damage(ckptPath(w.dataDir, n), w.rng)
			if err != nil {
				w.fatal(err)
			}
			w.mu.Lock()
			w.corrupt[n] = valid[0].ino
			w.mu.Unlock()
			end.damaged = n
			w.injected["corrupt"]++
			w.logf("damaged checkpoint %d: %s", n, what)
			files, _ = listCheckpoints(w.dataDir)
		}
	}
	end.files = files
	end.expectSeq = w.newestValid(files)
	pFull := 0.1
	if end.damaged > 0 {
		pFull = 0.5
	}
	if w.tmpfs && w.cfg.faults["full"] && w.rng.Float64() < pFull {
		w.injected["full (at restart)"]++
		w.logf("restarting with the disk full")
		if err := fill(filepath.Join(w.root, "filler")); err != nil {
			w.fatal(err)
		}
	}
}

// damagedLeft reports whether files include a checkpoint damaged on
// purpose.
func (w *world) damagedLeft(files []ckptFile) bool {
	return len(w.valid(files)) < len(files)
}

func seqs(files []ckptFile) []uint64 {
	var out []uint64
	for _, f := range files {
		out = append(out, f.seq)
	}
	return out
}

// checkRestart checks the restarted daemon against what it must hold after
// end, then updates the lineages.
func (w *world) checkRestart(ctx context.Context, end *ending) {
	p := w.cur
	got := p.restoredSeq()
	how := end.kind
	if end.damaged > 0 {
		how += fmt.Sprintf(" and damaged checkpoint %d", end.damaged)
	}
	if got != int64(end.expectSeq) {
		w.violate(false, "after %s: the daemon restored checkpoint %d, but the newest undamaged checkpoint on disk is %d (files %v)\nits log:\n%s",
			how, got, end.expectSeq, seqs(end.files), p.log.tail(20))
	}
	restored := uint64(max(got, 0))
	counts := map[string]int64{}
	for _, s := range w.producers {
		c, err := count(ctx, p.client, s.stream)
		if err != nil {
			w.violate(true, "stats after restart: %v", err)
			return
		}
		counts[s.stream] = c
		lin := w.lineages[s.stream]
		base := lin.n()
		rec := s.rec(end.epoch)
		upper := base
		if rec != nil {
			upper += rec.sent - rec.start
		}
		if c > upper {
			w.violate(true, "after %s: %s holds %d values, more than the %d it could hold (lineage %v, then %d sent since) — duplicates or values never sent",
				how, s.stream, c, upper, lin, upper-base)
			return
		}
		lower, f := w.lowerBound(s.stream, restored)
		why := fmt.Sprintf("it counted %d at %s, and a durable Push then returned, so checkpoint %d or older held them (restored %d)",
			lower, f.at.Format("15:04:05.000"), f.seq, restored)
		if rec != nil && end.damaged == 0 && (s.way == pushDurable || s.way == fenceWay) {
			if l := base + rec.acked - rec.start; l > lower {
				lower, why = l, fmt.Sprintf("every durable Push up to position %d was acknowledged", rec.acked)
			}
		}
		if end.kind == "term" && end.code == 0 && end.damaged == 0 {
			if end.pre != nil && end.pre[s.stream] > lower {
				lower, why = end.pre[s.stream], "it counted them before SIGTERM, and the daemon exited 0"
			}
			if rec != nil && s.way != tcpLines && s.way != tcpFrames && s.way != tcpHostile {
				if l := base + rec.acked - rec.start; l > lower {
					lower, why = l, fmt.Sprintf("every Push up to position %d was acknowledged before the daemon exited 0", rec.acked)
				}
			}
		}
		if c < lower {
			w.violate(false, "after %s: %s (%s) lost values: it holds %d, want at least %d: %s\nthe old daemon's log:\n%s",
				how, s.stream, wayName(s.way), c, lower, why, end.logTail)
		}
		if rec != nil && c >= base {
			lin = lin.add(rec.start, c-base)
		} else {
			lin = lin.truncate(c)
		}
		w.lineages[s.stream] = lin
	}
	for _, k := range w.kafkas {
		c, err := count(ctx, p.client, k.stream)
		if err != nil {
			w.violate(true, "stats after restart: %v", err)
			return
		}
		if n := k.n(); c > n {
			w.violate(true, "after %s: kafka stream %s counts %d values, more than the %d produced", how, k.stream, c, n)
			return
		}
	}
	w.mu.Lock()
	var keep []fence
	for _, f := range w.fences {
		if f.seq <= restored {
			keep = append(keep, f)
		}
	}
	w.fences = append(keep, fence{seq: restored, counts: counts, epoch: w.epochN, at: time.Now()})
	w.mu.Unlock()
	w.checkStreams(ctx, "after "+how)
	w.logf("restarted after %s: restored checkpoint %d; counts %v", how, got, counts)
}

// checkStreams checks every answer of the TCP and Push streams against
// their lineages.
func (w *world) checkStreams(ctx context.Context, when string) {
	for _, s := range w.producers {
		lin := w.lineages[s.stream]
		if lin.n() == 0 {
			continue
		}
		if err := checkAnswers(ctx, w.cur.client, s.stream, s.q.key(lin), 0.001, 0); err != nil {
			w.violate(true, "%s: %s (%s), lineage %v: %v", when, s.stream, wayName(s.way), lin, err)
			return
		}
		const lastN = 5000
		if err := checkAnswers(ctx, w.cur.client, s.stream, s.q.key(lin.suffix(lastN)), 0.001, min(lastN, uint64(lin.n()))); err != nil {
			w.violate(true, "%s: %s (%s), lineage %v: %v", when, s.stream, wayName(s.way), lin, err)
			return
		}
	}
}

func wayName(w way) string {
	return [...]string{"TCP lines", "TCP frames", "TCP lines with bad input", "gRPC Push", "durable gRPC Push", "durable gRPC Push"}[w]
}

// fullEpisode fills the data dir while the daemon runs. It then either
// frees it and checks that checkpoints resume, or leaves it full for the
// fault that ends the daemon's life (it reports true).
func (w *world) fullEpisode() bool {
	w.injected["full"]++
	w.mu.Lock()
	fails := w.fenceFails
	w.mu.Unlock()
	w.logf("filling the data dir")
	if err := fill(filepath.Join(w.root, "filler")); err != nil {
		w.fatal(err)
	}
	failed := regexp.MustCompile(`checkpoint failed`)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		w.mu.Lock()
		f := w.fenceFails
		w.mu.Unlock()
		if f > fails || failed.MatchString(w.cur.log.String()) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if w.rng.Float64() < 0.35 {
		w.topUp()
		return true
	}
	w.wait(time.Duration(w.rng.IntN(1500)) * time.Millisecond)
	w.freeAndResume()
	return false
}

// freeAndResume frees the full disk and waits until a durable Push
// succeeds again: checkpoints resume.
func (w *world) freeAndResume() {
	w.mu.Lock()
	nFences := len(w.fences)
	w.mu.Unlock()
	w.free()
	freed := time.Now()
	deadline := time.Now().Add(15 * time.Second)
	var resumed time.Time
	var valid []ckptFile
	for {
		valid = w.checkRetention(valid)
		w.mu.Lock()
		n := len(w.fences)
		w.mu.Unlock()
		if n > nFences && resumed.IsZero() {
			resumed = time.Now()
			w.logf("checkpoints resumed %v after the disk was freed", resumed.Sub(freed).Round(time.Millisecond))
		}
		if !resumed.IsZero() && time.Since(resumed) > 500*time.Millisecond {
			return
		}
		if time.Now().After(deadline) {
			w.violate(false, "no durable Push succeeded within 15s after the full data dir was freed: checkpoints did not resume\nthe daemon's log:\n%s", w.cur.log.tail(20))
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// checkRetention lists the data dir, and compares with the listing
// before (prev): when the daemon removes a valid checkpoint older than the
// newest one and leaves a single valid checkpoint beside damaged ones, a
// restart after damage to that one loses everything. It returns this
// listing's valid checkpoints.
func (w *world) checkRetention(prev []ckptFile) []ckptFile {
	files, err := listCheckpoints(w.dataDir)
	if err != nil {
		return prev
	}
	valid := w.valid(files)
	if len(valid) == 1 && len(files) > len(valid) && !w.retentionSeen {
		for _, f := range prev {
			if f.seq < valid[0].seq && !slices.Contains(files, f) {
				w.retentionSeen = true
				w.violate(false, "retention: the daemon removed valid checkpoint %d and kept damaged ones: the data dir holds %v, of which only %d is valid "+
					"(the others were damaged on purpose), so if %d is damaged a restart loses everything", f.seq, seqs(files), valid[0].seq, valid[0].seq)
				break
			}
		}
	}
	return valid
}

// topUp fills the disk again until no checkpoint was being written
// meanwhile: a temporary checkpoint file removed after a failed write
// frees its space.
func (w *world) topUp() {
	for range 100 {
		tmp, _ := filepath.Glob(filepath.Join(w.dataDir, ".checkpoint-*.tmp"))
		if err := fill(filepath.Join(w.root, "filler")); err != nil {
			w.fatal(err)
		}
		tmp2, _ := filepath.Glob(filepath.Join(w.dataDir, ".checkpoint-*.tmp"))
		if len(tmp) == 0 && len(tmp2) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (w *world) free() {
	if err := os.Remove(filepath.Join(w.root, "filler")); err != nil && !os.IsNotExist(err) {
		w.fatal(err)
	}
}

// doubleStart starts a second daemon on the data dir in use: it must
// refuse to start.
func (w *world) doubleStart(ctx context.Context) {
	w.injected["double-start"]++
	args := []string{"serve", "--grpc-addr", "127.0.0.1:0", "--tcp-addr", "127.0.0.1:0", "--metrics-addr", "",
		"--data-dir", w.dataDir, "--sorter", "cpu", "--checkpoint-interval", "0", "--max-memory", "256MiB"}
	p, err := startProc(ctx, w.bin, args)
	if err == nil {
		w.violate(false, "a second daemon started on the data dir %s while the first one runs on it, and served (grpc %s): the data dir has no lock", w.dataDir, p.grpc)
		p.kill()
		return
	}
	w.logf("a second daemon on the same data dir did not start: %v: %s", err, strings.TrimSpace(p.log.tail(1)))
}

// finish stops the producers, waits for every value sent to arrive, and
// checks every stream exactly; then stops the daemon gracefully, restarts
// it, and checks that nothing was lost.
func (w *world) finish(ctx context.Context) {
	if _, err := os.Stat(filepath.Join(w.root, "filler")); err == nil {
		w.freeAndResume()
	}
	close(w.stop)
	w.wg.Wait()
	w.logf("producers stopped; final checks")
	for _, s := range w.producers {
		rec := s.rec(w.epochN)
		lin := w.lineages[s.stream]
		base := lin.n()
		if rec == nil {
			rec = &record{}
		}
		lo, hi := base+rec.acked-rec.start, base+rec.sent-rec.start
		if s.way == tcpLines || s.way == tcpFrames || s.way == tcpHostile {
			lo = hi // the connection closed cleanly: every value arrives
		}
		c, err := w.waitCount(ctx, s.stream, lo, 30*time.Second)
		if err != nil {
			w.violate(true, "final: %v", err)
			return
		}
		if c < lo || c > hi {
			w.violate(true, "final: %s (%s) holds %d values with no fault pending, want %d (lineage %v, then [%d,%d) sent, [%d,%d) acknowledged)",
				s.stream, wayName(s.way), c, lo, lin, rec.start, rec.sent, rec.start, rec.acked)
			return
		}
		w.lineages[s.stream] = lin.add(rec.start, c-base)
		s.forget(w.epochN)
	}
	w.checkStreams(ctx, "final")
	for _, k := range w.kafkas {
		if k.err != nil {
			w.fatal(k.err)
		}
		n := k.n()
		c, err := w.waitCount(ctx, k.stream, n, 120*time.Second)
		if err != nil {
			w.violate(true, "final: %v", err)
			return
		}
		if c != n {
			w.violate(true, "final: kafka stream %s counts %d values, want exactly the %d produced (exactly once)\nthe daemon's log:\n%s",
				k.stream, c, n, w.cur.log.tail(20))
			continue
		}
		if err := checkAnswers(ctx, w.cur.client, k.stream, k.q.key(lineage{{0, n}}), 0.001, 0); err != nil {
			w.violate(true, "final: kafka stream %s, all %d values produced: %v", k.stream, n, err)
		}
	}
	if w.checkProducers(); w.hard {
		return
	}
	// A last graceful restart keeps everything.
	end := w.end(ctx, "term", false)
	files, _ := listCheckpoints(w.dataDir)
	end.expectSeq, end.files = w.newestValid(files), files
	w.start(ctx, end)
	for _, k := range w.kafkas {
		if c, err := w.waitCount(ctx, k.stream, k.n(), 120*time.Second); err != nil || c != k.n() {
			w.violate(false, "after the final SIGTERM and restart: kafka stream %s counts %d (%v), want %d", k.stream, c, err, k.n())
		}
	}
	w.gate.set(nil)
	if exited, code := w.cur.term(30 * time.Second); !exited || code != 0 {
		w.violate(false, "the final SIGTERM: exited %v, code %d; log:\n%s", exited, code, w.cur.log.tail(20))
	}
	w.cur = nil
}

// checkProducers turns the producers' errors into violations: hard ones,
// since a producer that failed with no fault leaves its stream unknown.
func (w *world) checkProducers() {
	for _, s := range w.producers {
		s.mu.Lock()
		errs := s.errs
		s.errs = nil
		s.mu.Unlock()
		for _, e := range errs {
			w.violate(true, "%s", e)
		}
	}
}

// waitCount polls the stream's count until it is at least lo, or timeout
// passes; it returns the last count.
func (w *world) waitCount(ctx context.Context, stream string, lo int64, timeout time.Duration) (int64, error) {
	deadline := time.Now().Add(timeout)
	for {
		c, err := count(ctx, w.cur.client, stream)
		if err != nil {
			return 0, err
		}
		if c >= lo || time.Now().After(deadline) {
			return c, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// report prints the faults injected and the violations found.
func (w *world) report() {
	var b strings.Builder
	fmt.Fprintf(&b, "soak seed %d, %v, %d lives of the daemon; faults injected:", w.cfg.seed, w.cfg.duration, w.epochN)
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range w.injected {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Fprintf(&b, " %s %d,", k, w.injected[k])
	}
	for k, why := range w.skipped {
		fmt.Fprintf(&b, "\nskipped fault %s: %s", k, why)
	}
	for _, s := range w.producers {
		fmt.Fprintf(&b, "\n  %-13s %-26s holds %d values: %v", s.stream, wayName(s.way), w.lineages[s.stream].n(), w.lineages[s.stream])
	}
	for _, k := range w.kafkas {
		fmt.Fprintf(&b, "\n  %-13s %-26s %d values produced", k.stream, "Kafka", k.n())
	}
	fmt.Fprintf(&b, "\n%d violations", len(w.violations))
	w.t.Log(b.String())
}
