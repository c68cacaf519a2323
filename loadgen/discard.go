package loadgen

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// A DiscardServer accepts TCP connections and reads and discards all they
// send, counting the bytes. It measures how fast loadgen itself sends,
// with no daemon in the way.
type DiscardServer struct {
	ln    net.Listener
	wg    sync.WaitGroup
	bytes atomic.Int64

	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// ListenDiscard starts a DiscardServer on addr, such as "127.0.0.1:0".
func ListenDiscard(ctx context.Context, addr string) (*DiscardServer, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen discard: %w", err)
	}
	s := &DiscardServer{ln: ln, conns: make(map[net.Conn]struct{})}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns[c] = struct{}{}
			s.mu.Unlock()
			s.wg.Go(func() {
				defer func() {
					s.mu.Lock()
					delete(s.conns, c)
					s.mu.Unlock()
					c.Close()
				}()
				buf := make([]byte, 1<<20)
				for {
					n, err := c.Read(buf)
					s.bytes.Add(int64(n))
					if err != nil {
						return
					}
				}
			})
		}
	})
	return s, nil
}

// Addr returns the address s listens on.
func (s *DiscardServer) Addr() string { return s.ln.Addr().String() }

// Bytes returns the number of bytes read so far.
func (s *DiscardServer) Bytes() int64 { return s.bytes.Load() }

// Close stops accepting connections and waits until every connection has
// been closed by its client.
func (s *DiscardServer) Close() error {
	err := s.ln.Close()
	s.wg.Wait()
	if err != nil {
		return fmt.Errorf("close discard: %w", err)
	}
	return nil
}

// Shutdown stops accepting connections and waits until every connection
// has been closed by its client, as Close does, or until ctx ends: it then
// closes those still open, waits for their readers and returns ctx's
// error.
func (s *DiscardServer) Shutdown(ctx context.Context) error {
	err := s.ln.Close()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		s.mu.Lock()
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		<-done
		err = ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("shut down discard: %w", err)
	}
	return nil
}

var _ io.Closer = (*DiscardServer)(nil)
