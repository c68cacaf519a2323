package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestQueryToken: streamd query reaches a daemon that requires a token
// only with --token, which it sends with every call.
func TestQueryToken(t *testing.T) {
	d, _ := startDaemon(t, func(c *Config) { c.Token = "s3cret" })
	run := func(args ...string) (string, error) {
		var out, errs bytes.Buffer
		err := NewMain(&out, &errs).Run(context.Background(), append([]string{"query", "--addr", d.GRPCAddr()}, args...))
		return out.String() + errs.String(), err
	}
	if out, err := run("streams"); err == nil || !strings.Contains(strings.ToLower(out+err.Error()), "unauthenticated") {
		t.Fatalf("without the token: %v, %q; want Unauthenticated", err, out)
	}
	if out, err := run("--token", "wrong", "create", "s"); err == nil {
		t.Fatalf("with a wrong token: accepted: %q", out)
	}
	if out, err := run("--token", "s3cret", "create", "s"); err != nil {
		t.Fatalf("with the token, create: %v, %q", err, out)
	}
	if out, err := run("--token", "s3cret", "streams"); err != nil || !strings.Contains(out, "s") {
		t.Fatalf("with the token, streams: %v, %q", err, out)
	}
}
