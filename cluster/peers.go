package cluster

import (
	"errors"
	"fmt"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	pb "streamd/api/proto/streamd/v1"
	"streamd/internal/grpcauth"
)

// Peers keeps one gRPC connection to each peer it is asked for. Calls
// carry the bearer token when there is one, over TLS when Creds say so.
// Its methods are safe for concurrent use.
type Peers struct {
	// Creds secure the connections; nil means none (plaintext).
	Creds credentials.TransportCredentials
	// Token, if not empty, is sent as "authorization: Bearer <Token>".
	Token string

	mu     sync.Mutex
	conns  map[string]*grpc.ClientConn
	closed bool
}

// maxPeerMessage is the largest message a peer may send.
const maxPeerMessage = 1 << 30

// ErrClosed is returned by Peers.Client after Close.
var ErrClosed = errors.New("cluster: peers closed")

// Client returns a client of the Peer service at addr.
func (p *Peers) Client(addr string) (pb.PeerClient, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	if c := p.conns[addr]; c != nil {
		return pb.NewPeerClient(c), nil
	}
	creds := p.Creds
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	// A partition's state or a stream's summaries may be larger than
	// gRPC's default limit of 4 MiB.
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds), grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxPeerMessage))}
	if p.Token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(grpcauth.Bearer(p.Token)))
	}
	c, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("dial peer %s: %w", addr, err)
	}
	if p.conns == nil {
		p.conns = make(map[string]*grpc.ClientConn)
	}
	p.conns[addr] = c
	return pb.NewPeerClient(c), nil
}

// Close closes every connection.
func (p *Peers) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	var errs []error
	for _, c := range p.conns {
		errs = append(errs, c.Close())
	}
	p.conns = nil
	return errors.Join(errs...)
}
