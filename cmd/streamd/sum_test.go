package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"golang.org/x/net/html"
	"google.golang.org/protobuf/proto"

	pb "streamd/api/proto/streamd/v1"
	"streamd/feed"
	"streamd/ingest"
	"streamd/loadgen"
	"streamd/synth"
)

// TestCLISum creates a pair stream and asks its correlated sums from the
// command line: each answer word for word (ten pairs are answered
// exactly), and the command line's mistakes as one line with status 2 or
// the daemon's refusals with status 1.
func TestCLISum(t *testing.T) {
	d, _ := startDaemon(t, nil)
	addr := d.GRPCAddr()
	if code, stdout, stderr := cliRun("query", "--addr", addr, "create", "--pairs", "lat"); code != 0 || stdout != "ok\n" {
		t.Fatalf("create --pairs: status %d\n%s%s", code, stdout, stderr)
	}
	// x = 1 … 10 (latency), y = 100·x, the last one −50 (a refund, say).
	x := []float64{3, 1, 2, 5, 4, 8, 6, 7, 10, 9}
	y := []float64{300, 100, 200, 500, 400, 800, 600, 700, -50, 900}
	if _, err := d.Pipeline().Accept(context.Background(), &feed.Batch{Stream: "lat", Pairs: feed.Pairs{X: x, Y: y}}); err != nil {
		t.Fatal(err)
	}
	head := "pairs 10, x from 1 to 10, Σy 4450, Σ|y| 4550, ε 0.001\n"
	widths := "guaranteed widths: count 0.01 (ε·pairs), Σy 4.55 (ε·Σ|y|)\n"
	for _, tc := range []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{args: []string{"sum", "lat", "--at", "5"}, stdout: "threshold 5\n" + head +
			"  pairs  count min  count max  Σy min  Σy max\n" +
			"  x ≤ t          5          5    1500    1500\n" +
			"  x ≥ t          6          6    3450    3450\n" + widths},
		{args: []string{"sum", "lat", "--quantile", "0.9", "--above"}, stdout: "threshold 9, of rank 9 to 9 among x\n" + head +
			"  pairs  count min  count max  Σy min  Σy max\n" +
			"  x ≥ t          2          2     850     850\n" + widths},
		{args: []string{"sum", "lat", "--mean", "--factor", "2", "--below"}, stdout: "threshold 11, from 5.5 of rank 5 to 5 among x\n" + head +
			"  pairs  count min  count max  Σy min  Σy max\n" +
			"  x ≤ t         10         10    4450    4450\n" + widths},
		{args: []string{"sum", "lat", "--min", "--above", "--below"}, stdout: "threshold 1, of rank 1 to 1 among x\n" + head +
			"  pairs  count min  count max  Σy min  Σy max\n" +
			"  x ≤ t          1          1     100     100\n" +
			"  x ≥ t         10         10    4450    4450\n" + widths},
		{args: []string{"sum", "lat"}, code: 2, stderr: "streamd: sum: want one threshold: --at T, --quantile φ, --min, --max or --mean\n"},
		{args: []string{"sum", "lat", "--min", "--max"}, code: 2, stderr: "streamd: sum: want one threshold: --at T, --quantile φ, --min, --max or --mean\n"},
		{args: []string{"sum", "lat", "--quantile", "2"}, code: 1, stderr: "streamd: correlated sum: phi 2 outside [0, 1]\n"},
		{args: []string{"sum", "lat", "--max", "--last", "5"}, code: 1, stderr: "streamd: correlated sum: last_n and last are not answered: correlated sums cover all history\n"},
		{args: []string{"sum", "nosuch", "--max"}, code: 1, stderr: "streamd: correlated sum: stream not found: \"nosuch\"\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := cliRun(append([]string{"query", "--addr", addr}, tc.args...)...)
			if code != tc.code || stdout != tc.stdout || stderr != tc.stderr {
				t.Errorf("status %d, want %d\nstdout\n%s\nwant\n%s\nstderr %q, want %q", code, tc.code, stdout, tc.stdout, stderr, tc.stderr)
			}
		})
	}
	code, stdout, _ := cliRun("query", "--addr", addr, "stats", "lat")
	if code != 0 || !regexp.MustCompile(`kind +pairs\n +count +10\n +min +1\n +max +10\n`).MatchString(stdout) {
		t.Errorf("stats of a pair stream: status %d\n%s", code, stdout)
	}
}

// TestWebPagePairs opens the page of a pair stream in headless Chromium
// and checks that it shows the gRPC answers of its correlated sums at the
// p50 and p99 of x, and hides what a pair stream does not answer.
func TestWebPagePairs(t *testing.T) {
	chromium := tool(t, "chromium", "chromium")
	d, c := startDaemon(t, func(c *Config) { c.WebInterval = 100 * time.Millisecond })
	ctx := context.Background()
	n := 10000
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = float64(i*7919%n) / 10
		y[i] = float64(i%100) - 20
	}
	if _, err := d.Pipeline().Accept(ctx, &feed.Batch{Stream: "lat", Pairs: feed.Pairs{X: x, Y: y}}); err != nil {
		t.Fatal(err)
	}
	var want []*pb.CorrelatedSumResponse
	for _, phi := range []float64{0.5, 0.99} {
		r, err := c.CorrelatedSum(ctx, &pb.CorrelatedSumRequest{Stream: "lat", Aggregate: pb.SumAggregate_SUM_AGGREGATE_QUANTILE, Phi: phi})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, r)
	}
	dom := headless(t, chromium, "--window-size=1280,1000", "--virtual-time-budget=4000", "--dump-dom",
		fmt.Sprintf("http://%s/#stream=lat", d.MetricsAddr()))
	doc, err := html.Parse(bytes.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	root := element{doc}
	if body := root.all(tag("body"))[0]; body.attr("data-state") != "ready" {
		t.Fatalf("page not ready: status %q, error %q", root.byID("status").text(), root.byID("error").text())
	}
	rows := root.byID("sums-table").all(func(e element) bool { return e.Data == "tr" && e.attr("data-phi") != "" })
	if len(rows) != len(want) {
		t.Fatalf("page shows %d correlated sums, want %d", len(rows), len(want))
	}
	shownRange := func(s string) (lo, hi float64) {
		a, b, ok := strings.Cut(s, " – ")
		if !ok {
			b = a
		}
		return shownNumber(t, a), shownNumber(t, b)
	}
	for i, w := range want {
		cells := rows[i].cells()
		if th, _ := strconv.ParseFloat(rows[i].attr("data-threshold"), 64); th != w.Threshold || len(cells) != 6 {
			t.Fatalf("row %d: %q (%v), gRPC %v", i, cells, rows[i].Attr, w)
		}
		for j, b := range []*pb.CorrelatedSumBounds{w.AtMost, w.AtLeast} {
			clo, chi := shownRange(cells[2+2*j])
			slo, shi := shownRange(cells[3+2*j])
			if clo != float64(b.CountMin) || chi != float64(b.CountMax) ||
				math.Abs(slo-b.SumMin) > 1e-5*math.Abs(b.SumMin) || math.Abs(shi-b.SumMax) > 1e-5*math.Abs(b.SumMax) {
				t.Errorf("row %d side %d: page shows %q, gRPC %v", i, j, cells, b)
			}
		}
	}
	for _, id := range []string{"chart-time", "chart-cdf", "quantiles", "heavy-hitters", "scope-choice"} {
		hidden := false
		for n := root.byID(id).Node; n != nil; n = n.Parent {
			hidden = hidden || slices.ContainsFunc(n.Attr, func(a html.Attribute) bool { return a.Key == "hidden" })
		}
		if !hidden {
			t.Errorf("the pair stream's page shows #%s", id)
		}
	}
}

// pushPairs pushes the pairs (x[i], y[i]) to stream over gRPC, a thousand
// a message.
func pushPairs(t *testing.T, c pb.StreamdClient, stream string, x, y []float64) {
	t.Helper()
	p, err := c.Push(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(x); i += 1000 {
		j := min(i+1000, len(x))
		if err := p.Send(&pb.PushRequest{Stream: stream, Pairs: &pb.Pairs{X: x[i:j], Y: y[i:j]}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.CloseAndRecv(); err != nil {
		t.Fatal(err)
	}
}

// checkPairs checks every correlated sum loadgen's verify asks of the
// pair stream against the exact answers over the pairs (x, y).
func checkPairs(t *testing.T, c pb.StreamdClient, stream string, x, y []float64) {
	t.Helper()
	res := &loadgen.Result{Sent: int64(len(x)), Streams: map[string]*loadgen.StreamResult{stream: {Sent: int64(len(x)), PairX: x, PairY: y}}}
	v, err := loadgen.Verify(context.Background(), c, res, loadgen.VerifyConfig{Timeout: 20 * time.Second, Poll: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !v.OK() {
		var b bytes.Buffer
		v.WriteTo(&b)
		t.Fatalf("correlated sums of %s:\n%s", stream, b.String())
	}
}

// sumAnswers asks the pair stream for its correlated sums at a constant,
// two quantiles, the mean, the minimum and the maximum.
func sumAnswers(t *testing.T, c pb.StreamdClient, stream string) []*pb.CorrelatedSumResponse {
	t.Helper()
	var out []*pb.CorrelatedSumResponse
	for _, req := range []*pb.CorrelatedSumRequest{
		{Constant: 25},
		{Aggregate: pb.SumAggregate_SUM_AGGREGATE_QUANTILE, Phi: 0.5},
		{Aggregate: pb.SumAggregate_SUM_AGGREGATE_QUANTILE, Phi: 0.99, Side: pb.SumSide_SUM_SIDE_AT_LEAST},
		{Aggregate: pb.SumAggregate_SUM_AGGREGATE_MEAN},
		{Aggregate: pb.SumAggregate_SUM_AGGREGATE_MIN},
		{Aggregate: pb.SumAggregate_SUM_AGGREGATE_MAX},
	} {
		req.Stream = stream
		r, err := c.CorrelatedSum(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// TestPairsRestart: a restart on the same data directory answers a pair
// stream's correlated sums as before, its partial window included, and
// its rejects are kept; more pairs go on into the restored stream.
func TestPairsRestart(t *testing.T) {
	dir := t.TempDir()
	x, y, err := synth.GeneratePairs(9, 3*4096+1234, synth.Random)
	if err != nil {
		t.Fatal(err)
	}
	d, c := openOn(t, dir, io.Discard, nil)
	pushPairs(t, c, "lat", x, y)
	pushPairs(t, c, "lat", []float64{math.NaN(), 1}, []float64{1, math.Inf(-1)})
	checkPairs(t, c, "lat", x, y)
	before := sumAnswers(t, c, "lat")
	closeDaemon(t, d)

	d, c = openOn(t, dir, io.Discard, nil)
	defer closeDaemon(t, d)
	after := sumAnswers(t, c, "lat")
	for i := range before {
		if !proto.Equal(before[i], after[i]) {
			t.Errorf("answer %d before the restart %v, after %v", i, before[i], after[i])
		}
	}
	st, err := c.Stats(context.Background(), &pb.StatsRequest{Stream: "lat"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Kind != pb.StreamKind_STREAM_KIND_PAIRS || st.Count != uint64(len(x)) || st.Rejected["nan"] != 1 || st.Rejected["inf"] != 1 {
		t.Fatalf("restored stats %v", st)
	}
	checkPairs(t, c, "lat", x, y)
	x2, y2, _ := synth.GeneratePairs(10, 5000, synth.Random)
	pushPairs(t, c, "lat", x2, y2)
	checkPairs(t, c, "lat", append(x, x2...), append(y, y2...))
}

// testPairs returns n pairs with duplicates at every x (a quarter of 200
// integers) and y of both signs, in order: x ascending, descending or as
// drawn.
func testPairs(n int, seed uint64, order synth.Order) (x, y []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	x, y = make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = float64(rng.IntN(200)) / 4
		y[i] = float64(rng.IntN(2001) - 1000)
	}
	if order == synth.Random {
		return x, y
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if order == synth.Reverse {
			a, b = b, a
		}
		return cmp.Compare(x[a], x[b])
	})
	sx, sy := make([]float64, n), make([]float64, n)
	for i, j := range idx {
		sx[i], sy[i] = x[j], y[j]
	}
	return sx, sy
}

// TestPairsInputs sends pair streams over every input of the daemon —
// TCP lines (x ascending), TCP frames (x descending), gRPC Push and Kafka
// messages of both pair formats (as drawn) — with bad pairs among them,
// and checks every correlated sum against the exact answers, and the
// rejects.
func TestPairsInputs(t *testing.T) {
	brokers, topic := kafkaTopic(t, 2)
	d, c := openOn(t, t.TempDir(), io.Discard, func(cfg *Config) {
		kafkaConfig(brokers, topic, "pairs")(cfg)
		cfg.TCPAddr = "127.0.0.1:0"
	})
	defer closeDaemon(t, d)
	const n = 9000 // two windows of 4096 and a partial one
	send := func(data []byte) {
		t.Helper()
		conn, err := net.Dial("tcp", d.TCPAddr())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := conn.Close(); err != nil {
			t.Fatal(err)
		}
	}

	lx, ly := testPairs(n, 1, synth.Sorted)
	var lines bytes.Buffer
	for i := range lx {
		if i%500 == 0 {
			lines.WriteString("\nline")
		}
		fmt.Fprintf(&lines, " %v:%v", lx[i], ly[i])
	}
	lines.WriteString("\nline NaN:1 2:+Inf 3:x\n")
	send(lines.Bytes())

	fx, fy := testPairs(n, 2, synth.Reverse)
	frames := []byte(ingest.Magic)
	for i := 0; i < n; i += 1000 {
		var err error
		if frames, err = ingest.AppendPairsFrame(frames, "frame", fx[i:min(i+1000, n)], fy[i:min(i+1000, n)]); err != nil {
			t.Fatal(err)
		}
	}
	frames, _ = ingest.AppendPairsFrame(frames, "frame", []float64{math.Inf(-1), 1}, []float64{1, math.NaN()})
	send(frames)

	px, py := testPairs(n, 3, synth.Random)
	pushPairs(t, c, "push", append(slices.Clone(px), math.NaN()), append(slices.Clone(py), 1))

	kx, ky := testPairs(n, 4, synth.Random)
	var msgs []kafka.Message
	for i := 0; i < n; i += 500 {
		j := min(i+500, n)
		if i%1000 == 0 {
			var text bytes.Buffer
			for k := i; k < j; k++ {
				fmt.Fprintf(&text, "%v:%v\n", kx[k], ky[k])
			}
			msgs = append(msgs, kafka.Message{Key: []byte("kafka"), Value: text.Bytes(),
				Headers: []kafka.Header{{Key: ingest.ContentTypeHeader, Value: []byte(ingest.ContentTypePairs)}}})
			continue
		}
		var bin []byte
		for k := i; k < j; k++ {
			bin = binary.LittleEndian.AppendUint64(bin, math.Float64bits(kx[k]))
			bin = binary.LittleEndian.AppendUint64(bin, math.Float64bits(ky[k]))
		}
		msgs = append(msgs, kafka.Message{Key: []byte("kafka"), Value: bin,
			Headers: []kafka.Header{{Key: ingest.ContentTypeHeader, Value: []byte(ingest.ContentTypePairs64)}}})
	}
	msgs = append(msgs, kafka.Message{Key: []byte("kafka"), Value: []byte("1:NaN"),
		Headers: []kafka.Header{{Key: ingest.ContentTypeHeader, Value: []byte(ingest.ContentTypePairs)}}})
	writeMessages(t, brokers, topic, msgs)

	for _, s := range []struct {
		stream  string
		x, y    []float64
		rejects map[string]uint64
	}{
		{"line", lx, ly, map[string]uint64{"nan": 1, "inf": 1, "malformed": 1}},
		{"frame", fx, fy, map[string]uint64{"nan": 1, "inf": 1}},
		{"push", px, py, map[string]uint64{"nan": 1}},
		{"kafka", kx, ky, map[string]uint64{"nan": 1}},
	} {
		checkPairs(t, c, s.stream, s.x, s.y)
		deadline := time.Now().Add(20 * time.Second)
		for {
			st, err := c.Stats(context.Background(), &pb.StatsRequest{Stream: s.stream})
			if err == nil && maps.Equal(st.Rejected, s.rejects) {
				if st.Kind != pb.StreamKind_STREAM_KIND_PAIRS {
					t.Errorf("%s: kind %v", s.stream, st.Kind)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: rejects %v, %v; want %v", s.stream, st.GetRejected(), err, s.rejects)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	// Values to a pair stream and pairs to a value stream are rejected as
	// wrong_kind.
	send([]byte("line 1 2\nvalues 1\nvalues 1:2 3:4\n"))
	for stream, want := range map[string]uint64{"line": 2, "values": 2} {
		deadline := time.Now().Add(20 * time.Second)
		for {
			st, err := c.Stats(context.Background(), &pb.StatsRequest{Stream: stream})
			if err == nil && st.Rejected["wrong_kind"] == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: rejects %v, %v; want %d wrong_kind", stream, st.GetRejected(), err, want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
