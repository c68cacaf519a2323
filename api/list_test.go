package api

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "streamd/api/proto/streamd/v1"
	"streamd/gpusort"
	"streamd/pipeline"
	"streamd/summary"
)

// TestListStreamsPages pages through 100,050 streams over gRPC: a request
// without page fields gets the first 1000 names and a token, the tokens
// lead through every name in order and end with "", page_size is capped,
// prefix and match select names, and a page with a match looks at no more
// than MaxListScan names.
func TestListStreamsPages(t *testing.T) {
	s := &Server{}
	c := dial(t, serve(t, s, nil))
	ctx := context.Background()
	const n = MaxListScan + 50
	// serve's pipeline holds 100000 streams at most: this one more.
	p, err := pipeline.New(pipeline.Config{MaxStreams: n + 10, Sorter: gpusort.NewCPU(0),
		Defaults: summary.Config{WindowSize: 16, SlidingWindow: 16}})
	if err != nil {
		t.Fatal(err)
	}
	s.Pipeline = p
	var all []string
	for i := range n {
		all = append(all, fmt.Sprintf("s%06d", i))
	}
	for _, i := range []int{7, 0, n - 1} { // not in order
		if _, err := s.Pipeline.Create(all[i], summary.Config{}); err != nil {
			t.Fatal(err)
		}
	}
	for i, name := range all {
		if i != 7 && i != 0 && i != n-1 {
			if _, err := s.Pipeline.Create(name, summary.Config{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := s.Pipeline.Create("s000100.h", summary.Config{Hierarchy: "ipv4"}); err != nil {
		t.Fatal(err)
	}
	all = append(all, "s000100.h")
	slices.Sort(all)
	// pages follows the tokens from req and returns every name and the
	// size of each page.
	pages := func(req *pb.ListStreamsRequest) (names []string, sizes []int) {
		t.Helper()
		for {
			resp, err := c.ListStreams(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, resp.Streams...)
			sizes = append(sizes, len(resp.Streams))
			if resp.NextPageToken == "" {
				return names, sizes
			}
			req.PageToken = resp.NextPageToken
		}
	}

	resp, err := c.ListStreams(ctx, &pb.ListStreamsRequest{})
	if err != nil || !slices.Equal(resp.Streams, all[:DefaultPageSize]) || resp.NextPageToken == "" {
		t.Fatalf("no page fields: %d names, token %q (%v)", len(resp.GetStreams()), resp.GetNextPageToken(), err)
	}
	names, sizes := pages(&pb.ListStreamsRequest{PageSize: 1 << 30})
	if !slices.Equal(names, all) || !slices.Equal(sizes, []int{10000, 10000, 10000, 10000, 10000, 10000, 10000, 10000, 10000, 10000, 51}) {
		t.Fatalf("pages of 2^30: %d names in pages %v", len(names), sizes)
	}
	// A last page that is full has no token.
	names, sizes = pages(&pb.ListStreamsRequest{PageSize: 11, Prefix: "s00010"})
	if !slices.Equal(names, all[100:111]) || !slices.Equal(sizes, []int{11}) {
		t.Fatalf("prefix s00010: %v in pages %v", names, sizes)
	}
	var want []string
	for _, name := range all {
		if strings.Contains(name, "99") {
			want = append(want, name)
		}
	}
	names, sizes = pages(&pb.ListStreamsRequest{PageSize: 1000, Match: "99"})
	if !slices.Equal(names, want) || len(sizes) != 4 {
		t.Fatalf("match 99: %d names in pages %v, want %d", len(names), sizes, len(want))
	}
	names, sizes = pages(&pb.ListStreamsRequest{Match: ".h"})
	if !slices.Equal(names, []string{"s000100.h"}) || !slices.Equal(sizes, []int{1, 0}) {
		t.Fatalf("match .h: %v in pages %v, want the first page to look at %d names only", names, sizes, MaxListScan)
	}
	// The next page starts after the last name of the one before, whatever
	// was deleted or created meanwhile.
	resp, err = c.ListStreams(ctx, &pb.ListStreamsRequest{PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Pipeline.Delete(all[2]); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pipeline.Create("s000001a", summary.Config{}); err != nil {
		t.Fatal(err)
	}
	resp, err = c.ListStreams(ctx, &pb.ListStreamsRequest{PageSize: 2, PageToken: resp.NextPageToken})
	if err != nil || !slices.Equal(resp.Streams, []string{"s000001a", all[3]}) {
		t.Fatalf("after a delete and a create: %v (%v)", resp.GetStreams(), err)
	}

	for _, req := range []*pb.ListStreamsRequest{{PageSize: -1}, {PageToken: "s000001"}, {PageToken: "!"}, {PageToken: "IA"}} {
		if _, err := c.ListStreams(ctx, req); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%v: %v, want InvalidArgument", req, err)
		}
	}
}
