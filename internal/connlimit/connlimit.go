// Package connlimit limits the connections a net.Listener hands out.
//
// Unlike golang.org/x/net/netutil.LimitListener, which stops accepting
// while the limit is reached and so leaves new connections waiting in the
// kernel's backlog, a Listener keeps accepting and closes each connection
// beyond the limit at once: a flood of idle connections costs the process
// no more than Max file descriptors, and each refused connection is
// counted.
package connlimit

import (
	"net"
	"sync"
	"sync/atomic"
)

// A Listener is a net.Listener that hands out at most Max connections at
// once: Accept closes the connections beyond it and goes on accepting.
// Create it with New.
type Listener struct {
	net.Listener
	max               int
	open              atomic.Int64
	accepted, refused atomic.Uint64
}

// Stats are a Listener's counters.
type Stats struct {
	Open     uint64 // connections handed out and not yet closed
	Accepted uint64 // connections handed out since New
	Refused  uint64 // connections closed because Max were open
}

// New returns a Listener that hands out at most max connections of ln at
// once; max ≤ 0 means no limit (the connections are still counted).
func New(ln net.Listener, max int) *Listener {
	return &Listener{Listener: ln, max: max}
}

// Accept waits for and returns the next connection while fewer than the
// limit are open, closing and counting any that come beyond it. It returns
// the error of the underlying Accept. The connection's Close frees its
// place, once however often it is called.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if n := l.open.Add(1); l.max > 0 && n > int64(l.max) {
			l.open.Add(-1)
			l.refused.Add(1)
			c.Close()
			continue
		}
		l.accepted.Add(1)
		return &conn{Conn: c, l: l}, nil
	}
}

// Stats returns the counters of l, read one by one.
func (l *Listener) Stats() Stats {
	return Stats{Open: uint64(max(l.open.Load(), 0)), Accepted: l.accepted.Load(), Refused: l.refused.Load()}
}

// conn frees its place in its Listener when it is first closed.
type conn struct {
	net.Conn
	l    *Listener
	once sync.Once
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.open.Add(-1) })
	return err
}
