package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	pb "streamd/api/proto/streamd/v1"
)

// TestFitConnLimits: the connection limits and the reserve must fit in
// the open files limit; defaults are lowered in proportion to fit, flags
// set otherwise are refused by name.
func TestFitConnLimits(t *testing.T) {
	for _, tc := range []struct {
		name              string
		limit             uint64
		tcpAddr           string
		tcp, grpc         int
		wantTCP, wantGRPC int
		wantErr           string
	}{
		{"defaults fit", 20000, "x", 4096, 1024, 4096, 1024, ""},
		{"exactly", 4096 + 1024 + fdReserve, "x", 4096, 1024, 4096, 1024, ""},
		{"defaults lowered", 1024, "x", 4096, 1024, 4096 * 896 / 5120, 1024 * 896 / 5120, ""},
		{"a default lowered beside a set one", 1024, "x", 500, 1024, 500, 1024 - fdReserve - 500, ""},
		{"no tcp ingest", 1024, "", 4096, 1024, 4096, 1024 - fdReserve, ""},
		{"no limits", 100, "x", 0, 0, 0, 0, ""},
		{"set ones that do not fit", 1024, "x", 1000, 100, 0, 0,
			"config max-connections,grpc-max-connections=1228: --max-connections 1000 + --grpc-max-connections 100 + 128 in reserve need 1228 file descriptors, more than the open files limit 1024"},
		{"no room for a default", 1024, "x", 1000, 1024, 0, 0, "--max-connections 1000 + --grpc-max-connections 1024 + 128 in reserve need 2152"},
	} {
		c := DefaultConfig()
		c.TCPAddr, c.MaxConnections, c.GRPCMaxConnections = tc.tcpAddr, tc.tcp, tc.grpc
		err := c.fitConnLimits(tc.limit, slog.New(slog.DiscardHandler))
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want one with %q", tc.name, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case c.MaxConnections != tc.wantTCP || c.GRPCMaxConnections != tc.wantGRPC:
			t.Errorf("%s: limits %d and %d, want %d and %d", tc.name, c.MaxConnections, c.GRPCMaxConnections, tc.wantTCP, tc.wantGRPC)
		}
	}
}

// TestGRPCConnectionFlood runs the daemon with 256 file descriptors and
// opens 300 idle connections to its gRPC port: beyond
// --grpc-max-connections each displaces the oldest, and it is counted; a
// client that makes a call gets in and keeps its place under a second
// flood; and TCP ingest, the HTTP port and checkpoints go on.
func TestGRPCConnectionFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	const (
		fds      = 256
		grpcMax  = 64
		flood    = 300
		interval = 100 * time.Millisecond
	)
	bin := buildStreamd(t)
	dir := t.TempDir()
	// The shell lowers both the soft and the hard limit.
	cmd := exec.Command("sh", "-c", `ulimit -n `+strconv.Itoa(fds)+` && exec "$0" "$@"`, bin, "serve",
		"--grpc-addr", "127.0.0.1:0", "--tcp-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
		"--data-dir", dir, "--sorter", "cpu", "--checkpoint-interval", interval.String(),
		"--max-connections", "32", "--grpc-max-connections", strconv.Itoa(grpcMax), "--grpc-handshake-timeout", "1m")
	addrs, log := startBinary(t, cmd, "grpc", "tcp", "metrics")
	grpcAddr, tcpAddr, httpAddr := addrs["grpc"], addrs["tcp"], addrs["metrics"]

	var held []net.Conn
	for range flood {
		c, err := net.Dial("tcp", grpcAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	// get asks the HTTP port, failing t with the daemon's log after 20 s.
	deadline := time.Now().Add(20 * time.Second)
	httpClient := &http.Client{Timeout: 5 * time.Second}
	await := func(what, path string, ok func(body string) bool) {
		t.Helper()
		var last string
		for {
			resp, err := httpClient.Get("http://" + httpAddr + path)
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if last = string(b); ok(last) {
					return
				}
			} else {
				last = err.Error()
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not after 20 s; last answer %.300q; the daemon's log:\n%s", what, last, log.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// Each idle connection beyond the limit displaces the oldest one that
	// made no call.
	await("the flood displaced", "/metrics", func(m string) bool {
		return strings.Contains(m, fmt.Sprintf("\nstreamd_grpc_connections_displaced_total %d\n", flood-grpcMax)) &&
			strings.Contains(m, fmt.Sprintf("\nstreamd_grpc_connections_open %d\n", grpcMax))
	})

	// A client still gets in, and keeps its place under a second flood.
	cc, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	client := pb.NewStreamdClient(cc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := client.ListStreams(ctx, &pb.ListStreamsRequest{}); err != nil {
		t.Fatalf("a client during the flood: %v\n%s", err, log.String())
	}
	for range flood {
		c, err := net.Dial("tcp", grpcAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	await("the second flood displaced", "/metrics", func(m string) bool {
		return strings.Contains(m, fmt.Sprintf("\nstreamd_grpc_connections_displaced_total %d\n", 2*flood-grpcMax+1))
	})
	if _, err := client.ListStreams(ctx, &pb.ListStreamsRequest{}); err != nil || cc.GetState() != connectivity.Ready {
		t.Fatalf("the client after a second flood: %v, %v", err, cc.GetState())
	}

	// TCP ingest accepts a producer.
	c, err := net.Dial("tcp", tcpAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "flooded 1 2 3\n"); err != nil {
		t.Fatal(err)
	}
	await("the producer's values", "/api/stats?stream=flooded", func(body string) bool {
		var st struct{ Count string }
		return json.Unmarshal([]byte(body), &st) == nil && st.Count == "3"
	})

	// A checkpoint is written after the values arrived.
	newest := func() string {
		names, _ := filepath.Glob(filepath.Join(dir, "checkpoint-*.bin"))
		slices.Sort(names)
		if len(names) == 0 {
			return ""
		}
		return names[len(names)-1]
	}
	before := newest()
	for newest() == before {
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint after %s; the daemon's log:\n%s", before, log.String())
		}
		time.Sleep(interval / 4)
	}
	if s := log.String(); strings.Contains(s, "too many open files") || strings.Contains(s, "level=ERROR") {
		t.Errorf("the daemon's log:\n%s", s)
	}
	// A graceful stop waits for the connections still in their
	// handshakes: end them.
	for _, c := range held {
		c.Close()
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("exit: %v\n%s", err, log.String())
	}
}

// TestConnFlags: the connection flags reach the config and are checked.
func TestConnFlags(t *testing.T) {
	cfg := DefaultConfig()
	if cfg.HandshakeTimeout != 3*time.Second || cfg.GRPCMaxConnections != 1024 || cfg.GRPCIdleTimeout != 5*time.Minute || cfg.GRPCHandshakeTimeout != 5*time.Second {
		t.Errorf("defaults %v %v %v %v", cfg.HandshakeTimeout, cfg.GRPCMaxConnections, cfg.GRPCIdleTimeout, cfg.GRPCHandshakeTimeout)
	}
	fs := newServeFlags(&cfg)
	if err := fs.Parse([]string{"--handshake-timeout", "2s", "--max-unauthenticated", "10", "--grpc-max-connections", "5",
		"--grpc-idle-timeout", "1m", "--grpc-handshake-timeout", "3s"}); err != nil {
		t.Fatal(err)
	}
	if cfg.HandshakeTimeout != 2*time.Second || cfg.MaxUnauthenticated != 10 || cfg.GRPCMaxConnections != 5 ||
		cfg.GRPCIdleTimeout != time.Minute || cfg.GRPCHandshakeTimeout != 3*time.Second {
		t.Errorf("parsed %+v", cfg)
	}
	for flag, mod := range map[string]func(*Config){
		"handshake-timeout":      func(c *Config) { c.HandshakeTimeout = 0 },
		"max-unauthenticated":    func(c *Config) { c.MaxUnauthenticated = -1 },
		"grpc-max-connections":   func(c *Config) { c.GRPCMaxConnections = -1 },
		"grpc-idle-timeout":      func(c *Config) { c.GRPCIdleTimeout = -time.Second },
		"grpc-handshake-timeout": func(c *Config) { c.GRPCHandshakeTimeout = 0 },
	} {
		c := DefaultConfig()
		mod(&c)
		var ce *ConfigError
		if err := c.Validate(); !errors.As(err, &ce) || ce.Field != flag {
			t.Errorf("%s: %v", flag, err)
		}
	}
}

// TestGRPCHandshakeTimeout: a connection to the gRPC port that never
// starts HTTP/2 is closed after --grpc-handshake-timeout.
func TestGRPCHandshakeTimeout(t *testing.T) {
	d, _ := startDaemon(t, func(c *Config) { c.GRPCHandshakeTimeout = 200 * time.Millisecond })
	c, err := net.Dial("tcp", d.GRPCAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Well below the default of 5 s: the 200 ms set above closes it.
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	// The server's HTTP/2 settings, then the end.
	if b, err := io.ReadAll(c); err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("a silent connection read %d bytes, then %v; want it closed within 2 s", len(b), err)
	}
}

// TestGRPCIdleTimeout: a gRPC connection without calls for
// --grpc-idle-timeout is closed by the daemon (the client's channel goes
// idle).
func TestGRPCIdleTimeout(t *testing.T) {
	d, _ := startDaemon(t, func(c *Config) { c.GRPCIdleTimeout = 200 * time.Millisecond })
	conn := dialGRPC(t, d.GRPCAddr())
	if _, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for s := conn.GetState(); s != connectivity.Idle; s = conn.GetState() {
		if !conn.WaitForStateChange(ctx, s) {
			t.Fatalf("the connection is still %v after 10 s", s)
		}
	}
}
