package handoff

import (
	"context"
	"errors"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "streamd/api/proto/streamd/v1"
	"streamd/cluster"
	"streamd/pipeline"
)

// Server serves the Peer service of a member: its summaries, for cluster
// answers (cluster.Summaries), and its partitions' states, for hand-off.
type Server struct {
	pb.UnimplementedPeerServer
	Handoff  *Handoff
	Pipeline *pipeline.Pipeline // whose summaries PeerSummaries returns
}

// PeerSummaries returns the member's summaries of a stream.
func (s Server) PeerSummaries(ctx context.Context, req *pb.PeerSummariesRequest) (*pb.PeerSummariesResponse, error) {
	resp, err := cluster.Summaries(s.Pipeline, req, s.Handoff.Self())
	switch {
	case errors.Is(err, cluster.ErrItemStream):
		return nil, status.Errorf(codes.FailedPrecondition, "peer summaries: %v", err)
	case err != nil:
		return nil, status.Errorf(codes.Internal, "peer summaries: %v", err)
	}
	return resp, nil
}

// PartitionOffsets returns, of the partitions asked for, those the member
// holds a state of, with the offset each state goes up to.
func (s Server) PartitionOffsets(ctx context.Context, req *pb.PartitionOffsetsRequest) (*pb.PartitionOffsetsResponse, error) {
	resp := &pb.PartitionOffsetsResponse{MemberId: s.Handoff.MemberID}
	for _, p := range req.Partitions {
		if o, ok := s.Handoff.held(cluster.FromPB(p)); ok {
			resp.Partitions = append(resp.Partitions, &pb.PartitionCoverage{Partition: p, NextOffset: o})
		}
	}
	return resp, nil
}

// PartitionState streams the member's state of a partition: first the
// offset it goes up to, then one message per stream's part. It fails with
// NotFound for a partition the member holds no state of.
func (s Server) PartitionState(req *pb.PartitionStateRequest, stream grpc.ServerStreamingServer[pb.PartitionStateResponse]) error {
	tp := cluster.FromPB(req.Partition)
	if tp.Topic == "" {
		return status.Error(codes.InvalidArgument, "partition state: no topic")
	}
	h := s.Handoff
	off, states, err := h.state(stream.Context(), tp)
	if errors.Is(err, errNoState) {
		return status.Errorf(codes.NotFound, "no state of partition %s", tp)
	}
	if err != nil {
		return status.Errorf(codes.Unavailable, "partition state: %v", err)
	}
	if err := stream.Send(&pb.PartitionStateResponse{NextOffset: off}); err != nil {
		return err
	}
	for _, st := range states {
		if err := stream.Send(&pb.PartitionStateResponse{Stream: st.Stream, Part: st.Data}); err != nil {
			return err
		}
	}
	h.logger().Info("partition state handed to a peer", "partition", tp.String(), "offset", off, "streams", len(states))
	h.handedOver(tp)
	return nil
}
