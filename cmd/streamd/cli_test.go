package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "streamd/api/proto/streamd/v1"
	"streamd/summary"
)

// cliRun runs the streamd command line with args in the process and
// returns its exit status, standard output and standard error.
func cliRun(args ...string) (code int, stdout, stderr string) {
	var o, e strings.Builder
	m := NewMain(&o, &e)
	code = m.Exit(m.Run(context.Background(), args))
	return code, o.String(), e.String()
}

// TestCLIGolden runs the command line against a daemon holding one small
// stream and checks each exit status and output, word for word where they
// are stable: help on standard output with status 0, a bad command line
// with one line and status 2, an error from the daemon as one plain line
// with status 1, and negative numbers taken as arguments.
func TestCLIGolden(t *testing.T) {
	d, c := startDaemon(t, nil)
	push, err := c.Push(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := push.Send(&pb.PushRequest{Stream: "s", Values: []float64{-3, -1, 0, 2, 4}}); err != nil {
		t.Fatal(err)
	}
	if _, err := push.CloseAndRecv(); err != nil {
		t.Fatal(err)
	}
	// An address where nothing answers.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()

	addr := d.GRPCAddr()
	for _, tc := range []struct {
		args   []string
		code   int
		stdout string // exact, unless prefix is set
		prefix bool   // stdout need only start with stdout
		stderr string // exact
	}{
		{args: []string{"--help"}, code: 0, stdout: "streamd mines numeric streams", prefix: true},
		{args: []string{"serve", "--help"}, code: 0, stdout: "Usage of streamd serve:\n", prefix: true},
		{args: []string{"serve", "-h"}, code: 0, stdout: "Usage of streamd serve:\n", prefix: true},
		{args: []string{"query", "-h"}, code: 0, stdout: "Usage: streamd query <command> [flags] [args]\n", prefix: true},
		{args: []string{"nonsense"}, code: 2, stdout: "", stderr: usageText + "streamd: unknown command \"nonsense\"\n"},
		{args: []string{"serve", "--bogus"}, code: 2,
			stderr: "streamd: serve: flag provided but not defined: -bogus (streamd serve -h lists the flags)\n"},
		{args: []string{"serve", "--epsilon", "2"}, code: 1,
			stderr: "streamd: config epsilon=2: out of range: want [1e-06, 1)\n"},
		{args: []string{"query", "--addr", addr, "quantiles", "s", "--last", "5x"}, code: 2,
			stderr: "streamd: query: invalid value \"5x\" for flag -last: want a count of values (1000) or a duration (5m), not \"5x\" (streamd query -h lists the commands and flags)\n"},
		{args: []string{"query", "--addr", addr, "quantiles", "s", "-0.1"}, code: 1,
			stderr: "streamd: quantiles: φ -0.1 outside [0, 1]\n"},
		{args: []string{"query", "--addr", addr, "ranks", "s", "-1", "-5"}, code: 0,
			stdout: "count 5, ε 0.001\n  value  ≤ value, min  ≤ value, max\n     -1             2             2\n     -5             0             0\n"},
		{args: []string{"query", "--addr", addr, "--support", "0.5", "heavy-hitters", "s"}, code: 0,
			stdout: "count 5, ε 0.001\n  value  count min  count max  share\n"},
		{args: []string{"query", "--addr", addr, "watch", "nosuch"}, code: 1, stderr: "streamd: watch: no stream \"nosuch\"\n"},
		{args: []string{"query", "--addr", addr, "stats", "nosuch"}, code: 1, stderr: "streamd: stats: stream not found: \"nosuch\"\n"},
		{args: []string{"query", "--addr", addr, "stats", "s", "--cluster"}, code: 1, stderr: "streamd: stats: this daemon is not part of a cluster\n"},
		{args: []string{"query", "--addr", dead, "--timeout", "2s", "streams"}, code: 1, stderr: "streamd: cannot reach a streamd gRPC service at " + dead, prefix: true},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := cliRun(tc.args...)
			if code != tc.code {
				t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			if tc.prefix {
				if !strings.HasPrefix(stdout+stderr, tc.stdout+tc.stderr) {
					t.Errorf("output starts\n%q\nwant\n%q", stdout+stderr, tc.stdout+tc.stderr)
				}
				return
			}
			if stdout != tc.stdout {
				t.Errorf("stdout\n%q\nwant\n%q", stdout, tc.stdout)
			}
			if stderr != tc.stderr {
				t.Errorf("stderr\n%q\nwant\n%q", stderr, tc.stderr)
			}
		})
	}
}

// TestCLIItemStats checks that the stats of an item stream leave out what
// items do not have: min, max, sum and precision.
func TestCLIItemStats(t *testing.T) {
	d, c := startDaemon(t, nil)
	if _, err := c.CreateStream(context.Background(), &pb.CreateStreamRequest{Stream: "u", Kind: pb.StreamKind_STREAM_KIND_ITEMS}); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := cliRun("query", "--addr", d.GRPCAddr(), "stats", "u")
	if code != 0 || !regexp.MustCompile(`kind +items`).MatchString(stdout) {
		t.Fatalf("stats: status %d\n%s%s", code, stdout, stderr)
	}
	for _, row := range []string{" min ", " max ", " sum ", "precision"} {
		if strings.Contains(stdout, row) {
			t.Errorf("stats of an item stream has %q:\n%s", row, stdout)
		}
	}
}

// TestCLIEmptyDaemon checks the answers of a daemon with no streams: the
// list is empty on standard output (nothing for a script to read), with a
// word on standard error.
func TestCLIEmptyDaemon(t *testing.T) {
	d, _ := startDaemon(t, nil)
	code, stdout, stderr := cliRun("query", "--addr", d.GRPCAddr(), "streams")
	if code != 0 || stdout != "" || stderr != "no streams\n" {
		t.Errorf("streams: status %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestNum: values print as their streams store them, float64 values beyond
// float32's range too.
func TestNum(t *testing.T) {
	for v, want := range map[float64]string{
		float64(float32(0.1)): "0.1", 239.61000061035156: "239.61", 1e300: "1e+300", -1e300: "-1e+300",
		0.1: "0.1", 12.5: "12.5", 3.4028234663852886e38: "3.4028235e+38",
	} {
		if got := num(v); got != want {
			t.Errorf("num(%v) = %q, want %q", v, got, want)
		}
	}
}

// usageText is streamd's usage, as printed before an unknown command.
const usageText = `streamd mines numeric streams for quantiles and heavy hitters.

Usage:
  streamd serve [flags]             run the daemon (streamd serve -h for flags)
  streamd query <command> [flags]   ask a running daemon (streamd query -h)
  streamd version                   print the version
`

// TestCLIStreamsPages checks query streams against a daemon of more
// streams than a page holds: every name in order by default, the first
// --limit, those of --prefix and --match, a --json answer of them all
// whose token, when --limit left some out, --page-token goes on from.
func TestCLIStreamsPages(t *testing.T) {
	d, _ := startDaemon(t, func(c *Config) {
		c.MaxMemory = MemoryLimit{}
		c.Stream = summary.Config{Epsilon: 0.01, WindowSize: 16, SlidingWindow: 16}
	})
	var all []string
	for i := range 10050 {
		all = append(all, fmt.Sprintf("n%05d", i))
	}
	for _, i := range rand.New(rand.NewPCG(1, 2)).Perm(len(all)) {
		if _, err := d.pipe.Create(all[i], summary.Config{}); err != nil {
			t.Fatal(err)
		}
	}
	lines := func(names ...string) string { return strings.Join(names, "\n") + "\n" }
	addr := d.GRPCAddr()
	for _, tc := range []struct {
		args   []string
		stdout string
		stderr string
		json   *pb.ListStreamsResponse // the answer printed, instead of stdout
	}{
		{args: []string{"streams"}, stdout: lines(all...)},
		{args: []string{"list", "--limit", "3"}, stdout: lines(all[:3]...)},
		{args: []string{"streams", "--prefix", "n1004"}, stdout: lines(all[10040:]...)},
		{args: []string{"streams", "--prefix", "n0", "--match", "99"}, stdout: lines(match(all, "n0", "99")...)},
		{args: []string{"streams", "--match", "zz"}, stderr: "no streams\n"},
		{args: []string{"streams", "--limit", "2", "--json"}, json: &pb.ListStreamsResponse{Streams: all[:2], NextPageToken: "bjAwMDAx"}},
		{args: []string{"streams", "--limit", "2", "--page-token", "bjAwMDAx"}, stdout: lines("n00002", "n00003")},
		{args: []string{"streams", "--prefix", "n1004", "--json", "--limit", "100"}, json: &pb.ListStreamsResponse{Streams: all[10040:]}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := cliRun(append([]string{"query", "--addr", addr}, tc.args...)...)
			if tc.json != nil {
				var got pb.ListStreamsResponse
				if err := protojson.Unmarshal([]byte(stdout), &got); err != nil || !proto.Equal(&got, tc.json) || code != 0 || stderr != "" {
					t.Errorf("exit status %d, stderr %q, stdout %s (%v); want %v", code, stderr, stdout, err, tc.json)
				}
				return
			}
			if code != 0 || stdout != tc.stdout || stderr != tc.stderr {
				t.Errorf("exit status %d, stdout %d bytes, stderr %q; want 0, %d bytes, %q\nstdout starts %.200q\nwant %.200q", code, len(stdout), stderr, len(tc.stdout), tc.stderr, stdout, tc.stdout)
			}
		})
	}
	code, _, stderr := cliRun("query", "--addr", addr, "streams", "--page-token", "x!")
	if code != 1 || !strings.HasPrefix(stderr, "streamd: list streams: page_token \"x!\" is not one ListStreams returned") {
		t.Errorf("a bad token: status %d, %q", code, stderr)
	}
}

// match returns the names that start with prefix and contain sub.
func match(names []string, prefix, sub string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) && strings.Contains(n, sub) {
			out = append(out, n)
		}
	}
	return out
}
