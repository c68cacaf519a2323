package main

import (
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"streamd/api"
)

// TestGRPCMaxStreams: the gRPC server tells every client, in its HTTP/2
// settings, how many calls one connection may open at once, so that no
// client can open calls (health checks included) without end.
func TestGRPCMaxStreams(t *testing.T) {
	for _, c := range []struct {
		name string
		mod  func(*Config)
		want uint32
	}{
		{"default", nil, DefaultGRPCMaxStreams},
		{"flag", func(cfg *Config) {
			fs := newServeFlags(cfg)
			if err := fs.Parse([]string{"--grpc-max-streams", "7", "--max-watches", "9", "--max-watches-per-conn", "3"}); err != nil {
				t.Fatal(err)
			}
			if cfg.MaxWatches != 9 || cfg.MaxWatchesPerConn != 3 {
				t.Errorf("watch limits %d, %d; want 9, 3", cfg.MaxWatches, cfg.MaxWatchesPerConn)
			}
		}, 7},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, _ := startDaemon(t, c.mod)
			if got := maxConcurrentStreams(t, d.GRPCAddr()); got != c.want {
				t.Errorf("SETTINGS_MAX_CONCURRENT_STREAMS %d, want %d", got, c.want)
			}
		})
	}
	cfg := DefaultConfig()
	cfg.MaxWatchesPerConn = 0
	if err := cfg.Validate(); err == nil {
		t.Error("max-watches-per-conn 0 is valid")
	}
	if cfg := DefaultConfig(); cfg.MaxWatches != api.DefaultMaxWatches || cfg.MaxWatchesPerConn != api.DefaultMaxWatchesPerConn {
		t.Errorf("default watch limits %d, %d", cfg.MaxWatches, cfg.MaxWatchesPerConn)
	}
}

// maxConcurrentStreams returns the SETTINGS_MAX_CONCURRENT_STREAMS that
// the HTTP/2 server at addr sends, 0 if it sends none (no limit).
func maxConcurrentStreams(t *testing.T, addr string) uint32 {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		if sf, ok := f.(*http2.SettingsFrame); ok && !sf.IsAck() {
			v, _ := sf.Value(http2.SettingMaxConcurrentStreams)
			return v
		}
	}
}
