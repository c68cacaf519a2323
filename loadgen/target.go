package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"

	pb "streamd/api/proto/streamd/v1"
	"streamd/ingest"
	"streamd/items"
)

// A Target opens connections to a receiver of values.
type Target interface {
	// Dial opens a connection. ctx bounds the connection's whole life:
	// when it ends, sends fail.
	Dial(ctx context.Context) (Conn, error)
}

// A Conn carries values to a receiver. Its methods are called from one
// goroutine.
type Conn interface {
	// Send sends values of stream, in order. It may buffer them; the
	// caller may reuse values once Send returns.
	Send(stream string, values []float64) error

	// Close sends what is buffered and closes the connection. It returns
	// what the receiver reported about the values, when it reports
	// anything.
	Close() (Ack, error)
}

// ItemConn is a Conn that also carries items, for item streams. Every
// Conn of this package is one.
type ItemConn interface {
	Conn
	// SendItems sends the items of b for stream, in order. The caller may
	// reuse b once SendItems returns.
	SendItems(stream string, b *items.Batch) error
}

// PairConn is a Conn that also carries pairs, for pair streams. Every
// Conn of this package is one.
type PairConn interface {
	Conn
	// SendPairs sends the pairs (x[i], y[i]) for stream, in order. The
	// caller may reuse x and y once SendPairs returns.
	SendPairs(stream string, x, y []float64) error
}

var (
	_ ItemConn = (*tcpConn)(nil)
	_ ItemConn = (*grpcConn)(nil)
	_ ItemConn = (*kafkaConn)(nil)
	_ PairConn = (*tcpConn)(nil)
	_ PairConn = (*grpcConn)(nil)
	_ PairConn = (*kafkaConn)(nil)
)

// Ack is what a receiver reported about the values of a connection.
type Ack struct {
	Known    bool   // the receiver reports counts; the fields below are set
	Accepted uint64 // values the receiver accepted
	Rejected uint64 // values the receiver refused
}

// TCP is a Target that speaks streamd's TCP ingest protocols (see package
// ingest): the line protocol, or the framed protocol if Binary is set. Values
// are written as float64 (in the line protocol, in the shortest decimal
// form that reads back to the same float64), or as float32 if Float32 is
// set. Lines carry at most 1024 values. Items go in item frames, or in
// lines as Go-quoted strings. Each connection starts with the token
// preamble when Token is set, and speaks TLS when TLS is set.
type TCP struct {
	Addr    string
	Binary  bool
	Float32 bool
	Token   string
	TLS     *tls.Config
}

// Dial implements Target.
func (t *TCP) Dial(ctx context.Context) (Conn, error) {
	pre, err := ingest.AppendPreamble(nil, t.Binary, t.Token)
	if err != nil {
		return nil, fmt.Errorf("dial tcp: %w", err)
	}
	nc, err := dialTCP(ctx, t.Addr, t.TLS)
	if err != nil {
		return nil, err
	}
	c := &tcpConn{conn: nc, w: bufio.NewWriterSize(nc, 256<<10), binary: t.Binary, f32: t.Float32}
	// A send blocked by back-pressure ends with ctx.
	c.stop = context.AfterFunc(ctx, func() { nc.SetWriteDeadline(time.Unix(1, 0)) })
	c.w.Write(pre)
	return c, nil
}

type tcpConn struct {
	conn   net.Conn
	w      *bufio.Writer
	stop   func() bool
	binary bool
	f32    bool
	buf    []byte
}

// maxLineValues is the most values a line of the line protocol carries.
const maxLineValues = 1024

func (c *tcpConn) Send(stream string, values []float64) error {
	var err error
	for len(values) > 0 {
		c.buf = c.buf[:0]
		n := len(values)
		if c.binary {
			c.buf, err = ingest.AppendFrame(c.buf, stream, values, c.f32)
			if err != nil {
				return fmt.Errorf("send: %w", err)
			}
		} else {
			n = min(n, maxLineValues)
			c.buf = appendLine(c.buf, stream, values[:n], c.f32)
		}
		if _, err := c.w.Write(c.buf); err != nil {
			return fmt.Errorf("send: %w", refusal(c.conn, err))
		}
		values = values[n:]
	}
	return nil
}

func (c *tcpConn) SendItems(stream string, b *items.Batch) error {
	for i := 0; i < b.Len(); {
		c.buf = c.buf[:0]
		n := min(b.Len()-i, maxLineValues)
		if c.binary {
			var err error
			if c.buf, err = ingest.AppendBatchFrame(c.buf, stream, b, i, i+n); err != nil {
				return fmt.Errorf("send: %w", err)
			}
		} else {
			c.buf = append(c.buf, stream...)
			for j := i; j < i+n; j++ {
				c.buf = append(c.buf, ' ')
				c.buf = strconv.AppendQuote(c.buf, string(b.Item(j)))
			}
			c.buf = append(c.buf, '\n')
		}
		if _, err := c.w.Write(c.buf); err != nil {
			return fmt.Errorf("send: %w", refusal(c.conn, err))
		}
		i += n
	}
	return nil
}

// maxFramePairs is the most pairs a frame of SendPairs carries.
const maxFramePairs = 1 << 16

// SendPairs sends pairs in pair frames, or in lines of x:y tokens, as
// float64 whatever Float32 says.
func (c *tcpConn) SendPairs(stream string, x, y []float64) error {
	for len(x) > 0 {
		c.buf = c.buf[:0]
		var n int
		if c.binary {
			n = min(len(x), maxFramePairs)
			var err error
			if c.buf, err = ingest.AppendPairsFrame(c.buf, stream, x[:n], y[:n]); err != nil {
				return fmt.Errorf("send: %w", err)
			}
		} else {
			n = min(len(x), maxLineValues)
			c.buf = append(c.buf, stream...)
			for i := range n {
				c.buf = append(c.buf, ' ')
				c.buf = strconv.AppendFloat(c.buf, x[i], 'g', -1, 64)
				c.buf = append(c.buf, ':')
				c.buf = strconv.AppendFloat(c.buf, y[i], 'g', -1, 64)
			}
			c.buf = append(c.buf, '\n')
		}
		if _, err := c.w.Write(c.buf); err != nil {
			return fmt.Errorf("send: %w", refusal(c.conn, err))
		}
		x, y = x[n:], y[n:]
	}
	return nil
}

// dialTCP connects to the TCP ingest address addr, over TLS if tc is set.
func dialTCP(ctx context.Context, addr string, tc *tls.Config) (net.Conn, error) {
	var (
		nc  net.Conn
		err error
	)
	if tc != nil {
		d := tls.Dialer{Config: tc}
		nc, err = d.DialContext(ctx, "tcp", addr)
	} else {
		var d net.Dialer
		nc, err = d.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("dial tcp: %w", err)
	}
	return nc, nil
}

// refusal returns the daemon's error line, if it sent one before closing
// conn (a missing or wrong token), as an error; else err.
func refusal(conn net.Conn, err error) error {
	conn.SetReadDeadline(time.Now().Add(time.Second))
	line, _ := bufio.NewReader(io.LimitReader(conn, 4096)).ReadString('\n')
	if msg, ok := strings.CutPrefix(strings.TrimSpace(line), "error: "); ok {
		return fmt.Errorf("the daemon refused the connection: %s", msg)
	}
	return err
}

// finishTCP ends the sending side of conn, a TCP ingest connection with
// everything written, and waits, for up to a minute, until the daemon
// closes it: the daemon has then accepted every value, or sent an error
// line, which finishTCP returns.
func finishTCP(conn net.Conn) error {
	if err := closeWrite(conn); err != nil {
		return refusal(conn, err)
	}
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	reply, err := io.ReadAll(io.LimitReader(conn, 4096))
	if msg, ok := strings.CutPrefix(strings.TrimSpace(string(reply)), "error: "); ok {
		return fmt.Errorf("the daemon refused the connection: %s", msg)
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return nil // the daemon is slow, not failing
	}
	return err
}

// appendLine appends a line of the line protocol to dst.
func appendLine(dst []byte, stream string, values []float64, f32 bool) []byte {
	bits := 64
	if f32 {
		bits = 32
	}
	dst = append(dst, stream...)
	for _, v := range values {
		dst = append(dst, ' ')
		dst = strconv.AppendFloat(dst, v, 'g', -1, bits)
	}
	return append(dst, '\n')
}

// Close flushes what is buffered, ends the connection's sending side and
// waits, for up to a minute, until the daemon closes it: the daemon then
// has accepted every value, or sent an error line, which Close returns.
func (c *tcpConn) Close() (Ack, error) {
	c.stop()
	err := c.w.Flush()
	if err == nil {
		err = finishTCP(c.conn)
	} else {
		err = refusal(c.conn, err)
	}
	if cerr := c.conn.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Ack{}, fmt.Errorf("close tcp: %w", err)
	}
	return Ack{}, nil
}

// closeWrite ends the sending side of conn, a TCP or TLS connection.
func closeWrite(conn net.Conn) error {
	if cw, ok := conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// GRPC is a Target that sends values with streamd's Push call, one call per
// connection, for as long as the connection lasts. Each Send is one
// PushRequest. Durable asks the daemon to answer only once a checkpoint
// covers the values.
type GRPC struct {
	Client  pb.StreamdClient
	Durable bool
}

// Dial implements Target.
func (g *GRPC) Dial(ctx context.Context) (Conn, error) {
	call, err := g.Client.Push(ctx)
	if err != nil {
		return nil, fmt.Errorf("push: %w", err)
	}
	return &grpcConn{call: call, durable: g.Durable}, nil
}

type grpcConn struct {
	call    pb.Streamd_PushClient
	durable bool
	req     pb.PushRequest
}

func (c *grpcConn) Send(stream string, values []float64) error {
	// The request is marshalled by Send, and loadgen installs no stats
	// handler that could keep it, so values may be reused afterwards.
	c.req.Stream, c.req.Values, c.req.Durable = stream, values, c.durable
	if err := c.call.Send(&c.req); err != nil {
		if err == io.EOF {
			// The server ended the call: its status says why.
			_, err = c.call.CloseAndRecv()
		}
		return fmt.Errorf("push: %w", err)
	}
	return nil
}

func (c *grpcConn) SendItems(stream string, b *items.Batch) error {
	list := make([]string, b.Len())
	for i := range list {
		list[i] = string(b.Item(i))
	}
	c.req.Stream, c.req.Values, c.req.Items, c.req.Durable = stream, nil, list, c.durable
	err := c.call.Send(&c.req)
	c.req.Items = nil
	if err != nil {
		if err == io.EOF {
			_, err = c.call.CloseAndRecv()
		}
		return fmt.Errorf("push: %w", err)
	}
	return nil
}

func (c *grpcConn) SendPairs(stream string, x, y []float64) error {
	c.req.Stream, c.req.Values, c.req.Pairs, c.req.Durable = stream, nil, &pb.Pairs{X: x, Y: y}, c.durable
	err := c.call.Send(&c.req)
	c.req.Pairs = nil
	if err != nil {
		if err == io.EOF {
			_, err = c.call.CloseAndRecv()
		}
		return fmt.Errorf("push: %w", err)
	}
	return nil
}

func (c *grpcConn) Close() (Ack, error) {
	resp, err := c.call.CloseAndRecv()
	if err != nil {
		return Ack{}, fmt.Errorf("push: %w", err)
	}
	return Ack{Known: true, Accepted: resp.Accepted, Rejected: resp.Rejected}, nil
}

// KafkaFormat is the encoding of the values of a Kafka message.
type KafkaFormat string

// The Kafka message formats; see the package documentation.
const (
	KafkaFloat64 KafkaFormat = "f64"  // little-endian binary64 values
	KafkaFloat32 KafkaFormat = "f32"  // little-endian binary32 values
	KafkaText    KafkaFormat = "text" // decimal numbers separated by blanks
)

// The "content-type" header values of the Kafka message formats: those
// the daemon's consumer reads (package ingest).
const (
	ContentTypeFloat64 = ingest.ContentTypeBinary64
	ContentTypeFloat32 = ingest.ContentTypeBinary32
	ContentTypeText    = ingest.ContentTypeText
)

// ContentTypeHeader is the Kafka message header that names the format.
const ContentTypeHeader = ingest.ContentTypeHeader

// ContentType returns the "content-type" header value of format f, or ""
// for an unknown format.
func (f KafkaFormat) ContentType() string {
	switch f {
	case KafkaFloat64:
		return ContentTypeFloat64
	case KafkaFloat32:
		return ContentTypeFloat32
	case KafkaText:
		return ContentTypeText
	}
	return ""
}

// ParseKafkaFormat returns the format named s, by its short name ("f64",
// "f32", "text") or its content type.
func ParseKafkaFormat(s string) (KafkaFormat, error) {
	for _, f := range []KafkaFormat{KafkaFloat64, KafkaFloat32, KafkaText} {
		if s == string(f) || s == f.ContentType() {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown kafka format %q: want f64, f32 or text", s)
}

// AppendKafkaValue appends values encoded in format f to dst.
func AppendKafkaValue(dst []byte, f KafkaFormat, values []float64) []byte {
	switch f {
	case KafkaFloat32:
		for _, v := range values {
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(v)))
		}
	case KafkaText:
		for i, v := range values {
			if i > 0 {
				dst = append(dst, ' ')
			}
			dst = strconv.AppendFloat(dst, v, 'g', -1, 64)
		}
	default:
		for _, v := range values {
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
		}
	}
	return dst
}

// Kafka is a Target that produces messages to a Kafka topic with a
// kafka-go Writer, one writer per connection: each message holds up to
// ValuesPerMessage values of one stream (default 1000) in Format (default
// KafkaFloat64), its key is the stream name, so that a stream stays on one
// partition, and its "content-type" header names the format. Every write
// waits for all in-sync replicas (RequireAll). A connection gathers the
// messages of its sends, of any streams, and writes them once it holds
// kafkaFlushMessages of them or kafkaFlushBytes of values, and when it is
// closed: a send returns the error of the write it made, if any, and
// Close that of the last, so that many small batches of many streams cost
// a write per thousand messages, not one each.
type Kafka struct {
	Brokers          []string
	Topic            string
	Format           KafkaFormat
	ValuesPerMessage int

	// NoKey sends messages without a key, spread round robin over the
	// topic's partitions: a daemon then names their stream after the topic
	// (so Topic should be the stream's name).
	NoKey bool

	// BatchTimeout is how long a writer waits to fill a batch (default
	// 5ms); Transport, if set, replaces kafka-go's default transport.
	BatchTimeout time.Duration
	Transport    kafka.RoundTripper
}

// Dial implements Target.
func (k *Kafka) Dial(ctx context.Context) (Conn, error) {
	if len(k.Brokers) == 0 || k.Topic == "" {
		return nil, errors.New("kafka: brokers and topic are required")
	}
	f := k.Format
	if f == "" {
		f = KafkaFloat64
	}
	if f.ContentType() == "" {
		return nil, fmt.Errorf("kafka: unknown format %q", f)
	}
	per := k.ValuesPerMessage
	if per <= 0 {
		per = 1000
	}
	timeout := k.BatchTimeout
	if timeout <= 0 {
		timeout = 5 * time.Millisecond
	}
	w := &kafka.Writer{
		Addr:         kafka.TCP(k.Brokers...),
		Topic:        k.Topic,
		Balancer:     &kafka.Hash{},
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: timeout,
		BatchSize:    10000,
		BatchBytes:   16 << 20,
		Transport:    k.Transport,
	}
	return &kafkaConn{ctx: ctx, w: w, format: f, per: per, noKey: k.NoKey}, nil
}

// A kafkaConn writes the messages it gathers once it holds
// kafkaFlushMessages or kafkaFlushBytes of values.
const (
	kafkaFlushMessages = 1000
	kafkaFlushBytes    = 1 << 20
)

type kafkaConn struct {
	ctx    context.Context
	w      *kafka.Writer
	format KafkaFormat
	per    int
	noKey  bool
	msgs   []kafka.Message // gathered, not yet written
	bytes  int             // of the values of msgs
}

// add gathers m, and writes the messages gathered once there are enough.
func (c *kafkaConn) add(m kafka.Message) error {
	c.msgs = append(c.msgs, m)
	c.bytes += len(m.Value)
	if len(c.msgs) < kafkaFlushMessages && c.bytes < kafkaFlushBytes {
		return nil
	}
	return c.flush()
}

// flush writes the messages gathered.
func (c *kafkaConn) flush() error {
	if len(c.msgs) == 0 {
		return nil
	}
	err := c.w.WriteMessages(c.ctx, c.msgs...)
	n := len(c.msgs)
	clear(c.msgs) // let their values go
	c.msgs, c.bytes = c.msgs[:0], 0
	if err != nil {
		return fmt.Errorf("kafka: write %d messages: %w", n, err)
	}
	return nil
}

func (c *kafkaConn) Send(stream string, values []float64) error {
	header := []kafka.Header{{Key: ContentTypeHeader, Value: []byte(c.format.ContentType())}}
	key := []byte(stream)
	if c.noKey {
		key = nil // kafka.Hash spreads keyless messages round robin
	}
	for len(values) > 0 {
		n := min(len(values), c.per)
		err := c.add(kafka.Message{
			Key:     key,
			Value:   AppendKafkaValue(nil, c.format, values[:n]),
			Headers: header,
		})
		if err != nil {
			return err
		}
		values = values[n:]
	}
	return nil
}

// SendItems sends items in messages of the items format, one item a line,
// up to ValuesPerMessage items each. An item holding a newline cannot be
// sent so and fails the send.
func (c *kafkaConn) SendItems(stream string, b *items.Batch) error {
	header := []kafka.Header{{Key: ContentTypeHeader, Value: []byte(ingest.ContentTypeItems)}}
	key := []byte(stream)
	if c.noKey {
		key = nil // kafka.Hash spreads keyless messages round robin
	}
	for i := 0; i < b.Len(); {
		n := min(b.Len()-i, c.per)
		var value []byte
		for j := i; j < i+n; j++ {
			x := b.Item(j)
			if bytes.IndexByte(x, '\n') >= 0 {
				return fmt.Errorf("kafka: item %q holds a newline", x)
			}
			value = append(append(value, x...), '\n')
		}
		if err := c.add(kafka.Message{Key: key, Value: value, Headers: header}); err != nil {
			return err
		}
		i += n
	}
	return nil
}

// SendPairs sends pairs in messages of up to ValuesPerMessage pairs: of
// the pairs text format (x:y tokens) when Format is KafkaText, else of
// the binary pairs-f64 format.
func (c *kafkaConn) SendPairs(stream string, x, y []float64) error {
	ct := ingest.ContentTypePairs64
	if c.format == KafkaText {
		ct = ingest.ContentTypePairs
	}
	header := []kafka.Header{{Key: ContentTypeHeader, Value: []byte(ct)}}
	key := []byte(stream)
	if c.noKey {
		key = nil // kafka.Hash spreads keyless messages round robin
	}
	for len(x) > 0 {
		n := min(len(x), c.per)
		var value []byte
		for i := range n {
			if c.format == KafkaText {
				if i > 0 {
					value = append(value, ' ')
				}
				value = strconv.AppendFloat(value, x[i], 'g', -1, 64)
				value = append(value, ':')
				value = strconv.AppendFloat(value, y[i], 'g', -1, 64)
				continue
			}
			value = binary.LittleEndian.AppendUint64(value, math.Float64bits(x[i]))
			value = binary.LittleEndian.AppendUint64(value, math.Float64bits(y[i]))
		}
		if err := c.add(kafka.Message{Key: key, Value: value, Headers: header}); err != nil {
			return err
		}
		x, y = x[n:], y[n:]
	}
	return nil
}

func (c *kafkaConn) Close() (Ack, error) {
	if err := c.flush(); err != nil {
		c.w.Close()
		return Ack{}, err
	}
	if err := c.w.Close(); err != nil {
		return Ack{}, fmt.Errorf("kafka: close writer: %w", err)
	}
	return Ack{}, nil
}
