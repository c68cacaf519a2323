// Package daemontest runs streamd in-process for loadgen's tests: the
// pipeline of package pipeline with the CPU sorter, the gRPC service of
// package api and the TCP ingest of package ingest, each on a port of
// 127.0.0.1 chosen by the system.
package daemontest

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"streamd/api"
	pb "streamd/api/proto/streamd/v1"
	"streamd/gpusort"
	"streamd/ingest"
	"streamd/internal/grpcauth"
	"streamd/pipeline"
)

// Daemon is a running in-process streamd.
type Daemon struct {
	GRPCAddr string // the gRPC address
	TCPAddr  string // the TCP ingest address
	Client   pb.StreamdClient
	// Pipeline is the daemon's pipeline, the ingest.Sink of its sources,
	// for a test to feed from a source of its own (such as Kafka).
	Pipeline *pipeline.Pipeline
}

// Options configure a daemon.
type Options struct {
	// Token, if set, is required of TCP connections and gRPC calls.
	Token string
	// TLS, if set, is the server configuration of TCP ingest and gRPC;
	// ClientTLS then configures the daemon's Client.
	TLS, ClientTLS *tls.Config
}

// Start starts a daemon that is stopped when the test ends.
func Start(t testing.TB) *Daemon { return StartWith(t, Options{}) }

// StartWith starts a daemon with o, stopped when the test ends.
func StartWith(t testing.TB, o Options) *Daemon {
	t.Helper()
	ctx := context.Background()
	p, err := pipeline.New(pipeline.Config{Sorter: gpusort.NewCPU(0), Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Open(ctx); err != nil {
		t.Fatal(err)
	}
	var opts []grpc.ServerOption
	if o.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(o.TLS)))
	}
	opts = append(opts, grpcauth.ServerOptions(o.Token)...)
	gs := grpc.NewServer(opts...)
	pb.RegisterStreamdServer(gs, &api.Server{Pipeline: p})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(ln)
	tcp := ingest.NewTCPServer("127.0.0.1:0", p)
	tcp.Logger = discardLogger()
	tcp.Token, tcp.TLSConfig = o.Token, o.TLS
	if err := tcp.Open(ctx); err != nil {
		t.Fatal(err)
	}
	creds := insecure.NewCredentials()
	if o.TLS != nil {
		creds = credentials.NewTLS(o.ClientTLS)
	}
	dial := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
	if o.Token != "" {
		dial = append(dial, grpc.WithPerRPCCredentials(grpcauth.Bearer(o.Token)))
	}
	cc, err := grpc.NewClient(ln.Addr().String(), dial...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cc.Close()
		tcp.Close(ctx)
		gs.Stop()
		p.Close(ctx)
	})
	return &Daemon{GRPCAddr: ln.Addr().String(), TCPAddr: tcp.ListenAddr().String(), Client: pb.NewStreamdClient(cc), Pipeline: p}
}

func discardLogger() *slog.Logger {
	return slog.New(slog.DiscardHandler)
}
