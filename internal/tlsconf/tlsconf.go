// Package tlsconf builds the TLS configurations of streamd's servers and
// clients from PEM files, and makes self-signed certificates for tests and
// trials.
package tlsconf

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Server returns a server configuration with the certificate and key of
// the PEM files certFile and keyFile, TLS 1.2 or later.
func Server(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("load tls key pair: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// ClientOptions say how a client checks its server and who it is.
type ClientOptions struct {
	// CAFile is a PEM file of the certificates to trust; empty means the
	// system's.
	CAFile string
	// SystemRoots, with CAFile, trusts the system's roots as well as
	// CAFile's certificates.
	SystemRoots bool
	// CertFile and KeyFile, if set, are the client's own certificate and
	// key (for servers that check clients).
	CertFile, KeyFile string
	// Insecure skips checking the server's certificate: for trials only.
	Insecure bool
	// ServerName, if set, is the name the server's certificate must have;
	// by default the host of the address dialled.
	ServerName string
}

// Client returns a client configuration, TLS 1.2 or later.
func Client(o ClientOptions) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.Insecure, ServerName: o.ServerName}
	if o.CAFile != "" {
		data, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read tls ca: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if o.SystemRoots {
			// Without system roots (an error), CAFile's alone.
			if sys, err := x509.SystemCertPool(); err == nil {
				cfg.RootCAs = sys
			}
		}
		if !cfg.RootCAs.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("read tls ca %s: no PEM certificate", o.CAFile)
		}
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		return nil, errors.New("tls client certificate and key go together")
	}
	if o.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("load tls client key pair: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// SelfSigned returns a self-signed certificate and its ECDSA key, both PEM
// encoded, for the given IP addresses and host names, valid for a day. The
// certificate is its own CA: trust it with ClientOptions.CAFile.
func SelfSigned(hosts ...string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, fmt.Errorf("generate serial: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: "streamd self-signed"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IsCA:        true, BasicConstraintsValid: true,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("create certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("marshal key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

// WriteSelfSigned writes SelfSigned's certificate and key to cert.pem and
// key.pem in dir, readable by the owner only, and returns their paths.
func WriteSelfSigned(dir string, hosts ...string) (certFile, keyFile string, err error) {
	cert, key, err := SelfSigned(hosts...)
	if err != nil {
		return "", "", err
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, cert, 0o600); err != nil {
		return "", "", fmt.Errorf("write certificate: %w", err)
	}
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		return "", "", fmt.Errorf("write key: %w", err)
	}
	return certFile, keyFile, nil
}
