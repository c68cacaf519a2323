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

// Code generated by protoc-gen-go. DO NOT EDIT.
// versions:
// 	protoc-gen-go v1.36.12
// 	protoc        (unknown)
// source: streamd/v1/streamd.proto

package streamdv1

import (
	protoreflect "google.golang.org/protobuf/reflect/protoreflect"
	protoimpl "google.golang.org/protobuf/runtime/protoimpl"
	durationpb "google.golang.org/protobuf/types/known/durationpb"
	reflect "reflect"
	sync "sync"
	unsafe "unsafe"
)

const (
	// Verify that this generated code is sufficiently up-to-date.
	_ = protoimpl.EnforceVersion(20 - protoimpl.MinVersion)
	// Verify that runtime/protoimpl is sufficiently up-to-date.
	_ = protoimpl.EnforceVersion(protoimpl.MaxVersion - 20)
)

// Scope says which values an answer covers.
type Scope int32

const (
	// SCOPE_UNSPECIFIED is SCOPE_LOCAL.
	Scope_SCOPE_UNSPECIFIED Scope = 0
	// SCOPE_LOCAL answers for the values this daemon holds: its local inputs
	// and the Kafka partitions it consumes now.
	Scope_SCOPE_LOCAL Scope = 1
	// SCOPE_CLUSTER answers for every daemon of this daemon's Kafka consumer
	// group, each partition counted once.
	Scope_SCOPE_CLUSTER Scope = 2
)

// Enum value maps for Scope.
var (
	Scope_name = map[int32]string{
		0: "SCOPE_UNSPECIFIED",
		1: "SCOPE_LOCAL",
		2: "SCOPE_CLUSTER",
	}
	Scope_value = map[string]int32{
		"SCOPE_UNSPECIFIED": 0,
		"SCOPE_LOCAL":       1,
		"SCOPE_CLUSTER":     2,
	}
)

func (x Scope) Enum() *Scope {
	p := new(Scope)
	*p = x
	return p
}

func (x Scope) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (Scope) Descriptor() protoreflect.EnumDescriptor {
	return file_streamd_v1_streamd_proto_enumTypes[0].Descriptor()
}

func (Scope) Type() protoreflect.EnumType {
	return &file_streamd_v1_streamd_proto_enumTypes[0]
}

func (x Scope) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use Scope.Descriptor instead.
func (Scope) EnumDescriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{0}
}

// StreamKind says what a stream takes.
type StreamKind int32

const (
	// STREAM_KIND_VALUES: numeric values (the default).
	StreamKind_STREAM_KIND_VALUES StreamKind = 0
	// STREAM_KIND_ITEMS: items (strings), counted by fingerprint.
	StreamKind_STREAM_KIND_ITEMS StreamKind = 1
	// STREAM_KIND_PAIRS: pairs (x, y) of doubles, for correlated sums
	// (CorrelatedSum) over all history. Its stats' count, min, max and sum
	// are those of x.
	StreamKind_STREAM_KIND_PAIRS StreamKind = 2
)

// Enum value maps for StreamKind.
var (
	StreamKind_name = map[int32]string{
		0: "STREAM_KIND_VALUES",
		1: "STREAM_KIND_ITEMS",
		2: "STREAM_KIND_PAIRS",
	}
	StreamKind_value = map[string]int32{
		"STREAM_KIND_VALUES": 0,
		"STREAM_KIND_ITEMS":  1,
		"STREAM_KIND_PAIRS":  2,
	}
)

func (x StreamKind) Enum() *StreamKind {
	p := new(StreamKind)
	*p = x
	return p
}

func (x StreamKind) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (StreamKind) Descriptor() protoreflect.EnumDescriptor {
	return file_streamd_v1_streamd_proto_enumTypes[1].Descriptor()
}

func (StreamKind) Type() protoreflect.EnumType {
	return &file_streamd_v1_streamd_proto_enumTypes[1]
}

func (x StreamKind) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use StreamKind.Descriptor instead.
func (StreamKind) EnumDescriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{1}
}

// SumAggregate says what a correlated sum's threshold is made of.
type SumAggregate int32

const (
	// SUM_AGGREGATE_CONSTANT: the threshold is the request's constant.
	SumAggregate_SUM_AGGREGATE_CONSTANT SumAggregate = 0
	// SUM_AGGREGATE_QUANTILE: the φ-quantile of x (phi), as the stream's
	// summary answers it: its rank is within ⌊(ε·count + 1)/2⌋ of ⌈φ·count⌉.
	SumAggregate_SUM_AGGREGATE_QUANTILE SumAggregate = 1
	// SUM_AGGREGATE_MIN: the smallest x, exact.
	SumAggregate_SUM_AGGREGATE_MIN SumAggregate = 2
	// SUM_AGGREGATE_MAX: the largest x, exact.
	SumAggregate_SUM_AGGREGATE_MAX SumAggregate = 3
	// SUM_AGGREGATE_MEAN: the mean of x, from the exact count and running sum.
	SumAggregate_SUM_AGGREGATE_MEAN SumAggregate = 4
)

// Enum value maps for SumAggregate.
var (
	SumAggregate_name = map[int32]string{
		0: "SUM_AGGREGATE_CONSTANT",
		1: "SUM_AGGREGATE_QUANTILE",
		2: "SUM_AGGREGATE_MIN",
		3: "SUM_AGGREGATE_MAX",
		4: "SUM_AGGREGATE_MEAN",
	}
	SumAggregate_value = map[string]int32{
		"SUM_AGGREGATE_CONSTANT": 0,
		"SUM_AGGREGATE_QUANTILE": 1,
		"SUM_AGGREGATE_MIN":      2,
		"SUM_AGGREGATE_MAX":      3,
		"SUM_AGGREGATE_MEAN":     4,
	}
)

func (x SumAggregate) Enum() *SumAggregate {
	p := new(SumAggregate)
	*p = x
	return p
}

func (x SumAggregate) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (SumAggregate) Descriptor() protoreflect.EnumDescriptor {
	return file_streamd_v1_streamd_proto_enumTypes[2].Descriptor()
}

func (SumAggregate) Type() protoreflect.EnumType {
	return &file_streamd_v1_streamd_proto_enumTypes[2]
}

func (x SumAggregate) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use SumAggregate.Descriptor instead.
func (SumAggregate) EnumDescriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{2}
}

// SumSide says which pairs a correlated sum counts.
type SumSide int32

const (
	// SUM_SIDE_BOTH answers both sides.
	SumSide_SUM_SIDE_BOTH SumSide = 0
	// SUM_SIDE_AT_MOST: the pairs with x ≤ threshold.
	SumSide_SUM_SIDE_AT_MOST SumSide = 1
	// SUM_SIDE_AT_LEAST: the pairs with x ≥ threshold.
	SumSide_SUM_SIDE_AT_LEAST SumSide = 2
)

// Enum value maps for SumSide.
var (
	SumSide_name = map[int32]string{
		0: "SUM_SIDE_BOTH",
		1: "SUM_SIDE_AT_MOST",
		2: "SUM_SIDE_AT_LEAST",
	}
	SumSide_value = map[string]int32{
		"SUM_SIDE_BOTH":     0,
		"SUM_SIDE_AT_MOST":  1,
		"SUM_SIDE_AT_LEAST": 2,
	}
)

func (x SumSide) Enum() *SumSide {
	p := new(SumSide)
	*p = x
	return p
}

func (x SumSide) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (SumSide) Descriptor() protoreflect.EnumDescriptor {
	return file_streamd_v1_streamd_proto_enumTypes[3].Descriptor()
}

func (SumSide) Type() protoreflect.EnumType {
	return &file_streamd_v1_streamd_proto_enumTypes[3]
}

func (x SumSide) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use SumSide.Descriptor instead.
func (SumSide) EnumDescriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{3}
}

// KafkaPartition names a partition of a Kafka topic.
type KafkaPartition struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// topic is the topic's name.
	Topic string `protobuf:"bytes,1,opt,name=topic,proto3" json:"topic,omitempty"`
	// partition is the partition's number.
	Partition     int32 `protobuf:"varint,2,opt,name=partition,proto3" json:"partition,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *KafkaPartition) Reset() {
	*x = KafkaPartition{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[0]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *KafkaPartition) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*KafkaPartition) ProtoMessage() {}

func (x *KafkaPartition) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[0]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use KafkaPartition.ProtoReflect.Descriptor instead.
func (*KafkaPartition) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{0}
}

func (x *KafkaPartition) GetTopic() string {
	if x != nil {
		return x.Topic
	}
	return ""
}

func (x *KafkaPartition) GetPartition() int32 {
	if x != nil {
		return x.Partition
	}
	return 0
}

// PartitionCoverage is a partition a member counts, and how far.
type PartitionCoverage struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// partition is the Kafka partition.
	Partition *KafkaPartition `protobuf:"bytes,1,opt,name=partition,proto3" json:"partition,omitempty"`
	// next_offset is the offset up to which the member had consumed the
	// partition when it answered (delivery goes on meanwhile, so it is
	// approximate).
	NextOffset    int64 `protobuf:"varint,2,opt,name=next_offset,json=nextOffset,proto3" json:"next_offset,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *PartitionCoverage) Reset() {
	*x = PartitionCoverage{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[1]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *PartitionCoverage) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*PartitionCoverage) ProtoMessage() {}

func (x *PartitionCoverage) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[1]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use PartitionCoverage.ProtoReflect.Descriptor instead.
func (*PartitionCoverage) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{1}
}

func (x *PartitionCoverage) GetPartition() *KafkaPartition {
	if x != nil {
		return x.Partition
	}
	return nil
}

func (x *PartitionCoverage) GetNextOffset() int64 {
	if x != nil {
		return x.NextOffset
	}
	return 0
}

// ClusterMember is one daemon of a consumer group, as a SCOPE_CLUSTER
// answer saw it.
type ClusterMember struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// id identifies the daemon; it stays the same across restarts on the
	// same data directory.
	Id string `protobuf:"bytes,1,opt,name=id,proto3" json:"id,omitempty"`
	// address is the gRPC address the daemon announced.
	Address string `protobuf:"bytes,2,opt,name=address,proto3" json:"address,omitempty"`
	// generation is the consumer group generation the daemon was in (0
	// between generations).
	Generation int64 `protobuf:"varint,3,opt,name=generation,proto3" json:"generation,omitempty"`
	// answered is set when the daemon's summaries are in the answer.
	Answered bool `protobuf:"varint,4,opt,name=answered,proto3" json:"answered,omitempty"`
	// error says why the daemon did not answer.
	Error string `protobuf:"bytes,5,opt,name=error,proto3" json:"error,omitempty"`
	// partitions are the partitions counted from this daemon.
	Partitions []*PartitionCoverage `protobuf:"bytes,6,rep,name=partitions,proto3" json:"partitions,omitempty"`
	// count is the number of values counted from this daemon.
	Count         uint64 `protobuf:"varint,7,opt,name=count,proto3" json:"count,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ClusterMember) Reset() {
	*x = ClusterMember{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[2]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ClusterMember) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ClusterMember) ProtoMessage() {}

func (x *ClusterMember) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[2]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ClusterMember.ProtoReflect.Descriptor instead.
func (*ClusterMember) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{2}
}

func (x *ClusterMember) GetId() string {
	if x != nil {
		return x.Id
	}
	return ""
}

func (x *ClusterMember) GetAddress() string {
	if x != nil {
		return x.Address
	}
	return ""
}

func (x *ClusterMember) GetGeneration() int64 {
	if x != nil {
		return x.Generation
	}
	return 0
}

func (x *ClusterMember) GetAnswered() bool {
	if x != nil {
		return x.Answered
	}
	return false
}

func (x *ClusterMember) GetError() string {
	if x != nil {
		return x.Error
	}
	return ""
}

func (x *ClusterMember) GetPartitions() []*PartitionCoverage {
	if x != nil {
		return x.Partitions
	}
	return nil
}

func (x *ClusterMember) GetCount() uint64 {
	if x != nil {
		return x.Count
	}
	return 0
}

// PeerSummariesRequest asks a member for its summaries of a stream.
type PeerSummariesRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// stream is the name of the stream.
	Stream string `protobuf:"bytes,1,opt,name=stream,proto3" json:"stream,omitempty"`
	// quantiles asks for the quantile summaries.
	Quantiles bool `protobuf:"varint,2,opt,name=quantiles,proto3" json:"quantiles,omitempty"`
	// counts asks for the frequency summaries.
	Counts        bool `protobuf:"varint,3,opt,name=counts,proto3" json:"counts,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *PeerSummariesRequest) Reset() {
	*x = PeerSummariesRequest{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[3]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *PeerSummariesRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*PeerSummariesRequest) ProtoMessage() {}

func (x *PeerSummariesRequest) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[3]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use PeerSummariesRequest.ProtoReflect.Descriptor instead.
func (*PeerSummariesRequest) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{3}
}

func (x *PeerSummariesRequest) GetStream() string {
	if x != nil {
		return x.Stream
	}
	return ""
}

func (x *PeerSummariesRequest) GetQuantiles() bool {
	if x != nil {
		return x.Quantiles
	}
	return false
}

func (x *PeerSummariesRequest) GetCounts() bool {
	if x != nil {
		return x.Counts
	}
	return false
}

// PeerSummariesResponse is a member's share of a stream.
type PeerSummariesResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// member is the daemon that answers, with the partitions it consumes now.
	Member *ClusterMember `protobuf:"bytes,1,opt,name=member,proto3" json:"member,omitempty"`
	// found is set when the member has the stream; parts is empty otherwise.
	Found bool `protobuf:"varint,2,opt,name=found,proto3" json:"found,omitempty"`
	// parts are the member's summaries of the stream: its local inputs and
	// the partitions it consumes that hold values of the stream.
	Parts         []*PeerPart `protobuf:"bytes,3,rep,name=parts,proto3" json:"parts,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *PeerSummariesResponse) Reset() {
	*x = PeerSummariesResponse{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[4]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *PeerSummariesResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*PeerSummariesResponse) ProtoMessage() {}

func (x *PeerSummariesResponse) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[4]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use PeerSummariesResponse.ProtoReflect.Descriptor instead.
func (*PeerSummariesResponse) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{4}
}

func (x *PeerSummariesResponse) GetMember() *ClusterMember {
	if x != nil {
		return x.Member
	}
	return nil
}

func (x *PeerSummariesResponse) GetFound() bool {
	if x != nil {
		return x.Found
	}
	return false
}

func (x *PeerSummariesResponse) GetParts() []*PeerPart {
	if x != nil {
		return x.Parts
	}
	return nil
}

// PeerPart is the summaries of a stream's values from one source.
type PeerPart struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// partition is the Kafka partition; unset for the local inputs.
	Partition *KafkaPartition `protobuf:"bytes,1,opt,name=partition,proto3" json:"partition,omitempty"`
	// epsilon, window_size, sliding_window and float64 are the part's
	// configuration.
	Epsilon       float64 `protobuf:"fixed64,2,opt,name=epsilon,proto3" json:"epsilon,omitempty"`
	WindowSize    uint64  `protobuf:"varint,3,opt,name=window_size,json=windowSize,proto3" json:"window_size,omitempty"`
	SlidingWindow uint64  `protobuf:"varint,4,opt,name=sliding_window,json=slidingWindow,proto3" json:"sliding_window,omitempty"`
	Float64       bool    `protobuf:"varint,5,opt,name=float64,proto3" json:"float64,omitempty"`
	// count, sum, min, max, summary_entries and summary_bytes are as in
	// StatsResponse, for this part.
	Count          uint64  `protobuf:"varint,6,opt,name=count,proto3" json:"count,omitempty"`
	Sum            float64 `protobuf:"fixed64,7,opt,name=sum,proto3" json:"sum,omitempty"`
	Min            float64 `protobuf:"fixed64,8,opt,name=min,proto3" json:"min,omitempty"`
	Max            float64 `protobuf:"fixed64,9,opt,name=max,proto3" json:"max,omitempty"`
	SummaryEntries uint64  `protobuf:"varint,10,opt,name=summary_entries,json=summaryEntries,proto3" json:"summary_entries,omitempty"`
	SummaryBytes   uint64  `protobuf:"varint,11,opt,name=summary_bytes,json=summaryBytes,proto3" json:"summary_bytes,omitempty"`
	// rejected counts the part's rejected values by reason.
	Rejected map[string]uint64 `protobuf:"bytes,12,rep,name=rejected,proto3" json:"rejected,omitempty" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"varint,2,opt,name=value"`
	// quantiles is the part's GK summary, pending values included, in the
	// encoding of package gksketch; sent when asked for.
	Quantiles []byte `protobuf:"bytes,13,opt,name=quantiles,proto3" json:"quantiles,omitempty"`
	// counts is the part's lossy counting summary, pending values included,
	// in the encoding of package lossy; sent when asked for.
	Counts        []byte `protobuf:"bytes,14,opt,name=counts,proto3" json:"counts,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *PeerPart) Reset() {
	*x = PeerPart{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[5]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *PeerPart) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*PeerPart) ProtoMessage() {}

func (x *PeerPart) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[5]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use PeerPart.ProtoReflect.Descriptor instead.
func (*PeerPart) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{5}
}

func (x *PeerPart) GetPartition() *KafkaPartition {
	if x != nil {
		return x.Partition
	}
	return nil
}

func (x *PeerPart) GetEpsilon() float64 {
	if x != nil {
		return x.Epsilon
	}
	return 0
}

func (x *PeerPart) GetWindowSize() uint64 {
	if x != nil {
		return x.WindowSize
	}
	return 0
}

func (x *PeerPart) GetSlidingWindow() uint64 {
	if x != nil {
		return x.SlidingWindow
	}
	return 0
}

func (x *PeerPart) GetFloat64() bool {
	if x != nil {
		return x.Float64
	}
	return false
}

func (x *PeerPart) GetCount() uint64 {
	if x != nil {
		return x.Count
	}
	return 0
}

func (x *PeerPart) GetSum() float64 {
	if x != nil {
		return x.Sum
	}
	return 0
}

func (x *PeerPart) GetMin() float64 {
	if x != nil {
		return x.Min
	}
	return 0
}

func (x *PeerPart) GetMax() float64 {
	if x != nil {
		return x.Max
	}
	return 0
}

func (x *PeerPart) GetSummaryEntries() uint64 {
	if x != nil {
		return x.SummaryEntries
	}
	return 0
}

func (x *PeerPart) GetSummaryBytes() uint64 {
	if x != nil {
		return x.SummaryBytes
	}
	return 0
}

func (x *PeerPart) GetRejected() map[string]uint64 {
	if x != nil {
		return x.Rejected
	}
	return nil
}

func (x *PeerPart) GetQuantiles() []byte {
	if x != nil {
		return x.Quantiles
	}
	return nil
}

func (x *PeerPart) GetCounts() []byte {
	if x != nil {
		return x.Counts
	}
	return nil
}

// PartitionOffsetsRequest asks which of the partitions a member holds.
type PartitionOffsetsRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// partitions are the partitions asked about.
	Partitions    []*KafkaPartition `protobuf:"bytes,1,rep,name=partitions,proto3" json:"partitions,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *PartitionOffsetsRequest) Reset() {
	*x = PartitionOffsetsRequest{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[6]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *PartitionOffsetsRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*PartitionOffsetsRequest) ProtoMessage() {}

func (x *PartitionOffsetsRequest) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[6]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use PartitionOffsetsRequest.ProtoReflect.Descriptor instead.
func (*PartitionOffsetsRequest) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{6}
}

func (x *PartitionOffsetsRequest) GetPartitions() []*KafkaPartition {
	if x != nil {
		return x.Partitions
	}
	return nil
}

// PartitionOffsetsResponse lists the partitions a member holds a state of.
type PartitionOffsetsResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// member_id is the id of the daemon that answers.
	MemberId string `protobuf:"bytes,1,opt,name=member_id,json=memberId,proto3" json:"member_id,omitempty"`
	// partitions are those of the request the member holds a state of, each
	// with the offset it covers up to.
	Partitions    []*PartitionCoverage `protobuf:"bytes,2,rep,name=partitions,proto3" json:"partitions,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *PartitionOffsetsResponse) Reset() {
	*x = PartitionOffsetsResponse{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[7]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *PartitionOffsetsResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*PartitionOffsetsResponse) ProtoMessage() {}

func (x *PartitionOffsetsResponse) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[7]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use PartitionOffsetsResponse.ProtoReflect.Descriptor instead.
func (*PartitionOffsetsResponse) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{7}
}

func (x *PartitionOffsetsResponse) GetMemberId() string {
	if x != nil {
		return x.MemberId
	}
	return ""
}

func (x *PartitionOffsetsResponse) GetPartitions() []*PartitionCoverage {
	if x != nil {
		return x.Partitions
	}
	return nil
}

// PartitionStateRequest asks for a member's state of one partition.
type PartitionStateRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// partition is the Kafka partition.
	Partition     *KafkaPartition `protobuf:"bytes,1,opt,name=partition,proto3" json:"partition,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *PartitionStateRequest) Reset() {
	*x = PartitionStateRequest{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[8]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *PartitionStateRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*PartitionStateRequest) ProtoMessage() {}

func (x *PartitionStateRequest) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[8]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use PartitionStateRequest.ProtoReflect.Descriptor instead.
func (*PartitionStateRequest) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{8}
}

func (x *PartitionStateRequest) GetPartition() *KafkaPartition {
	if x != nil {
		return x.Partition
	}
	return nil
}

// PartitionStateResponse is one message of a PartitionState call.
type PartitionStateResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// next_offset, in the first message only, is the offset the state covers
	// up to: it holds exactly the values of the partition's messages before
	// it.
	NextOffset int64 `protobuf:"varint,1,opt,name=next_offset,json=nextOffset,proto3" json:"next_offset,omitempty"`
	// stream names the stream of part, in the further messages.
	Stream string `protobuf:"bytes,2,opt,name=stream,proto3" json:"stream,omitempty"`
	// part is the stream's state of the partition, in the part encoding of
	// package pipeline.
	Part          []byte `protobuf:"bytes,3,opt,name=part,proto3" json:"part,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *PartitionStateResponse) Reset() {
	*x = PartitionStateResponse{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[9]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *PartitionStateResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*PartitionStateResponse) ProtoMessage() {}

func (x *PartitionStateResponse) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[9]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use PartitionStateResponse.ProtoReflect.Descriptor instead.
func (*PartitionStateResponse) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{9}
}

func (x *PartitionStateResponse) GetNextOffset() int64 {
	if x != nil {
		return x.NextOffset
	}
	return 0
}

func (x *PartitionStateResponse) GetStream() string {
	if x != nil {
		return x.Stream
	}
	return ""
}

func (x *PartitionStateResponse) GetPart() []byte {
	if x != nil {
		return x.Part
	}
	return nil
}

// PushRequest is one message of a Push call: values for one stream.
type PushRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// stream is the name of the stream the values go to.
	Stream string `protobuf:"bytes,1,opt,name=stream,proto3" json:"stream,omitempty"`
	// values are appended to the stream in order. NaN and ±Inf are rejected
	// and counted, the other values are accepted.
	Values []float64 `protobuf:"fixed64,2,rep,packed,name=values,proto3" json:"values,omitempty"`
	// durable, when set on any message of the call, makes the server send the
	// PushResponse only after the next durable checkpoint covers all the
	// values of the call. Without it the response may come before the values
	// are checkpointed, and a crash may lose them.
	Durable bool `protobuf:"varint,3,opt,name=durable,proto3" json:"durable,omitempty"`
	// items are appended to an item stream in order (created as an item
	// stream if it does not exist). Empty items and items over 1024 bytes
	// are rejected and counted, the others accepted. A message carries values
	// or items, not both.
	Items []string `protobuf:"bytes,20,rep,name=items,proto3" json:"items,omitempty"`
	// pairs are appended to a pair stream in order (created as a pair stream
	// if it does not exist). A pair with a NaN or ±Inf in x or y is rejected
	// and counted; −0 becomes +0. A message carries values, items or pairs,
	// only one of them.
	Pairs         *Pairs `protobuf:"bytes,21,opt,name=pairs,proto3" json:"pairs,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *PushRequest) Reset() {
	*x = PushRequest{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[10]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *PushRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*PushRequest) ProtoMessage() {}

func (x *PushRequest) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[10]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use PushRequest.ProtoReflect.Descriptor instead.
func (*PushRequest) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{10}
}

func (x *PushRequest) GetStream() string {
	if x != nil {
		return x.Stream
	}
	return ""
}

func (x *PushRequest) GetValues() []float64 {
	if x != nil {
		return x.Values
	}
	return nil
}

func (x *PushRequest) GetDurable() bool {
	if x != nil {
		return x.Durable
	}
	return false
}

func (x *PushRequest) GetItems() []string {
	if x != nil {
		return x.Items
	}
	return nil
}

func (x *PushRequest) GetPairs() *Pairs {
	if x != nil {
		return x.Pairs
	}
	return nil
}

// Pairs are pairs (x[i], y[i]) for a pair stream, as two arrays of equal
// length (packed on the wire: 8 bytes a number). Arrays of different
// lengths are InvalidArgument.
type Pairs struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// x are the pairs' x, the values thresholds are about (a latency, say).
	X []float64 `protobuf:"fixed64,1,rep,packed,name=x,proto3" json:"x,omitempty"`
	// y are the pairs' y, the values that are summed (bytes, say).
	Y             []float64 `protobuf:"fixed64,2,rep,packed,name=y,proto3" json:"y,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *Pairs) Reset() {
	*x = Pairs{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[11]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Pairs) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Pairs) ProtoMessage() {}

func (x *Pairs) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[11]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Pairs.ProtoReflect.Descriptor instead.
func (*Pairs) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{11}
}

func (x *Pairs) GetX() []float64 {
	if x != nil {
		return x.X
	}
	return nil
}

func (x *Pairs) GetY() []float64 {
	if x != nil {
		return x.Y
	}
	return nil
}

// PushResponse ends a Push call with totals over all of its messages.
type PushResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// accepted is the number of values and items added to their streams.
	Accepted uint64 `protobuf:"varint,1,opt,name=accepted,proto3" json:"accepted,omitempty"`
	// rejected is the number of values refused (NaN or ±Inf) and items
	// refused (empty, too long).
	Rejected      uint64 `protobuf:"varint,2,opt,name=rejected,proto3" json:"rejected,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *PushResponse) Reset() {
	*x = PushResponse{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[12]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *PushResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*PushResponse) ProtoMessage() {}

func (x *PushResponse) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[12]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use PushResponse.ProtoReflect.Descriptor instead.
func (*PushResponse) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{12}
}

func (x *PushResponse) GetAccepted() uint64 {
	if x != nil {
		return x.Accepted
	}
	return 0
}

func (x *PushResponse) GetRejected() uint64 {
	if x != nil {
		return x.Rejected
	}
	return 0
}

// QuantilesRequest asks for the φ-quantiles of a stream.
type QuantilesRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// stream is the name of the stream.
	Stream string `protobuf:"bytes,1,opt,name=stream,proto3" json:"stream,omitempty"`
	// phis are the quantiles wanted, each in [0, 1]; 0.5 is the median. The
	// answer keeps their order; duplicates are allowed.
	Phis []float64 `protobuf:"fixed64,2,rep,packed,name=phis,proto3" json:"phis,omitempty"`
	// last_n = 0 asks over all history; otherwise over the last n values,
	// with n ≤ the stream's sliding_window. When fewer than n values have
	// arrived the answer covers all of them.
	LastN uint64 `protobuf:"varint,3,opt,name=last_n,json=lastN,proto3" json:"last_n,omitempty"`
	// last, when set and positive, asks over the values that arrived in the
	// last d instead (see the file comment); the response's window says what
	// it covers.
	Last *durationpb.Duration `protobuf:"bytes,20,opt,name=last,proto3" json:"last,omitempty"`
	// scope SCOPE_CLUSTER asks for the whole Kafka consumer group's values;
	// the default is this daemon's.
	Scope         Scope `protobuf:"varint,30,opt,name=scope,proto3,enum=streamd.v1.Scope" json:"scope,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *QuantilesRequest) Reset() {
	*x = QuantilesRequest{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[13]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *QuantilesRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*QuantilesRequest) ProtoMessage() {}

func (x *QuantilesRequest) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[13]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use QuantilesRequest.ProtoReflect.Descriptor instead.
func (*QuantilesRequest) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{13}
}

func (x *QuantilesRequest) GetStream() string {
	if x != nil {
		return x.Stream
	}
	return ""
}

func (x *QuantilesRequest) GetPhis() []float64 {
	if x != nil {
		return x.Phis
	}
	return nil
}

func (x *QuantilesRequest) GetLastN() uint64 {
	if x != nil {
		return x.LastN
	}
	return 0
}

func (x *QuantilesRequest) GetLast() *durationpb.Duration {
	if x != nil {
		return x.Last
	}
	return nil
}

func (x *QuantilesRequest) GetScope() Scope {
	if x != nil {
		return x.Scope
	}
	return Scope_SCOPE_UNSPECIFIED
}

// QuantilesResponse holds one Quantile per requested φ, in request order.
type QuantilesResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// count is the number of values the answer covers: all of the stream's
	// values, or the last n. When count is 0 the stream is empty and
	// quantiles is empty.
	Count uint64 `protobuf:"varint,1,opt,name=count,proto3" json:"count,omitempty"`
	// epsilon is the rank error guarantee of the answer, as a fraction of
	// count.
	Epsilon float64 `protobuf:"fixed64,2,opt,name=epsilon,proto3" json:"epsilon,omitempty"`
	// quantiles are the answers, one per requested φ, in request order.
	Quantiles []*QuantilesResponse_Quantile `protobuf:"bytes,3,rep,name=quantiles,proto3" json:"quantiles,omitempty"`
	// window describes what a time-window answer (last) covers; unset
	// otherwise.
	Window *TimeWindow `protobuf:"bytes,20,opt,name=window,proto3" json:"window,omitempty"`
	// partial is set when a SCOPE_CLUSTER answer misses values: a member of
	// the group did not answer in time, or a partition is consumed by no
	// member that answered (for instance while the group rebalances). The
	// answer then covers only the partitions and members listed.
	Partial bool `protobuf:"varint,30,opt,name=partial,proto3" json:"partial,omitempty"`
	// missing_partitions are the Kafka partitions a partial answer misses.
	MissingPartitions []*KafkaPartition `protobuf:"bytes,31,rep,name=missing_partitions,json=missingPartitions,proto3" json:"missing_partitions,omitempty"`
	// members are the daemons a SCOPE_CLUSTER answer asked, with what each
	// contributed; empty for a local answer.
	Members       []*ClusterMember `protobuf:"bytes,32,rep,name=members,proto3" json:"members,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *QuantilesResponse) Reset() {
	*x = QuantilesResponse{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[14]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *QuantilesResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*QuantilesResponse) ProtoMessage() {}

func (x *QuantilesResponse) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[14]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use QuantilesResponse.ProtoReflect.Descriptor instead.
func (*QuantilesResponse) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{14}
}

func (x *QuantilesResponse) GetCount() uint64 {
	if x != nil {
		return x.Count
	}
	return 0
}

func (x *QuantilesResponse) GetEpsilon() float64 {
	if x != nil {
		return x.Epsilon
	}
	return 0
}

func (x *QuantilesResponse) GetQuantiles() []*QuantilesResponse_Quantile {
	if x != nil {
		return x.Quantiles
	}
	return nil
}

func (x *QuantilesResponse) GetWindow() *TimeWindow {
	if x != nil {
		return x.Window
	}
	return nil
}

func (x *QuantilesResponse) GetPartial() bool {
	if x != nil {
		return x.Partial
	}
	return false
}

func (x *QuantilesResponse) GetMissingPartitions() []*KafkaPartition {
	if x != nil {
		return x.MissingPartitions
	}
	return nil
}

func (x *QuantilesResponse) GetMembers() []*ClusterMember {
	if x != nil {
		return x.Members
	}
	return nil
}

// RanksRequest asks for the ranks of given values in a stream.
type RanksRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// stream is the name of the stream.
	Stream string `protobuf:"bytes,1,opt,name=stream,proto3" json:"stream,omitempty"`
	// values are the values to rank; they need not occur in the stream. They
	// are rounded to the stream's precision before ranking. NaN and ±Inf are
	// InvalidArgument.
	Values []float64 `protobuf:"fixed64,2,rep,packed,name=values,proto3" json:"values,omitempty"`
	// last_n = 0 asks over all history; otherwise over the last n values,
	// with n ≤ the stream's sliding_window.
	LastN uint64 `protobuf:"varint,3,opt,name=last_n,json=lastN,proto3" json:"last_n,omitempty"`
	// last, when set and positive, asks over the values that arrived in the
	// last d instead (see the file comment).
	Last *durationpb.Duration `protobuf:"bytes,20,opt,name=last,proto3" json:"last,omitempty"`
	// scope SCOPE_CLUSTER asks for the whole Kafka consumer group's values;
	// the default is this daemon's.
	Scope         Scope `protobuf:"varint,30,opt,name=scope,proto3,enum=streamd.v1.Scope" json:"scope,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *RanksRequest) Reset() {
	*x = RanksRequest{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[15]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *RanksRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*RanksRequest) ProtoMessage() {}

func (x *RanksRequest) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[15]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use RanksRequest.ProtoReflect.Descriptor instead.
func (*RanksRequest) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{15}
}

func (x *RanksRequest) GetStream() string {
	if x != nil {
		return x.Stream
	}
	return ""
}

func (x *RanksRequest) GetValues() []float64 {
	if x != nil {
		return x.Values
	}
	return nil
}

func (x *RanksRequest) GetLastN() uint64 {
	if x != nil {
		return x.LastN
	}
	return 0
}

func (x *RanksRequest) GetLast() *durationpb.Duration {
	if x != nil {
		return x.Last
	}
	return nil
}

func (x *RanksRequest) GetScope() Scope {
	if x != nil {
		return x.Scope
	}
	return Scope_SCOPE_UNSPECIFIED
}

// RanksResponse holds one Rank per requested value, in request order.
type RanksResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// count is the number of values the answer covers.
	Count uint64 `protobuf:"varint,1,opt,name=count,proto3" json:"count,omitempty"`
	// ranks are the answers, one per requested value, in request order.
	Ranks []*RanksResponse_Rank `protobuf:"bytes,2,rep,name=ranks,proto3" json:"ranks,omitempty"`
	// window describes what a time-window answer (last) covers; unset
	// otherwise.
	Window *TimeWindow `protobuf:"bytes,20,opt,name=window,proto3" json:"window,omitempty"`
	// partial is set when a SCOPE_CLUSTER answer misses values: a member of
	// the group did not answer in time, or a partition is consumed by no
	// member that answered (for instance while the group rebalances). The
	// answer then covers only the partitions and members listed.
	Partial bool `protobuf:"varint,30,opt,name=partial,proto3" json:"partial,omitempty"`
	// missing_partitions are the Kafka partitions a partial answer misses.
	MissingPartitions []*KafkaPartition `protobuf:"bytes,31,rep,name=missing_partitions,json=missingPartitions,proto3" json:"missing_partitions,omitempty"`
	// members are the daemons a SCOPE_CLUSTER answer asked, with what each
	// contributed; empty for a local answer.
	Members []*ClusterMember `protobuf:"bytes,32,rep,name=members,proto3" json:"members,omitempty"`
	// epsilon is the rank error guarantee of the answer, as a fraction of
	// count.
	Epsilon       float64 `protobuf:"fixed64,33,opt,name=epsilon,proto3" json:"epsilon,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *RanksResponse) Reset() {
	*x = RanksResponse{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[16]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *RanksResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*RanksResponse) ProtoMessage() {}

func (x *RanksResponse) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[16]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use RanksResponse.ProtoReflect.Descriptor instead.
func (*RanksResponse) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{16}
}

func (x *RanksResponse) GetCount() uint64 {
	if x != nil {
		return x.Count
	}
	return 0
}

func (x *RanksResponse) GetRanks() []*RanksResponse_Rank {
	if x != nil {
		return x.Ranks
	}
	return nil
}

func (x *RanksResponse) GetWindow() *TimeWindow {
	if x != nil {
		return x.Window
	}
	return nil
}

func (x *RanksResponse) GetPartial() bool {
	if x != nil {
		return x.Partial
	}
	return false
}

func (x *RanksResponse) GetMissingPartitions() []*KafkaPartition {
	if x != nil {
		return x.MissingPartitions
	}
	return nil
}

func (x *RanksResponse) GetMembers() []*ClusterMember {
	if x != nil {
		return x.Members
	}
	return nil
}

func (x *RanksResponse) GetEpsilon() float64 {
	if x != nil {
		return x.Epsilon
	}
	return 0
}

// HeavyHittersRequest asks for the frequent values of a stream.
type HeavyHittersRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// stream is the name of the stream.
	Stream string `protobuf:"bytes,1,opt,name=stream,proto3" json:"stream,omitempty"`
	// support s is the frequency threshold as a fraction of count, in
	// (ε, 1]: every value with true count ≥ s·count is returned, and no value
	// with true count < (s − ε)·count.
	Support float64 `protobuf:"fixed64,2,opt,name=support,proto3" json:"support,omitempty"`
	// last_n = 0 asks over all history; otherwise over the last n values,
	// with n ≤ the stream's sliding_window.
	LastN uint64 `protobuf:"varint,3,opt,name=last_n,json=lastN,proto3" json:"last_n,omitempty"`
	// last, when set and positive, asks over the values that arrived in the
	// last d instead (see the file comment).
	Last *durationpb.Duration `protobuf:"bytes,20,opt,name=last,proto3" json:"last,omitempty"`
	// scope SCOPE_CLUSTER asks for the whole Kafka consumer group's values;
	// the default is this daemon's.
	Scope         Scope `protobuf:"varint,30,opt,name=scope,proto3,enum=streamd.v1.Scope" json:"scope,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *HeavyHittersRequest) Reset() {
	*x = HeavyHittersRequest{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[17]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *HeavyHittersRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*HeavyHittersRequest) ProtoMessage() {}

func (x *HeavyHittersRequest) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[17]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use HeavyHittersRequest.ProtoReflect.Descriptor instead.
func (*HeavyHittersRequest) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{17}
}

func (x *HeavyHittersRequest) GetStream() string {
	if x != nil {
		return x.Stream
	}
	return ""
}

func (x *HeavyHittersRequest) GetSupport() float64 {
	if x != nil {
		return x.Support
	}
	return 0
}

func (x *HeavyHittersRequest) GetLastN() uint64 {
	if x != nil {
		return x.LastN
	}
	return 0
}

func (x *HeavyHittersRequest) GetLast() *durationpb.Duration {
	if x != nil {
		return x.Last
	}
	return nil
}

func (x *HeavyHittersRequest) GetScope() Scope {
	if x != nil {
		return x.Scope
	}
	return Scope_SCOPE_UNSPECIFIED
}

// HeavyHittersResponse lists the heavy hitters of a stream.
type HeavyHittersResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// count is the number of values the answer covers.
	Count uint64 `protobuf:"varint,1,opt,name=count,proto3" json:"count,omitempty"`
	// epsilon is the count error guarantee of the answer, as a fraction of
	// count.
	Epsilon float64 `protobuf:"fixed64,2,opt,name=epsilon,proto3" json:"epsilon,omitempty"`
	// items are the heavy hitters, by decreasing count_min, ties by increasing
	// value (for an item stream, by increasing fingerprint).
	Items []*Item `protobuf:"bytes,3,rep,name=items,proto3" json:"items,omitempty"`
	// window describes what a time-window answer (last) covers; unset
	// otherwise.
	Window *TimeWindow `protobuf:"bytes,20,opt,name=window,proto3" json:"window,omitempty"`
	// partial is set when a SCOPE_CLUSTER answer misses values: a member of
	// the group did not answer in time, or a partition is consumed by no
	// member that answered (for instance while the group rebalances). The
	// answer then covers only the partitions and members listed.
	Partial bool `protobuf:"varint,30,opt,name=partial,proto3" json:"partial,omitempty"`
	// missing_partitions are the Kafka partitions a partial answer misses.
	MissingPartitions []*KafkaPartition `protobuf:"bytes,31,rep,name=missing_partitions,json=missingPartitions,proto3" json:"missing_partitions,omitempty"`
	// members are the daemons a SCOPE_CLUSTER answer asked, with what each
	// contributed; empty for a local answer.
	Members       []*ClusterMember `protobuf:"bytes,32,rep,name=members,proto3" json:"members,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *HeavyHittersResponse) Reset() {
	*x = HeavyHittersResponse{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[18]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *HeavyHittersResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*HeavyHittersResponse) ProtoMessage() {}

func (x *HeavyHittersResponse) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[18]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use HeavyHittersResponse.ProtoReflect.Descriptor instead.
func (*HeavyHittersResponse) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{18}
}

func (x *HeavyHittersResponse) GetCount() uint64 {
	if x != nil {
		return x.Count
	}
	return 0
}

func (x *HeavyHittersResponse) GetEpsilon() float64 {
	if x != nil {
		return x.Epsilon
	}
	return 0
}

func (x *HeavyHittersResponse) GetItems() []*Item {
	if x != nil {
		return x.Items
	}
	return nil
}

func (x *HeavyHittersResponse) GetWindow() *TimeWindow {
	if x != nil {
		return x.Window
	}
	return nil
}

func (x *HeavyHittersResponse) GetPartial() bool {
	if x != nil {
		return x.Partial
	}
	return false
}

func (x *HeavyHittersResponse) GetMissingPartitions() []*KafkaPartition {
	if x != nil {
		return x.MissingPartitions
	}
	return nil
}

func (x *HeavyHittersResponse) GetMembers() []*ClusterMember {
	if x != nil {
		return x.Members
	}
	return nil
}

// FrequenciesRequest asks for the counts of given values in a stream.
type FrequenciesRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// stream is the name of the stream.
	Stream string `protobuf:"bytes,1,opt,name=stream,proto3" json:"stream,omitempty"`
	// values are the values to count; they need not occur in the stream. They
	// are rounded to the stream's precision before counting. NaN and ±Inf are
	// InvalidArgument.
	Values []float64 `protobuf:"fixed64,2,rep,packed,name=values,proto3" json:"values,omitempty"`
	// items are the items to count, for an item stream (which takes no
	// values).
	Items []string `protobuf:"bytes,21,rep,name=items,proto3" json:"items,omitempty"`
	// last_n = 0 asks over all history; otherwise over the last n values,
	// with n ≤ the stream's sliding_window.
	LastN uint64 `protobuf:"varint,3,opt,name=last_n,json=lastN,proto3" json:"last_n,omitempty"`
	// last, when set and positive, asks over the values that arrived in the
	// last d instead (see the file comment).
	Last *durationpb.Duration `protobuf:"bytes,20,opt,name=last,proto3" json:"last,omitempty"`
	// scope SCOPE_CLUSTER asks for the whole Kafka consumer group's values;
	// the default is this daemon's.
	Scope         Scope `protobuf:"varint,30,opt,name=scope,proto3,enum=streamd.v1.Scope" json:"scope,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *FrequenciesRequest) Reset() {
	*x = FrequenciesRequest{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[19]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *FrequenciesRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*FrequenciesRequest) ProtoMessage() {}

func (x *FrequenciesRequest) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[19]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use FrequenciesRequest.ProtoReflect.Descriptor instead.
func (*FrequenciesRequest) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{19}
}

func (x *FrequenciesRequest) GetStream() string {
	if x != nil {
		return x.Stream
	}
	return ""
}

func (x *FrequenciesRequest) GetValues() []float64 {
	if x != nil {
		return x.Values
	}
	return nil
}

func (x *FrequenciesRequest) GetItems() []string {
	if x != nil {
		return x.Items
	}
	return nil
}

func (x *FrequenciesRequest) GetLastN() uint64 {
	if x != nil {
		return x.LastN
	}
	return 0
}

func (x *FrequenciesRequest) GetLast() *durationpb.Duration {
	if x != nil {
		return x.Last
	}
	return nil
}

func (x *FrequenciesRequest) GetScope() Scope {
	if x != nil {
		return x.Scope
	}
	return Scope_SCOPE_UNSPECIFIED
}

// FrequenciesResponse holds one Item per requested value or item, in
// request order.
type FrequenciesResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// items are the answers, one per requested value, in request order.
	Items []*Item `protobuf:"bytes,1,rep,name=items,proto3" json:"items,omitempty"`
	// count is the number of values the answer covers.
	Count uint64 `protobuf:"varint,20,opt,name=count,proto3" json:"count,omitempty"`
	// window describes what a time-window answer (last) covers; unset
	// otherwise.
	Window *TimeWindow `protobuf:"bytes,21,opt,name=window,proto3" json:"window,omitempty"`
	// partial is set when a SCOPE_CLUSTER answer misses values: a member of
	// the group did not answer in time, or a partition is consumed by no
	// member that answered (for instance while the group rebalances). The
	// answer then covers only the partitions and members listed.
	Partial bool `protobuf:"varint,30,opt,name=partial,proto3" json:"partial,omitempty"`
	// missing_partitions are the Kafka partitions a partial answer misses.
	MissingPartitions []*KafkaPartition `protobuf:"bytes,31,rep,name=missing_partitions,json=missingPartitions,proto3" json:"missing_partitions,omitempty"`
	// members are the daemons a SCOPE_CLUSTER answer asked, with what each
	// contributed; empty for a local answer.
	Members []*ClusterMember `protobuf:"bytes,32,rep,name=members,proto3" json:"members,omitempty"`
	// epsilon is the count error guarantee of the answer, as a fraction of
	// count.
	Epsilon       float64 `protobuf:"fixed64,33,opt,name=epsilon,proto3" json:"epsilon,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *FrequenciesResponse) Reset() {
	*x = FrequenciesResponse{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[20]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *FrequenciesResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*FrequenciesResponse) ProtoMessage() {}

func (x *FrequenciesResponse) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[20]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use FrequenciesResponse.ProtoReflect.Descriptor instead.
func (*FrequenciesResponse) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{20}
}

func (x *FrequenciesResponse) GetItems() []*Item {
	if x != nil {
		return x.Items
	}
	return nil
}

func (x *FrequenciesResponse) GetCount() uint64 {
	if x != nil {
		return x.Count
	}
	return 0
}

func (x *FrequenciesResponse) GetWindow() *TimeWindow {
	if x != nil {
		return x.Window
	}
	return nil
}

func (x *FrequenciesResponse) GetPartial() bool {
	if x != nil {
		return x.Partial
	}
	return false
}

func (x *FrequenciesResponse) GetMissingPartitions() []*KafkaPartition {
	if x != nil {
		return x.MissingPartitions
	}
	return nil
}

func (x *FrequenciesResponse) GetMembers() []*ClusterMember {
	if x != nil {
		return x.Members
	}
	return nil
}

func (x *FrequenciesResponse) GetEpsilon() float64 {
	if x != nil {
		return x.Epsilon
	}
	return 0
}

// Item bounds the frequency of one value, or of one item of an item stream.
type Item struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// value is the value, at the stream's precision; 0 for an item stream.
	Value float64 `protobuf:"fixed64,1,opt,name=value,proto3" json:"value,omitempty"`
	// count_min is a lower bound on the value's true count among the covered
	// values. For an item, it bounds the total count of the items that share
	// its fingerprint (see the file comment).
	CountMin uint64 `protobuf:"varint,2,opt,name=count_min,json=countMin,proto3" json:"count_min,omitempty"`
	// count_max is an upper bound on the value's true count;
	// count_max − count_min ≤ ε·count.
	CountMax uint64 `protobuf:"varint,3,opt,name=count_max,json=countMax,proto3" json:"count_max,omitempty"`
	// item is the item, for an item stream: in a frequency answer the item
	// asked about; in a heavy-hitter answer the string the daemon keeps for
	// the fingerprint, empty in the rare case that it keeps none (a last-n or
	// time-window answer over a stream whose older values live in blocks).
	Item string `protobuf:"bytes,20,opt,name=item,proto3" json:"item,omitempty"`
	// fingerprint is the item's 64-bit fingerprint, for an item stream.
	Fingerprint uint64 `protobuf:"fixed64,21,opt,name=fingerprint,proto3" json:"fingerprint,omitempty"`
	// shared reports that the daemon knows another item with the same
	// fingerprint: the two are counted together, and count_min is 0.
	Shared        bool `protobuf:"varint,22,opt,name=shared,proto3" json:"shared,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *Item) Reset() {
	*x = Item{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[21]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Item) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Item) ProtoMessage() {}

func (x *Item) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[21]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Item.ProtoReflect.Descriptor instead.
func (*Item) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{21}
}

func (x *Item) GetValue() float64 {
	if x != nil {
		return x.Value
	}
	return 0
}

func (x *Item) GetCountMin() uint64 {
	if x != nil {
		return x.CountMin
	}
	return 0
}

func (x *Item) GetCountMax() uint64 {
	if x != nil {
		return x.CountMax
	}
	return 0
}

func (x *Item) GetItem() string {
	if x != nil {
		return x.Item
	}
	return ""
}

func (x *Item) GetFingerprint() uint64 {
	if x != nil {
		return x.Fingerprint
	}
	return 0
}

func (x *Item) GetShared() bool {
	if x != nil {
		return x.Shared
	}
	return false
}

// TimeWindow describes what a time-window answer covers: every value that
// arrived since the daemon's time minus last, and at most older_max older
// ones.
type TimeWindow struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// count is the number of values covered; the error guarantees are
	// relative to it.
	Count uint64 `protobuf:"varint,1,opt,name=count,proto3" json:"count,omitempty"`
	// first_unix_nano is the arrival time of the first covered value, in
	// nanoseconds since the Unix epoch (0 when count is 0).
	FirstUnixNano int64 `protobuf:"varint,2,opt,name=first_unix_nano,json=firstUnixNano,proto3" json:"first_unix_nano,omitempty"`
	// last_unix_nano is the arrival time of the last covered value.
	LastUnixNano int64 `protobuf:"varint,3,opt,name=last_unix_nano,json=lastUnixNano,proto3" json:"last_unix_nano,omitempty"`
	// older_max bounds how many covered values arrived before the window.
	OlderMax uint64 `protobuf:"varint,4,opt,name=older_max,json=olderMax,proto3" json:"older_max,omitempty"`
	// truncated is set when values that arrived in the window may have left
	// the stream's sliding window already (it holds the last sliding_window
	// values): the answer covers the values it still holds.
	Truncated bool `protobuf:"varint,5,opt,name=truncated,proto3" json:"truncated,omitempty"`
	// cutoff_unix_nano is the start of the window: the daemon's time minus
	// last.
	CutoffUnixNano int64 `protobuf:"varint,6,opt,name=cutoff_unix_nano,json=cutoffUnixNano,proto3" json:"cutoff_unix_nano,omitempty"`
	unknownFields  protoimpl.UnknownFields
	sizeCache      protoimpl.SizeCache
}

func (x *TimeWindow) Reset() {
	*x = TimeWindow{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[22]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *TimeWindow) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*TimeWindow) ProtoMessage() {}

func (x *TimeWindow) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[22]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use TimeWindow.ProtoReflect.Descriptor instead.
func (*TimeWindow) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{22}
}

func (x *TimeWindow) GetCount() uint64 {
	if x != nil {
		return x.Count
	}
	return 0
}

func (x *TimeWindow) GetFirstUnixNano() int64 {
	if x != nil {
		return x.FirstUnixNano
	}
	return 0
}

func (x *TimeWindow) GetLastUnixNano() int64 {
	if x != nil {
		return x.LastUnixNano
	}
	return 0
}

func (x *TimeWindow) GetOlderMax() uint64 {
	if x != nil {
		return x.OlderMax
	}
	return 0
}

func (x *TimeWindow) GetTruncated() bool {
	if x != nil {
		return x.Truncated
	}
	return false
}

func (x *TimeWindow) GetCutoffUnixNano() int64 {
	if x != nil {
		return x.CutoffUnixNano
	}
	return 0
}

// StatsRequest asks for a stream's statistics.
type StatsRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// stream is the name of the stream.
	Stream string `protobuf:"bytes,1,opt,name=stream,proto3" json:"stream,omitempty"`
	// scope SCOPE_CLUSTER asks for the whole Kafka consumer group's values;
	// the default is this daemon's.
	Scope         Scope `protobuf:"varint,30,opt,name=scope,proto3,enum=streamd.v1.Scope" json:"scope,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *StatsRequest) Reset() {
	*x = StatsRequest{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[23]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *StatsRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*StatsRequest) ProtoMessage() {}

func (x *StatsRequest) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[23]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use StatsRequest.ProtoReflect.Descriptor instead.
func (*StatsRequest) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{23}
}

func (x *StatsRequest) GetStream() string {
	if x != nil {
		return x.Stream
	}
	return ""
}

func (x *StatsRequest) GetScope() Scope {
	if x != nil {
		return x.Scope
	}
	return Scope_SCOPE_UNSPECIFIED
}

// StatsResponse describes one stream.
type StatsResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// count is the number of values accepted over all history.
	Count uint64 `protobuf:"varint,1,opt,name=count,proto3" json:"count,omitempty"`
	// min is the smallest accepted value, at the stream's precision; 0 when
	// count is 0.
	Min float64 `protobuf:"fixed64,2,opt,name=min,proto3" json:"min,omitempty"`
	// max is the largest accepted value, at the stream's precision; 0 when
	// count is 0.
	Max float64 `protobuf:"fixed64,3,opt,name=max,proto3" json:"max,omitempty"`
	// sum is the sum of the accepted values, as a double.
	Sum float64 `protobuf:"fixed64,4,opt,name=sum,proto3" json:"sum,omitempty"`
	// epsilon is the stream's error parameter ε.
	Epsilon float64 `protobuf:"fixed64,5,opt,name=epsilon,proto3" json:"epsilon,omitempty"`
	// window_size is W, the number of values sorted together as one window.
	WindowSize uint64 `protobuf:"varint,6,opt,name=window_size,json=windowSize,proto3" json:"window_size,omitempty"`
	// sliding_window is N, the largest last_n the stream answers.
	SlidingWindow uint64 `protobuf:"varint,7,opt,name=sliding_window,json=slidingWindow,proto3" json:"sliding_window,omitempty"`
	// summary_entries is the number of entries in the stream's summaries.
	SummaryEntries uint64 `protobuf:"varint,8,opt,name=summary_entries,json=summaryEntries,proto3" json:"summary_entries,omitempty"`
	// summary_bytes is the memory the stream's summaries take, in bytes.
	SummaryBytes uint64 `protobuf:"varint,9,opt,name=summary_bytes,json=summaryBytes,proto3" json:"summary_bytes,omitempty"`
	// rejected counts the values refused at ingest, by reason (for example
	// "nan", "inf"; sources may add their own reasons, such as undecodable
	// input).
	Rejected map[string]uint64 `protobuf:"bytes,10,rep,name=rejected,proto3" json:"rejected,omitempty" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"varint,2,opt,name=value"`
	// rejected_total is the sum of rejected over all reasons.
	RejectedTotal uint64 `protobuf:"varint,11,opt,name=rejected_total,json=rejectedTotal,proto3" json:"rejected_total,omitempty"`
	// kind is the stream's kind. An item stream has no min, max or sum.
	Kind StreamKind `protobuf:"varint,20,opt,name=kind,proto3,enum=streamd.v1.StreamKind" json:"kind,omitempty"`
	// memory_bytes is what the daemon's memory budget charges the stream
	// now: its reservation, its windows in flight beyond the first, and the
	// growth of its summaries past their share of the reservation.
	MemoryBytes uint64 `protobuf:"varint,40,opt,name=memory_bytes,json=memoryBytes,proto3" json:"memory_bytes,omitempty"`
	// memory_reserved_bytes is the stream's reservation: its worst case with
	// one window in flight and its summaries after sliding_window values.
	MemoryReservedBytes uint64 `protobuf:"varint,41,opt,name=memory_reserved_bytes,json=memoryReservedBytes,proto3" json:"memory_reserved_bytes,omitempty"`
	// daemon_memory_limit_bytes is the daemon's memory budget (--max-memory);
	// 0 when there is none.
	DaemonMemoryLimitBytes uint64 `protobuf:"varint,42,opt,name=daemon_memory_limit_bytes,json=daemonMemoryLimitBytes,proto3" json:"daemon_memory_limit_bytes,omitempty"`
	// daemon_memory_used_bytes is what the budget charges all streams now.
	DaemonMemoryUsedBytes uint64 `protobuf:"varint,43,opt,name=daemon_memory_used_bytes,json=daemonMemoryUsedBytes,proto3" json:"daemon_memory_used_bytes,omitempty"`
	// partial is set when a SCOPE_CLUSTER answer misses values: a member of
	// the group did not answer in time, or a partition is consumed by no
	// member that answered (for instance while the group rebalances). The
	// answer then covers only the partitions and members listed.
	Partial bool `protobuf:"varint,30,opt,name=partial,proto3" json:"partial,omitempty"`
	// missing_partitions are the Kafka partitions a partial answer misses.
	MissingPartitions []*KafkaPartition `protobuf:"bytes,31,rep,name=missing_partitions,json=missingPartitions,proto3" json:"missing_partitions,omitempty"`
	// members are the daemons a SCOPE_CLUSTER answer asked, with what each
	// contributed; empty for a local answer.
	Members []*ClusterMember `protobuf:"bytes,32,rep,name=members,proto3" json:"members,omitempty"`
	// float64 is set when the stream stores values with float64 precision
	// instead of float32: answers are then printed with all their digits.
	Float64 bool `protobuf:"varint,50,opt,name=float64,proto3" json:"float64,omitempty"`
	// hierarchy is the prefix hierarchy of a hierarchy stream, in full
	// string form ("ipv4/8", "path/8"); empty for any other stream. epsilon
	// is then the count error of each of its levels.
	Hierarchy     string `protobuf:"bytes,60,opt,name=hierarchy,proto3" json:"hierarchy,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *StatsResponse) Reset() {
	*x = StatsResponse{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[24]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *StatsResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*StatsResponse) ProtoMessage() {}

func (x *StatsResponse) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[24]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use StatsResponse.ProtoReflect.Descriptor instead.
func (*StatsResponse) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{24}
}

func (x *StatsResponse) GetCount() uint64 {
	if x != nil {
		return x.Count
	}
	return 0
}

func (x *StatsResponse) GetMin() float64 {
	if x != nil {
		return x.Min
	}
	return 0
}

func (x *StatsResponse) GetMax() float64 {
	if x != nil {
		return x.Max
	}
	return 0
}

func (x *StatsResponse) GetSum() float64 {
	if x != nil {
		return x.Sum
	}
	return 0
}

func (x *StatsResponse) GetEpsilon() float64 {
	if x != nil {
		return x.Epsilon
	}
	return 0
}

func (x *StatsResponse) GetWindowSize() uint64 {
	if x != nil {
		return x.WindowSize
	}
	return 0
}

func (x *StatsResponse) GetSlidingWindow() uint64 {
	if x != nil {
		return x.SlidingWindow
	}
	return 0
}

func (x *StatsResponse) GetSummaryEntries() uint64 {
	if x != nil {
		return x.SummaryEntries
	}
	return 0
}

func (x *StatsResponse) GetSummaryBytes() uint64 {
	if x != nil {
		return x.SummaryBytes
	}
	return 0
}

func (x *StatsResponse) GetRejected() map[string]uint64 {
	if x != nil {
		return x.Rejected
	}
	return nil
}

func (x *StatsResponse) GetRejectedTotal() uint64 {
	if x != nil {
		return x.RejectedTotal
	}
	return 0
}

func (x *StatsResponse) GetKind() StreamKind {
	if x != nil {
		return x.Kind
	}
	return StreamKind_STREAM_KIND_VALUES
}

func (x *StatsResponse) GetMemoryBytes() uint64 {
	if x != nil {
		return x.MemoryBytes
	}
	return 0
}

func (x *StatsResponse) GetMemoryReservedBytes() uint64 {
	if x != nil {
		return x.MemoryReservedBytes
	}
	return 0
}

func (x *StatsResponse) GetDaemonMemoryLimitBytes() uint64 {
	if x != nil {
		return x.DaemonMemoryLimitBytes
	}
	return 0
}

func (x *StatsResponse) GetDaemonMemoryUsedBytes() uint64 {
	if x != nil {
		return x.DaemonMemoryUsedBytes
	}
	return 0
}

func (x *StatsResponse) GetPartial() bool {
	if x != nil {
		return x.Partial
	}
	return false
}

func (x *StatsResponse) GetMissingPartitions() []*KafkaPartition {
	if x != nil {
		return x.MissingPartitions
	}
	return nil
}

func (x *StatsResponse) GetMembers() []*ClusterMember {
	if x != nil {
		return x.Members
	}
	return nil
}

func (x *StatsResponse) GetFloat64() bool {
	if x != nil {
		return x.Float64
	}
	return false
}

func (x *StatsResponse) GetHierarchy() string {
	if x != nil {
		return x.Hierarchy
	}
	return ""
}

// CreateStreamRequest creates a stream.
type CreateStreamRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// stream is the name of the new stream; it must not be empty.
	Stream string `protobuf:"bytes,1,opt,name=stream,proto3" json:"stream,omitempty"`
	// epsilon is the error parameter ε, in (0, 1); 0 selects the daemon's
	// default.
	Epsilon float64 `protobuf:"fixed64,2,opt,name=epsilon,proto3" json:"epsilon,omitempty"`
	// window_size is W, the number of values sorted together as one window;
	// 0 selects the daemon's default.
	WindowSize uint64 `protobuf:"varint,3,opt,name=window_size,json=windowSize,proto3" json:"window_size,omitempty"`
	// sliding_window is N, the largest n that last_n queries may ask for; 0
	// selects the daemon's default (2^20).
	SlidingWindow uint64 `protobuf:"varint,4,opt,name=sliding_window,json=slidingWindow,proto3" json:"sliding_window,omitempty"`
	// float64, when set, stores values with float64 precision instead of
	// float32.
	Float64 bool `protobuf:"varint,5,opt,name=float64,proto3" json:"float64,omitempty"`
	// kind is STREAM_KIND_VALUES (the default), STREAM_KIND_ITEMS or
	// STREAM_KIND_PAIRS.
	Kind StreamKind `protobuf:"varint,20,opt,name=kind,proto3,enum=streamd.v1.StreamKind" json:"kind,omitempty"`
	// hierarchy, when set, makes the stream a hierarchy stream: an item
	// stream whose items are in this prefix hierarchy, which answers
	// HierarchicalHeavyHitters. Its string form: "ipv4" (levels /32, /24,
	// /16, /8, /0), "ipv4/B" (B bits a level), "ipv6" (a nibble a level),
	// "ipv6/B", "path[/D]" (URL paths down to D segments, default 8),
	// "dns[/D]" (domain names, D labels from the right), "delim[/D]:SEP" and
	// "rdelim[/D]:SEP" (fields split by SEP, kept from the left or the
	// right). kind may be left out. Items not in the hierarchy are rejected
	// ("not_in_hierarchy"); the others are counted in canonical form.
	//
	// For a hierarchy stream, epsilon is the precision of its discounted
	// hierarchical heavy hitters at every support ≥ min_support: each
	// level counts with error ε/(1 + ⌊1/(min_support − ε)⌋), the
	// StatsResponse.epsilon of the stream, so that no reported prefix has a
	// discounted count below (support − epsilon) × N.
	Hierarchy string `protobuf:"bytes,60,opt,name=hierarchy,proto3" json:"hierarchy,omitempty"`
	// min_support is the least support at which a hierarchy stream's
	// discounted answers have precision epsilon, in (epsilon, 1]; 0
	// selects 0.05. Smaller costs more memory.
	MinSupport    float64 `protobuf:"fixed64,61,opt,name=min_support,json=minSupport,proto3" json:"min_support,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *CreateStreamRequest) Reset() {
	*x = CreateStreamRequest{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[25]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *CreateStreamRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*CreateStreamRequest) ProtoMessage() {}

func (x *CreateStreamRequest) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[25]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use CreateStreamRequest.ProtoReflect.Descriptor instead.
func (*CreateStreamRequest) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{25}
}

func (x *CreateStreamRequest) GetStream() string {
	if x != nil {
		return x.Stream
	}
	return ""
}

func (x *CreateStreamRequest) GetEpsilon() float64 {
	if x != nil {
		return x.Epsilon
	}
	return 0
}

func (x *CreateStreamRequest) GetWindowSize() uint64 {
	if x != nil {
		return x.WindowSize
	}
	return 0
}

func (x *CreateStreamRequest) GetSlidingWindow() uint64 {
	if x != nil {
		return x.SlidingWindow
	}
	return 0
}

func (x *CreateStreamRequest) GetFloat64() bool {
	if x != nil {
		return x.Float64
	}
	return false
}

func (x *CreateStreamRequest) GetKind() StreamKind {
	if x != nil {
		return x.Kind
	}
	return StreamKind_STREAM_KIND_VALUES
}

func (x *CreateStreamRequest) GetHierarchy() string {
	if x != nil {
		return x.Hierarchy
	}
	return ""
}

func (x *CreateStreamRequest) GetMinSupport() float64 {
	if x != nil {
		return x.MinSupport
	}
	return 0
}

// CreateStreamResponse is empty: the stream exists once it returns.
type CreateStreamResponse struct {
	state         protoimpl.MessageState `protogen:"open.v1"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *CreateStreamResponse) Reset() {
	*x = CreateStreamResponse{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[26]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *CreateStreamResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*CreateStreamResponse) ProtoMessage() {}

func (x *CreateStreamResponse) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[26]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use CreateStreamResponse.ProtoReflect.Descriptor instead.
func (*CreateStreamResponse) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{26}
}

// DeleteStreamRequest deletes a stream.
type DeleteStreamRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// stream is the name of the stream.
	Stream        string `protobuf:"bytes,1,opt,name=stream,proto3" json:"stream,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *DeleteStreamRequest) Reset() {
	*x = DeleteStreamRequest{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[27]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *DeleteStreamRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*DeleteStreamRequest) ProtoMessage() {}

func (x *DeleteStreamRequest) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[27]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use DeleteStreamRequest.ProtoReflect.Descriptor instead.
func (*DeleteStreamRequest) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{27}
}

func (x *DeleteStreamRequest) GetStream() string {
	if x != nil {
		return x.Stream
	}
	return ""
}

// DeleteStreamResponse is empty: the stream is gone once it returns.
type DeleteStreamResponse struct {
	state         protoimpl.MessageState `protogen:"open.v1"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *DeleteStreamResponse) Reset() {
	*x = DeleteStreamResponse{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[28]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *DeleteStreamResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*DeleteStreamResponse) ProtoMessage() {}

func (x *DeleteStreamResponse) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[28]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use DeleteStreamResponse.ProtoReflect.Descriptor instead.
func (*DeleteStreamResponse) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{28}
}

// ListStreamsRequest asks for a page of the stream names.
type ListStreamsRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// page_size is the most names the page holds: 0 for 1000, and more than
	// 10000 is taken as 10000. A negative size is InvalidArgument.
	PageSize int32 `protobuf:"varint,1,opt,name=page_size,json=pageSize,proto3" json:"page_size,omitempty"`
	// page_token is the next_page_token of the page before, "" for the
	// first page. It is opaque; the next page starts after the last name
	// the page before looked at, so a page sees the streams created and
	// deleted since. A token the daemon did not make is InvalidArgument.
	PageToken string `protobuf:"bytes,2,opt,name=page_token,json=pageToken,proto3" json:"page_token,omitempty"`
	// prefix, when not empty, lists only the names that start with it; a
	// page costs O(log N + page_size) for N streams, with or without it.
	Prefix string `protobuf:"bytes,3,opt,name=prefix,proto3" json:"prefix,omitempty"`
	// match, when not empty, lists only the names that contain it. A page
	// then looks at no more than 100000 names: it may hold fewer than
	// page_size names, none even, while next_page_token is not "".
	Match         string `protobuf:"bytes,4,opt,name=match,proto3" json:"match,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ListStreamsRequest) Reset() {
	*x = ListStreamsRequest{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[29]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ListStreamsRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ListStreamsRequest) ProtoMessage() {}

func (x *ListStreamsRequest) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[29]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ListStreamsRequest.ProtoReflect.Descriptor instead.
func (*ListStreamsRequest) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{29}
}

func (x *ListStreamsRequest) GetPageSize() int32 {
	if x != nil {
		return x.PageSize
	}
	return 0
}

func (x *ListStreamsRequest) GetPageToken() string {
	if x != nil {
		return x.PageToken
	}
	return ""
}

func (x *ListStreamsRequest) GetPrefix() string {
	if x != nil {
		return x.Prefix
	}
	return ""
}

func (x *ListStreamsRequest) GetMatch() string {
	if x != nil {
		return x.Match
	}
	return ""
}

// ListStreamsResponse is a page of the stream names.
type ListStreamsResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// streams are the names on the page, in increasing order.
	Streams []string `protobuf:"bytes,1,rep,name=streams,proto3" json:"streams,omitempty"`
	// next_page_token asks for the next page (ListStreamsRequest.page_token);
	// "" when there are no more names.
	NextPageToken string `protobuf:"bytes,2,opt,name=next_page_token,json=nextPageToken,proto3" json:"next_page_token,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ListStreamsResponse) Reset() {
	*x = ListStreamsResponse{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[30]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ListStreamsResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ListStreamsResponse) ProtoMessage() {}

func (x *ListStreamsResponse) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[30]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ListStreamsResponse.ProtoReflect.Descriptor instead.
func (*ListStreamsResponse) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{30}
}

func (x *ListStreamsResponse) GetStreams() []string {
	if x != nil {
		return x.Streams
	}
	return nil
}

func (x *ListStreamsResponse) GetNextPageToken() string {
	if x != nil {
		return x.NextPageToken
	}
	return ""
}

// WatchRequest subscribes to periodic answers for one stream.
type WatchRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// stream is the name of the stream.
	Stream string `protobuf:"bytes,1,opt,name=stream,proto3" json:"stream,omitempty"`
	// phis are the quantiles to send, each in [0, 1]; when empty, no
	// quantiles are sent.
	Phis []float64 `protobuf:"fixed64,2,rep,packed,name=phis,proto3" json:"phis,omitempty"`
	// support is the heavy hitter threshold, in (ε, 1]; 0 sends no heavy
	// hitters.
	Support float64 `protobuf:"fixed64,3,opt,name=support,proto3" json:"support,omitempty"`
	// interval_ms is the time between two responses, in milliseconds; 0
	// selects the daemon's default.
	IntervalMs uint64 `protobuf:"varint,4,opt,name=interval_ms,json=intervalMs,proto3" json:"interval_ms,omitempty"`
	// last_n, when not 0, makes every answer cover the last n values.
	LastN uint64 `protobuf:"varint,20,opt,name=last_n,json=lastN,proto3" json:"last_n,omitempty"`
	// last, when set and positive, makes every answer cover the values that
	// arrived in the last d (see the file comment).
	Last          *durationpb.Duration `protobuf:"bytes,21,opt,name=last,proto3" json:"last,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *WatchRequest) Reset() {
	*x = WatchRequest{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[31]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *WatchRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*WatchRequest) ProtoMessage() {}

func (x *WatchRequest) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[31]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use WatchRequest.ProtoReflect.Descriptor instead.
func (*WatchRequest) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{31}
}

func (x *WatchRequest) GetStream() string {
	if x != nil {
		return x.Stream
	}
	return ""
}

func (x *WatchRequest) GetPhis() []float64 {
	if x != nil {
		return x.Phis
	}
	return nil
}

func (x *WatchRequest) GetSupport() float64 {
	if x != nil {
		return x.Support
	}
	return 0
}

func (x *WatchRequest) GetIntervalMs() uint64 {
	if x != nil {
		return x.IntervalMs
	}
	return 0
}

func (x *WatchRequest) GetLastN() uint64 {
	if x != nil {
		return x.LastN
	}
	return 0
}

func (x *WatchRequest) GetLast() *durationpb.Duration {
	if x != nil {
		return x.Last
	}
	return nil
}

// WatchResponse is one periodic answer of a Watch call, over all history
// or the requested window.
type WatchResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// quantiles answers the requested phis; unset when phis is empty.
	Quantiles *QuantilesResponse `protobuf:"bytes,1,opt,name=quantiles,proto3" json:"quantiles,omitempty"`
	// heavy_hitters answers the requested support; unset when support is 0.
	HeavyHitters *HeavyHittersResponse `protobuf:"bytes,2,opt,name=heavy_hitters,json=heavyHitters,proto3" json:"heavy_hitters,omitempty"`
	// time_unix_nano is when the answer was computed, in nanoseconds since
	// the Unix epoch.
	TimeUnixNano  int64 `protobuf:"varint,3,opt,name=time_unix_nano,json=timeUnixNano,proto3" json:"time_unix_nano,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *WatchResponse) Reset() {
	*x = WatchResponse{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[32]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *WatchResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*WatchResponse) ProtoMessage() {}

func (x *WatchResponse) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[32]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use WatchResponse.ProtoReflect.Descriptor instead.
func (*WatchResponse) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{32}
}

func (x *WatchResponse) GetQuantiles() *QuantilesResponse {
	if x != nil {
		return x.Quantiles
	}
	return nil
}

func (x *WatchResponse) GetHeavyHitters() *HeavyHittersResponse {
	if x != nil {
		return x.HeavyHitters
	}
	return nil
}

func (x *WatchResponse) GetTimeUnixNano() int64 {
	if x != nil {
		return x.TimeUnixNano
	}
	return 0
}

// HierarchicalHeavyHittersRequest asks a hierarchy stream for its heavy
// prefixes.
type HierarchicalHeavyHittersRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// stream is the name of the stream.
	Stream string `protobuf:"bytes,1,opt,name=stream,proto3" json:"stream,omitempty"`
	// support s is the threshold as a fraction of count, in (ε, 1], ε the
	// stream's (StatsResponse.epsilon).
	Support float64 `protobuf:"fixed64,2,opt,name=support,proto3" json:"support,omitempty"`
	// plain asks for every heavy prefix of every level: each whose count
	// is ≥ s·count is returned, and none below (s − ε)·count; a heavy /24
	// makes its /16, /8 and /0 heavy too. By default the answer is the
	// discounted hierarchical heavy hitters: level by level from the items
	// up, each prefix whose count less the counts of its descendants
	// already reported (its discounted count) is ≥ s·count. Every prefix
	// whose discounted count with respect to the answer is ≥ s·count is
	// in it; see precision for the other side.
	Plain bool `protobuf:"varint,3,opt,name=plain,proto3" json:"plain,omitempty"`
	// last_n = 0 asks over all history; otherwise over the last n items,
	// with n ≤ the stream's sliding_window.
	LastN uint64 `protobuf:"varint,4,opt,name=last_n,json=lastN,proto3" json:"last_n,omitempty"`
	// last, when set and positive, asks over the items that arrived in the
	// last d instead (see the file comment).
	Last *durationpb.Duration `protobuf:"bytes,5,opt,name=last,proto3" json:"last,omitempty"`
	// scope SCOPE_CLUSTER is refused (FailedPrecondition), as for every
	// item stream.
	Scope         Scope `protobuf:"varint,6,opt,name=scope,proto3,enum=streamd.v1.Scope" json:"scope,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *HierarchicalHeavyHittersRequest) Reset() {
	*x = HierarchicalHeavyHittersRequest{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[33]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *HierarchicalHeavyHittersRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*HierarchicalHeavyHittersRequest) ProtoMessage() {}

func (x *HierarchicalHeavyHittersRequest) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[33]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use HierarchicalHeavyHittersRequest.ProtoReflect.Descriptor instead.
func (*HierarchicalHeavyHittersRequest) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{33}
}

func (x *HierarchicalHeavyHittersRequest) GetStream() string {
	if x != nil {
		return x.Stream
	}
	return ""
}

func (x *HierarchicalHeavyHittersRequest) GetSupport() float64 {
	if x != nil {
		return x.Support
	}
	return 0
}

func (x *HierarchicalHeavyHittersRequest) GetPlain() bool {
	if x != nil {
		return x.Plain
	}
	return false
}

func (x *HierarchicalHeavyHittersRequest) GetLastN() uint64 {
	if x != nil {
		return x.LastN
	}
	return 0
}

func (x *HierarchicalHeavyHittersRequest) GetLast() *durationpb.Duration {
	if x != nil {
		return x.Last
	}
	return nil
}

func (x *HierarchicalHeavyHittersRequest) GetScope() Scope {
	if x != nil {
		return x.Scope
	}
	return Scope_SCOPE_UNSPECIFIED
}

// HierarchicalHeavyHittersResponse lists the hierarchical heavy hitters.
type HierarchicalHeavyHittersResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// count is N, the number of items the answer covers.
	Count uint64 `protobuf:"varint,1,opt,name=count,proto3" json:"count,omitempty"`
	// epsilon is the count error of every level, as a fraction of count:
	// count_max − count_min ≤ ε·count.
	Epsilon float64 `protobuf:"fixed64,2,opt,name=epsilon,proto3" json:"epsilon,omitempty"`
	// precision bounds the false positives: no hitter has a count (for a
	// discounted answer, a discounted count) below (support − precision) ×
	// count. It is epsilon for a plain answer and (1 + k)·epsilon for a
	// discounted one, k the largest discounts of its hitters.
	Precision float64 `protobuf:"fixed64,3,opt,name=precision,proto3" json:"precision,omitempty"`
	// hitters are sorted by level from the items up, then by decreasing
	// count_max (discounted_max for a discounted answer), then by prefix.
	Hitters []*HierarchicalHeavyHitter `protobuf:"bytes,4,rep,name=hitters,proto3" json:"hitters,omitempty"`
	// window describes what a time-window answer (last) covers; unset
	// otherwise.
	Window *TimeWindow `protobuf:"bytes,5,opt,name=window,proto3" json:"window,omitempty"`
	// plain is the request's: the hitters are every heavy prefix, and
	// their discounted bounds are zero.
	Plain         bool `protobuf:"varint,6,opt,name=plain,proto3" json:"plain,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *HierarchicalHeavyHittersResponse) Reset() {
	*x = HierarchicalHeavyHittersResponse{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[34]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *HierarchicalHeavyHittersResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*HierarchicalHeavyHittersResponse) ProtoMessage() {}

func (x *HierarchicalHeavyHittersResponse) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[34]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use HierarchicalHeavyHittersResponse.ProtoReflect.Descriptor instead.
func (*HierarchicalHeavyHittersResponse) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{34}
}

func (x *HierarchicalHeavyHittersResponse) GetCount() uint64 {
	if x != nil {
		return x.Count
	}
	return 0
}

func (x *HierarchicalHeavyHittersResponse) GetEpsilon() float64 {
	if x != nil {
		return x.Epsilon
	}
	return 0
}

func (x *HierarchicalHeavyHittersResponse) GetPrecision() float64 {
	if x != nil {
		return x.Precision
	}
	return 0
}

func (x *HierarchicalHeavyHittersResponse) GetHitters() []*HierarchicalHeavyHitter {
	if x != nil {
		return x.Hitters
	}
	return nil
}

func (x *HierarchicalHeavyHittersResponse) GetWindow() *TimeWindow {
	if x != nil {
		return x.Window
	}
	return nil
}

func (x *HierarchicalHeavyHittersResponse) GetPlain() bool {
	if x != nil {
		return x.Plain
	}
	return false
}

// HierarchicalHeavyHitter is one prefix of an answer.
type HierarchicalHeavyHitter struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// prefix is the prefix's name: "10.1.2.3" for an item, "10.1.2.0/24",
	// "/a/b", "example.com", and the root ("0.0.0.0/0", "/", ".").
	Prefix string `protobuf:"bytes,1,opt,name=prefix,proto3" json:"prefix,omitempty"`
	// level is 0 for an item, up to the hierarchy's levels − 1 for the
	// root.
	Level uint32 `protobuf:"varint,2,opt,name=level,proto3" json:"level,omitempty"`
	// count_min and count_max bound the number of items under the prefix.
	CountMin uint64 `protobuf:"varint,3,opt,name=count_min,json=countMin,proto3" json:"count_min,omitempty"`
	CountMax uint64 `protobuf:"varint,4,opt,name=count_max,json=countMax,proto3" json:"count_max,omitempty"`
	// discounted_min and discounted_max bound its discounted count: the
	// items under it that are under no hitter below it. Zero in a plain
	// answer.
	DiscountedMin uint64 `protobuf:"varint,5,opt,name=discounted_min,json=discountedMin,proto3" json:"discounted_min,omitempty"`
	DiscountedMax uint64 `protobuf:"varint,6,opt,name=discounted_max,json=discountedMax,proto3" json:"discounted_max,omitempty"`
	// discounts is the number of hitters just below it whose counts were
	// taken off.
	Discounts     uint32 `protobuf:"varint,7,opt,name=discounts,proto3" json:"discounts,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *HierarchicalHeavyHitter) Reset() {
	*x = HierarchicalHeavyHitter{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[35]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *HierarchicalHeavyHitter) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*HierarchicalHeavyHitter) ProtoMessage() {}

func (x *HierarchicalHeavyHitter) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[35]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use HierarchicalHeavyHitter.ProtoReflect.Descriptor instead.
func (*HierarchicalHeavyHitter) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{35}
}

func (x *HierarchicalHeavyHitter) GetPrefix() string {
	if x != nil {
		return x.Prefix
	}
	return ""
}

func (x *HierarchicalHeavyHitter) GetLevel() uint32 {
	if x != nil {
		return x.Level
	}
	return 0
}

func (x *HierarchicalHeavyHitter) GetCountMin() uint64 {
	if x != nil {
		return x.CountMin
	}
	return 0
}

func (x *HierarchicalHeavyHitter) GetCountMax() uint64 {
	if x != nil {
		return x.CountMax
	}
	return 0
}

func (x *HierarchicalHeavyHitter) GetDiscountedMin() uint64 {
	if x != nil {
		return x.DiscountedMin
	}
	return 0
}

func (x *HierarchicalHeavyHitter) GetDiscountedMax() uint64 {
	if x != nil {
		return x.DiscountedMax
	}
	return 0
}

func (x *HierarchicalHeavyHitter) GetDiscounts() uint32 {
	if x != nil {
		return x.Discounts
	}
	return 0
}

// CorrelatedSumRequest asks for a correlated sum of a pair stream: the
// count and the sum of y of the pairs on one side of the threshold
// factor × aggregate.
type CorrelatedSumRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// stream is the name of the pair stream.
	Stream string `protobuf:"bytes,1,opt,name=stream,proto3" json:"stream,omitempty"`
	// aggregate is what the threshold is made of; the default is constant.
	Aggregate SumAggregate `protobuf:"varint,2,opt,name=aggregate,proto3,enum=streamd.v1.SumAggregate" json:"aggregate,omitempty"`
	// constant is the threshold's aggregate for SUM_AGGREGATE_CONSTANT; it
	// must be finite.
	Constant float64 `protobuf:"fixed64,3,opt,name=constant,proto3" json:"constant,omitempty"`
	// phi is the quantile, in [0, 1], for SUM_AGGREGATE_QUANTILE.
	Phi float64 `protobuf:"fixed64,4,opt,name=phi,proto3" json:"phi,omitempty"`
	// factor multiplies the aggregate; unset means 1. The threshold must
	// come out finite.
	Factor *float64 `protobuf:"fixed64,5,opt,name=factor,proto3,oneof" json:"factor,omitempty"`
	// side says which side of the threshold to answer; both by default.
	Side SumSide `protobuf:"varint,6,opt,name=side,proto3,enum=streamd.v1.SumSide" json:"side,omitempty"`
	// last_n and last are refused (InvalidArgument): correlated sums cover
	// all history only.
	LastN uint64               `protobuf:"varint,20,opt,name=last_n,json=lastN,proto3" json:"last_n,omitempty"`
	Last  *durationpb.Duration `protobuf:"bytes,21,opt,name=last,proto3" json:"last,omitempty"`
	// scope SCOPE_CLUSTER is refused (FailedPrecondition): each daemon
	// answers for the pairs it holds.
	Scope         Scope `protobuf:"varint,30,opt,name=scope,proto3,enum=streamd.v1.Scope" json:"scope,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *CorrelatedSumRequest) Reset() {
	*x = CorrelatedSumRequest{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[36]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *CorrelatedSumRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*CorrelatedSumRequest) ProtoMessage() {}

func (x *CorrelatedSumRequest) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[36]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use CorrelatedSumRequest.ProtoReflect.Descriptor instead.
func (*CorrelatedSumRequest) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{36}
}

func (x *CorrelatedSumRequest) GetStream() string {
	if x != nil {
		return x.Stream
	}
	return ""
}

func (x *CorrelatedSumRequest) GetAggregate() SumAggregate {
	if x != nil {
		return x.Aggregate
	}
	return SumAggregate_SUM_AGGREGATE_CONSTANT
}

func (x *CorrelatedSumRequest) GetConstant() float64 {
	if x != nil {
		return x.Constant
	}
	return 0
}

func (x *CorrelatedSumRequest) GetPhi() float64 {
	if x != nil {
		return x.Phi
	}
	return 0
}

func (x *CorrelatedSumRequest) GetFactor() float64 {
	if x != nil && x.Factor != nil {
		return *x.Factor
	}
	return 0
}

func (x *CorrelatedSumRequest) GetSide() SumSide {
	if x != nil {
		return x.Side
	}
	return SumSide_SUM_SIDE_BOTH
}

func (x *CorrelatedSumRequest) GetLastN() uint64 {
	if x != nil {
		return x.LastN
	}
	return 0
}

func (x *CorrelatedSumRequest) GetLast() *durationpb.Duration {
	if x != nil {
		return x.Last
	}
	return nil
}

func (x *CorrelatedSumRequest) GetScope() Scope {
	if x != nil {
		return x.Scope
	}
	return Scope_SCOPE_UNSPECIFIED
}

// CorrelatedSumBounds bounds a correlated sum on one side of the
// threshold.
type CorrelatedSumBounds struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// count_min and count_max bound the number of pairs on the side:
	// count_max − count_min ≤ ε·count.
	CountMin uint64 `protobuf:"varint,1,opt,name=count_min,json=countMin,proto3" json:"count_min,omitempty"`
	CountMax uint64 `protobuf:"varint,2,opt,name=count_max,json=countMax,proto3" json:"count_max,omitempty"`
	// sum_min and sum_max bound the sum of their y:
	// sum_max − sum_min ≤ ε·sum_abs_y, plus rounding.
	SumMin        float64 `protobuf:"fixed64,3,opt,name=sum_min,json=sumMin,proto3" json:"sum_min,omitempty"`
	SumMax        float64 `protobuf:"fixed64,4,opt,name=sum_max,json=sumMax,proto3" json:"sum_max,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *CorrelatedSumBounds) Reset() {
	*x = CorrelatedSumBounds{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[37]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *CorrelatedSumBounds) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*CorrelatedSumBounds) ProtoMessage() {}

func (x *CorrelatedSumBounds) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[37]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use CorrelatedSumBounds.ProtoReflect.Descriptor instead.
func (*CorrelatedSumBounds) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{37}
}

func (x *CorrelatedSumBounds) GetCountMin() uint64 {
	if x != nil {
		return x.CountMin
	}
	return 0
}

func (x *CorrelatedSumBounds) GetCountMax() uint64 {
	if x != nil {
		return x.CountMax
	}
	return 0
}

func (x *CorrelatedSumBounds) GetSumMin() float64 {
	if x != nil {
		return x.SumMin
	}
	return 0
}

func (x *CorrelatedSumBounds) GetSumMax() float64 {
	if x != nil {
		return x.SumMax
	}
	return 0
}

// CorrelatedSumResponse answers a correlated sum over all of a pair
// stream's history.
type CorrelatedSumResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// threshold is the threshold t used: factor × aggregate.
	Threshold float64 `protobuf:"fixed64,1,opt,name=threshold,proto3" json:"threshold,omitempty"`
	// aggregate is the aggregate of x the threshold is made of (the constant
	// for SUM_AGGREGATE_CONSTANT).
	Aggregate float64 `protobuf:"fixed64,2,opt,name=aggregate,proto3" json:"aggregate,omitempty"`
	// aggregate_rank_min and aggregate_rank_max bound the rank of aggregate
	// among the x: some r between them has #{x < aggregate} ≤ r ≤
	// #{x ≤ aggregate}. For a quantile, the rank of the x returned; for the
	// minimum and maximum, 1 and count; for the mean, the count bounds of
	// x ≤ mean; 0 for a constant.
	AggregateRankMin uint64 `protobuf:"varint,3,opt,name=aggregate_rank_min,json=aggregateRankMin,proto3" json:"aggregate_rank_min,omitempty"`
	AggregateRankMax uint64 `protobuf:"varint,4,opt,name=aggregate_rank_max,json=aggregateRankMax,proto3" json:"aggregate_rank_max,omitempty"`
	// at_most bounds the pairs with x ≤ threshold; unset when side is
	// SUM_SIDE_AT_LEAST.
	AtMost *CorrelatedSumBounds `protobuf:"bytes,5,opt,name=at_most,json=atMost,proto3" json:"at_most,omitempty"`
	// at_least bounds the pairs with x ≥ threshold; unset when side is
	// SUM_SIDE_AT_MOST.
	AtLeast *CorrelatedSumBounds `protobuf:"bytes,6,opt,name=at_least,json=atLeast,proto3" json:"at_least,omitempty"`
	// count is N, the number of pairs the answer covers (exact).
	Count uint64 `protobuf:"varint,7,opt,name=count,proto3" json:"count,omitempty"`
	// sum_y and sum_abs_y are Σy and Σ|y| over them, running float64 sums.
	SumY    float64 `protobuf:"fixed64,8,opt,name=sum_y,json=sumY,proto3" json:"sum_y,omitempty"`
	SumAbsY float64 `protobuf:"fixed64,9,opt,name=sum_abs_y,json=sumAbsY,proto3" json:"sum_abs_y,omitempty"`
	// sum_x, min_x and max_x are Σx, the smallest and the largest x.
	SumX float64 `protobuf:"fixed64,10,opt,name=sum_x,json=sumX,proto3" json:"sum_x,omitempty"`
	MinX float64 `protobuf:"fixed64,11,opt,name=min_x,json=minX,proto3" json:"min_x,omitempty"`
	MaxX float64 `protobuf:"fixed64,12,opt,name=max_x,json=maxX,proto3" json:"max_x,omitempty"`
	// epsilon is the stream's ε.
	Epsilon float64 `protobuf:"fixed64,13,opt,name=epsilon,proto3" json:"epsilon,omitempty"`
	// count_width is the guaranteed width of the count bounds, ε·count, and
	// sum_width that of the sum bounds, ε·sum_abs_y (before rounding).
	CountWidth    float64 `protobuf:"fixed64,14,opt,name=count_width,json=countWidth,proto3" json:"count_width,omitempty"`
	SumWidth      float64 `protobuf:"fixed64,15,opt,name=sum_width,json=sumWidth,proto3" json:"sum_width,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *CorrelatedSumResponse) Reset() {
	*x = CorrelatedSumResponse{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[38]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *CorrelatedSumResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*CorrelatedSumResponse) ProtoMessage() {}

func (x *CorrelatedSumResponse) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[38]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use CorrelatedSumResponse.ProtoReflect.Descriptor instead.
func (*CorrelatedSumResponse) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{38}
}

func (x *CorrelatedSumResponse) GetThreshold() float64 {
	if x != nil {
		return x.Threshold
	}
	return 0
}

func (x *CorrelatedSumResponse) GetAggregate() float64 {
	if x != nil {
		return x.Aggregate
	}
	return 0
}

func (x *CorrelatedSumResponse) GetAggregateRankMin() uint64 {
	if x != nil {
		return x.AggregateRankMin
	}
	return 0
}

func (x *CorrelatedSumResponse) GetAggregateRankMax() uint64 {
	if x != nil {
		return x.AggregateRankMax
	}
	return 0
}

func (x *CorrelatedSumResponse) GetAtMost() *CorrelatedSumBounds {
	if x != nil {
		return x.AtMost
	}
	return nil
}

func (x *CorrelatedSumResponse) GetAtLeast() *CorrelatedSumBounds {
	if x != nil {
		return x.AtLeast
	}
	return nil
}

func (x *CorrelatedSumResponse) GetCount() uint64 {
	if x != nil {
		return x.Count
	}
	return 0
}

func (x *CorrelatedSumResponse) GetSumY() float64 {
	if x != nil {
		return x.SumY
	}
	return 0
}

func (x *CorrelatedSumResponse) GetSumAbsY() float64 {
	if x != nil {
		return x.SumAbsY
	}
	return 0
}

func (x *CorrelatedSumResponse) GetSumX() float64 {
	if x != nil {
		return x.SumX
	}
	return 0
}

func (x *CorrelatedSumResponse) GetMinX() float64 {
	if x != nil {
		return x.MinX
	}
	return 0
}

func (x *CorrelatedSumResponse) GetMaxX() float64 {
	if x != nil {
		return x.MaxX
	}
	return 0
}

func (x *CorrelatedSumResponse) GetEpsilon() float64 {
	if x != nil {
		return x.Epsilon
	}
	return 0
}

func (x *CorrelatedSumResponse) GetCountWidth() float64 {
	if x != nil {
		return x.CountWidth
	}
	return 0
}

func (x *CorrelatedSumResponse) GetSumWidth() float64 {
	if x != nil {
		return x.SumWidth
	}
	return 0
}

// Quantile is the answer for one φ.
type QuantilesResponse_Quantile struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// phi is the requested φ.
	Phi float64 `protobuf:"fixed64,1,opt,name=phi,proto3" json:"phi,omitempty"`
	// value is a value of the stream whose true rank r satisfies
	// |r − ⌈φ·count⌉| ≤ epsilon·count.
	Value float64 `protobuf:"fixed64,2,opt,name=value,proto3" json:"value,omitempty"`
	// rank_min and rank_max bracket a true rank of value. Ranks count
	// from 1, and with duplicates value holds every rank r with
	// #{x < value} < r ≤ #{x ≤ value}: at least one of them lies in
	// [rank_min, rank_max], so rank_min ≤ #{x ≤ value} and
	// rank_max > #{x < value}. Without duplicates, rank_min ≤ r ≤ rank_max
	// for the one rank r of value.
	RankMin uint64 `protobuf:"varint,3,opt,name=rank_min,json=rankMin,proto3" json:"rank_min,omitempty"`
	// rank_max is the upper end of the bracket; see rank_min.
	RankMax       uint64 `protobuf:"varint,4,opt,name=rank_max,json=rankMax,proto3" json:"rank_max,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *QuantilesResponse_Quantile) Reset() {
	*x = QuantilesResponse_Quantile{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[40]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *QuantilesResponse_Quantile) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*QuantilesResponse_Quantile) ProtoMessage() {}

func (x *QuantilesResponse_Quantile) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[40]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use QuantilesResponse_Quantile.ProtoReflect.Descriptor instead.
func (*QuantilesResponse_Quantile) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{14, 0}
}

func (x *QuantilesResponse_Quantile) GetPhi() float64 {
	if x != nil {
		return x.Phi
	}
	return 0
}

func (x *QuantilesResponse_Quantile) GetValue() float64 {
	if x != nil {
		return x.Value
	}
	return 0
}

func (x *QuantilesResponse_Quantile) GetRankMin() uint64 {
	if x != nil {
		return x.RankMin
	}
	return 0
}

func (x *QuantilesResponse_Quantile) GetRankMax() uint64 {
	if x != nil {
		return x.RankMax
	}
	return 0
}

// Rank is the answer for one value.
type RanksResponse_Rank struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// value is the requested value.
	Value float64 `protobuf:"fixed64,1,opt,name=value,proto3" json:"value,omitempty"`
	// rank_min is a lower bound on #{x ≤ value}, the number of covered
	// values less than or equal to value.
	RankMin uint64 `protobuf:"varint,2,opt,name=rank_min,json=rankMin,proto3" json:"rank_min,omitempty"`
	// rank_max is an upper bound on #{x ≤ value}.
	RankMax       uint64 `protobuf:"varint,3,opt,name=rank_max,json=rankMax,proto3" json:"rank_max,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *RanksResponse_Rank) Reset() {
	*x = RanksResponse_Rank{}
	mi := &file_streamd_v1_streamd_proto_msgTypes[41]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *RanksResponse_Rank) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*RanksResponse_Rank) ProtoMessage() {}

func (x *RanksResponse_Rank) ProtoReflect() protoreflect.Message {
	mi := &file_streamd_v1_streamd_proto_msgTypes[41]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use RanksResponse_Rank.ProtoReflect.Descriptor instead.
func (*RanksResponse_Rank) Descriptor() ([]byte, []int) {
	return file_streamd_v1_streamd_proto_rawDescGZIP(), []int{16, 0}
}

func (x *RanksResponse_Rank) GetValue() float64 {
	if x != nil {
		return x.Value
	}
	return 0
}

func (x *RanksResponse_Rank) GetRankMin() uint64 {
	if x != nil {
		return x.RankMin
	}
	return 0
}

func (x *RanksResponse_Rank) GetRankMax() uint64 {
	if x != nil {
		return x.RankMax
	}
	return 0
}

var File_streamd_v1_streamd_proto protoreflect.FileDescriptor

const file_streamd_v1_streamd_proto_rawDesc = "" +
	"\n" +
	"\x18streamd/v1/streamd.proto\x12\n" +
	"streamd.v1\x1a\x1egoogle/protobuf/duration.proto\"D\n" +
	"\x0eKafkaPartition\x12\x14\n" +
	"\x05topic\x18\x01 \x01(\tR\x05topic\x12\x1c\n" +
	"\tpartition\x18\x02 \x01(\x05R\tpartition\"n\n" +
	"\x11PartitionCoverage\x128\n" +
	"\tpartition\x18\x01 \x01(\v2\x1a.streamd.v1.KafkaPartitionR\tpartition\x12\x1f\n" +
	"\vnext_offset\x18\x02 \x01(\x03R\n" +
	"nextOffset\"\xe0\x01\n" +
	"\rClusterMember\x12\x0e\n" +
	"\x02id\x18\x01 \x01(\tR\x02id\x12\x18\n" +
	"\aaddress\x18\x02 \x01(\tR\aaddress\x12\x1e\n" +
	"\n" +
	"generation\x18\x03 \x01(\x03R\n" +
	"generation\x12\x1a\n" +
	"\banswered\x18\x04 \x01(\bR\banswered\x12\x14\n" +
	"\x05error\x18\x05 \x01(\tR\x05error\x12=\n" +
	"\n" +
	"partitions\x18\x06 \x03(\v2\x1d.streamd.v1.PartitionCoverageR\n" +
	"partitions\x12\x14\n" +
	"\x05count\x18\a \x01(\x04R\x05count\"d\n" +
	"\x14PeerSummariesRequest\x12\x16\n" +
	"\x06stream\x18\x01 \x01(\tR\x06stream\x12\x1c\n" +
	"\tquantiles\x18\x02 \x01(\bR\tquantiles\x12\x16\n" +
	"\x06counts\x18\x03 \x01(\bR\x06counts\"\x8c\x01\n" +
	"\x15PeerSummariesResponse\x121\n" +
	"\x06member\x18\x01 \x01(\v2\x19.streamd.v1.ClusterMemberR\x06member\x12\x14\n" +
	"\x05found\x18\x02 \x01(\bR\x05found\x12*\n" +
	"\x05parts\x18\x03 \x03(\v2\x14.streamd.v1.PeerPartR\x05parts\"\x8d\x04\n" +
	"\bPeerPart\x128\n" +
	"\tpartition\x18\x01 \x01(\v2\x1a.streamd.v1.KafkaPartitionR\tpartition\x12\x18\n" +
	"\aepsilon\x18\x02 \x01(\x01R\aepsilon\x12\x1f\n" +
	"\vwindow_size\x18\x03 \x01(\x04R\n" +
	"windowSize\x12%\n" +
	"\x0esliding_window\x18\x04 \x01(\x04R\rslidingWindow\x12\x18\n" +
	"\afloat64\x18\x05 \x01(\bR\afloat64\x12\x14\n" +
	"\x05count\x18\x06 \x01(\x04R\x05count\x12\x10\n" +
	"\x03sum\x18\a \x01(\x01R\x03sum\x12\x10\n" +
	"\x03min\x18\b \x01(\x01R\x03min\x12\x10\n" +
	"\x03max\x18\t \x01(\x01R\x03max\x12'\n" +
	"\x0fsummary_entries\x18\n" +
	" \x01(\x04R\x0esummaryEntries\x12#\n" +
	"\rsummary_bytes\x18\v \x01(\x04R\fsummaryBytes\x12>\n" +
	"\brejected\x18\f \x03(\v2\".streamd.v1.PeerPart.RejectedEntryR\brejected\x12\x1c\n" +
	"\tquantiles\x18\r \x01(\fR\tquantiles\x12\x16\n" +
	"\x06counts\x18\x0e \x01(\fR\x06counts\x1a;\n" +
	"\rRejectedEntry\x12\x10\n" +
	"\x03key\x18\x01 \x01(\tR\x03key\x12\x14\n" +
	"\x05value\x18\x02 \x01(\x04R\x05value:\x028\x01\"U\n" +
	"\x17PartitionOffsetsRequest\x12:\n" +
	"\n" +
	"partitions\x18\x01 \x03(\v2\x1a.streamd.v1.KafkaPartitionR\n" +
	"partitions\"v\n" +
	"\x18PartitionOffsetsResponse\x12\x1b\n" +
	"\tmember_id\x18\x01 \x01(\tR\bmemberId\x12=\n" +
	"\n" +
	"partitions\x18\x02 \x03(\v2\x1d.streamd.v1.PartitionCoverageR\n" +
	"partitions\"Q\n" +
	"\x15PartitionStateRequest\x128\n" +
	"\tpartition\x18\x01 \x01(\v2\x1a.streamd.v1.KafkaPartitionR\tpartition\"e\n" +
	"\x16PartitionStateResponse\x12\x1f\n" +
	"\vnext_offset\x18\x01 \x01(\x03R\n" +
	"nextOffset\x12\x16\n" +
	"\x06stream\x18\x02 \x01(\tR\x06stream\x12\x12\n" +
	"\x04part\x18\x03 \x01(\fR\x04part\"\x96\x01\n" +
	"\vPushRequest\x12\x16\n" +
	"\x06stream\x18\x01 \x01(\tR\x06stream\x12\x16\n" +
	"\x06values\x18\x02 \x03(\x01R\x06values\x12\x18\n" +
	"\adurable\x18\x03 \x01(\bR\adurable\x12\x14\n" +
	"\x05items\x18\x14 \x03(\tR\x05items\x12'\n" +
	"\x05pairs\x18\x15 \x01(\v2\x11.streamd.v1.PairsR\x05pairs\"#\n" +
	"\x05Pairs\x12\f\n" +
	"\x01x\x18\x01 \x03(\x01R\x01x\x12\f\n" +
	"\x01y\x18\x02 \x03(\x01R\x01y\"F\n" +
	"\fPushResponse\x12\x1a\n" +
	"\baccepted\x18\x01 \x01(\x04R\baccepted\x12\x1a\n" +
	"\brejected\x18\x02 \x01(\x04R\brejected\"\xad\x01\n" +
	"\x10QuantilesRequest\x12\x16\n" +
	"\x06stream\x18\x01 \x01(\tR\x06stream\x12\x12\n" +
	"\x04phis\x18\x02 \x03(\x01R\x04phis\x12\x15\n" +
	"\x06last_n\x18\x03 \x01(\x04R\x05lastN\x12-\n" +
	"\x04last\x18\x14 \x01(\v2\x19.google.protobuf.DurationR\x04last\x12'\n" +
	"\x05scope\x18\x1e \x01(\x0e2\x11.streamd.v1.ScopeR\x05scope\"\xbd\x03\n" +
	"\x11QuantilesResponse\x12\x14\n" +
	"\x05count\x18\x01 \x01(\x04R\x05count\x12\x18\n" +
	"\aepsilon\x18\x02 \x01(\x01R\aepsilon\x12D\n" +
	"\tquantiles\x18\x03 \x03(\v2&.streamd.v1.QuantilesResponse.QuantileR\tquantiles\x12.\n" +
	"\x06window\x18\x14 \x01(\v2\x16.streamd.v1.TimeWindowR\x06window\x12\x18\n" +
	"\apartial\x18\x1e \x01(\bR\apartial\x12I\n" +
	"\x12missing_partitions\x18\x1f \x03(\v2\x1a.streamd.v1.KafkaPartitionR\x11missingPartitions\x123\n" +
	"\amembers\x18  \x03(\v2\x19.streamd.v1.ClusterMemberR\amembers\x1ah\n" +
	"\bQuantile\x12\x10\n" +
	"\x03phi\x18\x01 \x01(\x01R\x03phi\x12\x14\n" +
	"\x05value\x18\x02 \x01(\x01R\x05value\x12\x19\n" +
	"\brank_min\x18\x03 \x01(\x04R\arankMin\x12\x19\n" +
	"\brank_max\x18\x04 \x01(\x04R\arankMax\"\xad\x01\n" +
	"\fRanksRequest\x12\x16\n" +
	"\x06stream\x18\x01 \x01(\tR\x06stream\x12\x16\n" +
	"\x06values\x18\x02 \x03(\x01R\x06values\x12\x15\n" +
	"\x06last_n\x18\x03 \x01(\x04R\x05lastN\x12-\n" +
	"\x04last\x18\x14 \x01(\v2\x19.google.protobuf.DurationR\x04last\x12'\n" +
	"\x05scope\x18\x1e \x01(\x0e2\x11.streamd.v1.ScopeR\x05scope\"\x93\x03\n" +
	"\rRanksResponse\x12\x14\n" +
	"\x05count\x18\x01 \x01(\x04R\x05count\x124\n" +
	"\x05ranks\x18\x02 \x03(\v2\x1e.streamd.v1.RanksResponse.RankR\x05ranks\x12.\n" +
	"\x06window\x18\x14 \x01(\v2\x16.streamd.v1.TimeWindowR\x06window\x12\x18\n" +
	"\apartial\x18\x1e \x01(\bR\apartial\x12I\n" +
	"\x12missing_partitions\x18\x1f \x03(\v2\x1a.streamd.v1.KafkaPartitionR\x11missingPartitions\x123\n" +
	"\amembers\x18  \x03(\v2\x19.streamd.v1.ClusterMemberR\amembers\x12\x18\n" +
	"\aepsilon\x18! \x01(\x01R\aepsilon\x1aR\n" +
	"\x04Rank\x12\x14\n" +
	"\x05value\x18\x01 \x01(\x01R\x05value\x12\x19\n" +
	"\brank_min\x18\x02 \x01(\x04R\arankMin\x12\x19\n" +
	"\brank_max\x18\x03 \x01(\x04R\arankMax\"\xb6\x01\n" +
	"\x13HeavyHittersRequest\x12\x16\n" +
	"\x06stream\x18\x01 \x01(\tR\x06stream\x12\x18\n" +
	"\asupport\x18\x02 \x01(\x01R\asupport\x12\x15\n" +
	"\x06last_n\x18\x03 \x01(\x04R\x05lastN\x12-\n" +
	"\x04last\x18\x14 \x01(\v2\x19.google.protobuf.DurationR\x04last\x12'\n" +
	"\x05scope\x18\x1e \x01(\x0e2\x11.streamd.v1.ScopeR\x05scope\"\xb8\x02\n" +
	"\x14HeavyHittersResponse\x12\x14\n" +
	"\x05count\x18\x01 \x01(\x04R\x05count\x12\x18\n" +
	"\aepsilon\x18\x02 \x01(\x01R\aepsilon\x12&\n" +
	"\x05items\x18\x03 \x03(\v2\x10.streamd.v1.ItemR\x05items\x12.\n" +
	"\x06window\x18\x14 \x01(\v2\x16.streamd.v1.TimeWindowR\x06window\x12\x18\n" +
	"\apartial\x18\x1e \x01(\bR\apartial\x12I\n" +
	"\x12missing_partitions\x18\x1f \x03(\v2\x1a.streamd.v1.KafkaPartitionR\x11missingPartitions\x123\n" +
	"\amembers\x18  \x03(\v2\x19.streamd.v1.ClusterMemberR\amembers\"\xc9\x01\n" +
	"\x12FrequenciesRequest\x12\x16\n" +
	"\x06stream\x18\x01 \x01(\tR\x06stream\x12\x16\n" +
	"\x06values\x18\x02 \x03(\x01R\x06values\x12\x14\n" +
	"\x05items\x18\x15 \x03(\tR\x05items\x12\x15\n" +
	"\x06last_n\x18\x03 \x01(\x04R\x05lastN\x12-\n" +
	"\x04last\x18\x14 \x01(\v2\x19.google.protobuf.DurationR\x04last\x12'\n" +
	"\x05scope\x18\x1e \x01(\x0e2\x11.streamd.v1.ScopeR\x05scope\"\xb7\x02\n" +
	"\x13FrequenciesResponse\x12&\n" +
	"\x05items\x18\x01 \x03(\v2\x10.streamd.v1.ItemR\x05items\x12\x14\n" +
	"\x05count\x18\x14 \x01(\x04R\x05count\x12.\n" +
	"\x06window\x18\x15 \x01(\v2\x16.streamd.v1.TimeWindowR\x06window\x12\x18\n" +
	"\apartial\x18\x1e \x01(\bR\apartial\x12I\n" +
	"\x12missing_partitions\x18\x1f \x03(\v2\x1a.streamd.v1.KafkaPartitionR\x11missingPartitions\x123\n" +
	"\amembers\x18  \x03(\v2\x19.streamd.v1.ClusterMemberR\amembers\x12\x18\n" +
	"\aepsilon\x18! \x01(\x01R\aepsilon\"\xa4\x01\n" +
	"\x04Item\x12\x14\n" +
	"\x05value\x18\x01 \x01(\x01R\x05value\x12\x1b\n" +
	"\tcount_min\x18\x02 \x01(\x04R\bcountMin\x12\x1b\n" +
	"\tcount_max\x18\x03 \x01(\x04R\bcountMax\x12\x12\n" +
	"\x04item\x18\x14 \x01(\tR\x04item\x12 \n" +
	"\vfingerprint\x18\x15 \x01(\x06R\vfingerprint\x12\x16\n" +
	"\x06shared\x18\x16 \x01(\bR\x06shared\"\xd5\x01\n" +
	"\n" +
	"TimeWindow\x12\x14\n" +
	"\x05count\x18\x01 \x01(\x04R\x05count\x12&\n" +
	"\x0ffirst_unix_nano\x18\x02 \x01(\x03R\rfirstUnixNano\x12$\n" +
	"\x0elast_unix_nano\x18\x03 \x01(\x03R\flastUnixNano\x12\x1b\n" +
	"\tolder_max\x18\x04 \x01(\x04R\bolderMax\x12\x1c\n" +
	"\ttruncated\x18\x05 \x01(\bR\ttruncated\x12(\n" +
	"\x10cutoff_unix_nano\x18\x06 \x01(\x03R\x0ecutoffUnixNano\"O\n" +
	"\fStatsRequest\x12\x16\n" +
	"\x06stream\x18\x01 \x01(\tR\x06stream\x12'\n" +
	"\x05scope\x18\x1e \x01(\x0e2\x11.streamd.v1.ScopeR\x05scope\"\xfd\x06\n" +
	"\rStatsResponse\x12\x14\n" +
	"\x05count\x18\x01 \x01(\x04R\x05count\x12\x10\n" +
	"\x03min\x18\x02 \x01(\x01R\x03min\x12\x10\n" +
	"\x03max\x18\x03 \x01(\x01R\x03max\x12\x10\n" +
	"\x03sum\x18\x04 \x01(\x01R\x03sum\x12\x18\n" +
	"\aepsilon\x18\x05 \x01(\x01R\aepsilon\x12\x1f\n" +
	"\vwindow_size\x18\x06 \x01(\x04R\n" +
	"windowSize\x12%\n" +
	"\x0esliding_window\x18\a \x01(\x04R\rslidingWindow\x12'\n" +
	"\x0fsummary_entries\x18\b \x01(\x04R\x0esummaryEntries\x12#\n" +
	"\rsummary_bytes\x18\t \x01(\x04R\fsummaryBytes\x12C\n" +
	"\brejected\x18\n" +
	" \x03(\v2'.streamd.v1.StatsResponse.RejectedEntryR\brejected\x12%\n" +
	"\x0erejected_total\x18\v \x01(\x04R\rrejectedTotal\x12*\n" +
	"\x04kind\x18\x14 \x01(\x0e2\x16.streamd.v1.StreamKindR\x04kind\x12!\n" +
	"\fmemory_bytes\x18( \x01(\x04R\vmemoryBytes\x122\n" +
	"\x15memory_reserved_bytes\x18) \x01(\x04R\x13memoryReservedBytes\x129\n" +
	"\x19daemon_memory_limit_bytes\x18* \x01(\x04R\x16daemonMemoryLimitBytes\x127\n" +
	"\x18daemon_memory_used_bytes\x18+ \x01(\x04R\x15daemonMemoryUsedBytes\x12\x18\n" +
	"\apartial\x18\x1e \x01(\bR\apartial\x12I\n" +
	"\x12missing_partitions\x18\x1f \x03(\v2\x1a.streamd.v1.KafkaPartitionR\x11missingPartitions\x123\n" +
	"\amembers\x18  \x03(\v2\x19.streamd.v1.ClusterMemberR\amembers\x12\x18\n" +
	"\afloat64\x182 \x01(\bR\afloat64\x12\x1c\n" +
	"\thierarchy\x18< \x01(\tR\thierarchy\x1a;\n" +
	"\rRejectedEntry\x12\x10\n" +
	"\x03key\x18\x01 \x01(\tR\x03key\x12\x14\n" +
	"\x05value\x18\x02 \x01(\x04R\x05value:\x028\x01\"\x94\x02\n" +
	"\x13CreateStreamRequest\x12\x16\n" +
	"\x06stream\x18\x01 \x01(\tR\x06stream\x12\x18\n" +
	"\aepsilon\x18\x02 \x01(\x01R\aepsilon\x12\x1f\n" +
	"\vwindow_size\x18\x03 \x01(\x04R\n" +
	"windowSize\x12%\n" +
	"\x0esliding_window\x18\x04 \x01(\x04R\rslidingWindow\x12\x18\n" +
	"\afloat64\x18\x05 \x01(\bR\afloat64\x12*\n" +
	"\x04kind\x18\x14 \x01(\x0e2\x16.streamd.v1.StreamKindR\x04kind\x12\x1c\n" +
	"\thierarchy\x18< \x01(\tR\thierarchy\x12\x1f\n" +
	"\vmin_support\x18= \x01(\x01R\n" +
	"minSupport\"\x16\n" +
	"\x14CreateStreamResponse\"-\n" +
	"\x13DeleteStreamRequest\x12\x16\n" +
	"\x06stream\x18\x01 \x01(\tR\x06stream\"\x16\n" +
	"\x14DeleteStreamResponse\"~\n" +
	"\x12ListStreamsRequest\x12\x1b\n" +
	"\tpage_size\x18\x01 \x01(\x05R\bpageSize\x12\x1d\n" +
	"\n" +
	"page_token\x18\x02 \x01(\tR\tpageToken\x12\x16\n" +
	"\x06prefix\x18\x03 \x01(\tR\x06prefix\x12\x14\n" +
	"\x05match\x18\x04 \x01(\tR\x05match\"W\n" +
	"\x13ListStreamsResponse\x12\x18\n" +
	"\astreams\x18\x01 \x03(\tR\astreams\x12&\n" +
	"\x0fnext_page_token\x18\x02 \x01(\tR\rnextPageToken\"\xbb\x01\n" +
	"\fWatchRequest\x12\x16\n" +
	"\x06stream\x18\x01 \x01(\tR\x06stream\x12\x12\n" +
	"\x04phis\x18\x02 \x03(\x01R\x04phis\x12\x18\n" +
	"\asupport\x18\x03 \x01(\x01R\asupport\x12\x1f\n" +
	"\vinterval_ms\x18\x04 \x01(\x04R\n" +
	"intervalMs\x12\x15\n" +
	"\x06last_n\x18\x14 \x01(\x04R\x05lastN\x12-\n" +
	"\x04last\x18\x15 \x01(\v2\x19.google.protobuf.DurationR\x04last\"\xb9\x01\n" +
	"\rWatchResponse\x12;\n" +
	"\tquantiles\x18\x01 \x01(\v2\x1d.streamd.v1.QuantilesResponseR\tquantiles\x12E\n" +
	"\rheavy_hitters\x18\x02 \x01(\v2 .streamd.v1.HeavyHittersResponseR\fheavyHitters\x12$\n" +
	"\x0etime_unix_nano\x18\x03 \x01(\x03R\ftimeUnixNano\"\xd8\x01\n" +
	"\x1fHierarchicalHeavyHittersRequest\x12\x16\n" +
	"\x06stream\x18\x01 \x01(\tR\x06stream\x12\x18\n" +
	"\asupport\x18\x02 \x01(\x01R\asupport\x12\x14\n" +
	"\x05plain\x18\x03 \x01(\bR\x05plain\x12\x15\n" +
	"\x06last_n\x18\x04 \x01(\x04R\x05lastN\x12-\n" +
	"\x04last\x18\x05 \x01(\v2\x19.google.protobuf.DurationR\x04last\x12'\n" +
	"\x05scope\x18\x06 \x01(\x0e2\x11.streamd.v1.ScopeR\x05scope\"\xf5\x01\n" +
	" HierarchicalHeavyHittersResponse\x12\x14\n" +
	"\x05count\x18\x01 \x01(\x04R\x05count\x12\x18\n" +
	"\aepsilon\x18\x02 \x01(\x01R\aepsilon\x12\x1c\n" +
	"\tprecision\x18\x03 \x01(\x01R\tprecision\x12=\n" +
	"\ahitters\x18\x04 \x03(\v2#.streamd.v1.HierarchicalHeavyHitterR\ahitters\x12.\n" +
	"\x06window\x18\x05 \x01(\v2\x16.streamd.v1.TimeWindowR\x06window\x12\x14\n" +
	"\x05plain\x18\x06 \x01(\bR\x05plain\"\xed\x01\n" +
	"\x17HierarchicalHeavyHitter\x12\x16\n" +
	"\x06prefix\x18\x01 \x01(\tR\x06prefix\x12\x14\n" +
	"\x05level\x18\x02 \x01(\rR\x05level\x12\x1b\n" +
	"\tcount_min\x18\x03 \x01(\x04R\bcountMin\x12\x1b\n" +
	"\tcount_max\x18\x04 \x01(\x04R\bcountMax\x12%\n" +
	"\x0ediscounted_min\x18\x05 \x01(\x04R\rdiscountedMin\x12%\n" +
	"\x0ediscounted_max\x18\x06 \x01(\x04R\rdiscountedMax\x12\x1c\n" +
	"\tdiscounts\x18\a \x01(\rR\tdiscounts\"\xd4\x02\n" +
	"\x14CorrelatedSumRequest\x12\x16\n" +
	"\x06stream\x18\x01 \x01(\tR\x06stream\x126\n" +
	"\taggregate\x18\x02 \x01(\x0e2\x18.streamd.v1.SumAggregateR\taggregate\x12\x1a\n" +
	"\bconstant\x18\x03 \x01(\x01R\bconstant\x12\x10\n" +
	"\x03phi\x18\x04 \x01(\x01R\x03phi\x12\x1b\n" +
	"\x06factor\x18\x05 \x01(\x01H\x00R\x06factor\x88\x01\x01\x12'\n" +
	"\x04side\x18\x06 \x01(\x0e2\x13.streamd.v1.SumSideR\x04side\x12\x15\n" +
	"\x06last_n\x18\x14 \x01(\x04R\x05lastN\x12-\n" +
	"\x04last\x18\x15 \x01(\v2\x19.google.protobuf.DurationR\x04last\x12'\n" +
	"\x05scope\x18\x1e \x01(\x0e2\x11.streamd.v1.ScopeR\x05scopeB\t\n" +
	"\a_factor\"\x81\x01\n" +
	"\x13CorrelatedSumBounds\x12\x1b\n" +
	"\tcount_min\x18\x01 \x01(\x04R\bcountMin\x12\x1b\n" +
	"\tcount_max\x18\x02 \x01(\x04R\bcountMax\x12\x17\n" +
	"\asum_min\x18\x03 \x01(\x01R\x06sumMin\x12\x17\n" +
	"\asum_max\x18\x04 \x01(\x01R\x06sumMax\"\x83\x04\n" +
	"\x15CorrelatedSumResponse\x12\x1c\n" +
	"\tthreshold\x18\x01 \x01(\x01R\tthreshold\x12\x1c\n" +
	"\taggregate\x18\x02 \x01(\x01R\taggregate\x12,\n" +
	"\x12aggregate_rank_min\x18\x03 \x01(\x04R\x10aggregateRankMin\x12,\n" +
	"\x12aggregate_rank_max\x18\x04 \x01(\x04R\x10aggregateRankMax\x128\n" +
	"\aat_most\x18\x05 \x01(\v2\x1f.streamd.v1.CorrelatedSumBoundsR\x06atMost\x12:\n" +
	"\bat_least\x18\x06 \x01(\v2\x1f.streamd.v1.CorrelatedSumBoundsR\aatLeast\x12\x14\n" +
	"\x05count\x18\a \x01(\x04R\x05count\x12\x13\n" +
	"\x05sum_y\x18\b \x01(\x01R\x04sumY\x12\x1a\n" +
	"\tsum_abs_y\x18\t \x01(\x01R\asumAbsY\x12\x13\n" +
	"\x05sum_x\x18\n" +
	" \x01(\x01R\x04sumX\x12\x13\n" +
	"\x05min_x\x18\v \x01(\x01R\x04minX\x12\x13\n" +
	"\x05max_x\x18\f \x01(\x01R\x04maxX\x12\x18\n" +
	"\aepsilon\x18\r \x01(\x01R\aepsilon\x12\x1f\n" +
	"\vcount_width\x18\x0e \x01(\x01R\n" +
	"countWidth\x12\x1b\n" +
	"\tsum_width\x18\x0f \x01(\x01R\bsumWidth*B\n" +
	"\x05Scope\x12\x15\n" +
	"\x11SCOPE_UNSPECIFIED\x10\x00\x12\x0f\n" +
	"\vSCOPE_LOCAL\x10\x01\x12\x11\n" +
	"\rSCOPE_CLUSTER\x10\x02*R\n" +
	"\n" +
	"StreamKind\x12\x16\n" +
	"\x12STREAM_KIND_VALUES\x10\x00\x12\x15\n" +
	"\x11STREAM_KIND_ITEMS\x10\x01\x12\x15\n" +
	"\x11STREAM_KIND_PAIRS\x10\x02*\x8c\x01\n" +
	"\fSumAggregate\x12\x1a\n" +
	"\x16SUM_AGGREGATE_CONSTANT\x10\x00\x12\x1a\n" +
	"\x16SUM_AGGREGATE_QUANTILE\x10\x01\x12\x15\n" +
	"\x11SUM_AGGREGATE_MIN\x10\x02\x12\x15\n" +
	"\x11SUM_AGGREGATE_MAX\x10\x03\x12\x16\n" +
	"\x12SUM_AGGREGATE_MEAN\x10\x04*I\n" +
	"\aSumSide\x12\x11\n" +
	"\rSUM_SIDE_BOTH\x10\x00\x12\x14\n" +
	"\x10SUM_SIDE_AT_MOST\x10\x01\x12\x15\n" +
	"\x11SUM_SIDE_AT_LEAST\x10\x022\xb2\a\n" +
	"\aStreamd\x12;\n" +
	"\x04Push\x12\x17.streamd.v1.PushRequest\x1a\x18.streamd.v1.PushResponse(\x01\x12H\n" +
	"\tQuantiles\x12\x1c.streamd.v1.QuantilesRequest\x1a\x1d.streamd.v1.QuantilesResponse\x12<\n" +
	"\x05Ranks\x12\x18.streamd.v1.RanksRequest\x1a\x19.streamd.v1.RanksResponse\x12Q\n" +
	"\fHeavyHitters\x12\x1f.streamd.v1.HeavyHittersRequest\x1a .streamd.v1.HeavyHittersResponse\x12N\n" +
	"\vFrequencies\x12\x1e.streamd.v1.FrequenciesRequest\x1a\x1f.streamd.v1.FrequenciesResponse\x12<\n" +
	"\x05Stats\x12\x18.streamd.v1.StatsRequest\x1a\x19.streamd.v1.StatsResponse\x12Q\n" +
	"\fCreateStream\x12\x1f.streamd.v1.CreateStreamRequest\x1a .streamd.v1.CreateStreamResponse\x12Q\n" +
	"\fDeleteStream\x12\x1f.streamd.v1.DeleteStreamRequest\x1a .streamd.v1.DeleteStreamResponse\x12N\n" +
	"\vListStreams\x12\x1e.streamd.v1.ListStreamsRequest\x1a\x1f.streamd.v1.ListStreamsResponse\x12>\n" +
	"\x05Watch\x12\x18.streamd.v1.WatchRequest\x1a\x19.streamd.v1.WatchResponse0\x01\x12u\n" +
	"\x18HierarchicalHeavyHitters\x12+.streamd.v1.HierarchicalHeavyHittersRequest\x1a,.streamd.v1.HierarchicalHeavyHittersResponse\x12T\n" +
	"\rCorrelatedSum\x12 .streamd.v1.CorrelatedSumRequest\x1a!.streamd.v1.CorrelatedSumResponse2\x96\x02\n" +
	"\x04Peer\x12T\n" +
	"\rPeerSummaries\x12 .streamd.v1.PeerSummariesRequest\x1a!.streamd.v1.PeerSummariesResponse\x12]\n" +
	"\x10PartitionOffsets\x12#.streamd.v1.PartitionOffsetsRequest\x1a$.streamd.v1.PartitionOffsetsResponse\x12Y\n" +
	"\x0ePartitionState\x12!.streamd.v1.PartitionStateRequest\x1a\".streamd.v1.PartitionStateResponse0\x01B(Z&streamd/api/proto/streamd/v1;streamdv1b\x06proto3"

var (
	file_streamd_v1_streamd_proto_rawDescOnce sync.Once
	file_streamd_v1_streamd_proto_rawDescData []byte
)

func file_streamd_v1_streamd_proto_rawDescGZIP() []byte {
	file_streamd_v1_streamd_proto_rawDescOnce.Do(func() {
		file_streamd_v1_streamd_proto_rawDescData = protoimpl.X.CompressGZIP(unsafe.Slice(unsafe.StringData(file_streamd_v1_streamd_proto_rawDesc), len(file_streamd_v1_streamd_proto_rawDesc)))
	})
	return file_streamd_v1_streamd_proto_rawDescData
}

var file_streamd_v1_streamd_proto_enumTypes = make([]protoimpl.EnumInfo, 4)
var file_streamd_v1_streamd_proto_msgTypes = make([]protoimpl.MessageInfo, 43)
var file_streamd_v1_streamd_proto_goTypes = []any{
	(Scope)(0),                               // 0: streamd.v1.Scope
	(StreamKind)(0),                          // 1: streamd.v1.StreamKind
	(SumAggregate)(0),                        // 2: streamd.v1.SumAggregate
	(SumSide)(0),                             // 3: streamd.v1.SumSide
	(*KafkaPartition)(nil),                   // 4: streamd.v1.KafkaPartition
	(*PartitionCoverage)(nil),                // 5: streamd.v1.PartitionCoverage
	(*ClusterMember)(nil),                    // 6: streamd.v1.ClusterMember
	(*PeerSummariesRequest)(nil),             // 7: streamd.v1.PeerSummariesRequest
	(*PeerSummariesResponse)(nil),            // 8: streamd.v1.PeerSummariesResponse
	(*PeerPart)(nil),                         // 9: streamd.v1.PeerPart
	(*PartitionOffsetsRequest)(nil),          // 10: streamd.v1.PartitionOffsetsRequest
	(*PartitionOffsetsResponse)(nil),         // 11: streamd.v1.PartitionOffsetsResponse
	(*PartitionStateRequest)(nil),            // 12: streamd.v1.PartitionStateRequest
	(*PartitionStateResponse)(nil),           // 13: streamd.v1.PartitionStateResponse
	(*PushRequest)(nil),                      // 14: streamd.v1.PushRequest
	(*Pairs)(nil),                            // 15: streamd.v1.Pairs
	(*PushResponse)(nil),                     // 16: streamd.v1.PushResponse
	(*QuantilesRequest)(nil),                 // 17: streamd.v1.QuantilesRequest
	(*QuantilesResponse)(nil),                // 18: streamd.v1.QuantilesResponse
	(*RanksRequest)(nil),                     // 19: streamd.v1.RanksRequest
	(*RanksResponse)(nil),                    // 20: streamd.v1.RanksResponse
	(*HeavyHittersRequest)(nil),              // 21: streamd.v1.HeavyHittersRequest
	(*HeavyHittersResponse)(nil),             // 22: streamd.v1.HeavyHittersResponse
	(*FrequenciesRequest)(nil),               // 23: streamd.v1.FrequenciesRequest
	(*FrequenciesResponse)(nil),              // 24: streamd.v1.FrequenciesResponse
	(*Item)(nil),                             // 25: streamd.v1.Item
	(*TimeWindow)(nil),                       // 26: streamd.v1.TimeWindow
	(*StatsRequest)(nil),                     // 27: streamd.v1.StatsRequest
	(*StatsResponse)(nil),                    // 28: streamd.v1.StatsResponse
	(*CreateStreamRequest)(nil),              // 29: streamd.v1.CreateStreamRequest
	(*CreateStreamResponse)(nil),             // 30: streamd.v1.CreateStreamResponse
	(*DeleteStreamRequest)(nil),              // 31: streamd.v1.DeleteStreamRequest
	(*DeleteStreamResponse)(nil),             // 32: streamd.v1.DeleteStreamResponse
	(*ListStreamsRequest)(nil),               // 33: streamd.v1.ListStreamsRequest
	(*ListStreamsResponse)(nil),              // 34: streamd.v1.ListStreamsResponse
	(*WatchRequest)(nil),                     // 35: streamd.v1.WatchRequest
	(*WatchResponse)(nil),                    // 36: streamd.v1.WatchResponse
	(*HierarchicalHeavyHittersRequest)(nil),  // 37: streamd.v1.HierarchicalHeavyHittersRequest
	(*HierarchicalHeavyHittersResponse)(nil), // 38: streamd.v1.HierarchicalHeavyHittersResponse
	(*HierarchicalHeavyHitter)(nil),          // 39: streamd.v1.HierarchicalHeavyHitter
	(*CorrelatedSumRequest)(nil),             // 40: streamd.v1.CorrelatedSumRequest
	(*CorrelatedSumBounds)(nil),              // 41: streamd.v1.CorrelatedSumBounds
	(*CorrelatedSumResponse)(nil),            // 42: streamd.v1.CorrelatedSumResponse
	nil,                                      // 43: streamd.v1.PeerPart.RejectedEntry
	(*QuantilesResponse_Quantile)(nil),       // 44: streamd.v1.QuantilesResponse.Quantile
	(*RanksResponse_Rank)(nil),               // 45: streamd.v1.RanksResponse.Rank
	nil,                                      // 46: streamd.v1.StatsResponse.RejectedEntry
	(*durationpb.Duration)(nil),              // 47: google.protobuf.Duration
}
var file_streamd_v1_streamd_proto_depIdxs = []int32{
	4,  // 0: streamd.v1.PartitionCoverage.partition:type_name -> streamd.v1.KafkaPartition
	5,  // 1: streamd.v1.ClusterMember.partitions:type_name -> streamd.v1.PartitionCoverage
	6,  // 2: streamd.v1.PeerSummariesResponse.member:type_name -> streamd.v1.ClusterMember
	9,  // 3: streamd.v1.PeerSummariesResponse.parts:type_name -> streamd.v1.PeerPart
	4,  // 4: streamd.v1.PeerPart.partition:type_name -> streamd.v1.KafkaPartition
	43, // 5: streamd.v1.PeerPart.rejected:type_name -> streamd.v1.PeerPart.RejectedEntry
	4,  // 6: streamd.v1.PartitionOffsetsRequest.partitions:type_name -> streamd.v1.KafkaPartition
	5,  // 7: streamd.v1.PartitionOffsetsResponse.partitions:type_name -> streamd.v1.PartitionCoverage
	4,  // 8: streamd.v1.PartitionStateRequest.partition:type_name -> streamd.v1.KafkaPartition
	15, // 9: streamd.v1.PushRequest.pairs:type_name -> streamd.v1.Pairs
	47, // 10: streamd.v1.QuantilesRequest.last:type_name -> google.protobuf.Duration
	0,  // 11: streamd.v1.QuantilesRequest.scope:type_name -> streamd.v1.Scope
	44, // 12: streamd.v1.QuantilesResponse.quantiles:type_name -> streamd.v1.QuantilesResponse.Quantile
	26, // 13: streamd.v1.QuantilesResponse.window:type_name -> streamd.v1.TimeWindow
	4,  // 14: streamd.v1.QuantilesResponse.missing_partitions:type_name -> streamd.v1.KafkaPartition
	6,  // 15: streamd.v1.QuantilesResponse.members:type_name -> streamd.v1.ClusterMember
	47, // 16: streamd.v1.RanksRequest.last:type_name -> google.protobuf.Duration
	0,  // 17: streamd.v1.RanksRequest.scope:type_name -> streamd.v1.Scope
	45, // 18: streamd.v1.RanksResponse.ranks:type_name -> streamd.v1.RanksResponse.Rank
	26, // 19: streamd.v1.RanksResponse.window:type_name -> streamd.v1.TimeWindow
	4,  // 20: streamd.v1.RanksResponse.missing_partitions:type_name -> streamd.v1.KafkaPartition
	6,  // 21: streamd.v1.RanksResponse.members:type_name -> streamd.v1.ClusterMember
	47, // 22: streamd.v1.HeavyHittersRequest.last:type_name -> google.protobuf.Duration
	0,  // 23: streamd.v1.HeavyHittersRequest.scope:type_name -> streamd.v1.Scope
	25, // 24: streamd.v1.HeavyHittersResponse.items:type_name -> streamd.v1.Item
	26, // 25: streamd.v1.HeavyHittersResponse.window:type_name -> streamd.v1.TimeWindow
	4,  // 26: streamd.v1.HeavyHittersResponse.missing_partitions:type_name -> streamd.v1.KafkaPartition
	6,  // 27: streamd.v1.HeavyHittersResponse.members:type_name -> streamd.v1.ClusterMember
	47, // 28: streamd.v1.FrequenciesRequest.last:type_name -> google.protobuf.Duration
	0,  // 29: streamd.v1.FrequenciesRequest.scope:type_name -> streamd.v1.Scope
	25, // 30: streamd.v1.FrequenciesResponse.items:type_name -> streamd.v1.Item
	26, // 31: streamd.v1.FrequenciesResponse.window:type_name -> streamd.v1.TimeWindow
	4,  // 32: streamd.v1.FrequenciesResponse.missing_partitions:type_name -> streamd.v1.KafkaPartition
	6,  // 33: streamd.v1.FrequenciesResponse.members:type_name -> streamd.v1.ClusterMember
	0,  // 34: streamd.v1.StatsRequest.scope:type_name -> streamd.v1.Scope
	46, // 35: streamd.v1.StatsResponse.rejected:type_name -> streamd.v1.StatsResponse.RejectedEntry
	1,  // 36: streamd.v1.StatsResponse.kind:type_name -> streamd.v1.StreamKind
	4,  // 37: streamd.v1.StatsResponse.missing_partitions:type_name -> streamd.v1.KafkaPartition
	6,  // 38: streamd.v1.StatsResponse.members:type_name -> streamd.v1.ClusterMember
	1,  // 39: streamd.v1.CreateStreamRequest.kind:type_name -> streamd.v1.StreamKind
	47, // 40: streamd.v1.WatchRequest.last:type_name -> google.protobuf.Duration
	18, // 41: streamd.v1.WatchResponse.quantiles:type_name -> streamd.v1.QuantilesResponse
	22, // 42: streamd.v1.WatchResponse.heavy_hitters:type_name -> streamd.v1.HeavyHittersResponse
	47, // 43: streamd.v1.HierarchicalHeavyHittersRequest.last:type_name -> google.protobuf.Duration
	0,  // 44: streamd.v1.HierarchicalHeavyHittersRequest.scope:type_name -> streamd.v1.Scope
	39, // 45: streamd.v1.HierarchicalHeavyHittersResponse.hitters:type_name -> streamd.v1.HierarchicalHeavyHitter
	26, // 46: streamd.v1.HierarchicalHeavyHittersResponse.window:type_name -> streamd.v1.TimeWindow
	2,  // 47: streamd.v1.CorrelatedSumRequest.aggregate:type_name -> streamd.v1.SumAggregate
	3,  // 48: streamd.v1.CorrelatedSumRequest.side:type_name -> streamd.v1.SumSide
	47, // 49: streamd.v1.CorrelatedSumRequest.last:type_name -> google.protobuf.Duration
	0,  // 50: streamd.v1.CorrelatedSumRequest.scope:type_name -> streamd.v1.Scope
	41, // 51: streamd.v1.CorrelatedSumResponse.at_most:type_name -> streamd.v1.CorrelatedSumBounds
	41, // 52: streamd.v1.CorrelatedSumResponse.at_least:type_name -> streamd.v1.CorrelatedSumBounds
	14, // 53: streamd.v1.Streamd.Push:input_type -> streamd.v1.PushRequest
	17, // 54: streamd.v1.Streamd.Quantiles:input_type -> streamd.v1.QuantilesRequest
	19, // 55: streamd.v1.Streamd.Ranks:input_type -> streamd.v1.RanksRequest
	21, // 56: streamd.v1.Streamd.HeavyHitters:input_type -> streamd.v1.HeavyHittersRequest
	23, // 57: streamd.v1.Streamd.Frequencies:input_type -> streamd.v1.FrequenciesRequest
	27, // 58: streamd.v1.Streamd.Stats:input_type -> streamd.v1.StatsRequest
	29, // 59: streamd.v1.Streamd.CreateStream:input_type -> streamd.v1.CreateStreamRequest
	31, // 60: streamd.v1.Streamd.DeleteStream:input_type -> streamd.v1.DeleteStreamRequest
	33, // 61: streamd.v1.Streamd.ListStreams:input_type -> streamd.v1.ListStreamsRequest
	35, // 62: streamd.v1.Streamd.Watch:input_type -> streamd.v1.WatchRequest
	37, // 63: streamd.v1.Streamd.HierarchicalHeavyHitters:input_type -> streamd.v1.HierarchicalHeavyHittersRequest
	40, // 64: streamd.v1.Streamd.CorrelatedSum:input_type -> streamd.v1.CorrelatedSumRequest
	7,  // 65: streamd.v1.Peer.PeerSummaries:input_type -> streamd.v1.PeerSummariesRequest
	10, // 66: streamd.v1.Peer.PartitionOffsets:input_type -> streamd.v1.PartitionOffsetsRequest
	12, // 67: streamd.v1.Peer.PartitionState:input_type -> streamd.v1.PartitionStateRequest
	16, // 68: streamd.v1.Streamd.Push:output_type -> streamd.v1.PushResponse
	18, // 69: streamd.v1.Streamd.Quantiles:output_type -> streamd.v1.QuantilesResponse
	20, // 70: streamd.v1.Streamd.Ranks:output_type -> streamd.v1.RanksResponse
	22, // 71: streamd.v1.Streamd.HeavyHitters:output_type -> streamd.v1.HeavyHittersResponse
	24, // 72: streamd.v1.Streamd.Frequencies:output_type -> streamd.v1.FrequenciesResponse
	28, // 73: streamd.v1.Streamd.Stats:output_type -> streamd.v1.StatsResponse
	30, // 74: streamd.v1.Streamd.CreateStream:output_type -> streamd.v1.CreateStreamResponse
	32, // 75: streamd.v1.Streamd.DeleteStream:output_type -> streamd.v1.DeleteStreamResponse
	34, // 76: streamd.v1.Streamd.ListStreams:output_type -> streamd.v1.ListStreamsResponse
	36, // 77: streamd.v1.Streamd.Watch:output_type -> streamd.v1.WatchResponse
	38, // 78: streamd.v1.Streamd.HierarchicalHeavyHitters:output_type -> streamd.v1.HierarchicalHeavyHittersResponse
	42, // 79: streamd.v1.Streamd.CorrelatedSum:output_type -> streamd.v1.CorrelatedSumResponse
	8,  // 80: streamd.v1.Peer.PeerSummaries:output_type -> streamd.v1.PeerSummariesResponse
	11, // 81: streamd.v1.Peer.PartitionOffsets:output_type -> streamd.v1.PartitionOffsetsResponse
	13, // 82: streamd.v1.Peer.PartitionState:output_type -> streamd.v1.PartitionStateResponse
	68, // [68:83] is the sub-list for method output_type
	53, // [53:68] is the sub-list for method input_type
	53, // [53:53] is the sub-list for extension type_name
	53, // [53:53] is the sub-list for extension extendee
	0,  // [0:53] is the sub-list for field type_name
}

func init() { file_streamd_v1_streamd_proto_init() }
func file_streamd_v1_streamd_proto_init() {
	if File_streamd_v1_streamd_proto != nil {
		return
	}
	file_streamd_v1_streamd_proto_msgTypes[36].OneofWrappers = []any{}
	type x struct{}
	out := protoimpl.TypeBuilder{
		File: protoimpl.DescBuilder{
			GoPackagePath: reflect.TypeOf(x{}).PkgPath(),
			RawDescriptor: unsafe.Slice(unsafe.StringData(file_streamd_v1_streamd_proto_rawDesc), len(file_streamd_v1_streamd_proto_rawDesc)),
			NumEnums:      4,
			NumMessages:   43,
			NumExtensions: 0,
			NumServices:   2,
		},
		GoTypes:           file_streamd_v1_streamd_proto_goTypes,
		DependencyIndexes: file_streamd_v1_streamd_proto_depIdxs,
		EnumInfos:         file_streamd_v1_streamd_proto_enumTypes,
		MessageInfos:      file_streamd_v1_streamd_proto_msgTypes,
	}.Build()
	File_streamd_v1_streamd_proto = out.File
	file_streamd_v1_streamd_proto_goTypes = nil
	file_streamd_v1_streamd_proto_depIdxs = nil
}
