// The streamd API: push numeric values or items (strings) into named
// streams and ask for ε-approximate quantiles, ranks, frequencies and heavy
// hitters over all of a stream's history, over its last n values, or over
// the values that arrived in the last d (a time window).
//
// Values travel as double. A stream stores them as float32 unless it was
// created with float64 precision, so a returned value is a value that was in
// the stream, rounded to the stream's precision and widened back to double.
//
// Guarantees, with N the number of values an answer covers (count in the
// responses) and ε the stream's epsilon:
//   - Quantile: for every φ, the returned value v has a true rank r (with
//     duplicates, any r with #{x < v} < r ≤ #{x ≤ v}) such that
//     |r − ⌈φN⌉| ≤ εN.
//   - Frequency: the true count f of a value lies in [count_min, count_max],
//     and count_max − count_min ≤ εN.
//   - Heavy hitters with support s: every value with f ≥ sN is returned, and
//     none with f < (s − ε)N.
//
// Item streams (CreateStream with kind STREAM_KIND_ITEMS) take strings:
// URLs, client addresses, user IDs, error codes. An item is 1 to 1024 bytes
// of UTF-8; longer, empty and (over TCP) invalid UTF-8 items are rejected
// and counted. Items are counted by their 64-bit fingerprint, a SipHash-2-4
// under a key each daemon draws once and keeps in its checkpoints. Two
// distinct items share a fingerprint with probability about 2^-64, so among
// n distinct items some pair collides with probability at most about
// n²/2^65 (3·10^-8 for 10^6 distinct items). Items that share a fingerprint
// are counted together: count_max still bounds each one's count, count_min
// bounds their total; a frequency asked for an item whose fingerprint the
// daemon knows under another string reports shared and count_min 0. Item
// streams answer frequencies and heavy hitters, not quantiles or ranks
// (FailedPrecondition).
//
// Pair streams (CreateStream with kind STREAM_KIND_PAIRS, or created by
// the first pairs pushed) take pairs (x, y) of doubles, such as a
// request's latency and its response's bytes, and answer correlated sums
// (CorrelatedSum): how many pairs have x ≤ t (or x ≥ t) and the sum of
// their y, for a constant t or one made of an aggregate of x, over all
// history, with bounds: the count within ε·N, the sum within ε·Σ|y|. A
// pair stream stores float64 and answers nothing else but Stats.
//
// Time windows: a query with last = d covers every value that arrived in
// the last d by the daemon's clock (the arrival time is the daemon's clock
// when it accepts the value, or a Kafka message's timestamp when the
// daemon is so configured; arrival times never go back within a stream),
// and possibly a few older ones: the covered range starts at the boundary
// of a run of values whose arrival times the stream keeps (at most 1/4096
// of its sliding window, or one of its blocks). The response's window says
// exactly how many values it covers and when the first and last of them
// arrived, and bounds the older ones; the error guarantees hold for the
// covered count. last and last_n are exclusive.
//
// Scope: by default an answer covers the values this daemon holds. With
// scope SCOPE_CLUSTER it covers every daemon of the daemon's Kafka consumer
// group: the daemon asks its peers (service Peer) for their summaries and
// merges them, each Kafka partition counted from the one member that
// consumes it. Merged summaries add their absolute errors, so the answer's
// epsilon is the count-weighted mean of the members' (their common ε when
// they agree). A cluster answer whose members did not all answer in time
// has partial set and names the partitions it misses; it is never
// presented as complete. last_n and last are refused with scope
// SCOPE_CLUSTER (InvalidArgument): partitions share no order of arrival,
// and the daemons no clock. Item streams are refused with scope
// SCOPE_CLUSTER (FailedPrecondition): each daemon counts items under its
// own key; ask each daemon with scope SCOPE_LOCAL.
//
// Errors use the standard gRPC status codes:
//   - NotFound: the named stream does not exist.
//   - InvalidArgument: an empty stream name; a φ outside [0, 1]; a support
//     outside (ε, 1]; a NaN or ±Inf among the query values; last_n greater
//     than the stream's sliding_window; a negative last; last_n or last
//     with scope SCOPE_CLUSTER; creation parameters out of range.
//   - AlreadyExists: CreateStream of a stream that exists.
//   - FailedPrecondition: values pushed to an item stream or items to a
//     value stream; pairs pushed to a value or item stream, values or
//     items to a pair stream; quantiles or ranks asked of an item stream;
//     quantiles, ranks, heavy hitters or frequencies asked of a pair
//     stream; a correlated sum asked of a stream that is not a pair
//     stream, or of one without pairs yet; scope SCOPE_CLUSTER asked of an
//     item stream, or of a daemon in no cluster.
//   - ResourceExhausted: a stream the daemon cannot hold (its stream limit,
//     or its memory budget cannot hold the stream's worst case).
//   - Unavailable: the daemon is shutting down; a SCOPE_CLUSTER answer
//     that could not list the partitions of the group's topics.

// Code generated by protoc-gen-go-grpc. DO NOT EDIT.
// versions:
// - protoc-gen-go-grpc v1.6.2
// - protoc             (unknown)
// source: streamd/v1/streamd.proto

package streamdv1

import (
	context "context"
	grpc "google.golang.org/grpc"
	codes "google.golang.org/grpc/codes"
	status "google.golang.org/grpc/status"
)

// This is a compile-time assertion to ensure that this generated file
// is compatible with the grpc package it is being compiled against.
// Requires gRPC-Go v1.64.0 or later.
const _ = grpc.SupportPackageIsVersion9

const (
	Streamd_Push_FullMethodName                     = "/streamd.v1.Streamd/Push"
	Streamd_Quantiles_FullMethodName                = "/streamd.v1.Streamd/Quantiles"
	Streamd_Ranks_FullMethodName                    = "/streamd.v1.Streamd/Ranks"
	Streamd_HeavyHitters_FullMethodName             = "/streamd.v1.Streamd/HeavyHitters"
	Streamd_Frequencies_FullMethodName              = "/streamd.v1.Streamd/Frequencies"
	Streamd_Stats_FullMethodName                    = "/streamd.v1.Streamd/Stats"
	Streamd_CreateStream_FullMethodName             = "/streamd.v1.Streamd/CreateStream"
	Streamd_DeleteStream_FullMethodName             = "/streamd.v1.Streamd/DeleteStream"
	Streamd_ListStreams_FullMethodName              = "/streamd.v1.Streamd/ListStreams"
	Streamd_Watch_FullMethodName                    = "/streamd.v1.Streamd/Watch"
	Streamd_HierarchicalHeavyHitters_FullMethodName = "/streamd.v1.Streamd/HierarchicalHeavyHitters"
	Streamd_CorrelatedSum_FullMethodName            = "/streamd.v1.Streamd/CorrelatedSum"
)

// StreamdClient is the client API for Streamd service.
//
// For semantics around ctx use and closing/ending streaming RPCs, please refer to https://pkg.go.dev/google.golang.org/grpc/?tab=doc#ClientConn.NewStream.
//
// Streamd mines named numeric streams for quantiles and heavy hitters.
type StreamdClient interface {
	// Push adds values to streams. The client sends any number of PushRequests,
	// each naming a stream (one call may feed several streams), and closes its
	// side; the server answers once with the totals for the whole call.
	// Values that are NaN or ±Inf are rejected, counted in
	// PushResponse.rejected and in the stream's StatsResponse.rejected, and do
	// not fail the call. An unknown stream is created with the daemon's
	// defaults; when the daemon cannot hold it (its stream limit, or its
	// memory budget cannot hold the stream's worst case), the call fails with
	// ResourceExhausted, and values of earlier messages of the call have been
	// accepted by then.
	Push(ctx context.Context, opts ...grpc.CallOption) (grpc.ClientStreamingClient[PushRequest, PushResponse], error)
	// Quantiles returns the φ-quantiles of a stream, over all history or over
	// the last n values.
	Quantiles(ctx context.Context, in *QuantilesRequest, opts ...grpc.CallOption) (*QuantilesResponse, error)
	// Ranks returns bounds on the rank of each given value, over all history or
	// over the last n values.
	Ranks(ctx context.Context, in *RanksRequest, opts ...grpc.CallOption) (*RanksResponse, error)
	// HeavyHitters returns the values whose frequency is at least support × N,
	// over all history or over the last n values.
	HeavyHitters(ctx context.Context, in *HeavyHittersRequest, opts ...grpc.CallOption) (*HeavyHittersResponse, error)
	// Frequencies returns bounds on the count of each given value, over all
	// history or over the last n values.
	Frequencies(ctx context.Context, in *FrequenciesRequest, opts ...grpc.CallOption) (*FrequenciesResponse, error)
	// Stats returns a stream's counters, parameters and summary size.
	Stats(ctx context.Context, in *StatsRequest, opts ...grpc.CallOption) (*StatsResponse, error)
	// CreateStream creates an empty stream. It fails with AlreadyExists when
	// the stream exists, with InvalidArgument when a parameter is out of
	// range, and with ResourceExhausted when the daemon's stream limit is
	// reached or its memory budget cannot hold the stream's worst case
	// (StatsResponse.memory_reserved_bytes).
	CreateStream(ctx context.Context, in *CreateStreamRequest, opts ...grpc.CallOption) (*CreateStreamResponse, error)
	// DeleteStream deletes a stream and its summaries. It fails with NotFound
	// when the stream does not exist.
	DeleteStream(ctx context.Context, in *DeleteStreamRequest, opts ...grpc.CallOption) (*DeleteStreamResponse, error)
	// ListStreams returns a page of the streams' names, in increasing order:
	// follow next_page_token for the next page, until it is "". A request
	// without page fields (as old clients send) gets the first 1000 names
	// and the token of the rest.
	ListStreams(ctx context.Context, in *ListStreamsRequest, opts ...grpc.CallOption) (*ListStreamsResponse, error)
	// Watch sends the quantiles and heavy hitters of a stream, over all
	// history, the last n values or a time window, every interval until the
	// client cancels the call or the stream is deleted (then the call ends
	// with NotFound).
	Watch(ctx context.Context, in *WatchRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[WatchResponse], error)
	// HierarchicalHeavyHitters returns the hierarchical heavy hitters of a
	// hierarchy stream (CreateStreamRequest.hierarchy): the prefixes of its
	// items — subnets, path prefixes, domains — whose count, or discounted
	// count, is at least support × N, over all history, the last n items or
	// a time window. It fails with FailedPrecondition for a stream without a
	// hierarchy and for scope SCOPE_CLUSTER, and with ResourceExhausted when
	// more than 10000 prefixes reach the support.
	HierarchicalHeavyHitters(ctx context.Context, in *HierarchicalHeavyHittersRequest, opts ...grpc.CallOption) (*HierarchicalHeavyHittersResponse, error)
	// CorrelatedSum answers a correlated sum of a pair stream: the number of
	// pairs (x, y) with x ≤ t, or x ≥ t, and the sum of their y, for a
	// threshold t that is a constant or an aggregate of x (a quantile, the
	// minimum, maximum or mean) times a factor, with bounds that always hold
	// the exact answer: count_max − count_min ≤ ε·count and
	// sum_max − sum_min ≤ ε·sum_abs_y (plus floating-point rounding, none
	// for integer y). It answers over all history only: last_n or last is
	// InvalidArgument, scope SCOPE_CLUSTER FailedPrecondition. A stream of
	// another kind is FailedPrecondition, one without pairs yet
	// FailedPrecondition too.
	CorrelatedSum(ctx context.Context, in *CorrelatedSumRequest, opts ...grpc.CallOption) (*CorrelatedSumResponse, error)
}

type streamdClient struct {
	cc grpc.ClientConnInterface
}

func NewStreamdClient(cc grpc.ClientConnInterface) StreamdClient {
	return &streamdClient{cc}
}

func (c *streamdClient) Push(ctx context.Context, opts ...grpc.CallOption) (grpc.ClientStreamingClient[PushRequest, PushResponse], error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	stream, err := c.cc.NewStream(ctx, &Streamd_ServiceDesc.Streams[0], Streamd_Push_FullMethodName, cOpts...)
	if err != nil {
		return nil, err
	}
	x := &grpc.GenericClientStream[PushRequest, PushResponse]{ClientStream: stream}
	return x, nil
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type Streamd_PushClient = grpc.ClientStreamingClient[PushRequest, PushResponse]

func (c *streamdClient) Quantiles(ctx context.Context, in *QuantilesRequest, opts ...grpc.CallOption) (*QuantilesResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(QuantilesResponse)
	err := c.cc.Invoke(ctx, Streamd_Quantiles_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *streamdClient) Ranks(ctx context.Context, in *RanksRequest, opts ...grpc.CallOption) (*RanksResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(RanksResponse)
	err := c.cc.Invoke(ctx, Streamd_Ranks_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *streamdClient) HeavyHitters(ctx context.Context, in *HeavyHittersRequest, opts ...grpc.CallOption) (*HeavyHittersResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(HeavyHittersResponse)
	err := c.cc.Invoke(ctx, Streamd_HeavyHitters_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *streamdClient) Frequencies(ctx context.Context, in *FrequenciesRequest, opts ...grpc.CallOption) (*FrequenciesResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(FrequenciesResponse)
	err := c.cc.Invoke(ctx, Streamd_Frequencies_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *streamdClient) Stats(ctx context.Context, in *StatsRequest, opts ...grpc.CallOption) (*StatsResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(StatsResponse)
	err := c.cc.Invoke(ctx, Streamd_Stats_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *streamdClient) CreateStream(ctx context.Context, in *CreateStreamRequest, opts ...grpc.CallOption) (*CreateStreamResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(CreateStreamResponse)
	err := c.cc.Invoke(ctx, Streamd_CreateStream_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *streamdClient) DeleteStream(ctx context.Context, in *DeleteStreamRequest, opts ...grpc.CallOption) (*DeleteStreamResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(DeleteStreamResponse)
	err := c.cc.Invoke(ctx, Streamd_DeleteStream_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *streamdClient) ListStreams(ctx context.Context, in *ListStreamsRequest, opts ...grpc.CallOption) (*ListStreamsResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(ListStreamsResponse)
	err := c.cc.Invoke(ctx, Streamd_ListStreams_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *streamdClient) Watch(ctx context.Context, in *WatchRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[WatchResponse], error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	stream, err := c.cc.NewStream(ctx, &Streamd_ServiceDesc.Streams[1], Streamd_Watch_FullMethodName, cOpts...)
	if err != nil {
		return nil, err
	}
	x := &grpc.GenericClientStream[WatchRequest, WatchResponse]{ClientStream: stream}
	if err := x.ClientStream.SendMsg(in); err != nil {
		return nil, err
	}
	if err := x.ClientStream.CloseSend(); err != nil {
		return nil, err
	}
	return x, nil
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type Streamd_WatchClient = grpc.ServerStreamingClient[WatchResponse]

func (c *streamdClient) HierarchicalHeavyHitters(ctx context.Context, in *HierarchicalHeavyHittersRequest, opts ...grpc.CallOption) (*HierarchicalHeavyHittersResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(HierarchicalHeavyHittersResponse)
	err := c.cc.Invoke(ctx, Streamd_HierarchicalHeavyHitters_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *streamdClient) CorrelatedSum(ctx context.Context, in *CorrelatedSumRequest, opts ...grpc.CallOption) (*CorrelatedSumResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(CorrelatedSumResponse)
	err := c.cc.Invoke(ctx, Streamd_CorrelatedSum_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// StreamdServer is the server API for Streamd service.
// All implementations must embed UnimplementedStreamdServer
// for forward compatibility.
//
// Streamd mines named numeric streams for quantiles and heavy hitters.
type StreamdServer interface {
	// Push adds values to streams. The client sends any number of PushRequests,
	// each naming a stream (one call may feed several streams), and closes its
	// side; the server answers once with the totals for the whole call.
	// Values that are NaN or ±Inf are rejected, counted in
	// PushResponse.rejected and in the stream's StatsResponse.rejected, and do
	// not fail the call. An unknown stream is created with the daemon's
	// defaults; when the daemon cannot hold it (its stream limit, or its
	// memory budget cannot hold the stream's worst case), the call fails with
	// ResourceExhausted, and values of earlier messages of the call have been
	// accepted by then.
	Push(grpc.ClientStreamingServer[PushRequest, PushResponse]) error
	// Quantiles returns the φ-quantiles of a stream, over all history or over
	// the last n values.
	Quantiles(context.Context, *QuantilesRequest) (*QuantilesResponse, error)
	// Ranks returns bounds on the rank of each given value, over all history or
	// over the last n values.
	Ranks(context.Context, *RanksRequest) (*RanksResponse, error)
	// HeavyHitters returns the values whose frequency is at least support × N,
	// over all history or over the last n values.
	HeavyHitters(context.Context, *HeavyHittersRequest) (*HeavyHittersResponse, error)
	// Frequencies returns bounds on the count of each given value, over all
	// history or over the last n values.
	Frequencies(context.Context, *FrequenciesRequest) (*FrequenciesResponse, error)
	// Stats returns a stream's counters, parameters and summary size.
	Stats(context.Context, *StatsRequest) (*StatsResponse, error)
	// CreateStream creates an empty stream. It fails with AlreadyExists when
	// the stream exists, with InvalidArgument when a parameter is out of
	// range, and with ResourceExhausted when the daemon's stream limit is
	// reached or its memory budget cannot hold the stream's worst case
	// (StatsResponse.memory_reserved_bytes).
	CreateStream(context.Context, *CreateStreamRequest) (*CreateStreamResponse, error)
	// DeleteStream deletes a stream and its summaries. It fails with NotFound
	// when the stream does not exist.
	DeleteStream(context.Context, *DeleteStreamRequest) (*DeleteStreamResponse, error)
	// ListStreams returns a page of the streams' names, in increasing order:
	// follow next_page_token for the next page, until it is "". A request
	// without page fields (as old clients send) gets the first 1000 names
	// and the token of the rest.
	ListStreams(context.Context, *ListStreamsRequest) (*ListStreamsResponse, error)
	// Watch sends the quantiles and heavy hitters of a stream, over all
	// history, the last n values or a time window, every interval until the
	// client cancels the call or the stream is deleted (then the call ends
	// with NotFound).
	Watch(*WatchRequest, grpc.ServerStreamingServer[WatchResponse]) error
	// HierarchicalHeavyHitters returns the hierarchical heavy hitters of a
	// hierarchy stream (CreateStreamRequest.hierarchy): the prefixes of its
	// items — subnets, path prefixes, domains — whose count, or discounted
	// count, is at least support × N, over all history, the last n items or
	// a time window. It fails with FailedPrecondition for a stream without a
	// hierarchy and for scope SCOPE_CLUSTER, and with ResourceExhausted when
	// more than 10000 prefixes reach the support.
	HierarchicalHeavyHitters(context.Context, *HierarchicalHeavyHittersRequest) (*HierarchicalHeavyHittersResponse, error)
	// CorrelatedSum answers a correlated sum of a pair stream: the number of
	// pairs (x, y) with x ≤ t, or x ≥ t, and the sum of their y, for a
	// threshold t that is a constant or an aggregate of x (a quantile, the
	// minimum, maximum or mean) times a factor, with bounds that always hold
	// the exact answer: count_max − count_min ≤ ε·count and
	// sum_max − sum_min ≤ ε·sum_abs_y (plus floating-point rounding, none
	// for integer y). It answers over all history only: last_n or last is
	// InvalidArgument, scope SCOPE_CLUSTER FailedPrecondition. A stream of
	// another kind is FailedPrecondition, one without pairs yet
	// FailedPrecondition too.
	CorrelatedSum(context.Context, *CorrelatedSumRequest) (*CorrelatedSumResponse, error)
	mustEmbedUnimplementedStreamdServer()
}

// UnimplementedStreamdServer must be embedded to have
// forward compatible implementations.
//
// NOTE: this should be embedded by value instead of pointer to avoid a nil
// pointer dereference when methods are called.
type UnimplementedStreamdServer struct{}

func (UnimplementedStreamdServer) Push(grpc.ClientStreamingServer[PushRequest, PushResponse]) error {
	return status.Error(codes.Unimplemented, "method Push not implemented")
}
func (UnimplementedStreamdServer) Quantiles(context.Context, *QuantilesRequest) (*QuantilesResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method Quantiles not implemented")
}
func (UnimplementedStreamdServer) Ranks(context.Context, *RanksRequest) (*RanksResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method Ranks not implemented")
}
func (UnimplementedStreamdServer) HeavyHitters(context.Context, *HeavyHittersRequest) (*HeavyHittersResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method HeavyHitters not implemented")
}
func (UnimplementedStreamdServer) Frequencies(context.Context, *FrequenciesRequest) (*FrequenciesResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method Frequencies not implemented")
}
func (UnimplementedStreamdServer) Stats(context.Context, *StatsRequest) (*StatsResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method Stats not implemented")
}
func (UnimplementedStreamdServer) CreateStream(context.Context, *CreateStreamRequest) (*CreateStreamResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method CreateStream not implemented")
}
func (UnimplementedStreamdServer) DeleteStream(context.Context, *DeleteStreamRequest) (*DeleteStreamResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method DeleteStream not implemented")
}
func (UnimplementedStreamdServer) ListStreams(context.Context, *ListStreamsRequest) (*ListStreamsResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method ListStreams not implemented")
}
func (UnimplementedStreamdServer) Watch(*WatchRequest, grpc.ServerStreamingServer[WatchResponse]) error {
	return status.Error(codes.Unimplemented, "method Watch not implemented")
}
func (UnimplementedStreamdServer) HierarchicalHeavyHitters(context.Context, *HierarchicalHeavyHittersRequest) (*HierarchicalHeavyHittersResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method HierarchicalHeavyHitters not implemented")
}
func (UnimplementedStreamdServer) CorrelatedSum(context.Context, *CorrelatedSumRequest) (*CorrelatedSumResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method CorrelatedSum not implemented")
}
func (UnimplementedStreamdServer) mustEmbedUnimplementedStreamdServer() {}
func (UnimplementedStreamdServer) testEmbeddedByValue()                 {}

// UnsafeStreamdServer may be embedded to opt out of forward compatibility for this service.
// Use of this interface is not recommended, as added methods to StreamdServer will
// result in compilation errors.
type UnsafeStreamdServer interface {
	mustEmbedUnimplementedStreamdServer()
}

func RegisterStreamdServer(s grpc.ServiceRegistrar, srv StreamdServer) {
	// If the following call panics, it indicates UnimplementedStreamdServer was
	// embedded by pointer and is nil.  This will cause panics if an
	// unimplemented method is ever invoked, so we test this at initialization
	// time to prevent it from happening at runtime later due to I/O.
	if t, ok := srv.(interface{ testEmbeddedByValue() }); ok {
		t.testEmbeddedByValue()
	}
	s.RegisterService(&Streamd_ServiceDesc, srv)
}

func _Streamd_Push_Handler(srv interface{}, stream grpc.ServerStream) error {
	return srv.(StreamdServer).Push(&grpc.GenericServerStream[PushRequest, PushResponse]{ServerStream: stream})
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type Streamd_PushServer = grpc.ClientStreamingServer[PushRequest, PushResponse]

func _Streamd_Quantiles_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(QuantilesRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(StreamdServer).Quantiles(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: Streamd_Quantiles_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(StreamdServer).Quantiles(ctx, req.(*QuantilesRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _Streamd_Ranks_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(RanksRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(StreamdServer).Ranks(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: Streamd_Ranks_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(StreamdServer).Ranks(ctx, req.(*RanksRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _Streamd_HeavyHitters_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(HeavyHittersRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(StreamdServer).HeavyHitters(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: Streamd_HeavyHitters_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(StreamdServer).HeavyHitters(ctx, req.(*HeavyHittersRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _Streamd_Frequencies_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(FrequenciesRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(StreamdServer).Frequencies(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: Streamd_Frequencies_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(StreamdServer).Frequencies(ctx, req.(*FrequenciesRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _Streamd_Stats_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(StatsRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(StreamdServer).Stats(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: Streamd_Stats_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(StreamdServer).Stats(ctx, req.(*StatsRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _Streamd_CreateStream_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(CreateStreamRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(StreamdServer).CreateStream(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: Streamd_CreateStream_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(StreamdServer).CreateStream(ctx, req.(*CreateStreamRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _Streamd_DeleteStream_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(DeleteStreamRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(StreamdServer).DeleteStream(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: Streamd_DeleteStream_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(StreamdServer).DeleteStream(ctx, req.(*DeleteStreamRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _Streamd_ListStreams_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(ListStreamsRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(StreamdServer).ListStreams(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: Streamd_ListStreams_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(StreamdServer).ListStreams(ctx, req.(*ListStreamsRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _Streamd_Watch_Handler(srv interface{}, stream grpc.ServerStream) error {
	m := new(WatchRequest)
	if err := stream.RecvMsg(m); err != nil {
		return err
	}
	return srv.(StreamdServer).Watch(m, &grpc.GenericServerStream[WatchRequest, WatchResponse]{ServerStream: stream})
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type Streamd_WatchServer = grpc.ServerStreamingServer[WatchResponse]

func _Streamd_HierarchicalHeavyHitters_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(HierarchicalHeavyHittersRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(StreamdServer).HierarchicalHeavyHitters(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: Streamd_HierarchicalHeavyHitters_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(StreamdServer).HierarchicalHeavyHitters(ctx, req.(*HierarchicalHeavyHittersRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _Streamd_CorrelatedSum_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(CorrelatedSumRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(StreamdServer).CorrelatedSum(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: Streamd_CorrelatedSum_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(StreamdServer).CorrelatedSum(ctx, req.(*CorrelatedSumRequest))
	}
	return interceptor(ctx, in, info, handler)
}

// Streamd_ServiceDesc is the grpc.ServiceDesc for Streamd service.
// It's only intended for direct use with grpc.RegisterService,
// and not to be introspected or modified (even as a copy)
var Streamd_ServiceDesc = grpc.ServiceDesc{
	ServiceName: "streamd.v1.Streamd",
	HandlerType: (*StreamdServer)(nil),
	Methods: []grpc.MethodDesc{
		{
			MethodName: "Quantiles",
			Handler:    _Streamd_Quantiles_Handler,
		},
		{
			MethodName: "Ranks",
			Handler:    _Streamd_Ranks_Handler,
		},
		{
			MethodName: "HeavyHitters",
			Handler:    _Streamd_HeavyHitters_Handler,
		},
		{
			MethodName: "Frequencies",
			Handler:    _Streamd_Frequencies_Handler,
		},
		{
			MethodName: "Stats",
			Handler:    _Streamd_Stats_Handler,
		},
		{
			MethodName: "CreateStream",
			Handler:    _Streamd_CreateStream_Handler,
		},
		{
			MethodName: "DeleteStream",
			Handler:    _Streamd_DeleteStream_Handler,
		},
		{
			MethodName: "ListStreams",
			Handler:    _Streamd_ListStreams_Handler,
		},
		{
			MethodName: "HierarchicalHeavyHitters",
			Handler:    _Streamd_HierarchicalHeavyHitters_Handler,
		},
		{
			MethodName: "CorrelatedSum",
			Handler:    _Streamd_CorrelatedSum_Handler,
		},
	},
	Streams: []grpc.StreamDesc{
		{
			StreamName:    "Push",
			Handler:       _Streamd_Push_Handler,
			ClientStreams: true,
		},
		{
			StreamName:    "Watch",
			Handler:       _Streamd_Watch_Handler,
			ServerStreams: true,
		},
	},
	Metadata: "streamd/v1/streamd.proto",
}

const (
	Peer_PeerSummaries_FullMethodName    = "/streamd.v1.Peer/PeerSummaries"
	Peer_PartitionOffsets_FullMethodName = "/streamd.v1.Peer/PartitionOffsets"
	Peer_PartitionState_FullMethodName   = "/streamd.v1.Peer/PartitionState"
)

// PeerClient is the client API for Peer service.
//
// For semantics around ctx use and closing/ending streaming RPCs, please refer to https://pkg.go.dev/google.golang.org/grpc/?tab=doc#ClientConn.NewStream.
//
// Peer is what the daemons of one Kafka consumer group ask each other: the
// summaries of a stream for SCOPE_CLUSTER answers, and the state of a
// partition for its next owner. It is served beside Streamd, with the same
// credentials; it is not meant for clients.
type PeerClient interface {
	// PeerSummaries returns the member's summaries of a stream: one part for
	// its local inputs and one for each Kafka partition it consumes now. It
	// fails with FailedPrecondition for an item stream.
	PeerSummaries(ctx context.Context, in *PeerSummariesRequest, opts ...grpc.CallOption) (*PeerSummariesResponse, error)
	// PartitionOffsets returns, for each of the given partitions the member
	// holds a state of, the offset that state covers up to.
	PartitionOffsets(ctx context.Context, in *PartitionOffsetsRequest, opts ...grpc.CallOption) (*PartitionOffsetsResponse, error)
	// PartitionState sends the member's state of one partition: the first
	// message gives the offset it covers up to, each further one the part of
	// one stream. It fails with NotFound when the member holds none.
	PartitionState(ctx context.Context, in *PartitionStateRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[PartitionStateResponse], error)
}

type peerClient struct {
	cc grpc.ClientConnInterface
}

func NewPeerClient(cc grpc.ClientConnInterface) PeerClient {
	return &peerClient{cc}
}

func (c *peerClient) PeerSummaries(ctx context.Context, in *PeerSummariesRequest, opts ...grpc.CallOption) (*PeerSummariesResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(PeerSummariesResponse)
	err := c.cc.Invoke(ctx, Peer_PeerSummaries_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *peerClient) PartitionOffsets(ctx context.Context, in *PartitionOffsetsRequest, opts ...grpc.CallOption) (*PartitionOffsetsResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(PartitionOffsetsResponse)
	err := c.cc.Invoke(ctx, Peer_PartitionOffsets_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *peerClient) PartitionState(ctx context.Context, in *PartitionStateRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[PartitionStateResponse], error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	stream, err := c.cc.NewStream(ctx, &Peer_ServiceDesc.Streams[0], Peer_PartitionState_FullMethodName, cOpts...)
	if err != nil {
		return nil, err
	}
	x := &grpc.GenericClientStream[PartitionStateRequest, PartitionStateResponse]{ClientStream: stream}
	if err := x.ClientStream.SendMsg(in); err != nil {
		return nil, err
	}
	if err := x.ClientStream.CloseSend(); err != nil {
		return nil, err
	}
	return x, nil
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type Peer_PartitionStateClient = grpc.ServerStreamingClient[PartitionStateResponse]

// PeerServer is the server API for Peer service.
// All implementations must embed UnimplementedPeerServer
// for forward compatibility.
//
// Peer is what the daemons of one Kafka consumer group ask each other: the
// summaries of a stream for SCOPE_CLUSTER answers, and the state of a
// partition for its next owner. It is served beside Streamd, with the same
// credentials; it is not meant for clients.
type PeerServer interface {
	// PeerSummaries returns the member's summaries of a stream: one part for
	// its local inputs and one for each Kafka partition it consumes now. It
	// fails with FailedPrecondition for an item stream.
	PeerSummaries(context.Context, *PeerSummariesRequest) (*PeerSummariesResponse, error)
	// PartitionOffsets returns, for each of the given partitions the member
	// holds a state of, the offset that state covers up to.
	PartitionOffsets(context.Context, *PartitionOffsetsRequest) (*PartitionOffsetsResponse, error)
	// PartitionState sends the member's state of one partition: the first
	// message gives the offset it covers up to, each further one the part of
	// one stream. It fails with NotFound when the member holds none.
	PartitionState(*PartitionStateRequest, grpc.ServerStreamingServer[PartitionStateResponse]) error
	mustEmbedUnimplementedPeerServer()
}

// UnimplementedPeerServer must be embedded to have
// forward compatible implementations.
//
// NOTE: this should be embedded by value instead of pointer to avoid a nil
// pointer dereference when methods are called.
type UnimplementedPeerServer struct{}

func (UnimplementedPeerServer) PeerSummaries(context.Context, *PeerSummariesRequest) (*PeerSummariesResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method PeerSummaries not implemented")
}
func (UnimplementedPeerServer) PartitionOffsets(context.Context, *PartitionOffsetsRequest) (*PartitionOffsetsResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method PartitionOffsets not implemented")
}
func (UnimplementedPeerServer) PartitionState(*PartitionStateRequest, grpc.ServerStreamingServer[PartitionStateResponse]) error {
	return status.Error(codes.Unimplemented, "method PartitionState not implemented")
}
func (UnimplementedPeerServer) mustEmbedUnimplementedPeerServer() {}
func (UnimplementedPeerServer) testEmbeddedByValue()              {}

// UnsafePeerServer may be embedded to opt out of forward compatibility for this service.
// Use of this interface is not recommended, as added methods to PeerServer will
// result in compilation errors.
type UnsafePeerServer interface {
	mustEmbedUnimplementedPeerServer()
}

func RegisterPeerServer(s grpc.ServiceRegistrar, srv PeerServer) {
	// If the following call panics, it indicates UnimplementedPeerServer was
	// embedded by pointer and is nil.  This will cause panics if an
	// unimplemented method is ever invoked, so we test this at initialization
	// time to prevent it from happening at runtime later due to I/O.
	if t, ok := srv.(interface{ testEmbeddedByValue() }); ok {
		t.testEmbeddedByValue()
	}
	s.RegisterService(&Peer_ServiceDesc, srv)
}

func _Peer_PeerSummaries_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(PeerSummariesRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(PeerServer).PeerSummaries(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: Peer_PeerSummaries_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(PeerServer).PeerSummaries(ctx, req.(*PeerSummariesRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _Peer_PartitionOffsets_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(PartitionOffsetsRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(PeerServer).PartitionOffsets(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: Peer_PartitionOffsets_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(PeerServer).PartitionOffsets(ctx, req.(*PartitionOffsetsRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _Peer_PartitionState_Handler(srv interface{}, stream grpc.ServerStream) error {
	m := new(PartitionStateRequest)
	if err := stream.RecvMsg(m); err != nil {
		return err
	}
	return srv.(PeerServer).PartitionState(m, &grpc.GenericServerStream[PartitionStateRequest, PartitionStateResponse]{ServerStream: stream})
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type Peer_PartitionStateServer = grpc.ServerStreamingServer[PartitionStateResponse]

// Peer_ServiceDesc is the grpc.ServiceDesc for Peer service.
// It's only intended for direct use with grpc.RegisterService,
// and not to be introspected or modified (even as a copy)
var Peer_ServiceDesc = grpc.ServiceDesc{
	ServiceName: "streamd.v1.Peer",
	HandlerType: (*PeerServer)(nil),
	Methods: []grpc.MethodDesc{
		{
			MethodName: "PeerSummaries",
			Handler:    _Peer_PeerSummaries_Handler,
		},
		{
			MethodName: "PartitionOffsets",
			Handler:    _Peer_PartitionOffsets_Handler,
		},
	},
	Streams: []grpc.StreamDesc{
		{
			StreamName:    "PartitionState",
			Handler:       _Peer_PartitionState_Handler,
			ServerStreams: true,
		},
	},
	Metadata: "streamd/v1/streamd.proto",
}
