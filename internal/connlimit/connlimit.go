// Package connlimit limits the connections a net.Listener hands out.
//
// Unlike golang.org/x/net/netutil.LimitListener, which stops accepting
// while the limit is reached and so leaves new connections waiting in the
// kernel's backlog, a Listener keeps accepting: a flood of idle connections
// costs the process no more than Max file descriptors, and each connection
// it closes is counted. A connection that has not yet proven itself (the
// server calls Prove once it has made an authenticated call) gives its
// place to a new one when the limit is reached, oldest first, so that
// connections that never make a call cannot keep clients out; only when
// every connection has proven itself is the new one closed at once.
package connlimit

import (
	"container/list"
	"net"
	"sync"
	"sync/atomic"
)

// A Listener is a net.Listener that hands out at most Max connections at
// once: Accept makes room for each new connection beyond it by closing the
// oldest connection not yet proven (see Prove), or closes the new one if
// every open connection is proven, and goes on accepting. Create it with
// New.
type Listener struct {
	net.Listener
	max int

	mu       sync.Mutex
	open     map[*conn]struct{}
	byAddr   map[string]*conn // open connections by remote address
	unproven list.List        // of *conn, oldest first

	accepted, refused, displaced atomic.Uint64
}

// Stats are a Listener's counters.
type Stats struct {
	Open      uint64 // connections handed out and not yet closed
	Accepted  uint64 // connections handed out since New
	Refused   uint64 // new connections closed because Max proven ones were open
	Displaced uint64 // unproven connections closed to make room for a new one
}

// New returns a Listener that hands out at most max connections of ln at
// once; max ≤ 0 means no limit (the connections are still counted).
func New(ln net.Listener, max int) *Listener {
	return &Listener{Listener: ln, max: max, open: make(map[*conn]struct{}), byAddr: make(map[string]*conn)}
}

// Accept waits for and returns the next connection, making room for it as
// the Listener's doc says. It returns the error of the underlying Accept.
// The connection's Close frees its place, once however often it is called.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		var victim *conn
		if l.max > 0 && len(l.open) >= l.max {
			if e := l.unproven.Front(); e != nil {
				victim = e.Value.(*conn)
				l.forgetLocked(victim)
			} else {
				l.mu.Unlock()
				l.refused.Add(1)
				c.Close()
				continue
			}
		}
		lc := &conn{Conn: c, l: l}
		l.open[lc] = struct{}{}
		l.byAddr[c.RemoteAddr().String()] = lc
		lc.elem = l.unproven.PushBack(lc)
		l.mu.Unlock()
		if victim != nil {
			l.displaced.Add(1)
			victim.Conn.Close() // its server sees the error and closes it again
		}
		l.accepted.Add(1)
		return lc, nil
	}
}

// Prove marks the open connection from addr as proven: it keeps its place
// however many new connections come. A server calls it once the connection
// has made an authenticated call.
func (l *Listener) Prove(addr net.Addr) {
	if addr == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.byAddr[addr.String()]; c != nil && c.elem != nil {
		l.unproven.Remove(c.elem)
		c.elem = nil
	}
}

// forgetLocked removes c from l's books; l.mu is held.
func (l *Listener) forgetLocked(c *conn) {
	if _, ok := l.open[c]; !ok {
		return
	}
	delete(l.open, c)
	if l.byAddr[c.RemoteAddr().String()] == c {
		delete(l.byAddr, c.RemoteAddr().String())
	}
	if c.elem != nil {
		l.unproven.Remove(c.elem)
		c.elem = nil
	}
}

// Stats returns the counters of l.
func (l *Listener) Stats() Stats {
	l.mu.Lock()
	open := len(l.open)
	l.mu.Unlock()
	return Stats{Open: uint64(open), Accepted: l.accepted.Load(), Refused: l.refused.Load(), Displaced: l.displaced.Load()}
}

// conn frees its place in its Listener when it is first closed.
type conn struct {
	net.Conn
	l    *Listener
	elem *list.Element // in l.unproven until proven; guarded by l.mu
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.l.mu.Lock()
	c.l.forgetLocked(c)
	c.l.mu.Unlock()
	return err
}
