package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"os"
	"testing"
)

// TestSelfSigned serves TLS with a self-signed certificate: a client that
// trusts it connects, one that does not is refused.
func TestSelfSigned(t *testing.T) {
	certFile, keyFile, err := WriteSelfSigned(t.TempDir(), "127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Server(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", srv)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.WriteString(c, "hello")
			}()
		}
	}()
	trusting, err := Client(ClientOptions{CAFile: certFile})
	if err != nil {
		t.Fatal(err)
	}
	c, err := tls.Dial("tcp", ln.Addr().String(), trusting)
	if err != nil {
		t.Fatalf("trusting client: %v", err)
	}
	if b, _ := io.ReadAll(c); string(b) != "hello" {
		t.Errorf("read %q", b)
	}
	c.Close()
	plain, _ := Client(ClientOptions{})
	if c, err := tls.Dial("tcp", ln.Addr().String(), plain); err == nil {
		c.Close()
		t.Error("a client without the CA connected")
	}
	insecure, _ := Client(ClientOptions{Insecure: true})
	c, err = tls.Dial("tcp", ln.Addr().String(), insecure)
	if err != nil {
		t.Fatalf("insecure client: %v", err)
	}
	c.Close()
	// SystemRoots adds the system's roots to CAFile's certificate.
	both, err := Client(ClientOptions{CAFile: certFile, SystemRoots: true})
	if err != nil {
		t.Fatal(err)
	}
	c, err = tls.Dial("tcp", ln.Addr().String(), both)
	if err != nil {
		t.Fatalf("client trusting the system's roots too: %v", err)
	}
	c.Close()
	if sys, err := x509.SystemCertPool(); err == nil {
		pem, err := os.ReadFile(certFile)
		if err != nil {
			t.Fatal(err)
		}
		sys.AppendCertsFromPEM(pem)
		if !both.RootCAs.Equal(sys) {
			t.Error("SystemRoots: the roots are not the system's and the CA file's")
		}
	}
	if _, err := Client(ClientOptions{CAFile: keyFile}); err == nil {
		t.Error("a key file taken as a CA")
	}
	if _, err := Client(ClientOptions{CertFile: certFile}); err == nil {
		t.Error("a client certificate without its key")
	}
	if _, err := Server(certFile, certFile); err == nil {
		t.Error("a server without its key")
	}
}
