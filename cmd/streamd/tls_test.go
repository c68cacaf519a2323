package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	pb "streamd/api/proto/streamd/v1"
	"streamd/internal/tlsconf"
)

// selfSigned writes a certificate for 127.0.0.1 and its key as PEM files.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	certFile, keyFile, err := tlsconf.WriteSelfSigned(t.TempDir(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	return certFile, keyFile, pool
}

// TestTLS serves gRPC over TLS: a TLS client trusting the certificate is
// answered, a plaintext client is not.
func TestTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	d, _ := startDaemon(t, func(c *Config) { c.TLSCert, c.TLSKey = certFile, keyFile })
	creds := credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	conn, err := grpc.NewClient(d.GRPCAddr(), grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := pb.NewStreamdClient(conn).ListStreams(ctx, &pb.ListStreamsRequest{}); err != nil {
		t.Fatalf("over TLS: %v", err)
	}
	plain, _ := grpc.NewClient(d.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	defer plain.Close()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel2()
	if _, err := pb.NewStreamdClient(plain).ListStreams(ctx2, &pb.ListStreamsRequest{}); err == nil {
		t.Fatal("a plaintext client was answered by a TLS server")
	}
}
