package grpcauth

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "streamd/api/proto/streamd/v1"
)

// streamd answers every call it lets through with Unimplemented, so that
// a call's code tells whether the token check refused it.
type streamd struct{ pb.UnimplementedStreamdServer }

// serve starts a gRPC server with ServerOptions(token), the Streamd service
// and the health service, and returns its address.
func serve(t *testing.T, token string) string {
	t.Helper()
	gs := grpc.NewServer(ServerOptions(token)...)
	pb.RegisterStreamdServer(gs, streamd{})
	healthpb.RegisterHealthServer(gs, health.NewServer())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	return ln.Addr().String()
}

func dial(t *testing.T, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(addr, append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// calls makes a unary and a streaming call of the Streamd service and
// returns their codes.
func calls(ctx context.Context, cc *grpc.ClientConn) (unary, stream codes.Code) {
	c := pb.NewStreamdClient(cc)
	_, err := c.Stats(ctx, &pb.StatsRequest{})
	unary = status.Code(err)
	w, err := c.Watch(ctx, &pb.WatchRequest{})
	if err == nil {
		_, err = w.Recv()
	}
	return unary, status.Code(err)
}

// TestServerOptions checks that calls without the token, with a wrong one
// or with a malformed header are refused with Unauthenticated, unary and
// streaming alike; that the right token, sent by Bearer or by hand, is let
// through; and that the health service's Check answers without a token,
// its Watch only with it.
func TestServerOptions(t *testing.T) {
	const token = "s3cret"
	addr := serve(t, token)
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		md   []string // authorization values sent by hand
		want codes.Code
	}{
		{"missing", nil, codes.Unauthenticated},
		{"wrong", []string{"Bearer wrong"}, codes.Unauthenticated},
		{"prefix", []string{"Bearer s3cre"}, codes.Unauthenticated},
		{"longer", []string{"Bearer s3crets"}, codes.Unauthenticated},
		{"empty", []string{"Bearer "}, codes.Unauthenticated},
		{"no scheme", []string{token}, codes.Unauthenticated},
		{"basic", []string{"Basic " + token}, codes.Unauthenticated},
		{"right", []string{"Bearer " + token}, codes.Unimplemented},
		{"right after wrong", []string{"Bearer wrong", "Bearer " + token}, codes.Unimplemented},
	} {
		cc := dial(t, addr)
		ctx := ctx
		for _, v := range tc.md {
			ctx = metadata.AppendToOutgoingContext(ctx, "authorization", v)
		}
		if u, s := calls(ctx, cc); u != tc.want || s != tc.want {
			t.Errorf("%s: unary %v, stream %v, want %v", tc.name, u, s, tc.want)
		}
	}
	for _, tc := range []struct {
		creds Bearer
		want  codes.Code
	}{{token, codes.Unimplemented}, {"wrong", codes.Unauthenticated}, {"", codes.Unauthenticated}} {
		cc := dial(t, addr, grpc.WithPerRPCCredentials(tc.creds))
		if u, s := calls(ctx, cc); u != tc.want || s != tc.want {
			t.Errorf("Bearer(%q): unary %v, stream %v, want %v", tc.creds, u, s, tc.want)
		}
	}
	resp, err := healthpb.NewHealthClient(dial(t, addr)).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || resp.Status != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health check without a token: %v, %v", resp, err)
	}
	// A health Watch holds a stream as long as its client likes: it needs
	// the token.
	w, err := healthpb.NewHealthClient(dial(t, addr)).Watch(ctx, &healthpb.HealthCheckRequest{})
	if err == nil {
		_, err = w.Recv()
	}
	if status.Code(err) != codes.Unauthenticated {
		t.Errorf("health watch without a token: %v, want Unauthenticated", err)
	}
}

// TestServerOptionsNoToken checks that an empty token checks nothing.
func TestServerOptionsNoToken(t *testing.T) {
	if opts := ServerOptions(""); len(opts) != 0 {
		t.Errorf("ServerOptions(\"\") = %d options, want none", len(opts))
	}
	cc := dial(t, serve(t, ""))
	if u, s := calls(t.Context(), cc); u != codes.Unimplemented || s != codes.Unimplemented {
		t.Errorf("no token configured: unary %v, stream %v, want Unimplemented", u, s)
	}
}

// TestBearer checks the metadata Bearer sends and that it goes over plain
// connections.
func TestBearer(t *testing.T) {
	md, err := Bearer("tok").GetRequestMetadata(t.Context())
	if err != nil || len(md) != 1 || md["authorization"] != "Bearer tok" {
		t.Errorf("GetRequestMetadata = %v, %v", md, err)
	}
	if Bearer("tok").RequireTransportSecurity() {
		t.Error("RequireTransportSecurity = true, want false")
	}
}
