package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"streamd/ingest"
	"streamd/internal/tlsconf"
)

// TestSASLTLS runs kafkadev with SCRAM and TLS: a producer with the
// credentials and the CA writes, one with a wrong password cannot.
func TestSASLTLS(t *testing.T) {
	certFile, keyFile, err := tlsconf.WriteSelfSigned(t.TempDir(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-topics", "v:1", "-log-level", "none",
			"-sasl", "scram-sha-256", "-sasl-user", "dev", "-sasl-password", "pw",
			"-tls-cert", certFile, "-tls-key", keyFile}, w, io.Discard)
		w.Close()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "kafkadev listening on ")
	if !ok {
		t.Fatalf("first line %q, %v", line, err)
	}
	go io.Copy(io.Discard, out)
	cli, err := tlsconf.Client(tlsconf.ClientOptions{CAFile: certFile})
	if err != nil {
		t.Fatal(err)
	}
	write := func(password string) error {
		mech, err := ingest.KafkaSASL("scram-sha-256", "dev", password)
		if err != nil {
			t.Fatal(err)
		}
		kw := &kafka.Writer{Addr: kafka.TCP(addr), Topic: "v", BatchTimeout: time.Millisecond,
			Transport: &kafka.Transport{SASL: mech, TLS: cli}}
		defer kw.Close()
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		return kw.WriteMessages(wctx, kafka.Message{Value: []byte("1 2 3")})
	}
	if err := write("pw"); err != nil {
		t.Fatalf("with the credentials: %v", err)
	}
	if err := write("guess"); err == nil {
		t.Fatal("a wrong password wrote")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestParseFlagsSecurity(t *testing.T) {
	for _, args := range [][]string{
		{"-sasl", "gssapi", "-sasl-user", "u", "-sasl-password", "p"},
		{"-sasl", "PLAIN"},
		{"-sasl-user", "u"},
		{"-tls-cert", "c.pem"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) succeeded", args)
		}
	}
	cfg, err := parseFlags([]string{"-sasl", "scram-sha-512", "-sasl-user", "u", "-sasl-password", "p"}, io.Discard)
	if err != nil || cfg.sasl != "SCRAM-SHA-512" {
		t.Errorf("parseFlags: %+v, %v", cfg, err)
	}
}
