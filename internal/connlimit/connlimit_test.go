package connlimit

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// TestListener: beyond Max open connections, a new one displaces the
// oldest connection not yet proven; when all are proven, new ones are
// closed at once; every closing is counted, and closing a connection
// (twice) frees one place.
func TestListener(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := New(raw, 3)
	defer l.Close()
	served := make(chan net.Conn)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(served)
				return
			}
			served <- c
		}
	}()
	// dial returns the client's end and the server's.
	dial := func() (client, server net.Conn) {
		t.Helper()
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, <-served
	}
	// closedByServer reports whether the server closed c: a read ends
	// with EOF (or a reset).
	closedByServer := func(c net.Conn) bool {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := c.Read(make([]byte, 1))
		return err == io.EOF || errors.Is(err, syscall.ECONNRESET)
	}
	var clients, servers []net.Conn
	for range 3 {
		c, s := dial()
		clients, servers = append(clients, c), append(servers, s)
	}
	// The first is proven; a new connection displaces the oldest of the
	// others, then the next oldest.
	l.Prove(servers[0].RemoteAddr())
	c4, s4 := dial()
	if !closedByServer(clients[1]) {
		t.Fatal("the oldest unproven connection was not displaced")
	}
	c5, s5 := dial()
	if !closedByServer(clients[2]) {
		t.Fatal("the next oldest unproven connection was not displaced")
	}
	if st := l.Stats(); st != (Stats{Open: 3, Accepted: 5, Displaced: 2}) {
		t.Fatalf("stats %+v", st)
	}
	// All proven: new connections are closed at once.
	l.Prove(s4.RemoteAddr())
	l.Prove(s5.RemoteAddr())
	for range 5 {
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if !closedByServer(c) {
			t.Fatal("a connection beyond the limit was not closed")
		}
		c.Close()
	}
	if st := l.Stats(); st != (Stats{Open: 3, Accepted: 5, Refused: 5, Displaced: 2}) {
		t.Fatalf("stats %+v", st)
	}
	servers[0].Close()
	servers[0].Close()
	_, s6 := dial()
	if st := l.Stats(); st != (Stats{Open: 3, Accepted: 6, Refused: 5, Displaced: 2}) {
		t.Fatalf("after one closed: stats %+v", st)
	}
	for _, c := range []net.Conn{s4, s5, s6, c4, c5} {
		c.Close()
	}
	if st := l.Stats(); st.Open != 0 {
		t.Fatalf("after all closed: stats %+v", st)
	}
}
