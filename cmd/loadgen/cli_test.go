package main

import (
	"context"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	pb "streamd/api/proto/streamd/v1"
	"streamd/loadgen/daemontest"
)

// TestExitStatus checks loadgen's exit status and what it prints for help,
// bad usage and failures, as its usage says: 0 on success and for help
// asked for, 1 on an error, 2 for bad usage, 3 when --verify fails.
func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		code       int
		stdout     string // a regexp the standard output must match
		stderr     string // a regexp the standard error must match
		stderrOnce string // a string the standard error must hold exactly once
	}{
		{args: []string{"--help"}, code: 0, stdout: `(?m)^Usage:`},
		{args: []string{"-h"}, code: 0, stdout: `(?m)^Usage:`},
		{args: []string{"help"}, code: 0, stdout: `(?m)^Usage:`},
		{args: []string{"synth", "-h"}, code: 0, stdout: `(?m)^  -count`},
		{args: []string{"synth", "--help"}, code: 0, stdout: `(?m)^  -count`},
		{args: []string{"record", "--help"}, code: 0, stdout: `(?m)^  -item-streams`},
		{args: nil, code: 2, stderr: `(?m)^Usage:`},
		{args: []string{"nonsense"}, code: 2, stderrOnce: `loadgen: unknown command "nonsense"`},
		{args: []string{"synth", "--bogus"}, code: 2, stderrOnce: "flag provided but not defined: -bogus"},
		{args: []string{"synth", "--target", "tcp"}, code: 2, stderrOnce: "loadgen: synth: --count is required"},
		{args: []string{"synth", "--count", "5", "--target", "carrier-pigeon"}, code: 2, stderrOnce: `unknown --target "carrier-pigeon"`},
		{args: []string{"record", "--listen", "127.0.0.1:0"}, code: 2, stderrOnce: "loadgen: record: want --out"},
		{args: []string{"replay"}, code: 2, stderrOnce: "loadgen: replay: --file is required"},
		{args: []string{"synth", "--count", "5", "--conns", "0"}, code: 2, stderrOnce: "loadgen: --conns 0: must be at least 1"},
		{args: []string{"synth", "--count", "5", "--dist", "ipv4"}, code: 2, stderrOnce: "loadgen: synth: --dist ipv4 sends items: it needs --items"},
		{args: []string{"synth", "--count", "5", "--dist", "ipv4", "--items", "--flood-share", "1"}, code: 1, stderrOnce: "synth: flood share 1 outside [0, 1)"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var o, e syncBuffer
			m := &Main{Stdout: &o, Stderr: &e, Getenv: func(string) string { return "" }}
			code := m.Exit(m.Run(context.Background(), tc.args))
			stdout, stderr := o.String(), e.String()
			if code != tc.code {
				t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			if tc.stdout != "" && !regexp.MustCompile(tc.stdout).MatchString(stdout) {
				t.Errorf("stdout does not match %q:\n%s", tc.stdout, stdout)
			}
			if tc.stderr != "" && !regexp.MustCompile(tc.stderr).MatchString(stderr) {
				t.Errorf("stderr does not match %q:\n%s", tc.stderr, stderr)
			}
			if tc.stderrOnce != "" && strings.Count(stderr, tc.stderrOnce) != 1 {
				t.Errorf("stderr holds %q %d times, want once:\n%s", tc.stderrOnce, strings.Count(stderr, tc.stderrOnce), stderr)
			}
			if tc.code == 0 && strings.Contains(stderr, "loadgen:") {
				t.Errorf("help printed an error:\n%s", stderr)
			}
		})
	}
}

// TestUnreachableTarget checks that a run that cannot reach its target
// fails with status 1 and the reason, without a table of nothing sent.
func TestUnreachableTarget(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	var o, e syncBuffer
	m := &Main{Stdout: &o, Stderr: &e, Getenv: func(string) string { return "" }}
	code := m.Exit(m.Run(context.Background(), []string{"synth", "--count", "10", "--target", "tcp", "--addr", addr, "--progress", "off"}))
	if code != 1 || o.String() != "" || !strings.Contains(e.String(), "connection refused") {
		t.Errorf("exit status %d, stdout %q, stderr:\n%s", code, o.String(), e.String())
	}
}

// TestVerifyExistingStream checks that --verify into a stream that holds
// other values fails with status 3 and says why, without a table of
// answers it never got.
func TestVerifyExistingStream(t *testing.T) {
	d := daemontest.Start(t)
	args := []string{"synth", "--count", "100", "--stream", "again", "--target", "tcp", "--addr", d.TCPAddr,
		"--verify", "--grpc-addr", d.GRPCAddr, "--progress", "off", "--verify-timeout", "10s"}
	if _, _, err := run(t, args...); err != nil {
		t.Fatal(err)
	}
	var o, e syncBuffer
	m := &Main{Stdout: &o, Stderr: &e, Getenv: func(string) string { return "" }}
	code := m.Exit(m.Run(context.Background(), args))
	out := o.String()
	if code != 3 || !strings.Contains(out, "stream again: 100 values sent\nFAIL: daemon counts 200 values, more than the 100 sent: verify needs a new stream") || strings.Contains(out, "ε=") {
		t.Errorf("exit status %d, stdout:\n%s", code, out)
	}
}

// TestProgressOnce checks that the report of every value sent is printed
// once, although the last tick and the final report both say so.
func TestProgressOnce(t *testing.T) {
	d := daemontest.Start(t)
	_, stderr, err := run(t, "synth", "--count", "40000", "--rate", "100000", "--stream", "p",
		"--target", "tcp", "--addr", d.TCPAddr, "--progress", "100ms")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(stderr, "(100.0%)"); n != 1 {
		t.Errorf("the 100%% line printed %d times:\n%s", n, stderr)
	}
}

// startRecord starts loadgen record with args on a free port and returns
// its address and the channel of its exit status.
func startRecord(t *testing.T, ctx context.Context, stdout, stderr *syncBuffer, args ...string) (string, <-chan int) {
	t.Helper()
	done := make(chan int, 1)
	go func() {
		m := &Main{Stdout: stdout, Stderr: stderr}
		done <- m.Exit(m.Run(ctx, append([]string{"record", "--listen", "127.0.0.1:0"}, args...)))
	}()
	addrRE := regexp.MustCompile(`"loadgen recording" listen=(\S+)`)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if m := addrRE.FindStringSubmatch(stderr.String()); m != nil {
			return m[1], done
		}
		if time.Now().After(deadline) {
			t.Fatalf("record did not start:\n%s", stderr.String())
		}
	}
}

// TestRecordInterrupt checks that an interrupt, record's documented stop,
// ends it with status 0 and its summary.
func TestRecordInterrupt(t *testing.T) {
	ctx, interrupt := context.WithCancel(context.Background())
	var o, e syncBuffer
	_, done := startRecord(t, ctx, &o, &e, "--out", t.TempDir()+"/none.sdb")
	interrupt()
	select {
	case code := <-done:
		if code != 0 || !strings.Contains(o.String(), "recorded 0 values of 0 streams") || strings.Contains(e.String(), "canceled") {
			t.Errorf("exit status %d\nstdout:\n%s\nstderr:\n%s", code, o.String(), e.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("record did not stop at the interrupt")
	}
}

// TestRecordItemLines records item lines of a stream named by
// --item-streams beside value lines; the recording replays the items into
// an item stream.
func TestRecordItemLines(t *testing.T) {
	path := t.TempDir() + "/items.sdb"
	var o, e syncBuffer
	addr, done := startRecord(t, context.Background(), &o, &e, "--out", path, "--item-streams", "urls", "--count", "5")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("urls /a \"/b c\" /a\nload 1 x 2\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		out := o.String()
		if code != 0 || !strings.Contains(out, "recorded 5 values of 2 streams") || !strings.Contains(out, "rejected 1 (malformed=1)") {
			t.Fatalf("record: exit status %d\nstdout:\n%s\nstderr:\n%s", code, out, e.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("record did not stop after its count:\n%s", e.String())
	}
	d := daemontest.Start(t)
	out, stderr, err := run(t, "replay", "--file", path, "--target", "tcp-binary", "--addr", d.TCPAddr,
		"--verify", "--grpc-addr", d.GRPCAddr, "--progress", "off")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, stderr)
	}
	if !strings.Contains(out, "stream urls: N=3") || !strings.Contains(out, "(item values)") || !strings.Contains(out, "(2 streams)") {
		t.Errorf("replay output:\n%s", out)
	}
}

// TestSynthAddressesVerify sends addresses with a flood to a hierarchy
// stream, as the README's example does, and verifies its hierarchical
// heavy hitters.
func TestSynthAddressesVerify(t *testing.T) {
	d := daemontest.Start(t)
	if _, err := d.Client.CreateStream(context.Background(), &pb.CreateStreamRequest{Stream: "addrs", Hierarchy: "ipv4"}); err != nil {
		t.Fatal(err)
	}
	stdout, _, err := run(t, "synth", "--items", "--dist", "ipv4", "--flood-share", "0.3", "--flood-after", "20000",
		"--count", "30000", "--stream", "addrs", "--target", "tcp-binary", "--addr", d.TCPAddr,
		"--verify", "--support", "0.05", "--grpc-addr", d.GRPCAddr, "--progress", "off", "--verify-timeout", "10s")
	if err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	for _, want := range []string{"discounted hierarchical heavy hitters (ipv4/8) at support 0.05", "heavy prefixes (ipv4/8) at support 0.05", "verify: every answer within its bound"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout has no %q:\n%s", want, stdout)
		}
	}
}
