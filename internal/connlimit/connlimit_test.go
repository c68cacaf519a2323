package connlimit

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// TestListener: beyond Max open connections, new ones are closed at once
// and counted; closing one (twice) frees one place.
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
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// closedByServer reports whether the server closed c without handing
	// it out: a read ends with EOF (or a reset).
	closedByServer := func(c net.Conn) bool {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := c.Read(make([]byte, 1))
		return err == io.EOF || errors.Is(err, syscall.ECONNRESET)
	}
	var held []net.Conn
	for range 3 {
		dial()
		held = append(held, <-served)
	}
	for range 5 {
		if c := dial(); !closedByServer(c) {
			t.Fatal("a connection beyond the limit was not closed")
		}
	}
	if st := l.Stats(); st != (Stats{Open: 3, Accepted: 3, Refused: 5}) {
		t.Fatalf("stats %+v", st)
	}
	held[0].Close()
	held[0].Close()
	dial()
	held = append(held, <-served)
	if st := l.Stats(); st != (Stats{Open: 3, Accepted: 4, Refused: 5}) {
		t.Fatalf("after one closed: stats %+v", st)
	}
	for _, c := range held {
		c.Close()
	}
	if st := l.Stats(); st.Open != 0 {
		t.Fatalf("after all closed: stats %+v", st)
	}
}
