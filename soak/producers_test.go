package soak

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "streamd/api/proto/streamd/v1"
	"streamd/ingest"
)

// epoch is one life of the daemon, as producers see it.
type epoch struct {
	n    int
	grpc string
	tcp  string
}

// gate tells producers which daemon to write to. The driver opens it once
// a started daemon is checked, and closes it before a fault.
type gate struct {
	mu      sync.Mutex
	cur     *epoch // nil while closed
	changed chan struct{}
}

func newGate() *gate { return &gate{changed: make(chan struct{})} }

func (g *gate) set(e *epoch) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.cur = e
	close(g.changed)
	g.changed = make(chan struct{})
}

// wait returns the open epoch newer than after, or nil once stop is
// closed.
func (g *gate) wait(stop <-chan struct{}, after int) *epoch {
	for {
		g.mu.Lock()
		cur, ch := g.cur, g.changed
		g.mu.Unlock()
		if cur != nil && cur.n > after {
			return cur
		}
		select {
		case <-ch:
		case <-stop:
			return nil
		}
	}
}

// isOpen reports whether epoch n is the open one.
func (g *gate) isOpen(n int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cur != nil && g.cur.n == n
}

// way is how a producer sends.
type way int

const (
	tcpLines way = iota
	tcpFrames
	tcpHostile
	push
	pushDurable
	fenceWay
)

// record is what a producer sent to one life of the daemon: it began at
// position start; the values at [start, sent) may have reached the daemon;
// those at [start, acked) were acknowledged.
type record struct{ start, sent, acked int64 }

// producer writes one stream's sequence into the daemon, each value once.
type producer struct {
	stream string
	way    way
	q      seq
	rate   float64 // values a second
	rng    *rand.Rand

	mu   sync.Mutex
	pos  int64
	recs map[int]*record
	errs []string // answers that contradict the README, such as a wrong accepted count
}

// rec returns the record of epoch n, nil if the producer never wrote to it.
func (p *producer) rec(n int) *record {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.recs[n]; ok {
		c := *r
		return &c
	}
	return nil
}

func (p *producer) begin(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.recs[n] = &record{p.pos, p.pos, p.pos}
}

// sending marks [pos, pos+k) as possibly sent in epoch n and returns pos.
func (p *producer) sending(n int, k int64) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	lo := p.pos
	p.pos += k
	p.recs[n].sent = p.pos
	return lo
}

// acked marks the values up to hi as acknowledged in epoch n.
func (p *producer) acked(n int, hi int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.recs[n].acked = hi
}

func (p *producer) fail(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.errs = append(p.errs, fmt.Sprintf(format, args...))
}

// pace waits as long as k values take at the producer's rate; it reports
// false once stop is closed.
func pace(stop <-chan struct{}, k int64, rate float64) bool {
	select {
	case <-stop:
		return false
	case <-time.After(time.Duration(float64(k) / rate * float64(time.Second))):
		return true
	}
}

// run writes to every epoch the gate opens until stop is closed. A
// connection or call that fails while its epoch is still open, other than
// a durable Push whose checkpoint failed (its values are all accepted), is
// recorded as an error: the daemon dropped a producer with no fault, and
// what it holds is no longer known.
func (p *producer) run(g *gate, stop <-chan struct{}, w *world) {
	last := 0
	var e *epoch
	for {
		if e == nil || !g.isOpen(e.n) {
			if e = g.wait(stop, last); e == nil {
				return
			}
			last = e.n
			p.begin(e.n)
		}
		var err error
		switch p.way {
		case tcpLines, tcpFrames, tcpHostile:
			err = p.tcp(e, stop)
		case push, pushDurable:
			err = p.push(e, stop)
		case fenceWay:
			err = p.fences(e, g, stop, w)
		}
		if err != nil && g.isOpen(e.n) {
			p.fail("%s (%s): failed while the daemon ran, with no fault injected: %v", p.stream, wayName(p.way), err)
			return
		}
		if !pace(stop, 1, 10) {
			return
		}
	}
}

// tcp writes batches over one connection until it fails or stop is closed;
// it then closes the connection, so that the daemon reads every byte.
func (p *producer) tcp(e *epoch, stop <-chan struct{}) error {
	conn, err := net.DialTimeout("tcp", e.tcp, 5*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	var buf []byte
	if p.way == tcpFrames {
		buf, _ = ingest.AppendPreamble(nil, true, "")
	}
	for {
		k := int64(50 + p.rng.IntN(1500))
		lo := p.sending(e.n, k)
		buf = p.encode(buf, lo, k)
		_ = conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
		if _, err := conn.Write(buf); err != nil {
			return err
		}
		buf = buf[:0]
		if !pace(stop, k, p.rate) {
			return nil
		}
	}
}

// encode appends the values at [lo, lo+k) in the producer's protocol.
func (p *producer) encode(dst []byte, lo, k int64) []byte {
	vals := make([]float64, k)
	for i := range vals {
		vals[i] = p.q.at(lo + int64(i))
	}
	switch p.way {
	case tcpFrames:
		for i := 0; i < len(vals); i += 700 {
			dst, _ = ingest.AppendFrame(dst, p.stream, vals[i:min(i+700, len(vals))], false)
		}
	case tcpLines:
		for i := 0; i < len(vals); i += 100 {
			dst = append(dst, p.stream...)
			for _, v := range vals[i:min(i+100, len(vals))] {
				dst = append(dst, ' ')
				dst = strconv.AppendFloat(dst, v, 'g', -1, 64)
			}
			dst = append(dst, '\n')
		}
	case tcpHostile:
		// Good values among bad ones, each rejected on its own; lines
		// with a bad stream name and lines over --max-line-bytes, both
		// skipped whole.
		bad := []string{"NaN", "+Inf", "-Inf", "x1", "1e999", "0x", "--1", "\x00"}
		for i := 0; i < len(vals); i += 80 {
			if p.rng.IntN(4) == 0 {
				dst = append(dst, "bad!name 1 2 3\n"...)
			}
			if p.rng.IntN(8) == 0 {
				dst = append(dst, p.stream...)
				dst = append(dst, strings.Repeat(" 1", maxLineBytes/2+10)...)
				dst = append(dst, '\n')
			}
			dst = append(dst, p.stream...)
			for _, v := range vals[i:min(i+80, len(vals))] {
				if p.rng.IntN(10) == 0 {
					dst = append(dst, ' ')
					dst = append(dst, bad[p.rng.IntN(len(bad))]...)
				}
				dst = append(dst, '\t')
				dst = strconv.AppendFloat(dst, v, 'g', -1, 64)
			}
			dst = append(dst, '\n')
		}
	}
	return dst
}

// push makes Push calls until one fails or stop is closed. Each call sends
// its values in messages paced at the producer's rate, so that a call is
// nearly always open: a shutdown meets one half done.
func (p *producer) push(e *epoch, stop <-chan struct{}) error {
	conn, err := grpc.NewClient(e.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	c := pb.NewStreamdClient(conn)
	for {
		k := int64(50 + p.rng.IntN(1500))
		if p.way == pushDurable {
			k = int64(20 + p.rng.IntN(300))
		}
		if err := p.call(c, e.n, k, p.way == pushDurable, stop); err != nil && !checkpointFailed(err) {
			return err
		}
		select {
		case <-stop:
			return nil
		default:
		}
	}
}

// call pushes the next k values in one call, in messages of up to 100
// values paced at the producer's rate (not once stop is closed).
func (p *producer) call(c pb.StreamdClient, n int, k int64, durable bool, stop <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	lo := p.sending(n, k)
	call, err := c.Push(ctx)
	if err != nil {
		return err
	}
	vals := make([]float64, k)
	for i := range vals {
		vals[i] = p.q.at(lo + int64(i))
	}
	for i := 0; i < len(vals); i += 100 {
		m := vals[i:min(i+100, len(vals))]
		if err := call.Send(&pb.PushRequest{Stream: p.stream, Values: m, Durable: durable}); err != nil {
			return err
		}
		select {
		case <-stop:
		case <-time.After(time.Duration(float64(len(m)) / p.rate * float64(time.Second))):
		}
	}
	resp, err := call.CloseAndRecv()
	if err != nil {
		return fmt.Errorf("push %d values: %w", k, err)
	}
	if resp.Accepted != uint64(k) || resp.Rejected != 0 {
		p.fail("%s: a Push of %d good values answered accepted %d, rejected %d", p.stream, k, resp.Accepted, resp.Rejected)
	}
	p.acked(n, lo+k)
	return nil
}

// fence is a lower bound of what checkpoints hold: a checkpoint whose
// sequence number is at least seq holds at least counts of each stream.
type fence struct {
	seq    uint64
	counts map[string]int64
	epoch  int
	at     time.Time
}

// fences takes a fence every quarter second while the daemon answers: it
// reads every stream's count, then pushes one value to its stream durably;
// once that returns, a checkpoint taken after the counts is on disk, and
// it is no newer than the newest valid checkpoint listed after.
func (p *producer) fences(e *epoch, g *gate, stop <-chan struct{}, w *world) error {
	conn, err := grpc.NewClient(e.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	c := pb.NewStreamdClient(conn)
	for {
		counts := map[string]int64{}
		for _, q := range w.producers {
			n, err := count(context.Background(), c, q.stream)
			if err != nil {
				return err
			}
			counts[q.stream] = n
		}
		if err := p.call(c, e.n, 1, true, stop); err != nil {
			if !checkpointFailed(err) {
				return err
			}
			w.fenceFailed(e.n)
			if !pace(stop, 1, 4) {
				return nil
			}
			continue
		}
		files, err := listCheckpoints(w.dataDir)
		if err == nil {
			w.addFence(fence{seq: w.newestValid(files), counts: counts, epoch: e.n, at: time.Now()})
		}
		if !pace(stop, 1, 4) {
			return nil
		}
	}
}

// checkpointFailed reports whether err is a durable Push's failed
// checkpoint: the call's values were all accepted.
func checkpointFailed(err error) bool {
	st, ok := status.FromError(errors.Unwrap(err))
	return ok && st.Code() == codes.Unavailable && strings.Contains(st.Message(), "wait for checkpoint")
}

// kafkaProducer writes one stream's sequence to the topic, spread over its
// partitions, in binary (f64) or text messages.
type kafkaProducer struct {
	stream string
	q      seq
	binary bool
	rate   float64
	rng    *rand.Rand

	mu       sync.Mutex
	produced int64 // positions [0, produced) are acknowledged by the broker
	err      error
}

func (k *kafkaProducer) n() int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.produced
}

// run produces until stop is closed or a write fails.
func (k *kafkaProducer) run(brokers []string, topic string, stop <-chan struct{}) {
	kw := &kafka.Writer{Addr: kafka.TCP(brokers...), Topic: topic, Balancer: &kafka.RoundRobin{},
		RequiredAcks: kafka.RequireAll, BatchTimeout: 2 * time.Millisecond, BatchSize: 50}
	defer kw.Close()
	header := []kafka.Header{{Key: ingest.ContentTypeHeader, Value: []byte(ingest.ContentTypeBinary64)}}
	for {
		n := int64(100 + k.rng.IntN(900))
		lo := k.n()
		var msgs []kafka.Message
		for i := lo; i < lo+n; i += 100 {
			var b []byte
			for j := i; j < min(i+100, lo+n); j++ {
				v := k.q.at(j)
				if k.binary {
					b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
				} else {
					if j > i {
						b = append(b, ' ')
					}
					b = strconv.AppendFloat(b, v, 'g', -1, 64)
				}
			}
			m := kafka.Message{Key: []byte(k.stream), Value: b}
			if k.binary {
				m.Headers = header
			}
			msgs = append(msgs, m)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		err := kw.WriteMessages(ctx, msgs...)
		cancel()
		k.mu.Lock()
		if err != nil {
			k.err = fmt.Errorf("produce to kafka: %w", err)
			k.mu.Unlock()
			return
		}
		k.produced += n
		k.mu.Unlock()
		if !pace(stop, n, k.rate) {
			return
		}
	}
}

// forget drops the record of epoch n, once its values are in the lineage.
func (p *producer) forget(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.recs, n)
}
