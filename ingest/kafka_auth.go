package ingest

import (
	"fmt"
	"strings"

	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
)

// KafkaSASLMechanisms are the names KafkaSASL takes.
var KafkaSASLMechanisms = []string{"plain", "scram-sha-256", "scram-sha-512"}

// KafkaSASL returns the SASL mechanism named mechanism — "plain",
// "scram-sha-256" or "scram-sha-512", in any case — with user's
// credentials, for the Dialer of a KafkaConsumer or a kafka-go Transport.
// PLAIN sends the password as it is: use it over TLS only.
func KafkaSASL(mechanism, user, password string) (sasl.Mechanism, error) {
	if user == "" {
		return nil, fmt.Errorf("kafka sasl %s: no user", mechanism)
	}
	switch strings.ToLower(mechanism) {
	case "plain":
		return plain.Mechanism{Username: user, Password: password}, nil
	case "scram-sha-256":
		m, err := scram.Mechanism(scram.SHA256, user, password)
		if err != nil {
			return nil, fmt.Errorf("kafka sasl %s: %w", mechanism, err)
		}
		return m, nil
	case "scram-sha-512":
		m, err := scram.Mechanism(scram.SHA512, user, password)
		if err != nil {
			return nil, fmt.Errorf("kafka sasl %s: %w", mechanism, err)
		}
		return m, nil
	}
	return nil, fmt.Errorf("unknown kafka sasl mechanism %q (want %s)", mechanism, strings.Join(KafkaSASLMechanisms, ", "))
}
