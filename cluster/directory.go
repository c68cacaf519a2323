package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"streamd/feed"
)

// Defaults of a Directory.
const (
	// DefaultTopic is the default announcements topic.
	DefaultTopic = "streamd-members"
	// DefaultAnnounceInterval is how often a member announces itself again.
	DefaultAnnounceInterval = 10 * time.Second
	// DefaultStale is how old the last announcement of a member may be
	// before the member is taken to be gone.
	DefaultStale = time.Minute
)

// A Member is a daemon of a consumer group, as it announces itself.
type Member struct {
	Group      string        `json:"group"`
	ID         string        `json:"id"`   // stable across restarts on one data dir
	Addr       string        `json:"addr"` // gRPC address
	Generation int           `json:"generation"`
	Partitions []feed.Source `json:"partitions"`
	// Leaving says the member is stopping: it takes no partition over,
	// so one that gives partitions up need not wait for it to fetch them.
	Leaving bool      `json:"leaving,omitempty"`
	Time    time.Time `json:"-"` // when it was announced
}

// decodeMember decodes an announcement; bad input gives an error.
func decodeMember(data []byte) (Member, error) {
	var m Member
	if err := json.Unmarshal(data, &m); err != nil {
		return Member{}, fmt.Errorf("decode member announcement: %w", err)
	}
	switch {
	case m.ID == "" || len(m.ID) > 200:
		return Member{}, errors.New("decode member announcement: bad id")
	case m.Group == "":
		return Member{}, errors.New("decode member announcement: no group")
	case m.Generation < 0:
		return Member{}, errors.New("decode member announcement: negative generation")
	}
	if _, _, err := net.SplitHostPort(m.Addr); err != nil {
		return Member{}, fmt.Errorf("decode member announcement: address: %w", err)
	}
	return m, nil
}

// A Directory is how the daemons of one consumer group find each other:
// each writes its announcement — its id, gRPC address, group generation
// and partitions — to a compacted Kafka topic, keyed by its id, when it
// starts, at each generation, and every AnnounceInterval; each reads the
// topic from its start and keeps the latest announcement of every member
// of its group. A member that stops gracefully deletes its announcement (a
// tombstone); one that crashed is forgotten once its last announcement is
// older than Stale.
//
// A compacted topic, rather than the group protocol's member metadata,
// because every member must see every other member's address, and the
// group protocol shows the members' metadata to the group's leader only.
// Several groups may share the topic: announcements name their group.
//
// Set the exported fields, then call Run.
type Directory struct {
	Brokers []string
	Topic   string // the announcements topic; DefaultTopic if empty
	Self    Member // this daemon; Group, ID and Addr are required
	Dialer  *kafka.Dialer
	Logger  *slog.Logger

	// AnnounceInterval and Stale: zero means the defaults.
	AnnounceInterval time.Duration
	Stale            time.Duration

	mu      sync.Mutex
	members map[string]Member // latest announcement by id, this group's only
	self    Member
	wake    chan struct{} // announce now
	next    int64         // offset of the next announcement to read
}

func (d *Directory) topic() string {
	if d.Topic == "" {
		return DefaultTopic
	}
	return d.Topic
}

func (d *Directory) logger() *slog.Logger {
	if d.Logger == nil {
		return slog.Default()
	}
	return d.Logger
}

func (d *Directory) init() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.members == nil {
		d.members = make(map[string]Member)
		d.self = d.Self
		d.wake = make(chan struct{}, 1)
	}
}

// Run creates the topic if it does not exist, then announces the member
// and reads the announcements of the others until ctx ends; then it
// deletes the member's announcement. Errors of the brokers are logged and
// retried.
func (d *Directory) Run(ctx context.Context) error {
	if d.Self.Group == "" || d.Self.ID == "" || d.Self.Addr == "" {
		return errors.New("run directory: group, id and address are required")
	}
	d.init()
	if err := d.createTopic(ctx); err != nil && ctx.Err() == nil {
		d.logger().Warn("create the announcements topic; assuming it exists", "topic", d.topic(), "err", err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { d.read(ctx) })
	d.announceLoop(ctx)
	wg.Wait()
	return nil
}

// createTopic creates the compacted topic of one partition, with the
// brokers' default replication.
func (d *Directory) createTopic(ctx context.Context) error {
	conn, err := d.dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	ctrl, err := conn.Controller()
	if err != nil {
		return fmt.Errorf("find controller: %w", err)
	}
	cc, err := d.dialer().DialContext(ctx, "tcp", net.JoinHostPort(ctrl.Host, strconv.Itoa(ctrl.Port)))
	if err != nil {
		return fmt.Errorf("dial controller: %w", err)
	}
	defer cc.Close()
	err = cc.CreateTopics(kafka.TopicConfig{
		Topic: d.topic(), NumPartitions: 1, ReplicationFactor: -1,
		ConfigEntries: []kafka.ConfigEntry{{ConfigName: "cleanup.policy", ConfigValue: "compact"}},
	})
	if errors.Is(err, kafka.TopicAlreadyExists) {
		return nil
	}
	return err
}

func (d *Directory) dialer() *kafka.Dialer {
	if d.Dialer == nil {
		return kafka.DefaultDialer
	}
	return d.Dialer
}

func (d *Directory) dial(ctx context.Context) (*kafka.Conn, error) {
	var errs []error
	for _, b := range d.Brokers {
		conn, err := d.dialer().DialContext(ctx, "tcp", b)
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("dial kafka: %w", errors.Join(errs...))
}

// Update sets the member's generation and partitions and announces them.
func (d *Directory) Update(generation int, partitions []feed.Source) {
	d.init()
	d.mu.Lock()
	d.self.Generation = generation
	d.self.Partitions = slices.Clone(partitions)
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Leave announces that the member is stopping (Member.Leaving). It stays
// announced, as leaving, until Run's ctx ends.
func (d *Directory) Leave() {
	d.init()
	d.mu.Lock()
	d.self.Leaving = true
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// announceLoop announces the member now, on Update and every interval
// until ctx ends, then deletes the announcement.
func (d *Directory) announceLoop(ctx context.Context) {
	interval := d.AnnounceInterval
	if interval <= 0 {
		interval = DefaultAnnounceInterval
	}
	w := &kafka.Writer{
		Addr: kafka.TCP(d.Brokers...), Topic: d.topic(), Balancer: &kafka.Hash{},
		RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond, Transport: d.transport(),
	}
	defer w.Close()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		d.mu.Lock()
		self := d.self
		d.mu.Unlock()
		value, _ := json.Marshal(self)
		wctx, cancel := context.WithTimeout(ctx, interval)
		err := w.WriteMessages(wctx, kafka.Message{Key: []byte(self.ID), Value: value})
		cancel()
		if err != nil && ctx.Err() == nil {
			d.logger().Warn("announce cluster member", "topic", d.topic(), "err", err)
		}
		select {
		case <-t.C:
		case <-d.wake:
		case <-ctx.Done():
			// A tombstone: compaction drops the member, and readers forget
			// it now.
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			if err := w.WriteMessages(wctx, kafka.Message{Key: []byte(self.ID)}); err != nil {
				d.logger().Warn("withdraw cluster member announcement", "err", err)
			}
			cancel()
			return
		}
	}
}

// transport returns the writer's transport, with the dialer's TLS and SASL.
func (d *Directory) transport() *kafka.Transport {
	t := &kafka.Transport{}
	if d.Dialer != nil {
		t.TLS = d.Dialer.TLS
		t.SASL = d.Dialer.SASLMechanism
	}
	return t
}

// read follows the topic from its start until ctx ends.
func (d *Directory) read(ctx context.Context) {
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: d.Brokers, Topic: d.topic(), Partition: 0, Dialer: d.Dialer,
		MinBytes: 1, MaxBytes: 1 << 20, MaxWait: 250 * time.Millisecond,
		StartOffset: kafka.FirstOffset,
		ErrorLogger: kafka.LoggerFunc(func(format string, args ...any) {
			d.logger().Debug("announcements reader: " + fmt.Sprintf(format, args...))
		}),
	})
	defer r.Close()
	failing := false
	for {
		m, err := r.ReadMessage(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			// Once per run of failures; the reader retries.
			if !failing {
				d.logger().Warn("read cluster announcements", "topic", d.topic(), "err", err)
			}
			failing = true
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
				return
			}
			continue
		}
		failing = false
		d.apply(m.Key, m.Value, m.Time)
		d.mu.Lock()
		d.next = m.Offset + 1
		d.mu.Unlock()
	}
}

// Sync waits until the directory has read every announcement written
// before the call, or ctx ends.
func (d *Directory) Sync(ctx context.Context) error {
	d.init()
	conn, err := d.dialer().DialLeader(ctx, "tcp", d.Brokers[0], d.topic(), 0)
	if err != nil {
		return fmt.Errorf("sync announcements: %w", err)
	}
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	last, err := conn.ReadLastOffset()
	conn.Close()
	if err != nil {
		return fmt.Errorf("sync announcements: %w", err)
	}
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		d.mu.Lock()
		read := d.next
		d.mu.Unlock()
		if read >= last {
			return nil
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return fmt.Errorf("sync announcements: %w", ctx.Err())
		}
	}
}

// apply records one message of the topic: an announcement, or a
// tombstone (no value) that forgets the member.
func (d *Directory) apply(key, value []byte, t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if value == nil {
		delete(d.members, string(key))
		return
	}
	m, err := decodeMember(value)
	if err != nil || m.ID != string(key) {
		d.logger().Debug("skipping a bad cluster announcement", "key", string(key), "err", err)
		return
	}
	if m.Group != d.Self.Group {
		return
	}
	m.Time = t
	d.members[m.ID] = m
}

// Members returns the latest announcement of every other member of the
// group announced within Stale, by id.
func (d *Directory) Members() []Member {
	d.init()
	stale := d.Stale
	if stale <= 0 {
		stale = DefaultStale
	}
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []Member
	for _, m := range d.members {
		if m.ID != d.Self.ID && now.Sub(m.Time) <= stale {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b Member) int { return strings.Compare(a.ID, b.ID) })
	return out
}
