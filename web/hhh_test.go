package web

import (
	"net/http"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "streamd/api/proto/streamd/v1"
	"streamd/summary"
)

// TestAPIHierarchicalHeavyHitters asks the JSON API for the hierarchical
// heavy hitters of a hierarchy stream, discounted and plain, and checks
// them against the gRPC answer; a bad plain is a bad request, and a
// stream without a hierarchy a failed precondition.
func TestAPIHierarchicalHeavyHitters(t *testing.T) {
	s := openServer(t, nil)
	if _, err := s.Pipeline.Create("addrs", summary.Config{Epsilon: 0.001, Hierarchy: "ipv4"}); err != nil {
		t.Fatal(err)
	}
	var list []string
	for i := range 3000 {
		switch {
		case i%3 == 0:
			list = append(list, "10.1.2.3")
		case i%3 == 1:
			list = append(list, "192.168.7."+strings.Repeat("1", 1+i%3))
		default:
			list = append(list, "172.16.0.1")
		}
	}
	acceptItems(t, s, "addrs", list)
	acceptItems(t, s, "plain", []string{"x"})
	for _, plain := range []bool{false, true} {
		path := "/api/hierarchical-heavy-hitters?stream=addrs&support=0.2"
		if plain {
			path += "&plain=true"
		}
		var got pb.HierarchicalHeavyHittersResponse
		getMessage(t, s, path, &got)
		want, err := s.api.HierarchicalHeavyHitters(t.Context(), &pb.HierarchicalHeavyHittersRequest{Stream: "addrs", Support: 0.2, Plain: plain})
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(&got, want) || len(got.Hitters) == 0 || got.Count != 3000 {
			t.Errorf("GET %s:\n%v\nwant\n%v", path, &got, want)
		}
	}
	var st pb.StatsResponse
	getMessage(t, s, "/api/stats?stream=addrs", &st)
	if st.Hierarchy != "ipv4/8" {
		t.Errorf("stats: hierarchy %q, want ipv4/8", st.Hierarchy)
	}
	for path, code := range map[string]string{
		"/api/hierarchical-heavy-hitters?stream=addrs&support=0.2&plain=maybe": `"InvalidArgument"`,
		"/api/hierarchical-heavy-hitters?stream=plain&support=0.2":             `"FailedPrecondition"`,
	} {
		resp, body := get(t, http.DefaultClient, "http://"+s.ListenAddr(), path, nil)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `"code":`+code) {
			t.Errorf("GET %s: %s %s, want 400 with code %s", path, resp.Status, body, code)
		}
	}
	// The page has the table the script fills.
	_, page := get(t, http.DefaultClient, "http://"+s.ListenAddr(), "/", nil)
	if !strings.Contains(page, `id="hhh"`) {
		t.Errorf("the page has no table of hierarchical heavy hitters")
	}
}
