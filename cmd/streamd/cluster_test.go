package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	pb "streamd/api/proto/streamd/v1"
	"streamd/ingest"
	"streamd/internal/exact"
	"streamd/internal/tlsconf"
	"streamd/synth"
)

// clusterPartitions is the number of partitions of the cluster tests' topic.
const clusterPartitions = 6

// kafkaTopic starts an in-process broker, or uses KAFKA_BROKERS, with a
// fresh topic of n partitions.
func kafkaTopic(t testing.TB, n int) (brokers []string, topic string) {
	t.Helper()
	topic = fmt.Sprintf("values-%d", rand.Int64())
	if env := os.Getenv("KAFKA_BROKERS"); env != "" {
		brokers = strings.Split(env, ",")
		conn, err := kafka.Dial("tcp", brokers[0])
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if err := conn.CreateTopics(kafka.TopicConfig{Topic: topic, NumPartitions: n, ReplicationFactor: 1}); err != nil {
			t.Fatal(err)
		}
		return brokers, topic
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(0), kfake.SeedTopics(int32(n), topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs(), topic
}

// clusterConfig configures a daemon of group on topic.
func clusterConfig(brokers []string, topic, group string) func(*Config) {
	return func(c *Config) {
		kafkaConfig(brokers, topic, group)(c)
		c.KafkaSessionTimeout = 6 * time.Second
		c.ClusterTimeout = 2 * time.Second
	}
}

// clusterStats asks c for the CLUSTER stats of stream; nil while the
// stream is nowhere.
func clusterStats(t *testing.T, c pb.StreamdClient, stream string) *pb.StatsResponse {
	t.Helper()
	st, err := c.Stats(context.Background(), &pb.StatsRequest{Stream: stream, Scope: pb.Scope_SCOPE_CLUSTER})
	if status.Code(err) == codes.NotFound {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// waitCluster polls c until its CLUSTER answer for stream is complete and
// counts want values, and returns it; it fails t on a count above want.
func waitCluster(t *testing.T, c pb.StreamdClient, stream string, want uint64, timeout time.Duration) *pb.StatsResponse {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		st := clusterStats(t, c, stream)
		if st != nil && !st.Partial && st.Count == want {
			return st
		}
		if st != nil && !st.Partial && st.Count > want {
			t.Fatalf("cluster counts %d values, more than the %d produced: %v", st.Count, want, st.Members)
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster answer %v; want a complete count of %d", st, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkClusterAnswers asks c every CLUSTER query of stream and checks it
// against the exact answers of values (rounded to float32), within the
// merged ε each answer states; no answer may be partial.
func checkClusterAnswers(t *testing.T, c pb.StreamdClient, stream string, values []float64, members int) {
	t.Helper()
	ctx := context.Background()
	cl := pb.Scope_SCOPE_CLUSTER
	key := exact.New(values)
	n := uint64(len(values))
	complete := func(what string, partial bool, missing []*pb.KafkaPartition, ms []*pb.ClusterMember, count uint64) {
		t.Helper()
		answered, parts := 0, 0
		for _, m := range ms {
			if m.Answered {
				answered++
				parts += len(m.Partitions)
			}
		}
		if partial || len(missing) > 0 || count != n || answered != members || parts != clusterPartitions {
			t.Fatalf("%s: partial %v, missing %v, count %d of %d, %d members answered of %d, %d partitions covered: %v",
				what, partial, missing, count, n, answered, members, parts, ms)
		}
	}
	q, err := c.Quantiles(ctx, &pb.QuantilesRequest{Stream: stream, Phis: phis, Scope: cl})
	if err != nil {
		t.Fatal(err)
	}
	complete("quantiles", q.Partial, q.MissingPartitions, q.Members, q.Count)
	if q.Epsilon <= 0 || q.Epsilon > 0.001 {
		t.Fatalf("merged ε %v", q.Epsilon)
	}
	for _, a := range q.Quantiles {
		if err := key.CheckQuantile(a.Phi, a.Value, q.Epsilon, int64(a.RankMin), int64(a.RankMax)); err != nil {
			t.Fatalf("cluster quantile: %v", err)
		}
	}
	probe := []float64{key.Quantile(0.1), key.Quantile(0.5), key.Quantile(0.9), -1e9, 1e9}
	r, err := c.Ranks(ctx, &pb.RanksRequest{Stream: stream, Values: probe, Scope: cl})
	if err != nil {
		t.Fatal(err)
	}
	complete("ranks", r.Partial, r.MissingPartitions, r.Members, r.Count)
	for _, a := range r.Ranks {
		if err := key.CheckRank(a.Value, int64(a.RankMin), int64(a.RankMax), r.Epsilon); err != nil {
			t.Fatalf("cluster rank: %v", err)
		}
	}
	f, err := c.Frequencies(ctx, &pb.FrequenciesRequest{Stream: stream, Values: probe, Scope: cl})
	if err != nil {
		t.Fatal(err)
	}
	complete("frequencies", f.Partial, f.MissingPartitions, f.Members, f.Count)
	for _, a := range f.Items {
		if err := key.CheckFrequency(a.Value, int64(a.CountMin), int64(a.CountMax), f.Epsilon); err != nil {
			t.Fatalf("cluster frequency: %v", err)
		}
	}
	for _, s := range []float64{0.005, 0.05, 0.3} {
		hh, err := c.HeavyHitters(ctx, &pb.HeavyHittersRequest{Stream: stream, Support: s, Scope: cl})
		if err != nil {
			t.Fatal(err)
		}
		complete("heavy hitters", hh.Partial, hh.MissingPartitions, hh.Members, hh.Count)
		var got []float64
		for _, it := range hh.Items {
			got = append(got, it.Value)
			if err := key.CheckFrequency(it.Value, int64(it.CountMin), int64(it.CountMax), hh.Epsilon); err != nil {
				t.Fatalf("cluster heavy hitter, support %v: %v", s, err)
			}
		}
		// Every value with count ≥ sN of the whole topic, none below (s − ε)N.
		if err := key.CheckHeavyHitters(s, hh.Epsilon, got); err != nil {
			t.Fatalf("cluster heavy hitters, support %v: %v", s, err)
		}
	}
	st, err := c.Stats(ctx, &pb.StatsRequest{Stream: stream, Scope: cl})
	if err != nil {
		t.Fatal(err)
	}
	complete("stats", st.Partial, st.MissingPartitions, st.Members, st.Count)
	if st.Min != key.Sorted()[0] || st.Max != key.Sorted()[len(values)-1] {
		t.Fatalf("cluster min %v max %v, want %v %v", st.Min, st.Max, key.Sorted()[0], key.Sorted()[len(values)-1])
	}
}

// TestCluster runs three daemons in one group on a topic of six
// partitions: every daemon's CLUSTER answer counts exactly what was
// produced, within the merged bound, while each daemon's LOCAL answer
// covers its own partitions only. Then the group rebalances twice while
// values flow — a daemon leaves, another joins — and the partitions' state
// moves with them: the answers stay exact.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("consumer-group joins and rebalances take seconds")
	}
	brokers, topic := kafkaTopic(t, clusterPartitions)
	mod := clusterConfig(brokers, topic, "cluster")
	logw := &syncBuffer{}
	var ds []*Daemon
	var cs []pb.StreamdClient
	for range 3 {
		d, c := openOn(t, t.TempDir(), logw, mod)
		ds, cs = append(ds, d), append(cs, c)
	}
	waitSplit(t, ds, 2)

	x, _ := synth.Generate(synth.Spec{Dist: synth.Zipf, Order: synth.Sawtooth, Seed: 21}, 300000)
	produce(t, brokers, topic, "c", x, 500)
	for i, c := range cs {
		waitCluster(t, c, "c", uint64(len(x)), 30*time.Second)
		checkClusterAnswers(t, c, "c", round32(x), 3)
		// LOCAL stays the default: each daemon answers for its own
		// partitions, and together they count everything once.
		st, err := c.Stats(context.Background(), &pb.StatsRequest{Stream: "c"})
		if err != nil {
			t.Fatal(err)
		}
		if st.Count == 0 || st.Count == uint64(len(x)) || len(st.Members) != 0 {
			t.Errorf("daemon %d: local count %d of %d, members %v", i, st.Count, len(x), st.Members)
		}
	}
	if _, err := cs[0].Quantiles(context.Background(), &pb.QuantilesRequest{Stream: "c", Phis: phis, LastN: 10, Scope: pb.Scope_SCOPE_CLUSTER}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("last_n over a cluster: %v, want InvalidArgument", err)
	}

	// Rebalances while values flow: daemon 2 leaves (handing its
	// partitions over as the group revokes them), a fourth joins.
	y, _ := synth.Generate(synth.Spec{Dist: synth.Normal, Seed: 22}, 200000)
	all := append(slices.Clone(x), y...)
	// Meanwhile, every answer counts each partition at most once, and one
	// that says it is complete covers every partition.
	watchCtx, stopWatch := context.WithCancel(context.Background())
	var watching sync.WaitGroup
	watching.Go(func() {
		answers, partials := 0, 0
		for watchCtx.Err() == nil {
			st, err := cs[0].Stats(watchCtx, &pb.StatsRequest{Stream: "c", Scope: pb.Scope_SCOPE_CLUSTER})
			if err != nil {
				continue
			}
			answers++
			seen := make(map[string]bool)
			for _, m := range st.Members {
				for _, p := range m.Partitions {
					key := fmt.Sprintf("%s/%d", p.Partition.Topic, p.Partition.Partition)
					if seen[key] {
						t.Errorf("partition %s counted twice: %v", key, st.Members)
					}
					seen[key] = true
				}
			}
			if st.Partial {
				partials++
			} else if len(seen) != clusterPartitions || st.Count > uint64(len(all)) {
				t.Errorf("complete answer covers %d partitions, %d values: %v", len(seen), st.Count, st.Members)
			}
		}
		t.Logf("during the rebalances: %d answers, %d partial", answers, partials)
	})
	var producing sync.WaitGroup
	producing.Go(func() {
		for i := 0; i < len(y); i += len(y) / 10 {
			produce(t, brokers, topic, "c", y[i:min(i+len(y)/10, len(y))], 500)
			time.Sleep(100 * time.Millisecond)
		}
	})
	closeDaemon(t, ds[2])
	d4, c4 := openOn(t, t.TempDir(), logw, mod)
	ds = []*Daemon{ds[0], ds[1], d4}
	cs = []pb.StreamdClient{cs[0], cs[1], c4}
	producing.Wait()
	for _, c := range cs {
		waitCluster(t, c, "c", uint64(len(all)), 60*time.Second)
	}
	waitSplit(t, ds, 2)
	stopWatch()
	watching.Wait()
	for _, c := range cs {
		waitCluster(t, c, "c", uint64(len(all)), 30*time.Second)
		checkClusterAnswers(t, c, "c", round32(all), 3)
	}
	for _, d := range ds {
		closeDaemon(t, d)
	}
	t.Logf("partition states handed over: %d; partitions consumed again from their start: %d",
		strings.Count(logw.String(), "partition state handed over"), strings.Count(logw.String(), "consuming it from its earliest offset"))
}

// syncBuffer is a log destination for several daemons.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// waitSplit waits until every daemon consumes per partitions of the topic.
func waitSplit(t *testing.T, ds []*Daemon, per int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok := true
		for _, d := range ds {
			if _, tps := d.kafka.Assignment(); len(tps) != per {
				ok = false
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			var got []int
			for _, d := range ds {
				_, tps := d.kafka.Assignment()
				got = append(got, len(tps))
			}
			t.Fatalf("partitions not split %d each: %v", per, got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startProcess starts the daemon binary bin in group on topic, with a
// checkpoint every 100ms, and returns it, a client of it and its gRPC
// address once it serves. The test's cleanup kills it.
func startProcess(t *testing.T, bin string, brokers []string, topic, group string) (*exec.Cmd, pb.StreamdClient, string) {
	t.Helper()
	addrRE := regexp.MustCompile(`grpc=(\S+)`)
	log, err := os.Create(filepath.Join(t.TempDir(), "streamd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--grpc-addr", "127.0.0.1:0", "--tcp-addr", "", "--metrics-addr", "",
		"--data-dir", t.TempDir(), "--sorter", "cpu", "--window-size", "4096", "--sliding-window", "50000",
		"--checkpoint-interval", "100ms", "--kafka-brokers", strings.Join(brokers, ","),
		"--kafka-topic", topic, "--kafka-group", group, "--kafka-session-timeout", "6s", "--cluster-timeout", "1s")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(io.TeeReader(stderr, log))
	for sc.Scan() {
		if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(log, stderr)
			conn := dialGRPC(t, m[1])
			return cmd, pb.NewStreamdClient(conn), m[1]
		}
	}
	t.Fatalf("daemon exited: %v", cmd.Wait())
	return nil, nil, ""
}

// TestClusterKill runs three daemon binaries in one group, kills one with
// SIGKILL, and checks that the CLUSTER answers of the others are marked
// partial, naming the dead daemon's partitions, until the group
// rebalances, and then complete again with the count exact: the new
// owners of those partitions recover their state (from a copy they hold,
// or by consuming them again from the start of the log) while values go
// on flowing.
func TestClusterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a daemon and waits for its session to expire")
	}
	bin := buildStreamd(t)
	brokers, topic := kafkaTopic(t, clusterPartitions)
	start := func() (*exec.Cmd, pb.StreamdClient, string) { return startProcess(t, bin, brokers, topic, "kill") }
	var cmds []*exec.Cmd
	var cs []pb.StreamdClient
	var addrs []string
	for range 3 {
		cmd, c, addr := start()
		cmds, cs, addrs = append(cmds, cmd), append(cs, c), append(addrs, addr)
	}
	x, _ := synth.Generate(synth.Spec{Dist: synth.LogNormal, Seed: 23}, 200000)
	produce(t, brokers, topic, "k", x, 500)
	// Once every daemon consumes two partitions, all three answer.
	victim := awaitSplit(t, cs[0], addrs[2], uint64(len(x)))
	checkClusterAnswers(t, cs[1], "k", round32(x), 3)

	_ = cmds[2].Process.Signal(syscall.SIGKILL)
	_ = cmds[2].Wait()
	killed := time.Now()
	y, _ := synth.Generate(synth.Spec{Dist: synth.Uniform, Seed: 24}, 100000)
	produce(t, brokers, topic, "k", y, 500)
	all := append(slices.Clone(x), y...)

	// Until the group notices, the answers are partial and name the dead
	// daemon's partitions; then they are complete, and exact.
	sawPartial := false
	deadline := time.Now().Add(90 * time.Second)
	for {
		st := clusterStats(t, cs[0], "k")
		if st.Partial {
			var missing []string
			for _, p := range st.MissingPartitions {
				missing = append(missing, fmt.Sprintf("%s/%d", p.Topic, p.Partition))
			}
			if !sawPartial {
				t.Logf("%v after the kill: partial, missing %v (the dead daemon had %v)", time.Since(killed).Round(time.Millisecond), missing, victim)
			}
			if len(missing) > 0 && !sawPartial && !slices.Equal(missing, victim) {
				t.Errorf("partial answer misses %v; the dead daemon had %v", missing, victim)
			}
			sawPartial = sawPartial || len(missing) > 0
		} else {
			if st.Count > uint64(len(all)) {
				t.Fatalf("complete answer counts %d values, more than the %d produced", st.Count, len(all))
			}
			if st.Count == uint64(len(all)) {
				t.Logf("%v after the kill: complete again", time.Since(killed).Round(time.Millisecond))
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the kill: %v; want a complete count of %d", st, len(all))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !sawPartial {
		t.Error("no partial answer naming the dead daemon's partitions")
	}
	checkClusterAnswers(t, cs[0], "k", round32(all), 2)
	checkClusterAnswers(t, cs[1], "k", round32(all), 2)
}

// TestClusterTLSToken runs two daemons of a group that serve TLS and want
// a bearer token: their calls to each other carry both, so the CLUSTER
// answer is complete, while a Peer call without the token is refused.
func TestClusterTLSToken(t *testing.T) {
	if testing.Short() {
		t.Skip("consumer-group joins take seconds")
	}
	certFile, keyFile, pool := selfSigned(t)
	brokers, topic := kafkaTopic(t, clusterPartitions)
	mod := func(c *Config) {
		clusterConfig(brokers, topic, "secure")(c)
		c.TLSCert, c.TLSKey, c.Token = certFile, keyFile, "s3cret"
	}
	d1, _ := openOn(t, t.TempDir(), io.Discard, mod)
	d2, _ := openOn(t, t.TempDir(), io.Discard, mod)
	defer closeDaemon(t, d1)
	defer closeDaemon(t, d2)
	waitSplit(t, []*Daemon{d1, d2}, 3)
	x, _ := synth.Generate(synth.Spec{Dist: synth.Uniform, Seed: 25}, 50000)
	produce(t, brokers, topic, "s", x, 500)

	creds := credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	conn, err := grpc.NewClient(d1.GRPCAddr(), grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer s3cret")
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := pb.NewStreamdClient(conn).Stats(ctx, &pb.StatsRequest{Stream: "s", Scope: pb.Scope_SCOPE_CLUSTER})
		if err == nil && !st.Partial && st.Count == uint64(len(x)) && len(st.Members) == 2 && st.Members[1].Answered {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster stats over TLS with a token: %v, %v", st, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, err = pb.NewPeerClient(conn).PeerSummaries(context.Background(), &pb.PeerSummariesRequest{Stream: "s"})
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("peer call without the token: %v", err)
	}
}

// produceItems writes list as items messages of per items each, spread
// over the partitions.
func produceItems(t *testing.T, brokers []string, topic, stream string, list []string, per int) {
	t.Helper()
	w := &kafka.Writer{Addr: kafka.TCP(brokers...), Topic: topic, Balancer: &kafka.RoundRobin{},
		RequiredAcks: kafka.RequireAll, BatchTimeout: 5 * time.Millisecond, BatchSize: 100}
	defer w.Close()
	var msgs []kafka.Message
	for i := 0; i < len(list); i += per {
		msgs = append(msgs, kafka.Message{Key: []byte(stream), Value: []byte(strings.Join(list[i:min(i+per, len(list))], "\n")),
			Headers: []kafka.Header{{Key: ingest.ContentTypeHeader, Value: []byte(ingest.ContentTypeItems)}}})
	}
	if err := w.WriteMessages(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}
}

// TestClusterItems runs two daemons in one group on items and values:
// scope CLUSTER refuses the item stream (FailedPrecondition) and time
// windows (InvalidArgument). Then one daemon leaves and hands its
// partitions over to the other, which hashes items under another key:
// its answers name every heavy hitter of the whole topic by its string
// and bound every count.
func TestClusterItems(t *testing.T) {
	if testing.Short() {
		t.Skip("consumer-group joins and rebalances take seconds")
	}
	brokers, topic := kafkaTopic(t, clusterPartitions)
	mod := clusterConfig(brokers, topic, "cluster-items")
	logw := &syncBuffer{}
	d0, c0 := openOn(t, t.TempDir(), logw, mod)
	d1, c1 := openOn(t, t.TempDir(), logw, mod)
	waitSplit(t, []*Daemon{d0, d1}, clusterPartitions/2)
	list := zipfStrings(60000, 3000, 3)
	produceItems(t, brokers, topic, "urls", list, 500)
	x, _ := synth.Generate(synth.Spec{Dist: synth.Normal, Seed: 5}, 20000)
	produce(t, brokers, topic, "v", x, 500)
	waitCluster(t, c0, "v", uint64(len(x)), 30*time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n uint64
		for _, c := range []pb.StreamdClient{c0, c1} {
			if st, err := c.Stats(context.Background(), &pb.StatsRequest{Stream: "urls"}); err == nil {
				n += st.Count
			}
		}
		if n == uint64(len(list)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemons count %d items of %d", n, len(list))
		}
		time.Sleep(20 * time.Millisecond)
	}

	ctx := context.Background()
	cl := pb.Scope_SCOPE_CLUSTER
	for i, c := range []pb.StreamdClient{c0, c1} {
		_, err := c.HeavyHitters(ctx, &pb.HeavyHittersRequest{Stream: "urls", Support: 0.01, Scope: cl})
		if status.Code(err) != codes.FailedPrecondition {
			t.Fatalf("daemon %d: cluster heavy hitters of an item stream: %v, want FailedPrecondition", i, err)
		}
		_, err = c.Frequencies(ctx, &pb.FrequenciesRequest{Stream: "urls", Items: list[:3], Scope: cl})
		if status.Code(err) != codes.FailedPrecondition {
			t.Fatalf("daemon %d: cluster frequencies of an item stream: %v, want FailedPrecondition", i, err)
		}
		_, err = c.Quantiles(ctx, &pb.QuantilesRequest{Stream: "v", Phis: phis, Last: durationpb.New(time.Minute), Scope: cl})
		if status.Code(err) != codes.InvalidArgument {
			t.Fatalf("daemon %d: cluster quantiles of the last minute: %v, want InvalidArgument", i, err)
		}
	}
	// A stream no daemon has answers NotFound, not FailedPrecondition.
	if _, err := c0.HeavyHitters(ctx, &pb.HeavyHittersRequest{Stream: "none", Support: 0.01, Scope: cl}); status.Code(err) != codes.NotFound {
		t.Fatalf("cluster heavy hitters of no stream: %v, want NotFound", err)
	}

	closeDaemon(t, d1)
	waitCount(t, c0, "urls", uint64(len(list)))
	checkItemAnswers(t, c0, "urls", list, 0.001)
	if n := strings.Count(logw.String(), "partition state handed over"); n == 0 {
		t.Errorf("no partition state handed over; the log:\n%s", logw.String())
	}
	closeDaemon(t, d0)
}

// TestClusterKafkaSASLTLS runs two daemons of one group against brokers
// that require SASL over TLS: they consume with the Kafka flags, and find
// each other through the announcements topic on the same brokers with the
// same settings, so their CLUSTER answers are complete.
func TestClusterKafkaSASLTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("consumer-group joins take seconds")
	}
	certFile, keyFile, err := tlsconf.WriteSelfSigned(t.TempDir(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	srvTLS, err := tlsconf.Server(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	topic := fmt.Sprintf("secure-%d", rand.Int64())
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(0), kfake.SeedTopics(clusterPartitions, topic),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "streamd", "s3cret"), kfake.TLS(srvTLS))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	brokers := kc.ListenAddrs()
	mod := func(c *Config) {
		clusterConfig(brokers, topic, "secure")(c)
		c.KafkaSASL, c.KafkaUser, c.KafkaPassword, c.KafkaTLSCA = "scram-sha-256", "streamd", "s3cret", certFile
	}
	logw := &syncBuffer{}
	d0, c0 := openOn(t, t.TempDir(), logw, mod)
	d1, c1 := openOn(t, t.TempDir(), logw, mod)
	waitSplit(t, []*Daemon{d0, d1}, clusterPartitions/2)

	mech, err := ingest.KafkaSASL("scram-sha-256", "streamd", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	cli, err := tlsconf.Client(tlsconf.ClientOptions{CAFile: certFile})
	if err != nil {
		t.Fatal(err)
	}
	w := &kafka.Writer{Addr: kafka.TCP(brokers...), Topic: topic, Balancer: &kafka.RoundRobin{},
		RequiredAcks: kafka.RequireAll, BatchTimeout: 5 * time.Millisecond, Transport: &kafka.Transport{SASL: mech, TLS: cli}}
	defer w.Close()
	x, _ := synth.Generate(synth.Spec{Dist: synth.LogNormal, Seed: 8}, 30000)
	var msgs []kafka.Message
	for i := 0; i < len(x); i += 500 {
		msgs = append(msgs, kafka.Message{Key: []byte("s"), Value: []byte(strings.Trim(fmt.Sprint(x[i:i+500]), "[]"))})
	}
	if err := w.WriteMessages(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}
	for _, c := range []pb.StreamdClient{c0, c1} {
		waitCluster(t, c, "s", uint64(len(x)), 30*time.Second)
		checkClusterAnswers(t, c, "s", round32(x), 2)
	}
	closeDaemon(t, d1)
	closeDaemon(t, d0)
}

// A clusterHead is what every CLUSTER answer says of itself.
type clusterHead struct {
	partial bool
	count   uint64
	missing []*pb.KafkaPartition
	members []*pb.ClusterMember
}

// askCluster asks c the i-th kind of CLUSTER query of stream, in turn
// Stats, Quantiles, Ranks, Frequencies and HeavyHitters, and returns what
// the answer says of itself.
func askCluster(ctx context.Context, c pb.StreamdClient, stream string, i int) (string, clusterHead, error) {
	cl := pb.Scope_SCOPE_CLUSTER
	switch i % 5 {
	case 0:
		r, err := c.Stats(ctx, &pb.StatsRequest{Stream: stream, Scope: cl})
		return "stats", clusterHead{r.GetPartial(), r.GetCount(), r.GetMissingPartitions(), r.GetMembers()}, err
	case 1:
		r, err := c.Quantiles(ctx, &pb.QuantilesRequest{Stream: stream, Phis: phis, Scope: cl})
		return "quantiles", clusterHead{r.GetPartial(), r.GetCount(), r.GetMissingPartitions(), r.GetMembers()}, err
	case 2:
		r, err := c.Ranks(ctx, &pb.RanksRequest{Stream: stream, Values: []float64{1}, Scope: cl})
		return "ranks", clusterHead{r.GetPartial(), r.GetCount(), r.GetMissingPartitions(), r.GetMembers()}, err
	case 3:
		r, err := c.Frequencies(ctx, &pb.FrequenciesRequest{Stream: stream, Values: []float64{1}, Scope: cl})
		return "frequencies", clusterHead{r.GetPartial(), r.GetCount(), r.GetMissingPartitions(), r.GetMembers()}, err
	default:
		r, err := c.HeavyHitters(ctx, &pb.HeavyHittersRequest{Stream: stream, Support: 0.1, Scope: cl})
		return "heavy hitters", clusterHead{r.GetPartial(), r.GetCount(), r.GetMissingPartitions(), r.GetMembers()}, err
	}
}

// TestClusterKillCatchUp kills one of three daemons once its values are
// consumed and their offsets committed to the group. The broker then
// serves each fetch slowly, one record batch at a time, so the new owners
// of the dead daemon's partitions take a while to consume them again from
// the older states they find (or from their start). Throughout the
// recovery every CLUSTER answer of every kind that says it is complete
// counts every value produced: a partition behind the group's committed
// offset is named as missing until it has caught up.
func TestClusterKillCatchUp(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a daemon and waits for its session to expire")
	}
	bin := buildStreamd(t)
	topic := fmt.Sprintf("values-%d", rand.Int64())
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(0), kfake.SeedTopics(clusterPartitions, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	brokers := kc.ListenAddrs()
	var throttle atomic.Bool
	kc.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		if f, ok := req.(*kmsg.FetchRequest); ok && throttle.Load() {
			f.MaxBytes = 1 // one record batch
			for i := range f.Topics {
				for j := range f.Topics[i].Partitions {
					f.Topics[i].Partitions[j].PartitionMaxBytes = 1
				}
			}
			kc.SleepControl(func() { time.Sleep(10 * time.Millisecond) })
		}
		return nil, nil, false // served as usual
	})

	var cs []pb.StreamdClient
	var cmds []*exec.Cmd
	var addrs []string
	for range 3 {
		cmd, c, addr := startProcess(t, bin, brokers, topic, "catchup")
		cmds, cs, addrs = append(cmds, cmd), append(cs, c), append(addrs, addr)
	}
	// A few values first, until every daemon consumes two partitions: the
	// states the daemons keep of the partitions they held before are of
	// these few values.
	x, _ := synth.Generate(synth.Spec{Dist: synth.LogNormal, Seed: 25}, 600)
	msgs, _ := valueMessages("k", x, 10, false)
	writeMessages(t, brokers, topic, msgs)
	victim := awaitSplit(t, cs[0], addrs[2], uint64(len(x)))

	// The bulk of the values, consumed by their owners and committed.
	y, _ := synth.Generate(synth.Spec{Dist: synth.Uniform, Seed: 26}, 600000)
	msgs, _ = valueMessages("k", y, 10, false)
	writeMessages(t, brokers, topic, msgs)
	n := uint64(len(x) + len(y))
	st := waitCluster(t, cs[0], "k", n, 60*time.Second)
	gen := int64(0)
	consumed := make(map[int]int64)
	for _, m := range st.Members {
		gen = max(gen, m.Generation)
		for _, p := range m.Partitions {
			consumed[int(p.Partition.Partition)] = p.NextOffset
		}
	}
	client := &kafka.Client{Addr: kafka.TCP(brokers...)}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := client.OffsetFetch(context.Background(), &kafka.OffsetFetchRequest{
			GroupID: "catchup", Topics: map[string][]int{topic: slices.Collect(maps.Keys(consumed))}})
		if err != nil {
			t.Fatal(err)
		}
		done := len(resp.Topics[topic]) == clusterPartitions
		for _, p := range resp.Topics[topic] {
			done = done && p.CommittedOffset >= consumed[p.Partition]
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("committed offsets %v; want %v", resp.Topics[topic], consumed)
		}
		time.Sleep(20 * time.Millisecond)
	}

	throttle.Store(true)
	_ = cmds[2].Process.Signal(syscall.SIGKILL)
	_ = cmds[2].Wait()
	killed := time.Now()

	// Partial until the group rebalances (the dead daemon does not
	// answer), partial while its partitions catch up, then complete: never
	// complete and short.
	answers, catchingUp := 0, 0
	deadline = time.Now().Add(45 * time.Second)
	for i := 0; ; i++ {
		kind, a, err := askCluster(context.Background(), cs[i%2], "k", i)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		answers++
		if !a.partial {
			if a.count != n || len(a.missing) > 0 {
				t.Fatalf("%v after the kill, %s: complete answer of %d values (missing %v), want %d: %v",
					time.Since(killed).Round(time.Millisecond), kind, a.count, a.missing, n, a.members)
			}
			t.Logf("%v after the kill: complete again; %d answers, %d while the dead daemon's partitions %v caught up",
				time.Since(killed).Round(time.Millisecond), answers, catchingUp, victim)
			break
		}
		rebalanced := len(a.missing) > 0
		for _, m := range a.members {
			if m.Answered {
				rebalanced = rebalanced && m.Generation > gen
			}
		}
		if rebalanced {
			catchingUp++
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the kill, %s: partial %v, %d values, missing %v: %v", kind, a.partial, a.count, a.missing, a.members)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if catchingUp == 0 {
		t.Error("no answer while the dead daemon's partitions caught up: the recovery was too quick to observe")
	}
}

// awaitSplit waits until three daemons answer for stream "k", which holds
// n values, each consuming two partitions, as c sees them, and returns the
// partitions of the one at addr.
func awaitSplit(t *testing.T, c pb.StreamdClient, addr string, n uint64) []string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := waitCluster(t, c, "k", n, 60*time.Second)
		var parts []string
		split := len(st.Members) == 3
		for _, m := range st.Members {
			split = split && m.Answered && len(m.Partitions) == 2
			if m.Address == addr {
				for _, p := range m.Partitions {
					parts = append(parts, fmt.Sprintf("%s/%d", p.Partition.Topic, p.Partition.Partition))
				}
			}
		}
		if split {
			return parts
		}
		if time.Now().After(deadline) {
			t.Fatalf("partitions not split over three daemons: %v", st.Members)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
