package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"streamd/internal/tlsconf"
	"streamd/loadgen"
	"streamd/loadgen/daemontest"
	"streamd/synth"
)

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// run runs loadgen with args and returns its standard output and error.
func run(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var o, e syncBuffer
	m := &Main{Stdout: &o, Stderr: &e, Getenv: func(string) string { return "" }}
	err = m.Run(context.Background(), args)
	return o.String(), e.String(), err
}

func TestReplayHousehold(t *testing.T) {
	d := daemontest.Start(t)
	out, stderr, err := run(t, "replay",
		"--file", "../../data/household_power_consumption.csv.gz",
		"--csv-columns", "Global_active_power,Voltage",
		"--target", "tcp", "--addr", d.TCPAddr,
		"--verify", "--grpc-addr", d.GRPCAddr, "--progress", "off")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, stderr)
	}
	for _, want := range []string{
		"Global_active_power  256,869    3,771  malformed=3771",
		"Voltage              256,869    3,771  malformed=3771",
		"sent 513,738 values",
		"verify: every answer within its bound (2 streams)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestSynthTargets(t *testing.T) {
	d := daemontest.Start(t)
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(0), kfake.SeedTopics(2, "streamd"))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	for _, target := range []string{"tcp", "tcp-binary", "grpc"} {
		t.Run(target, func(t *testing.T) {
			out, stderr, err := run(t, "synth", "--dist", "zipf", "--order", "sorted", "--count", "200000",
				"--streams", "2", "--stream", "zipf-"+target, "--conns", "2",
				"--target", target, "--addr", d.TCPAddr, "--grpc-addr", d.GRPCAddr,
				"--verify", "--support", "0.02", "--progress", "10ms")
			if err != nil {
				t.Fatalf("%v\n%s\n%s", err, out, stderr)
			}
			if !strings.Contains(out, "verify: every answer within its bound (2 streams)") {
				t.Errorf("verification did not pass:\n%s", out)
			}
			if target == "grpc" && !strings.Contains(out, "the daemon accepted 200,000, rejected 0") {
				t.Errorf("no push counts in the summary:\n%s", out)
			}
			if !strings.Contains(stderr, "sent 200,000 values of 200,000 (100.0%)") {
				t.Errorf("no final progress line:\n%s", stderr)
			}
		})
	}
	t.Run("kafka", func(t *testing.T) {
		out, stderr, err := run(t, "synth", "--dist", "exponential", "--count", "10000", "--streams", "3",
			"--target", "kafka", "--kafka-brokers", strings.Join(kc.ListenAddrs(), ","), "--topic", "streamd",
			"--kafka-format", "text", "--values-per-message", "100", "--progress", "off")
		if err != nil {
			t.Fatalf("%v\n%s\n%s", err, out, stderr)
		}
		if !strings.Contains(out, "sent 10,000 values") {
			t.Errorf("output:\n%s", out)
		}
	})

	// A second run into the same streams fails its verification: the
	// daemon counts more values than were sent. (Push is acknowledged,
	// so the daemon counts them all before verification starts.)
	_, _, err = run(t, "synth", "--dist", "zipf", "--order", "sorted", "--count", "200000",
		"--streams", "2", "--stream", "zipf-tcp", "--target", "grpc",
		"--grpc-addr", d.GRPCAddr, "--verify", "--progress", "off")
	if !errors.Is(err, loadgen.ErrVerify) {
		t.Errorf("second run: error %v, want ErrVerify", err)
	}
}

// TestRecordReplay records a TCP feed with "loadgen record", replays the
// recording into a daemon and verifies it there.
func TestRecordReplay(t *testing.T) {
	d := daemontest.Start(t)
	path := filepath.Join(t.TempDir(), "feed.sdb.gz")
	var rout, rerr syncBuffer
	done := make(chan error, 1)
	go func() {
		m := &Main{Stdout: &rout, Stderr: &rerr}
		done <- m.Run(context.Background(), []string{"record", "--listen", "127.0.0.1:0", "--out", path, "--count", "30000"})
	}()
	addrRE := regexp.MustCompile(`"loadgen recording" listen=(\S+)`)
	var addr string
	for deadline := time.Now().Add(10 * time.Second); addr == ""; time.Sleep(5 * time.Millisecond) {
		if m := addrRE.FindStringSubmatch(rerr.String()); m != nil {
			addr = m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("record did not start:\n%s", rerr.String())
		}
	}
	out, stderr, err := run(t, "synth", "--dist", "pareto", "--order", "organpipe", "--count", "30000",
		"--stream", "feed", "--target", "tcp", "--addr", addr, "--progress", "off")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, stderr)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("record: %v\n%s", err, rerr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("record did not stop after its count")
	}
	if !strings.Contains(rout.String(), "recorded 30000 values of 1 stream ") {
		t.Errorf("record output:\n%s", rout.String())
	}

	out, stderr, err = run(t, "replay", "--file", path, "--target", "tcp-binary", "--addr", d.TCPAddr,
		"--verify", "--grpc-addr", d.GRPCAddr, "--progress", "off")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, stderr)
	}
	if !regexp.MustCompile(`feed +30,000 +0`).MatchString(out) || !strings.Contains(out, "every answer within its bound (1 stream)") {
		t.Errorf("replay output:\n%s", out)
	}
}

func TestTextReplayLoop(t *testing.T) {
	d := daemontest.Start(t)
	path := filepath.Join(t.TempDir(), "lat.txt")
	if err := os.WriteFile(path, []byte("1\n2\n?\n3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := run(t, "replay", "--file", path, "--loop", "4", "--target", "grpc",
		"--grpc-addr", d.GRPCAddr, "--verify", "--support", "0.3", "--progress", "off")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, stderr)
	}
	if !strings.Contains(out, "sent 12 values") || !strings.Contains(out, "4  malformed=4") || !strings.Contains(out, "every answer within its bound") {
		t.Errorf("output:\n%s", out)
	}
}

// TestSynthFrames sends pre-rendered frames, each stream's pool several
// times over, one stream per connection, and verifies the answers.
func TestSynthFrames(t *testing.T) {
	d := daemontest.Start(t)
	out, stderr, err := run(t, "synth", "--dist", "lognormal", "--count", "300001", "--conns", "3", "--stream-per-conn",
		"--stream", "frames", "--pool", "20000", "--batch", "3000", "--float32",
		"--target", "tcp-binary", "--addr", d.TCPAddr, "--grpc-addr", d.GRPCAddr, "--verify", "--progress", "off")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, stderr)
	}
	for _, want := range []string{
		"frames.0  100,001", "frames.2  100,000", "sent 300,001 values",
		"verify: every answer within its bound (3 streams)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, `"loadgen rendered" streams=3 values=60000`) {
		t.Errorf("stderr:\n%s", stderr)
	}
}

func TestBenchSink(t *testing.T) {
	for _, args := range [][]string{
		{"--count", "100000"},
		{"--count", "100000", "--dist", "lognormal", "--conns", "2", "--stream-per-conn", "--float32"},
		{"--count", "100000", "--target", "tcp", "--conns", "2"},
		{"--count", "100000", "--items", "--dist", "zipf"},
	} {
		out, _, err := run(t, append([]string{"bench-sink"}, args...)...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if !regexp.MustCompile(`100000 values in .* values/s`).MatchString(out) {
			t.Errorf("%v: output: %s", args, out)
		}
	}
	if _, _, err := run(t, "bench-sink", "--target", "grpc"); err == nil {
		t.Error("bench-sink --target grpc ran")
	}
}

// TestSink sends to "loadgen sink" until it stops.
func TestSink(t *testing.T) {
	var sout, serr syncBuffer
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		m := &Main{Stdout: &sout, Stderr: &serr}
		done <- m.Run(ctx, []string{"sink", "--listen", "127.0.0.1:0"})
	}()
	addrRE := regexp.MustCompile(`"loadgen sink" listen=(\S+)`)
	var addr string
	for deadline := time.Now().Add(10 * time.Second); addr == ""; time.Sleep(5 * time.Millisecond) {
		if m := addrRE.FindStringSubmatch(serr.String()); m != nil {
			addr = m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("sink did not start:\n%s", serr.String())
		}
	}
	out, stderr, err := run(t, "synth", "--count", "1000", "--batch", "100", "--target", "tcp-binary", "--addr", addr, "--progress", "off")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, stderr)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The magic, then 10 frames of 100 float64 values of stream "synth".
	if want := fmt.Sprintf("read %d bytes", 4+10*(4+2+5+1+800)); !strings.Contains(sout.String(), want) {
		t.Errorf("sink output %q lacks %q", sout.String(), want)
	}
}

// TestUsage checks that every flag of every command is in the command's
// documentation.
func TestUsage(t *testing.T) {
	doc, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	flagRE := regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`)
	for _, cmd := range []string{"replay", "synth", "record", "bench-sink", "sink"} {
		stdout, _, err := run(t, cmd, "-h")
		if err != nil {
			t.Errorf("%s -h: %v", cmd, err)
		}
		flags := flagRE.FindAllStringSubmatch(stdout, -1)
		if len(flags) == 0 {
			t.Errorf("%s -h lists no flags:\n%s", cmd, stdout)
		}
		for _, f := range flags {
			if !bytes.Contains(doc, []byte("--"+f[1])) {
				t.Errorf("flag --%s of %s is not in the command's doc comment", f[1], cmd)
			}
		}
	}
	if _, _, err := run(t, "nonsense"); err == nil {
		t.Error("unknown command ran")
	}
}

// writeCert writes a self-signed certificate for 127.0.0.1 and its key,
// and returns the certificate's file and the server configuration.
func writeCert(t *testing.T) (certFile string, server *tls.Config) {
	t.Helper()
	certFile, keyFile, err := tlsconf.WriteSelfSigned(t.TempDir(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	server, err = tlsconf.Server(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	return certFile, server
}

// TestSecureTargets sends to a daemon that requires a token and TLS, over
// every daemon target, and to a Kafka that requires SASL and TLS; a wrong
// token is reported with the daemon's reason.
func TestSecureTargets(t *testing.T) {
	certFile, server := writeCert(t)
	client, err := tlsconf.Client(tlsconf.ClientOptions{CAFile: certFile})
	if err != nil {
		t.Fatal(err)
	}
	d := daemontest.StartWith(t, daemontest.Options{Token: "s3cret", TLS: server, ClientTLS: client})
	for _, target := range []string{"tcp", "tcp-binary", "grpc"} {
		out, stderr, err := run(t, "synth", "--dist", "normal", "--count", "50000", "--stream", "secure-"+target,
			"--target", target, "--addr", d.TCPAddr, "--grpc-addr", d.GRPCAddr,
			"--token", "s3cret", "--tls-ca", certFile, "--verify", "--progress", "off")
		if err != nil || !strings.Contains(out, "verify: every answer within its bound (1 stream)") {
			t.Errorf("%s: %v\n%s\n%s", target, err, out, stderr)
		}
	}
	for _, target := range []string{"tcp", "tcp-binary"} {
		_, _, err := run(t, "synth", "--count", "1000", "--stream", "nope", "--target", target, "--addr", d.TCPAddr,
			"--token", "guess", "--tls-insecure", "--progress", "off")
		if err == nil || !strings.Contains(err.Error(), "refused the connection: unauthenticated: wrong token") {
			t.Errorf("%s with a wrong token: %v", target, err)
		}
	}

	kc, err := kfake.NewCluster(kfake.Ports(0), kfake.SeedTopics(1, "secure"), kfake.EnableSASL(),
		kfake.Superuser("SCRAM-SHA-512", "loadgen", "pw"), kfake.TLS(server))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	args := []string{"synth", "--count", "5000", "--target", "kafka", "--kafka-brokers", strings.Join(kc.ListenAddrs(), ","),
		"--topic", "secure", "--kafka-sasl", "scram-sha-512", "--kafka-user", "loadgen", "--kafka-tls-ca", certFile, "--progress", "off"}
	if out, stderr, err := run(t, append(args, "--kafka-password", "pw")...); err != nil || !strings.Contains(out, "sent 5,000 values") {
		t.Errorf("kafka with SASL and TLS: %v\n%s\n%s", err, out, stderr)
	}
	if _, _, err := run(t, append(args, "--kafka-password", "guess")...); err == nil {
		t.Error("kafka with a wrong password succeeded")
	}
}

// TestSynthStreamSizes sends 5,000 streams of Zipf-distributed sizes
// over two connections in frames, rendered ahead and drawn as they go,
// and verifies a sample of them.
func TestSynthStreamSizes(t *testing.T) {
	for _, tt := range []struct{ renderMax, log string }{
		{"2GiB", `"loadgen rendered" streams=5000`},
		{"0", ""},
		{"100KiB", "the frames would take more than --render-max"},
	} {
		t.Run("render-max="+tt.renderMax, func(t *testing.T) {
			testSynthStreamSizes(t, tt.renderMax, tt.log)
		})
	}
}

// testSynthStreamSizes is TestSynthStreamSizes with --render-max
// renderMax, checking that loadgen logs what it says in log.
func testSynthStreamSizes(t *testing.T, renderMax, log string) {
	d := daemontest.Start(t)
	out, stderr, err := run(t, "synth", "--stream-sizes", "zipf:5:5000", "--streams", "5000", "--stream", "sized",
		"--seed", "3", "--dist", "normal", "--conns", "2", "--batch", "1000", "--verify-sample", "40", "--render-max", renderMax,
		"--target", "tcp-binary", "--addr", d.TCPAddr, "--grpc-addr", d.GRPCAddr, "--verify", "--progress", "off")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, stderr)
	}
	rendered := strings.Contains(stderr, "loadgen rendered")
	if !strings.Contains(stderr, log) || log == "" && strings.Contains(stderr, "render-max") || rendered != (renderMax == "2GiB") {
		t.Errorf("stderr lacks %q, or renders when it should not:\n%s", log, stderr)
	}
	sizes := synth.Sizes{Min: 5, Max: 5000, S: 1}.Draw(3, 5000)
	var total int64
	big := 0
	for _, s := range sizes {
		total += s
		if s >= 500 {
			big++
		}
	}
	for _, want := range []string{
		"streams zipf:5:5000:1: 5000\n",
		fmt.Sprintf("sent %s values", commas(total)),
		fmt.Sprintf("verify: every answer within its bound (%d streams)", big+40),
		fmt.Sprintf("verify: checked %d of 5000 streams: all %d of at least 500 values, and 40 of the %d smaller at random", big+40, big, 5000-big),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, ": ok\n"); n != big+40 {
		t.Errorf("%d streams ok, want %d:\n%s", n, big+40, out)
	}
	for _, args := range [][]string{
		{"--stream-sizes", "zipf:5:10", "--render-max", "lots"},
		{"--stream-sizes", "zipf:5:10", "--count", "100"},
		{"--stream-sizes", "zipf:5:10", "--order", "sorted"},
		{"--stream-sizes", "zipf:5:10", "--pairs"},
		{"--stream-sizes", "zipf:5"},
		{"--stream-sizes", "zipf:5:10", "--verify-sample", "-1"},
	} {
		if _, _, err := run(t, append([]string{"synth"}, args...)...); err == nil {
			t.Errorf("synth %v ran", args)
		}
	}
	out, _, err = run(t, "bench-sink", "--stream-sizes", "zipf:1:100", "--streams", "1000", "--seed", "3")
	var want int64
	for _, s := range (synth.Sizes{Min: 1, Max: 100, S: 1}).Draw(3, 1000) {
		want += s
	}
	if err != nil || !strings.Contains(out, fmt.Sprintf(" %d values in ", want)) {
		t.Errorf("bench-sink --stream-sizes: %v: %s", err, out)
	}
}

// commas formats n with thousands separators.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
