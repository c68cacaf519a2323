// Package grpcauth carries streamd's bearer token over gRPC: the server
// interceptors that check it on every call but the health service's Check,
// and the per-call credentials that clients send it with.
package grpcauth

import (
	"context"
	"crypto/subtle"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// healthCheck is the method of the gRPC health service's Check, which
// answers without a token so that load balancers and orchestrators can probe
// the daemon. The service's Watch and List need the token: a Watch holds a
// stream as long as its client likes.
const healthCheck = "/grpc.health.v1.Health/Check"

// ServerOptions returns the options that make a gRPC server refuse, with
// codes.Unauthenticated, every call but the health service's Check that
// does not carry "authorization: Bearer token". An empty token checks
// nothing.
func ServerOptions(token string) []grpc.ServerOption {
	if token == "" {
		return nil
	}
	c := checker(token)
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(c.unary), grpc.ChainStreamInterceptor(c.stream)}
}

// checker checks the bearer token of a call.
type checker string

func (c checker) check(ctx context.Context, method string) error {
	if method == healthCheck {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get("authorization") {
		if tok, ok := strings.CutPrefix(v, "Bearer "); ok && subtle.ConstantTimeCompare([]byte(tok), []byte(c)) == 1 {
			return nil
		}
	}
	return status.Error(codes.Unauthenticated, "missing or wrong bearer token")
}

func (c checker) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := c.check(ctx, info.FullMethod); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func (c checker) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := c.check(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	return h(srv, ss)
}

// Bearer is a token sent as "authorization: Bearer token" with every call,
// as the credentials.PerRPCCredentials of a client connection. It goes over
// plain connections as well as TLS ones: whether a connection is encrypted
// is the transport credentials' choice, as the daemon is configured.
type Bearer string

// GetRequestMetadata returns the authorization header of a call.
func (b Bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

// RequireTransportSecurity reports false: the token is sent over plain
// connections too.
func (b Bearer) RequireTransportSecurity() bool { return false }
