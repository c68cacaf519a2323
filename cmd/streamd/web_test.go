package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	pb "streamd/api/proto/streamd/v1"
	"streamd/summary"
)

var screenshotOut = flag.String("screenshot", "", "also write the web page test's screenshot to this PNG file")

// tool returns the path of a command the test needs. Without it the test
// is skipped, except in CI (CI set), where it must not pass unchecked.
func tool(t *testing.T, name, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not found: CI must run this test (apt-get install %s)", name, pkg)
		}
		t.Skipf("%s not found (apt-get install %s)", name, pkg)
	}
	return path
}

// headless runs Chromium without a display, a sandbox, a GPU or any
// network of its own, in an empty profile, and returns its output.
func headless(t *testing.T, chromium string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args = append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--hide-scrollbars", "--user-data-dir=" + t.TempDir(),
	}, args...)
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, chromium, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.Bytes())
	}
	t.Logf("chromium ran %v", time.Since(start))
	return stdout.Bytes()
}

// sender sends values to three streams over the TCP line protocol, a
// round at a time: checkout.latency_ms, whole milliseconds whose level
// drifts (heavy hitters); upload.bytes, power-law sizes; queue.depth, with
// a NaN now and then (rejects). sent holds the values each stream accepted.
type sender struct {
	conn net.Conn
	w    *bufio.Writer
	rng  *rand.Rand
	sent map[string][]float64
}

func newSender(t *testing.T, addr string) *sender {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &sender{conn: conn, w: bufio.NewWriter(conn), rng: rand.New(rand.NewPCG(13, 1)), sent: map[string][]float64{}}
}

// round sends round r: perRound values to each stream.
func (s *sender) round(r, perRound int) error {
	level := 22 + 8*math.Sin(float64(r)/4) + float64(r)/2
	for _, name := range []string{"checkout.latency_ms", "upload.bytes", "queue.depth"} {
		for i := 0; i < perRound; i += 500 {
			fmt.Fprint(s.w, name)
			for range min(500, perRound-i) {
				var v float64
				switch name {
				case "checkout.latency_ms":
					v = math.Round(level * math.Exp(0.35*s.rng.NormFloat64()))
				case "upload.bytes":
					v = math.Round(512 * math.Pow(1-s.rng.Float64(), -1/1.3))
				default:
					v = math.Round((40+10*math.Sin(float64(r)/3)+6*s.rng.NormFloat64())*100) / 100
				}
				s.sent[name] = append(s.sent[name], v)
				fmt.Fprintf(s.w, " %s", strconv.FormatFloat(v, 'g', -1, 64))
			}
			if name == "queue.depth" && i == 0 && r%5 == 0 {
				fmt.Fprint(s.w, " NaN")
			}
			fmt.Fprintln(s.w)
		}
	}
	return s.w.Flush()
}

// rounds sends rounds from..to-1, one every interval, so that the page's
// history sees the streams grow.
func (s *sender) rounds(from, to, perRound int, interval time.Duration) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for r := from; r < to; r++ {
		if err := s.round(r, perRound); err != nil {
			return err
		}
		<-tick.C
	}
	return nil
}

// settled waits until the daemon holds every value sent and has no window
// in flight: from then on its answers do not change.
func settled(t *testing.T, d *Daemon, c pb.StreamdClient, sent map[string][]float64) {
	t.Helper()
	for name, vals := range sent {
		waitCount(t, c, name, uint64(len(vals)))
		deadline := time.Now().Add(20 * time.Second)
		for {
			s, err := d.Pipeline().Stream(name)
			if err != nil {
				t.Fatal(err)
			}
			st := s.Stats()
			if st.Pending < int64(st.Config.WindowSize) { // only the partial window
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d values still in flight", name, st.Pending)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// element is an HTML element of the dumped page.
type element struct{ *html.Node }

func (e element) attr(name string) string {
	for _, a := range e.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

// text returns the element's text.
func (e element) text() string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(e.Node)
	return strings.TrimSpace(b.String())
}

// all returns the elements under e, in document order, that match.
func (e element) all(match func(element) bool) []element {
	var out []element
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && match(element{n}) {
			out = append(out, element{n})
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(e.Node)
	return out
}

func (e element) byID(id string) element {
	found := e.all(func(x element) bool { return x.attr("id") == id })
	if len(found) != 1 {
		return element{}
	}
	return found[0]
}

func tag(name string) func(element) bool { return func(e element) bool { return e.Data == name } }

// cells returns the texts of a table row's cells.
func (e element) cells() []string {
	var out []string
	for _, td := range e.all(tag("td")) {
		out = append(out, td.text())
	}
	return out
}

// shownNumber reads a number as the page shows it: with thousands
// separators, as float32 for float32 streams.
func shownNumber(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	if err != nil {
		t.Fatalf("page shows %q: %v", s, err)
	}
	return v
}

// TestWebPage starts the daemon, sends values, opens the page in headless
// Chromium, waits for its charts, and checks that the p50 and p99 and the
// heavy hitters it shows are the gRPC answers, and that its screenshot is
// a picture. With -screenshot FILE it first takes one while values are
// still coming in, for the documentation (make screenshot).
func TestWebPage(t *testing.T) {
	const stream, support = "checkout.latency_ms", 0.02
	chromium := tool(t, "chromium", "chromium")
	d, c := startDaemon(t, func(c *Config) {
		c.WebInterval = 100 * time.Millisecond
		c.Stream = summary.Config{Epsilon: 0.001, WindowSize: 4096, SlidingWindow: 100000}
	})
	send := newSender(t, d.TCPAddr())
	if err := send.rounds(0, 30, 2000, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	page := fmt.Sprintf("http://%s/#stream=%s&phi=0.5,0.99&support=%v", d.MetricsAddr(), url.QueryEscape(stream), support)
	if *screenshotOut != "" {
		// The picture for the documentation: values still coming in.
		done := make(chan error)
		go func() { done <- send.rounds(30, 70, 2000, 100*time.Millisecond) }()
		headless(t, chromium, "--window-size=1280,1240", "--virtual-time-budget=6000", "--screenshot="+*screenshotOut, page)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		checkScreenshot(t, *screenshotOut, 1280, 1240)
	}
	sent := send.sent
	settled(t, d, c, sent)

	ctx := context.Background()
	ask := func() (*pb.QuantilesResponse, *pb.HeavyHittersResponse) {
		q, err := c.Quantiles(ctx, &pb.QuantilesRequest{Stream: stream, Phis: []float64{0.5, 0.99}})
		if err != nil {
			t.Fatal(err)
		}
		hh, err := c.HeavyHitters(ctx, &pb.HeavyHittersRequest{Stream: stream, Support: support})
		if err != nil {
			t.Fatal(err)
		}
		return q, hh
	}
	wantQ, wantHH := ask()
	if len(wantHH.Items) < 3 {
		t.Fatalf("too few heavy hitters to check: %v", wantHH)
	}

	shot := filepath.Join(t.TempDir(), "page.png")
	dom := headless(t, chromium, "--window-size=1280,1240", "--virtual-time-budget=4000",
		"--screenshot="+shot, "--dump-dom", page)
	if q, hh := ask(); !proto.Equal(q, wantQ) || !proto.Equal(hh, wantHH) {
		t.Fatal("the answers changed while the page was open")
	}
	doc, err := html.Parse(bytes.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	root := element{doc}
	body := root.all(tag("body"))[0]
	if updates, _ := strconv.Atoi(body.attr("data-updates")); body.attr("data-state") != "ready" || updates < 2 {
		t.Fatalf("page not ready or not updating: state %q, %d updates; status %q, error %q", body.attr("data-state"),
			updates, root.byID("status").text(), root.byID("error").text())
	}

	// The charts are drawn, with a series for each chosen quantile.
	for _, id := range []string{"chart-time", "chart-cdf"} {
		chart := root.byID(id)
		if chart.Node == nil || len(chart.all(tag("canvas"))) == 0 {
			t.Fatalf("no chart in #%s", id)
		}
	}
	legend := root.byID("chart-time").text()
	for _, label := range []string{"p50", "p99"} {
		if !strings.Contains(legend, label) {
			t.Errorf("the time chart has no series %s: %q", label, legend)
		}
	}

	// The quantiles shown are the gRPC answers.
	rows := root.byID("quantiles").all(func(e element) bool { return e.Data == "tr" && e.attr("data-phi") != "" })
	if len(rows) != len(wantQ.Quantiles) {
		t.Fatalf("page shows %d quantiles, gRPC %d", len(rows), len(wantQ.Quantiles))
	}
	for i, a := range wantQ.Quantiles {
		row, cells := rows[i], rows[i].cells()
		value, _ := strconv.ParseFloat(row.attr("data-value"), 64)
		if row.attr("data-phi") != fmt.Sprint(a.Phi) || value != a.Value ||
			row.attr("data-rank-min") != fmt.Sprint(a.RankMin) || row.attr("data-rank-max") != fmt.Sprint(a.RankMax) {
			t.Errorf("φ %v: page has %v, gRPC %v", a.Phi, row.Attr, a)
		}
		if len(cells) != 4 || float32(shownNumber(t, cells[1])) != float32(a.Value) ||
			shownNumber(t, cells[2]) != float64(a.RankMin) || shownNumber(t, cells[3]) != float64(a.RankMax) {
			t.Errorf("φ %v: page shows %q, gRPC %v", a.Phi, cells, a)
		}
	}

	// So are the heavy hitters, in the same order.
	hits := root.byID("heavy-hitters").all(func(e element) bool { return e.Data == "tr" && e.attr("data-value") != "" })
	if len(hits) != len(wantHH.Items) {
		t.Fatalf("page shows %d heavy hitters, gRPC %d", len(hits), len(wantHH.Items))
	}
	for i, it := range wantHH.Items {
		row, cells := hits[i], hits[i].cells()
		value, _ := strconv.ParseFloat(row.attr("data-value"), 64)
		if value != it.Value || row.attr("data-count-min") != fmt.Sprint(it.CountMin) || row.attr("data-count-max") != fmt.Sprint(it.CountMax) {
			t.Errorf("heavy hitter %d: page has %v, gRPC %v", i, row.Attr, it)
		}
		if len(cells) != 4 || shownNumber(t, cells[0]) != it.Value ||
			shownNumber(t, cells[1]) != float64(it.CountMin) || shownNumber(t, cells[2]) != float64(it.CountMax) {
			t.Errorf("heavy hitter %d: page shows %q, gRPC %v", i, cells, it)
		}
	}

	// Every stream is listed, the chosen one selected.
	listed := map[string]bool{}
	for _, tr := range root.byID("stream-list").all(func(e element) bool { return e.Data == "tr" && e.attr("data-stream") != "" }) {
		listed[tr.attr("data-stream")] = true
		if (tr.attr("data-stream") == stream) != (tr.attr("class") == "selected") {
			t.Errorf("stream %s: class %q", tr.attr("data-stream"), tr.attr("class"))
		}
	}
	for name := range sent {
		if !listed[name] {
			t.Errorf("stream %s not listed", name)
		}
	}

	checkScreenshot(t, shot, 1280, 1240)

	// The memory card shows what the budget charges the stream, as
	// streamd query stats does.
	st, err := c.Stats(ctx, &pb.StatsRequest{Stream: stream})
	if err != nil {
		t.Fatal(err)
	}
	cards := root.all(func(e element) bool { return e.attr("data-card") == "memory" })
	if len(cards) != 1 {
		t.Fatal("no memory card")
	}
	if shown := shownBytes(t, cards[0].text()); math.Abs(shown-float64(st.MemoryBytes)) > 0.06*float64(st.MemoryBytes) {
		t.Errorf("memory card %q, Stats memory_bytes %d", cards[0].text(), st.MemoryBytes)
	}

	// Over a time window, with the CDF on a log axis: the quantiles shown
	// are the gRPC answers over the same window.
	wantWin, err := c.Quantiles(ctx, &pb.QuantilesRequest{Stream: stream, Phis: []float64{0.5, 0.99}, Last: durationpb.New(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	dom = headless(t, chromium, "--window-size=1280,1240", "--virtual-time-budget=4000", "--dump-dom", page+"&last=1h&log=1")
	if doc, err = html.Parse(bytes.NewReader(dom)); err != nil {
		t.Fatal(err)
	}
	root = element{doc}
	if body := root.all(tag("body"))[0]; body.attr("data-state") != "ready" {
		t.Fatalf("time window page not ready: status %q, error %q", root.byID("status").text(), root.byID("error").text())
	}
	if note := root.byID("time-note").text(); !strings.Contains(note, "over the last 1h") {
		t.Errorf("time window page's chart note %q", note)
	}
	if len(root.byID("chart-cdf").all(tag("canvas"))) == 0 {
		t.Error("no CDF on a log axis")
	}
	rows = root.byID("quantiles").all(func(e element) bool { return e.Data == "tr" && e.attr("data-phi") != "" })
	if len(rows) != len(wantWin.Quantiles) {
		t.Fatalf("time window page shows %d quantiles, gRPC %d", len(rows), len(wantWin.Quantiles))
	}
	for i, a := range wantWin.Quantiles {
		if value, _ := strconv.ParseFloat(rows[i].attr("data-value"), 64); value != a.Value ||
			rows[i].attr("data-rank-min") != fmt.Sprint(a.RankMin) || rows[i].attr("data-rank-max") != fmt.Sprint(a.RankMax) {
			t.Errorf("last 1h, φ %v: page has %v, gRPC %v", a.Phi, rows[i].Attr, a)
		}
	}

	// An item stream, first by name, is the default view: its heavy
	// hitters show its items, and it has no quantile charts or tables.
	const itemStream = "a.items"
	var list []string
	for i := range 7000 {
		list = append(list, []string{"/index.html", "a,b", "é ü", fmt.Sprintf("item-%d", i%500)}[min(i%7, 3)])
	}
	push, err := c.Push(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := push.Send(&pb.PushRequest{Stream: itemStream, Items: list}); err != nil {
		t.Fatal(err)
	}
	if resp, err := push.CloseAndRecv(); err != nil || resp.Accepted != uint64(len(list)) {
		t.Fatalf("push: %v (%v)", resp, err)
	}
	askItems := func() *pb.HeavyHittersResponse {
		hh, err := c.HeavyHitters(ctx, &pb.HeavyHittersRequest{Stream: itemStream, Support: 0.01})
		if err != nil {
			t.Fatal(err)
		}
		return hh
	}
	wantItems := askItems()
	if len(wantItems.Items) != 3 {
		t.Fatalf("want 3 heavy hitters: %v", wantItems)
	}
	dom = headless(t, chromium, "--window-size=1280,1240", "--virtual-time-budget=4000", "--dump-dom",
		fmt.Sprintf("http://%s/", d.MetricsAddr()))
	if !proto.Equal(askItems(), wantItems) {
		t.Fatal("the item stream's answer changed while the page was open")
	}
	if doc, err = html.Parse(bytes.NewReader(dom)); err != nil {
		t.Fatal(err)
	}
	root = element{doc}
	body = root.all(tag("body"))[0]
	if body.attr("data-state") != "ready" || root.byID("stream-name").text() != itemStream {
		t.Fatalf("item stream's page: state %q, stream %q; status %q, error %q", body.attr("data-state"),
			root.byID("stream-name").text(), root.byID("status").text(), root.byID("error").text())
	}
	hits = root.byID("heavy-hitters").all(func(e element) bool { return e.Data == "tr" && e.attr("data-count-min") != "" })
	if len(hits) != len(wantItems.Items) {
		t.Fatalf("page shows %d heavy hitters, gRPC %d", len(hits), len(wantItems.Items))
	}
	for i, it := range wantItems.Items {
		row, cells := hits[i], hits[i].cells()
		if row.attr("data-item") != it.Item || len(cells) != 4 || cells[0] != it.Item ||
			shownNumber(t, cells[1]) != float64(it.CountMin) || shownNumber(t, cells[2]) != float64(it.CountMax) {
			t.Errorf("heavy hitter %d: page shows %q (%v), gRPC %v", i, cells, row.Attr, it)
		}
	}
	for _, id := range []string{"chart-time", "chart-cdf", "quantiles", "phi-choice"} {
		hidden := false
		for n := root.byID(id).Node; n != nil; n = n.Parent {
			hidden = hidden || slices.ContainsFunc(n.Attr, func(a html.Attribute) bool { return a.Key == "hidden" })
		}
		if !hidden {
			t.Errorf("the item stream's page shows #%s", id)
		}
	}
}

// shownBytes reads a size the page shows, such as "memory6.9 MiB".
func shownBytes(t *testing.T, s string) float64 {
	t.Helper()
	m := regexp.MustCompile(`([0-9.]+) (B|KiB|MiB|GiB)`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no size in %q", s)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v * map[string]float64{"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[m[2]]
}

// TestWebPageEmpty checks the page of a daemon with no streams: its
// example of sending values names the daemon's own TCP port.
func TestWebPageEmpty(t *testing.T) {
	chromium := tool(t, "chromium", "chromium")
	d, _ := startDaemon(t, nil)
	dom := headless(t, chromium, "--window-size=1280,800", "--virtual-time-budget=2000", "--dump-dom", "http://"+d.MetricsAddr()+"/")
	doc, err := html.Parse(bytes.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	root := element{doc}
	_, port, _ := net.SplitHostPort(d.TCPAddr())
	if text := root.byID("empty").text(); !strings.Contains(text, "nc -q1 127.0.0.1 "+port+"\n") && !strings.HasSuffix(strings.TrimSpace(text), "127.0.0.1 "+port) {
		t.Errorf("the empty page's example does not name port %s: %q", port, text)
	}
}

// checkScreenshot checks that a screenshot is a PNG of the window's size
// with something drawn on it.
func checkScreenshot(t *testing.T, path string, width, height int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	b := img.Bounds()
	if b.Dx() != width || b.Dy() != height {
		t.Fatalf("screenshot is %v, want %dx%d", b, width, height)
	}
	colours := map[[3]uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 12, g >> 12, bl >> 12}] = true
		}
	}
	if len(colours) < 8 {
		t.Fatalf("screenshot nearly blank: %d colours", len(colours))
	}
}

// TestMetricsPromtool checks a live daemon's /metrics, with streams,
// rejects and an empty stream in it, with promtool check metrics, and its
// summary against the Quantiles RPC.
func TestMetricsPromtool(t *testing.T) {
	promtool := tool(t, "promtool", "prometheus")
	d, c := startDaemon(t, func(c *Config) { c.MetricsQuantiles = []float64{0.5, 0.9, 0.99, 0.999} })
	send := newSender(t, d.TCPAddr())
	if err := send.rounds(0, 2, 3000, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	settled(t, d, c, send.sent)
	if _, err := c.CreateStream(context.Background(), &pb.CreateStreamRequest{Stream: "empty"}); err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", d.TCPAddr())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(conn, "bad!name 1\n")
	conn.Close()

	resp, err := http.Get("http://" + d.MetricsAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %s, %v", resp.Status, err)
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s\n/metrics:\n%s", err, out, text)
	}
	q, err := c.Quantiles(context.Background(), &pb.QuantilesRequest{Stream: "queue.depth", Phis: []float64{0.5, 0.9, 0.99, 0.999}})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range q.Quantiles {
		line := fmt.Sprintf("streamd_stream_value{stream=\"queue.depth\",quantile=\"%v\"} %s\n", a.Phi, strconv.FormatFloat(a.Value, 'g', -1, 32))
		if !bytes.Contains(text, []byte(line)) {
			t.Errorf("/metrics lacks %q", line)
		}
	}
	for _, line := range []string{
		"streamd_stream_value_count{stream=\"queue.depth\"} 6000\n",
		"streamd_rejected_total{stream=\"queue.depth\",reason=\"nan\"} 1\n",
		"streamd_stream_value{stream=\"empty\",quantile=\"0.5\"} NaN\n",
	} {
		if !bytes.Contains(text, []byte(line)) {
			t.Errorf("/metrics lacks %q", line)
		}
	}
}

// TestHTTPTokenAndTLS checks that the daemon serves its HTTP port with
// its token and its TLS certificate: nothing but /healthz without the
// token, the bearer token and a login's cookie let in, plain HTTP refused.
func TestHTTPTokenAndTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	d, _ := startDaemon(t, func(c *Config) { c.Token, c.TLSCert, c.TLSKey = "s3cret", certFile, keyFile })
	client := &http.Client{
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	base := "https://" + d.MetricsAddr()
	status := func(method, path string, header http.Header, form url.Values) *http.Response {
		t.Helper()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, _ := http.NewRequest(method, base+path, body)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for _, path := range []string{"/", "/api/streams", "/metrics"} {
		if r := status("GET", path, nil, nil); r.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s without the token: %s", path, r.Status)
		}
		if r := status("GET", path, http.Header{"Authorization": {"Bearer wrong"}}, nil); r.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s with a wrong token: %s", path, r.Status)
		}
		if r := status("GET", path, http.Header{"Authorization": {"Bearer s3cret"}}, nil); r.StatusCode != http.StatusOK {
			t.Errorf("%s with the token: %s", path, r.Status)
		}
	}
	if r := status("GET", "/healthz", nil, nil); r.StatusCode != http.StatusOK {
		t.Errorf("/healthz: %s", r.Status)
	}
	if r := status("POST", "/login", nil, url.Values{"token": {"wrong"}}); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("login with a wrong token: %s", r.Status)
	}
	login := status("POST", "/login", nil, url.Values{"token": {"s3cret"}})
	if len(login.Cookies()) != 1 || !login.Cookies()[0].Secure || !login.Cookies()[0].HttpOnly {
		t.Fatalf("login: %s, cookies %v", login.Status, login.Cookies())
	}
	cookie := http.Header{"Cookie": {login.Cookies()[0].Name + "=" + login.Cookies()[0].Value}}
	if r := status("GET", "/", cookie, nil); r.StatusCode != http.StatusOK {
		t.Errorf("page with the cookie: %s", r.Status)
	}
	if resp, err := http.Get("http://" + d.MetricsAddr() + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP answered by the TLS port")
		}
	}
}

// TestWebPageListPages checks the page's list of a daemon with more
// streams than it lists at first: the first 100 by name, a note that says
// so and a button for more.
func TestWebPageListPages(t *testing.T) {
	chromium := tool(t, "chromium", "chromium")
	d, _ := startDaemon(t, func(c *Config) {
		c.Stream = summary.Config{Epsilon: 0.01, WindowSize: 16, SlidingWindow: 16}
	})
	for i := range 250 {
		if _, err := d.pipe.Create(fmt.Sprintf("p%03d", 249-i), summary.Config{}); err != nil {
			t.Fatal(err)
		}
	}
	dom := headless(t, chromium, "--window-size=1280,800", "--virtual-time-budget=2000", "--dump-dom", "http://"+d.MetricsAddr()+"/")
	doc, err := html.Parse(bytes.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	root := element{doc}
	var listed []string
	for _, tr := range root.byID("stream-list").all(func(e element) bool { return e.Data == "tr" && e.attr("data-stream") != "" }) {
		listed = append(listed, tr.attr("data-stream"))
	}
	if len(listed) != 100 || listed[0] != "p000" || listed[99] != "p099" {
		t.Errorf("page lists %d streams: %v", len(listed), listed)
	}
	more := root.byID("list-more")
	if more.Node == nil || slices.ContainsFunc(more.Attr, func(a html.Attribute) bool { return a.Key == "hidden" }) {
		t.Error("no button for more streams")
	}
	if note, summary := root.byID("list-note").text(), root.byID("summary").text(); note != "The first 100 of 250 streams." || summary != "250 streams" {
		t.Errorf("note %q, summary %q", note, summary)
	}
}
