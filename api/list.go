package api

import (
	"context"
	"encoding/base64"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "streamd/api/proto/streamd/v1"
	"streamd/feed"
)

// Limits of ListStreams.
const (
	// DefaultPageSize is the size of a ListStreams page that asks for
	// none.
	DefaultPageSize = 1000
	// MaxPageSize is the largest ListStreams page; a larger page_size is
	// taken as it.
	MaxPageSize = 10000
	// MaxListScan is the most names a ListStreams page with a match looks
	// at.
	MaxListScan = 100000
)

// ListStreams returns a page of the streams' names in ascending order,
// those that start with req.Prefix and contain req.Match, and the token of
// the next page: the last name the page looked at, base64-encoded, or ""
// when none is left. A page without a match costs O(log N + page size)
// for N streams (pipeline.Pipeline.Names); one with a match looks at no
// more than MaxListScan names, fetched in chunks, so that the streams'
// lock is never held for long.
func (s *Server) ListStreams(ctx context.Context, req *pb.ListStreamsRequest) (*pb.ListStreamsResponse, error) {
	size := int(req.PageSize)
	switch {
	case size < 0:
		return nil, status.Errorf(codes.InvalidArgument, "list streams: page_size %d is negative", size)
	case size == 0:
		size = DefaultPageSize
	}
	size = min(size, MaxPageSize)
	after := ""
	if req.PageToken != "" {
		b, err := base64.RawURLEncoding.DecodeString(req.PageToken)
		if err != nil || feed.ValidName(string(b)) != nil {
			return nil, status.Errorf(codes.InvalidArgument, "list streams: page_token %q is not one ListStreams returned", req.PageToken)
		}
		after = string(b)
	}
	resp := &pb.ListStreamsResponse{Streams: []string{}}
	if req.Match == "" {
		resp.Streams = s.Pipeline.Names(after, req.Prefix, size)
		if len(resp.Streams) == size {
			after = resp.Streams[size-1]
			if len(s.Pipeline.Names(after, req.Prefix, 1)) > 0 {
				resp.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte(after))
			}
		}
		return resp, nil
	}
	for scanned := 0; scanned < MaxListScan; {
		if err := ctx.Err(); err != nil {
			return nil, statusError("list streams", err)
		}
		chunk := s.Pipeline.Names(after, req.Prefix, min(MaxListScan-scanned, 1000))
		if len(chunk) == 0 {
			return resp, nil
		}
		for _, name := range chunk {
			after = name
			scanned++
			if !strings.Contains(name, req.Match) {
				continue
			}
			resp.Streams = append(resp.Streams, name)
			if len(resp.Streams) == size {
				break
			}
		}
		if len(resp.Streams) == size {
			break
		}
	}
	if len(s.Pipeline.Names(after, req.Prefix, 1)) > 0 {
		resp.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte(after))
	}
	return resp, nil
}
