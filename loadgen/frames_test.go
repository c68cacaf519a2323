package loadgen_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"streamd/feed"
	"streamd/ingest"
	"streamd/internal/tlsconf"
	"streamd/loadgen"
	"streamd/loadgen/daemontest"
	"streamd/synth"
)

// memSink is an ingest.Sink that keeps what it accepts, in memory.
type memSink struct {
	mu       sync.Mutex
	values   map[string][]float64
	rejected int
}

func (m *memSink) Accept(ctx context.Context, b *feed.Batch) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.values == nil {
		m.values = make(map[string][]float64)
	}
	m.values[b.Stream] = append(m.values[b.Stream], b.Values...)
	for _, v := range b.Float32 {
		m.values[b.Stream] = append(m.values[b.Stream], float64(v))
	}
	return b.Len(), nil
}

func (m *memSink) IsItemStream(string) bool { return false }

func (m *memSink) Reject(stream string, _ feed.Source, reason feed.Reason, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rejected += n
}

func TestPayload(t *testing.T) {
	for _, f32 := range []bool{false, true} {
		for _, n := range []int{0, 1, 99, 100, 101, 1000, 12345} {
			values := make([]float64, n)
			for i := range values {
				values[i] = float64(i)*1.25 - 7
			}
			p, err := loadgen.NewPayload("s.1", values, f32, 100)
			if err != nil {
				t.Fatal(err)
			}
			if p.Len() != n || p.Stream() != "s.1" || p.Float32() != f32 {
				t.Fatalf("f32=%v n=%d: payload of %d values of %q", f32, n, p.Len(), p.Stream())
			}
			if got := p.Values(); !slices.Equal(got, values) {
				t.Fatalf("f32=%v n=%d: Values differ from the values", f32, n)
			}
			size := 8
			if f32 {
				size = 4
			}
			if frames := (n + 99) / 100; p.Bytes() != frames*(4+2+3+1)+size*n {
				t.Errorf("f32=%v n=%d: %d bytes, want %d frames of 100 values", f32, n, p.Bytes(), frames)
			}
		}
	}

	// Values that cannot be sent are left out and counted; −0 becomes +0.
	values := []float64{1, math.NaN(), math.Inf(-1), 1e39, math.Copysign(0, -1), -1e-50, 2}
	p, err := loadgen.NewPayload("s", values, true, 3)
	if err != nil {
		t.Fatal(err)
	}
	got := p.Values()
	if want := []float64{1, 0, 0, 2}; !slices.Equal(got, want) || math.Signbit(got[1]) || math.Signbit(got[2]) {
		t.Errorf("float32 payload values %v, want %v", got, want)
	}
	if s := p.Skipped(); s[feed.ReasonNaN] != 1 || s[feed.ReasonInf] != 2 {
		t.Errorf("skipped %v, want nan=1 inf=2", s)
	}
	p, _ = loadgen.NewPayload("s", values, false, 3)
	if got, want := p.Values(), []float64{1, 1e39, 0, -1e-50, 2}; !slices.Equal(got, want) || p.Skipped()[feed.ReasonInf] != 1 {
		t.Errorf("float64 payload values %v, skipped %v; want %v and inf=1", got, p.Skipped(), want)
	}

	if _, err := loadgen.NewPayload("bad name", values, false, 0); err == nil {
		t.Error("a bad stream name was accepted")
	}
	if _, err := loadgen.NewPayload("s", values, true, 5<<20); !errors.Is(err, ingest.ErrFrameTooLarge) {
		t.Errorf("frames of 5 Mi float32 values: %v, want ErrFrameTooLarge", err)
	}
}

func TestSynthPayload(t *testing.T) {
	spec := synth.Spec{Dist: synth.Normal, Seed: 7}
	a, err := loadgen.SynthPayload(spec, "n", 300_000, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := loadgen.SynthPayload(spec, "n", 300_000, false, 1000)
	va, vb := a.Values(), b.Values()
	if !slices.Equal(va, vb) {
		t.Error("the values depend on the frame size")
	}
	if slices.Equal(va[:1<<16], va[1<<16:2<<16]) {
		t.Error("two blocks drew the same values")
	}
	spec.Order = synth.Sorted
	s, _ := loadgen.SynthPayload(spec, "n", 300_000, true, 0)
	if vs := s.Values(); !slices.IsSorted(vs) || len(vs) != 300_000 {
		t.Error("sorted order not kept")
	}
	if _, err := loadgen.SynthPayload(synth.Spec{Dist: "nope"}, "n", 10, false, 0); err == nil {
		t.Error("unknown distribution accepted")
	}
}

// expand returns the multiset of a StreamResult's values and counts,
// sorted.
func expand(st *loadgen.StreamResult) []float64 {
	var out []float64
	for i, v := range st.Values {
		for range st.Counts[i] {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// TestFrameRunner sends payloads to a TCP ingest server that keeps what
// it decodes, and checks that each stream received exactly the multiset
// the result reports: with repetition, counts that are not whole frames
// or whole payloads, more or fewer connections than streams.
func TestFrameRunner(t *testing.T) {
	for _, tc := range []struct {
		name     string
		streams  []int // payload sizes
		conns    int
		count    int64
		duration time.Duration
		rate     float64
		tls      bool
	}{
		{name: "one stream", streams: []int{1000}, conns: 1, count: 1000},
		{name: "repeated", streams: []int{1000}, conns: 1, count: 4321},
		{name: "shared stream", streams: []int{1000}, conns: 3, count: 10_007},
		{name: "stream per conn", streams: []int{500, 700, 900}, conns: 3, count: 9999},
		{name: "more conns", streams: []int{500, 700}, conns: 5, count: 20_001},
		{name: "fewer conns", streams: []int{300, 400, 500, 600, 700}, conns: 2, count: 7777},
		{name: "fewer values than streams", streams: []int{10, 10, 10}, conns: 3, count: 2},
		{name: "duration", streams: []int{1000, 999}, conns: 2, duration: 50 * time.Millisecond, rate: 200_000},
		{name: "rate", streams: []int{1000}, conns: 2, count: 5000, rate: 50_000},
		// A frame each, many to a write, each stream sent three times.
		{name: "many thin streams", streams: slices.Repeat([]int{7}, 300), conns: 2, count: 3 * 300 * 7},
		{name: "many thin streams over tls", streams: slices.Repeat([]int{7}, 300), conns: 2, count: 3 * 300 * 7, tls: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &memSink{}
			srv := ingest.NewTCPServer("127.0.0.1:0", sink)
			var clientTLS *tls.Config
			if tc.tls {
				srv.TLSConfig, clientTLS = tlsPair(t)
			}
			if err := srv.Open(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer srv.Close(context.Background())
			var payloads []*loadgen.Payload
			for i, n := range tc.streams {
				p, err := loadgen.SynthPayload(synth.Spec{Dist: synth.Zipf, Seed: uint64(i)}, "s."+strconv.Itoa(i), n, i%2 == 0, 64)
				if err != nil {
					t.Fatal(err)
				}
				payloads = append(payloads, p)
			}
			r := &loadgen.FrameRunner{
				Addr: srv.ListenAddr().String(), Payloads: payloads, Conns: tc.conns,
				Count: tc.count, Duration: tc.duration, Rate: tc.rate, WriteBytes: 1000, Keep: true, TLS: clientTLS,
			}
			res, err := r.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if tc.count > 0 && res.Sent != tc.count {
				t.Errorf("sent %d, want %d", res.Sent, tc.count)
			}
			if tc.duration > 0 && (res.Sent < 1000 || res.Sent > 20_000) {
				t.Errorf("sent %d in %v at %v/s", res.Sent, tc.duration, tc.rate)
			}
			if tc.count > 0 && tc.rate > 0 && res.Elapsed < time.Duration(float64(tc.count-128)/tc.rate*float64(time.Second)) {
				t.Errorf("sent %d values at %v/s in %v", tc.count, tc.rate, res.Elapsed)
			}
			for deadline := time.Now().Add(10 * time.Second); srv.Stats().Values < uint64(res.Sent); time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("server decoded %d values of %d", srv.Stats().Values, res.Sent)
				}
			}
			sink.mu.Lock()
			defer sink.mu.Unlock()
			var total int64
			for _, p := range payloads {
				st := res.Streams[p.Stream()]
				got := slices.Clone(sink.values[p.Stream()])
				slices.Sort(got)
				if want := expand(st); !slices.Equal(got, want) {
					t.Errorf("stream %s: received %d values, the result says %d (sent %d): multisets differ", p.Stream(), len(got), len(want), st.Sent)
				}
				total += st.Sent
			}
			if total != res.Sent || sink.rejected != 0 {
				t.Errorf("streams sent %d in all, result %d; rejected %d", total, res.Sent, sink.rejected)
			}
		})
	}
}

// tlsPair returns a server's TLS configuration with a self-signed
// certificate for 127.0.0.1, and a client's that trusts it.
func tlsPair(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	certPEM, keyPEM, err := tlsconf.SelfSigned("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// TestFrameRunnerErrors checks the runs a FrameRunner refuses, and that an
// endless run ends with its context.
func TestFrameRunnerErrors(t *testing.T) {
	p, _ := loadgen.NewPayload("s", []float64{1, 2, 3}, false, 0)
	empty, _ := loadgen.NewPayload("e", nil, false, 0)
	for _, r := range []*loadgen.FrameRunner{
		{Payloads: []*loadgen.Payload{p}},
		{Addr: "127.0.0.1:1"},
		{Addr: "127.0.0.1:1", Payloads: []*loadgen.Payload{empty}},
		{Addr: "127.0.0.1:1", Payloads: []*loadgen.Payload{p}, Count: 10},
	} {
		if _, err := r.Run(context.Background()); err == nil {
			t.Errorf("%+v: no error", r)
		}
	}

	// An endless run ends with its context.
	srv, err := loadgen.ListenDiscard(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	res, err := (&loadgen.FrameRunner{Addr: srv.Addr(), Payloads: []*loadgen.Payload{p}, Conns: 2}).Run(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || res == nil || res.Sent == 0 {
		t.Errorf("endless run: %v, want the context's error after sending", err)
	}
}

// TestFrameRunnerVerify sends payloads over and over to a daemon and
// verifies its answers against the exact multiset sent.
func TestFrameRunnerVerify(t *testing.T) {
	d := daemontest.Start(t)
	var payloads []*loadgen.Payload
	for i, dist := range []synth.Dist{synth.LogNormal, synth.Zipf} {
		p, err := loadgen.SynthPayload(synth.Spec{Dist: dist, Seed: uint64(i)}, "frames."+string(dist), 70_001, i == 0, 10_000)
		if err != nil {
			t.Fatal(err)
		}
		payloads = append(payloads, p)
	}
	r := &loadgen.FrameRunner{Addr: d.TCPAddr, Payloads: payloads, Conns: 3, Count: 500_000, Keep: true}
	res, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	v, err := loadgen.Verify(context.Background(), d.Client, res, loadgen.VerifyConfig{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	v.WriteTo(&out)
	if !v.OK() || len(v.Streams) != 2 {
		t.Fatalf("verification of %d streams failed:\n%s", len(v.Streams), out.String())
	}
	if res.Streams["frames.zipf"].Sent != 250_000 {
		t.Errorf("zipf stream: sent %d, want 250000", res.Streams["frames.zipf"].Sent)
	}
}
