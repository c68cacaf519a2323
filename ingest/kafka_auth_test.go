package ingest

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"streamd/internal/tlsconf"
)

// TestKafkaSASLTLS consumes from a kfake cluster that requires SASL, with
// each mechanism, over TLS or not: with the right credentials every value
// arrives; with a wrong password none does.
func TestKafkaSASLTLS(t *testing.T) {
	certFile, keyFile := writeSelfSigned(t)
	srvTLS, err := tlsconf.Server(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	cliTLS, err := tlsconf.Client(tlsconf.ClientOptions{CAFile: certFile})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mechanism, kfakeName string
		tls                  bool
	}{
		{"plain", "PLAIN", true},
		{"scram-sha-256", "SCRAM-SHA-256", false},
		{"SCRAM-SHA-512", "SCRAM-SHA-512", true},
	} {
		t.Run(fmt.Sprintf("%s,tls=%v", tc.mechanism, tc.tls), func(t *testing.T) {
			t.Parallel()
			opts := []kfake.Opt{kfake.Ports(0), kfake.SeedTopics(testPartitions, "secure"),
				kfake.EnableSASL(), kfake.Superuser(tc.kfakeName, "streamd", "s3cret")}
			var cli *tls.Config
			if tc.tls {
				opts = append(opts, kfake.TLS(srvTLS))
				cli = cliTLS
			}
			cluster, err := kfake.NewCluster(opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer cluster.Close()
			brokers := cluster.ListenAddrs()
			mech, err := KafkaSASL(tc.mechanism, "streamd", "s3cret")
			if err != nil {
				t.Fatal(err)
			}
			w := &kafka.Writer{
				Addr: kafka.TCP(brokers...), Topic: "secure", RequiredAcks: kafka.RequireAll,
				BatchTimeout: time.Millisecond, Transport: &kafka.Transport{SASL: mech, TLS: cli},
			}
			var msgs []kafka.Message
			var want result
			for i := range 20 {
				msgs = append(msgs, kafka.Message{Key: []byte("sec"), Value: fmt.Appendf(nil, "%d %d", 2*i, 2*i+1)})
				want.add("sec", float64(2*i), float64(2*i+1))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := w.WriteMessages(ctx, msgs...); err != nil {
				t.Fatalf("produce: %v", err)
			}
			w.Close()

			sink := newRecordSink()
			c := testConsumer(t, brokers, "g", sink, "secure")
			c.Dialer = &kafka.Dialer{Timeout: 10 * time.Second, SASLMechanism: mech, TLS: cli}
			stop := start(t, c)
			waitMultiset(t, want, sink)
			stop()

			// A wrong password gets nothing.
			bad, _ := KafkaSASL(tc.mechanism, "streamd", "guess")
			badSink := newRecordSink()
			bc := testConsumer(t, brokers, "g2", badSink, "secure")
			bc.Logger = slog.New(slog.DiscardHandler)
			bc.Dialer = &kafka.Dialer{Timeout: 2 * time.Second, SASLMechanism: bad, TLS: cli}
			stopBad := start(t, bc)
			time.Sleep(time.Second)
			stopBad()
			if got := badSink.result(); len(got.values) != 0 {
				t.Errorf("a wrong password consumed %v", got.values)
			}
		})
	}
}

func TestKafkaSASLNames(t *testing.T) {
	for _, m := range KafkaSASLMechanisms {
		mech, err := KafkaSASL(strings.ToUpper(m), "u", "p")
		if err != nil || !strings.EqualFold(mech.Name(), m) {
			t.Errorf("KafkaSASL(%q) = %v, %v", m, mech, err)
		}
	}
	if _, err := KafkaSASL("gssapi", "u", "p"); err == nil {
		t.Error("an unknown mechanism")
	}
	if _, err := KafkaSASL("plain", "", "p"); err == nil {
		t.Error("no user")
	}
}
