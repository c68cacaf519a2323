package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	pb "streamd/api/proto/streamd/v1"
	"streamd/ingest"
	"streamd/internal/exact"
	"streamd/summary"
	"streamd/synth"
)

func push(t *testing.T, c pb.StreamdClient, stream string, vals []float64, durable bool) {
	t.Helper()
	p, err := c.Push(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(vals); i += 10000 {
		if err := p.Send(&pb.PushRequest{Stream: stream, Values: vals[i:min(i+10000, len(vals))], Durable: durable}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.CloseAndRecv(); err != nil {
		t.Fatal(err)
	}
}

// openOn starts a daemon on dir without registering its Close.
func openOn(t *testing.T, dir string, log io.Writer, mod func(*Config)) (*Daemon, pb.StreamdClient) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.GRPCAddr, cfg.TCPAddr, cfg.MetricsAddr = "127.0.0.1:0", "", ""
	cfg.DataDir, cfg.Sorter = dir, "cpu"
	cfg.CheckpointInterval = 0
	cfg.Stream = summary.Config{Epsilon: 0.001, WindowSize: 4096, SlidingWindow: 50000}
	if mod != nil {
		mod(&cfg)
	}
	d := NewDaemon(cfg, slog.New(slog.NewTextHandler(log, nil)))
	if err := d.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	conn := dialGRPC(t, d.GRPCAddr())
	return d, pb.NewStreamdClient(conn)
}

func closeDaemon(t *testing.T, d *Daemon) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestRestartKeepsState: a graceful shutdown checkpoints, and a restart on
// the same data dir answers as before, windows in flight and partial
// windows included.
func TestRestartKeepsState(t *testing.T) {
	dir := t.TempDir()
	x, _ := synth.Generate(synth.Spec{Dist: synth.LogNormal, Seed: 5}, 30001)
	d, c := openOn(t, dir, io.Discard, nil)
	push(t, c, "ln", x, false)
	closeDaemon(t, d)

	d, c = openOn(t, dir, io.Discard, nil)
	defer closeDaemon(t, d)
	waitCount(t, c, "ln", uint64(len(x)))
	for _, lastN := range []uint64{0, 100, 20000} {
		checkAnswers(t, c, "ln", round32(x), 0.001, lastN)
	}
	// More values go on into the restored stream.
	push(t, c, "ln", x[:5000], false)
	checkAnswers(t, c, "ln", round32(append(x, x[:5000]...)), 0.001, 0)
}

// TestCorruptCheckpoint: a truncated newest checkpoint gives a clear log
// line and the previous checkpoint, never a panic.
func TestCorruptCheckpoint(t *testing.T) {
	dir := t.TempDir()
	d, c := openOn(t, dir, io.Discard, nil)
	push(t, c, "a", []float64{1, 2, 3}, true) // durable: checkpoint 1 holds it
	push(t, c, "a", []float64{4, 5}, false)
	closeDaemon(t, d) // checkpoint 2 holds all five
	files, _ := filepath.Glob(filepath.Join(dir, "checkpoint-*.bin"))
	if len(files) != 2 {
		t.Fatalf("checkpoints: %v", files)
	}
	newest := files[len(files)-1]
	raw, _ := os.ReadFile(newest)
	if err := os.WriteFile(newest, raw[:len(raw)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	d, c = openOn(t, dir, &log, nil)
	defer closeDaemon(t, d)
	st := waitCount(t, c, "a", 3)
	if st.Max != 3 {
		t.Errorf("restored %v", st)
	}
	if !strings.Contains(log.String(), "skipping bad checkpoint") {
		t.Errorf("no log line about the bad checkpoint:\n%s", log.String())
	}
}

// TestDurablePush: a durable Push returns only after a checkpoint covers
// its values, so a copy of the data dir taken right then restores them.
func TestDurablePush(t *testing.T) {
	dir := t.TempDir()
	d, c := openOn(t, dir, io.Discard, nil)
	defer closeDaemon(t, d)
	push(t, c, "dur", []float64{9, 8, 7, 6}, true)
	copyDir := t.TempDir()
	files, _ := filepath.Glob(filepath.Join(dir, "checkpoint-*.bin"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		_ = os.WriteFile(filepath.Join(copyDir, filepath.Base(f)), b, 0o644)
	}
	d2, c2 := openOn(t, copyDir, io.Discard, nil)
	defer closeDaemon(t, d2)
	waitCount(t, c2, "dur", 4)
}

// kafkaCluster starts an in-process Kafka-protocol broker, or uses
// KAFKA_BROKERS, with a fresh topic of four partitions.
func kafkaCluster(t *testing.T) (brokers []string, topic string) {
	t.Helper()
	return kafkaTopic(t, 4)
}

// produce writes vals as binary messages of per values, spread over the
// partitions, with bad messages mixed in; it returns the count of bad ones.
func produce(t testing.TB, brokers []string, topic, stream string, vals []float64, per int) int {
	t.Helper()
	msgs, bad := valueMessages(stream, vals, per, true)
	writeMessages(t, brokers, topic, msgs)
	return bad
}

// valueMessages returns vals as binary messages of per values for stream,
// with, if withBad, a malformed message after every tenth; and the count
// of malformed ones.
func valueMessages(stream string, vals []float64, per int, withBad bool) (msgs []kafka.Message, bad int) {
	header := []kafka.Header{{Key: ingest.ContentTypeHeader, Value: []byte(ingest.ContentTypeBinary64)}}
	for i := 0; i < len(vals); i += per {
		buf := make([]byte, 0, 8*per)
		for _, v := range vals[i:min(i+per, len(vals))] {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
		}
		msgs = append(msgs, kafka.Message{Key: []byte(stream), Value: buf, Headers: header})
		if withBad && (i/per)%10 == 3 {
			msgs = append(msgs, kafka.Message{Key: []byte(stream), Value: []byte{1, 2, 3}, Headers: header})
			bad++
		}
	}
	return msgs, bad
}

// writeMessages writes msgs to topic, spread over its partitions.
func writeMessages(t testing.TB, brokers []string, topic string, msgs []kafka.Message) {
	t.Helper()
	w := &kafka.Writer{Addr: kafka.TCP(brokers...), Topic: topic, Balancer: &kafka.RoundRobin{},
		RequiredAcks: kafka.RequireAll, BatchTimeout: 5 * time.Millisecond, BatchSize: 100}
	defer w.Close()
	if err := w.WriteMessages(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}
}

func kafkaConfig(brokers []string, topic, group string) func(*Config) {
	return func(c *Config) {
		c.KafkaBrokers, c.KafkaTopics, c.KafkaGroup = brokers, []string{topic}, group
		c.CheckpointInterval = 200 * time.Millisecond
	}
}

// TestKafka consumes a known stream from four partitions with one daemon,
// then with two daemons in one group: counts are exact, quantiles within ε,
// bad messages counted.
func TestKafka(t *testing.T) {
	if testing.Short() {
		t.Skip("consumer-group joins take seconds")
	}
	brokers, topic := kafkaCluster(t)
	x, _ := synth.Generate(synth.Spec{Dist: synth.Zipf, Order: synth.Sawtooth, Seed: 6}, 200000)
	bad := produce(t, brokers, topic, "k", x, 1000)

	d, c := openOn(t, t.TempDir(), io.Discard, kafkaConfig(brokers, topic, "one"))
	st := waitCount(t, c, "k", uint64(len(x)))
	// A message's rejects are counted just after its good values, so the
	// last ones may follow the count by a moment.
	for end := time.Now().Add(10 * time.Second); st.RejectedTotal < uint64(bad) && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
		next, err := c.Stats(context.Background(), &pb.StatsRequest{Stream: "k"})
		if err != nil {
			t.Fatal(err)
		}
		st = next
	}
	if st.RejectedTotal != uint64(bad) {
		t.Errorf("rejected %v, want %d bad messages", st.Rejected, bad)
	}
	checkAnswers(t, c, "k", round32(x), 0.001, 0)
	closeDaemon(t, d)

	// Two daemons in one group split the partitions: once each holds two
	// of the four, a new stream is produced; each daemon counts the values
	// of its own partitions, and the counts add up to exactly what was
	// produced.
	brokers2, topic2 := kafkaCluster(t)
	d1, c1 := openOn(t, t.TempDir(), io.Discard, kafkaConfig(brokers2, topic2, "two"))
	d2, c2 := openOn(t, t.TempDir(), io.Discard, kafkaConfig(brokers2, topic2, "two"))
	deadline := time.Now().Add(60 * time.Second)
	for d1.kafka.Stats().Partitions != 2 || d2.kafka.Stats().Partitions != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("partitions not split: %d and %d", d1.kafka.Stats().Partitions, d2.kafka.Stats().Partitions)
		}
		time.Sleep(10 * time.Millisecond)
	}
	produce(t, brokers2, topic2, "k", x, 1000)
	var counts [2]uint64
	for {
		var total uint64
		for i, c := range []pb.StreamdClient{c1, c2} {
			if st, err := c.Stats(context.Background(), &pb.StatsRequest{Stream: "k"}); err == nil {
				counts[i] = st.Count
			}
			total += counts[i]
		}
		if total == uint64(len(x)) {
			break
		}
		if total > uint64(len(x)) || time.Now().After(deadline) {
			t.Fatalf("two daemons count %d and %d, want %d in all", counts[0], counts[1], len(x))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("the two daemons counted %d and %d values", counts[0], counts[1])
	if counts[0] == 0 || counts[1] == 0 {
		t.Errorf("one daemon counted everything: %v", counts)
	}
	closeDaemon(t, d1)
	closeDaemon(t, d2)
}

// TestCrashRecovery kills the real daemon with SIGKILL at random moments
// once it has joined its group — at least once in the middle of writing a
// checkpoint — while a producer writes to Kafka, restarts it each time, and
// checks that in the end every value is counted exactly once and every
// quantile is within ε.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts the daemon; consumer-group rejoins take seconds")
	}
	bin := buildStreamd(t)
	brokers, topic := kafkaCluster(t)
	dir := t.TempDir()
	const n = 300000
	x, _ := synth.Generate(synth.Spec{Dist: synth.Normal, Seed: 7}, n)

	var produced sync.WaitGroup
	produced.Go(func() {
		for i := 0; i < n; i += n / 20 {
			produce(t, brokers, topic, "crash", x[i:min(i+n/20, n)], 500)
			time.Sleep(150 * time.Millisecond)
		}
	})

	addrRE := regexp.MustCompile(`grpc=(\S+)`)
	var lastLog *os.File
	// start starts the daemon and returns once it serves gRPC and, with
	// joined, once it consumes in a generation of the group. A daemon is
	// killed only once it has joined: the in-process broker (kfake) starts
	// a member's session timer only when its JoinGroup answer reaches it,
	// so a member killed while its first join waits stays in the group
	// with no session to expire, and if the generation it is put into
	// completes without it, it holds its partitions until the next
	// rebalance, which nothing starts. (A Kafka broker expires it.)
	start := func(joined bool) (*exec.Cmd, string) {
		cmd := exec.Command(bin, "serve", "--grpc-addr", "127.0.0.1:0", "--tcp-addr", "", "--metrics-addr", "",
			"--data-dir", dir, "--sorter", "cpu", "--window-size", "4096", "--sliding-window", "50000",
			"--checkpoint-interval", "30ms", "--kafka-brokers", strings.Join(brokers, ","),
			"--kafka-topic", topic, "--kafka-group", "crash", "--kafka-session-timeout", "6s")
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		log, err := os.CreateTemp(t.TempDir(), "streamd-*.log")
		if err != nil {
			t.Fatal(err)
		}
		lastLog = log
		addr, generation := make(chan string, 1), make(chan struct{}, 1)
		go func() {
			sc := bufio.NewScanner(io.TeeReader(stderr, log))
			for sc.Scan() {
				if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
					select {
					case addr <- m[1]:
					default:
					}
				}
				if strings.Contains(sc.Text(), "kafka generation started") {
					select {
					case generation <- struct{}{}:
					default:
					}
				}
			}
			_, _ = io.Copy(log, stderr)
			close(addr)
		}()
		timeout := time.After(60 * time.Second)
		var a string
		select {
		case a = <-addr:
		case <-timeout:
		}
		if joined && a != "" {
			select {
			case <-generation:
			case <-timeout:
				a = ""
			}
		}
		if a == "" {
			_ = cmd.Process.Signal(syscall.SIGKILL)
			_ = cmd.Wait()
			out, _ := os.ReadFile(log.Name())
			t.Fatalf("daemon not serving in a generation of the group after 60s; its log:\n%s", out)
		}
		return cmd, a
	}
	midCheckpoint := 0
	for kill := range 6 {
		cmd, _ := start(true)
		if kill%2 == 1 {
			// Kill while a checkpoint's temporary file exists.
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				if tmp, _ := filepath.Glob(filepath.Join(dir, ".checkpoint-*.tmp")); len(tmp) > 0 {
					midCheckpoint++
					break
				}
			}
		} else {
			time.Sleep(time.Duration(200+rand.IntN(600)) * time.Millisecond)
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	}
	if midCheckpoint == 0 {
		t.Error("no kill landed in the middle of a checkpoint")
	}
	produced.Wait()

	cmd, addr := start(false)
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	conn := dialGRPC(t, addr)
	c := pb.NewStreamdClient(conn)
	// Killed members hold their partitions until their sessions expire.
	deadline := time.Now().Add(180 * time.Second)
	for {
		st, err := c.Stats(context.Background(), &pb.StatsRequest{Stream: "crash"})
		if err == nil && st.Count == n {
			break
		}
		if err == nil && st.Count > n {
			t.Fatalf("counted %d values, more than the %d produced", st.Count, n)
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(lastLog.Name())
			t.Fatalf("after restarts: %v, %v; want count %d; the daemon's log:\n%s", st, err, n, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	key := exact.New(round32(x))
	q, err := c.Quantiles(context.Background(), &pb.QuantilesRequest{Stream: "crash", Phis: phis})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range q.Quantiles {
		if err := key.CheckQuantile(a.Phi, a.Value, 0.001, int64(a.RankMin), int64(a.RankMax)); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d kills, %d in the middle of a checkpoint", 6, midCheckpoint)
}
