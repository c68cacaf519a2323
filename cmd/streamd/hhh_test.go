package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	pb "streamd/api/proto/streamd/v1"
	"streamd/hhh"
	"streamd/loadgen/hhhexact"
	"streamd/synth"
)

// hhhLines returns the lines of the line protocol that send a small
// trace to stream: 100 times 10.1.2.3, one address from each of 60 hosts
// of 192.168.7.0/24, none of them heavy, one address from each of 40
// other /8s, and two items that are no IPv4 address.
func hhhLines(stream string) string {
	var b strings.Builder
	for range 10 {
		fmt.Fprintf(&b, "%s%s\n", stream, strings.Repeat(" 10.1.2.3", 10))
	}
	for i := range 60 {
		fmt.Fprintf(&b, "%s 192.168.7.%d\n", stream, i)
	}
	for i := range 40 {
		fmt.Fprintf(&b, "%s %d.9.9.9\n", stream, 20+i)
	}
	fmt.Fprintf(&b, "%s 10.1.2 ::1\n", stream)
	return b.String()
}

// TestCLIHHH creates a hierarchy stream with the command line, sends it
// addresses over the line protocol and checks the tables of query hhh,
// word for word: counts this small are exact.
func TestCLIHHH(t *testing.T) {
	d, c := startDaemon(t, nil)
	addr := d.GRPCAddr()
	code, stdout, stderr := cliRun("query", "--addr", addr, "create", "addrs", "--hierarchy", "ipv4", "--epsilon", "0.01", "--min-support", "0.1")
	if code != 0 || stdout != "ok\n" {
		t.Fatalf("create: status %d\n%s%s", code, stdout, stderr)
	}
	conn, err := net.Dial("tcp", d.TCPAddr())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, hhhLines("addrs")); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	st := waitCount(t, c, "addrs", 200)
	if st.Hierarchy != "ipv4/8" || st.Rejected["not_in_hierarchy"] != 2 {
		t.Fatalf("stats: hierarchy %q, rejects %v", st.Hierarchy, st.Rejected)
	}
	for _, tc := range []struct {
		args   []string
		stdout string
	}{
		{[]string{"hhh", "addrs", "--support", "0.2"}, `count 200, ε 0.000833 a level, precision 0.0025
          prefix  level  count min  count max  discounted min  discounted max   share
        10.1.2.3      0        100        100             100             100  0.5000
  192.168.7.0/24      1         60         60              60              60  0.3000
       0.0.0.0/0      4        200        200              40              40  0.2000
`},
		{[]string{"hhh", "addrs", "--support", "0.2", "--plain"}, `count 200, ε 0.000833 a level, precision 0.000833
          prefix  level  count min  count max   share
        10.1.2.3      0        100        100  0.5000
     10.1.2.0/24      1        100        100  0.5000
  192.168.7.0/24      1         60         60  0.3000
     10.1.0.0/16      2        100        100  0.5000
  192.168.0.0/16      2         60         60  0.3000
      10.0.0.0/8      3        100        100  0.5000
     192.0.0.0/8      3         60         60  0.3000
       0.0.0.0/0      4        200        200  1.0000
`},
		{[]string{"hhh", "addrs", "--support", "0.2", "--last", "100"}, `count 100, ε 0.000833 a level, precision 0.00167
          prefix  level  count min  count max  discounted min  discounted max   share
  192.168.7.0/24      1         60         60              60              60  0.6000
       0.0.0.0/0      4        100        100              40              40  0.4000
`},
	} {
		code, stdout, stderr := cliRun(append([]string{"query", "--addr", addr}, tc.args...)...)
		if code != 0 || stdout != tc.stdout {
			t.Errorf("%v: status %d\n%s%s\nwant\n%s", tc.args, code, stdout, stderr, tc.stdout)
		}
	}
	code, stdout, stderr = cliRun("query", "--addr", addr, "stats", "addrs")
	if code != 0 || !regexp.MustCompile(`(?m)^ +hierarchy +ipv4/8$`).MatchString(stdout) || !regexp.MustCompile(`(?m)^ +not_in_hierarchy +2$`).MatchString(stdout) {
		t.Errorf("stats: status %d, want rows hierarchy ipv4/8 and not_in_hierarchy 2\n%s%s", code, stdout, stderr)
	}
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"hhh", "nosuch"}, "streamd: hierarchical heavy hitters: stream not found: \"nosuch\"\n"},
		{[]string{"hhh", "addrs", "--cluster"}, "streamd: hierarchical heavy hitters: stream \"addrs\": item streams are counted under each daemon's own item key: ask each daemon with scope SCOPE_LOCAL\n"},
		{[]string{"create", "x", "--hierarchy", "ipv4/7"}, "streamd: create stream: hierarchy: hierarchy \"ipv4/7\": ipv4 granularity 7 bits does not divide 32: bad hierarchy\n"},
	} {
		code, stdout, stderr := cliRun(append([]string{"query", "--addr", addr}, tc.args...)...)
		if code != 1 || stderr != tc.stderr {
			t.Errorf("%v: status %d\n%s%s\nwant\n%s", tc.args, code, stdout, stderr, tc.stderr)
		}
	}
}

// checkHHHAnswers checks a daemon's hierarchical heavy hitters of a
// hierarchy stream over the last lastN items (0: all history), or the
// last d, against the exact counts of list, the items sent: heavy
// prefixes and discounted hitters, every bound, and the precision asked
// for at creation at supports ≥ minSupport.
func checkHHHAnswers(t *testing.T, c pb.StreamdClient, stream, hierarchy string, list []string, lastN uint64, last time.Duration, precision, minSupport float64) {
	t.Helper()
	h, err := hhh.Parse(hierarchy)
	if err != nil {
		t.Fatal(err)
	}
	for _, support := range []float64{minSupport, 0.2} {
		for _, plain := range []bool{true, false} {
			req := &pb.HierarchicalHeavyHittersRequest{Stream: stream, Support: support, Plain: plain, LastN: lastN}
			if last > 0 {
				req.Last = durationpb.New(last)
			}
			resp, err := c.HierarchicalHeavyHitters(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			exact := hhhexact.New(h)
			for _, x := range list[len(list)-int(resp.Count):] {
				if err := exact.Add(x); err != nil {
					t.Fatal(err)
				}
			}
			got := hhhexact.Hitters(resp)
			if plain {
				err = exact.CheckHeavy(got, support, resp.Epsilon)
			} else {
				err = exact.CheckDiscounted(got, support, resp.Epsilon, resp.Precision)
				if resp.Precision > precision*(1+1e-12) {
					t.Errorf("s=%v: precision %v, more than the %v asked for", support, resp.Precision, precision)
				}
			}
			if err != nil {
				t.Fatalf("last_n %d, last %v: %v", lastN, last, err)
			}
		}
	}
}

// TestHHHRestart sends a trace with a late /24 flood to a hierarchy
// stream over TCP frames, checks its answers over all history, the last
// n items and a time window against the exact ones, and checks them again
// after a restart, and after more items.
func TestHHHRestart(t *testing.T) {
	dir := t.TempDir()
	tcp := func(cfg *Config) { cfg.TCPAddr = "127.0.0.1:0" }
	d, c := openOn(t, dir, io.Discard, tcp)
	const precision, minSupport = 0.01, 0.05
	if _, err := c.CreateStream(context.Background(), &pb.CreateStreamRequest{Stream: "addrs", Hierarchy: "ipv4", Epsilon: precision, MinSupport: minSupport}); err != nil {
		t.Fatal(err)
	}
	list, err := synth.Addresses(synth.AddrSpec{Seed: 9, FloodShare: 0.25, FloodAfter: 30000}, 45000)
	if err != nil {
		t.Fatal(err)
	}
	sendItemFrames(t, d.TCPAddr(), "addrs", list)
	waitCount(t, c, "addrs", uint64(len(list)))
	check := func(list []string) {
		t.Helper()
		checkHHHAnswers(t, c, "addrs", "ipv4", list, 0, 0, precision, minSupport)
		checkHHHAnswers(t, c, "addrs", "ipv4", list, 15000, 0, precision, minSupport)
		checkHHHAnswers(t, c, "addrs", "ipv4", list, 0, time.Hour, precision, minSupport)
	}
	check(list)
	before, err := c.HierarchicalHeavyHitters(context.Background(), &pb.HierarchicalHeavyHittersRequest{Stream: "addrs", Support: minSupport, LastN: 15000})
	if err != nil {
		t.Fatal(err)
	}
	closeDaemon(t, d)

	d, c = openOn(t, dir, io.Discard, tcp)
	defer closeDaemon(t, d)
	after, err := c.HierarchicalHeavyHitters(context.Background(), &pb.HierarchicalHeavyHittersRequest{Stream: "addrs", Support: minSupport, LastN: 15000})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(before, after) {
		t.Errorf("after a restart:\n%v\nwant\n%v", after, before)
	}
	check(list)
	sendItemFrames(t, d.TCPAddr(), "addrs", list[:10000])
	more := append(list, list[:10000]...)
	waitCount(t, c, "addrs", uint64(len(more)))
	check(more)
}

// TestHHHPathsIPv6 pushes deep URL paths and IPv6 addresses over gRPC
// to hierarchy streams and checks their answers over all history, the
// last n items and a time window against the exact ones.
func TestHHHPathsIPv6(t *testing.T) {
	_, c := startDaemon(t, nil)
	r := rand.New(rand.NewPCG(3, 4))
	zipf := rand.NewZipf(r, 1.4, 1, 30)
	var paths, addrs []string
	for i := range 20000 {
		var b strings.Builder
		for range 1 + r.IntN(7) {
			fmt.Fprintf(&b, "/p%d", zipf.Uint64())
		}
		paths = append(paths, b.String())
		a := [16]byte{0x20, 0x01, 0x0d, 0xb8, byte(zipf.Uint64()), 7: byte(zipf.Uint64()), 15: byte(r.IntN(256))}
		if i > 14000 && i%2 == 0 {
			a = [16]byte{0xfd, 0x42, 14: byte(r.IntN(256)), 15: byte(r.IntN(256))} // a flood from one /16
		}
		addrs = append(addrs, netip.AddrFrom16(a).String())
	}
	const precision, minSupport = 0.02, 0.05
	for _, tc := range []struct {
		stream, hierarchy string
		list              []string
	}{{"paths", "path/5", paths}, {"v6", "ipv6/8", addrs}} {
		ctx := context.Background()
		if _, err := c.CreateStream(ctx, &pb.CreateStreamRequest{Stream: tc.stream, Hierarchy: tc.hierarchy, Epsilon: precision, MinSupport: minSupport}); err != nil {
			t.Fatal(err)
		}
		push, err := c.Push(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(tc.list); i += 3000 {
			if err := push.Send(&pb.PushRequest{Stream: tc.stream, Items: tc.list[i:min(i+3000, len(tc.list))]}); err != nil {
				t.Fatal(err)
			}
		}
		// An item in neither hierarchy is rejected, not accepted.
		if err := push.Send(&pb.PushRequest{Stream: tc.stream, Items: []string{"neither"}}); err != nil {
			t.Fatal(err)
		}
		resp, err := push.CloseAndRecv()
		if err != nil {
			t.Fatal(err)
		}
		if resp.Accepted != uint64(len(tc.list)) || resp.Rejected != 1 {
			t.Errorf("push: %d accepted, %d rejected; want %d and 1", resp.Accepted, resp.Rejected, len(tc.list))
		}
		waitCount(t, c, tc.stream, uint64(len(tc.list)))
		checkHHHAnswers(t, c, tc.stream, tc.hierarchy, tc.list, 0, 0, precision, minSupport)
		checkHHHAnswers(t, c, tc.stream, tc.hierarchy, tc.list, 6000, 0, precision, minSupport)
		checkHHHAnswers(t, c, tc.stream, tc.hierarchy, tc.list, 0, time.Hour, precision, minSupport)
	}
}

// TestWebPageHHH opens the web page of a hierarchy stream in headless
// Chromium and checks its table of hierarchical heavy hitters against the
// gRPC answer, row for row.
func TestWebPageHHH(t *testing.T) {
	chromium := tool(t, "chromium", "chromium")
	d, c := startDaemon(t, func(c *Config) { c.WebInterval = 100 * time.Millisecond })
	ctx := context.Background()
	if _, err := c.CreateStream(ctx, &pb.CreateStreamRequest{Stream: "addrs", Hierarchy: "ipv4", Epsilon: 0.01, MinSupport: 0.1}); err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", d.TCPAddr())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, hhhLines("addrs")); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	waitCount(t, c, "addrs", 200)
	want, err := c.HierarchicalHeavyHitters(ctx, &pb.HierarchicalHeavyHittersRequest{Stream: "addrs", Support: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	page := fmt.Sprintf("http://%s/#stream=addrs&support=0.2", d.MetricsAddr())
	shot := filepath.Join(t.TempDir(), "page.png")
	if *screenshotOut != "" {
		shot = *screenshotOut
	}
	dom := headless(t, chromium, "--window-size=1280,1000", "--virtual-time-budget=3000", "--screenshot="+shot, "--dump-dom", page)
	doc, err := html.Parse(bytes.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	root := element{doc}
	if root.byID("hhh-panel").attr("hidden") != "" || root.byID("hhh-panel").Node == nil {
		t.Fatalf("the table of hierarchical heavy hitters is hidden or missing; error %q", root.byID("error").text())
	}
	rows := root.byID("hhh").all(func(e element) bool { return e.Data == "tr" && e.attr("data-prefix") != "" })
	if len(rows) != len(want.Hitters) {
		t.Fatalf("%d rows, want %d: %v", len(rows), len(want.Hitters), want.Hitters)
	}
	for i, row := range rows {
		h := want.Hitters[i]
		if got, w := row.cells(), []string{h.Prefix, fmt.Sprint(h.Level), fmt.Sprint(h.DiscountedMin), fmt.Sprint(h.DiscountedMax)}; !slices.Equal(got, w) {
			t.Errorf("row %d: %q, want %q", i, got, w)
		}
	}
	if h := root.byID("hhh-hierarchy").text(); h != "ipv4/8" {
		t.Errorf("hierarchy shown as %q, want ipv4/8", h)
	}
	if note := root.byID("hhh-note").text(); !strings.Contains(note, "at least 20.0%") {
		t.Errorf("note %q", note)
	}
}
