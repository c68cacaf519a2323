package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"streamd/api"
	pb "streamd/api/proto/streamd/v1"
)

// Limits of /api/streams.
const (
	defaultListLimit = 1000
	maxListLimit     = 10000
)

// apiQuantiles answers /api/quantiles?stream=&phi=&last_n=&last=&scope=
// like the Quantiles RPC.
func (s *Server) apiQuantiles(w http.ResponseWriter, r *http.Request) {
	p, err := parseQuery(r.URL.Query(), "stream", "phi", "last_n", "last", "scope")
	if err != nil {
		writeBadRequest(w, err)
		return
	}
	resp, err := s.api.Quantiles(r.Context(), &pb.QuantilesRequest{Stream: p.stream, Phis: p.phis, LastN: p.lastN, Last: p.last, Scope: p.scope})
	reply(w, resp, err)
}

// apiRanks answers /api/ranks?stream=&value=&last_n=&last=&scope= like the
// Ranks RPC.
func (s *Server) apiRanks(w http.ResponseWriter, r *http.Request) {
	p, err := parseQuery(r.URL.Query(), "stream", "value", "last_n", "last", "scope")
	if err != nil {
		writeBadRequest(w, err)
		return
	}
	resp, err := s.api.Ranks(r.Context(), &pb.RanksRequest{Stream: p.stream, Values: p.values, LastN: p.lastN, Last: p.last, Scope: p.scope})
	reply(w, resp, err)
}

// apiHeavyHitters answers
// /api/heavy-hitters?stream=&support=&last_n=&last=&scope= like the
// HeavyHitters RPC.
func (s *Server) apiHeavyHitters(w http.ResponseWriter, r *http.Request) {
	p, err := parseQuery(r.URL.Query(), "stream", "support", "last_n", "last", "scope")
	if err != nil {
		writeBadRequest(w, err)
		return
	}
	resp, err := s.api.HeavyHitters(r.Context(), &pb.HeavyHittersRequest{Stream: p.stream, Support: p.support, LastN: p.lastN, Last: p.last, Scope: p.scope})
	reply(w, resp, err)
}

// apiHierarchicalHeavyHitters answers
// /api/hierarchical-heavy-hitters?stream=&support=&plain=&last_n=&last=
// like the HierarchicalHeavyHitters RPC: the discounted hierarchical heavy
// hitters of a hierarchy stream, or with plain=true its heavy prefixes.
func (s *Server) apiHierarchicalHeavyHitters(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p, err := parseQuery(q, "stream", "support", "plain", "last_n", "last", "scope")
	if err != nil {
		writeBadRequest(w, err)
		return
	}
	var plain bool
	if v := q.Get("plain"); v != "" {
		if plain, err = strconv.ParseBool(v); err != nil {
			writeBadRequest(w, fmt.Errorf("parameter plain: %q is not true or false", v))
			return
		}
	}
	resp, err := s.api.HierarchicalHeavyHitters(r.Context(), &pb.HierarchicalHeavyHittersRequest{Stream: p.stream, Support: p.support, Plain: plain, LastN: p.lastN, Last: p.last, Scope: p.scope})
	reply(w, resp, err)
}

// apiFrequencies answers
// /api/frequencies?stream=&value=&item=&last_n=&last=&scope= like the
// Frequencies RPC: value for a stream of values, item for an item stream.
func (s *Server) apiFrequencies(w http.ResponseWriter, r *http.Request) {
	p, err := parseQuery(r.URL.Query(), "stream", "value", "item", "last_n", "last", "scope")
	if err != nil {
		writeBadRequest(w, err)
		return
	}
	resp, err := s.api.Frequencies(r.Context(), &pb.FrequenciesRequest{Stream: p.stream, Values: p.values, Items: p.items, LastN: p.lastN, Last: p.last, Scope: p.scope})
	reply(w, resp, err)
}

// apiStats answers /api/stats?stream=&scope= like the Stats RPC.
func (s *Server) apiStats(w http.ResponseWriter, r *http.Request) {
	p, err := parseQuery(r.URL.Query(), "stream", "scope")
	if err != nil {
		writeBadRequest(w, err)
		return
	}
	resp, err := s.api.Stats(r.Context(), &pb.StatsRequest{Stream: p.stream, Scope: p.scope})
	reply(w, resp, err)
}

// streamList is the answer of /api/streams.
type streamList struct {
	// Total is the number of streams, whether they match or not.
	Total int `json:"total"`
	// Streams are the page's streams that match, by name, at most limit.
	Streams []streamEntry `json:"streams"`
	// NextCursor is the cursor of the next page; "" when no stream is
	// left.
	NextCursor string `json:"nextCursor"`
}

// streamEntry is one stream of /api/streams.
type streamEntry struct {
	Stream string `json:"stream"`
	// Stats is the stream's StatsResponse.
	Stats json.RawMessage `json:"stats"`
	// ValuesPerSecond is the rate of accepted values over the last
	// rateWindow of samples; null when the stream is not sampled.
	ValuesPerSecond *float64 `json:"valuesPerSecond"`
}

// apiStreams answers /api/streams?match=&prefix=&limit=&cursor=: a page of
// the streams whose name starts with prefix and contains match, at most
// limit of them (1000 by default), with their statistics and rates, and the
// cursor of the next page. It is a page of ListStreams (its page_token is
// the cursor): with a match, it looks at no more than api.MaxListScan
// names, and may hold fewer than limit streams, none even, while
// nextCursor is not "". Statistics are asked of the page's streams only.
func (s *Server) apiStreams(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := checkParams(q, "match", "prefix", "limit", "cursor"); err != nil {
		writeBadRequest(w, err)
		return
	}
	limit := defaultListLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxListLimit {
			writeBadRequest(w, fmt.Errorf("parameter limit %q: want an integer in [1, %d]", v, maxListLimit))
			return
		}
		limit = n
	}
	req := &pb.ListStreamsRequest{PageSize: int32(limit), PageToken: q.Get("cursor"), Prefix: q.Get("prefix"), Match: q.Get("match")}
	listed, next, err := listStats(r.Context(), s.api, req)
	if err != nil {
		writeStatus(w, err)
		return
	}
	list := streamList{Total: s.Pipeline.Len(), Streams: []streamEntry{}, NextCursor: next}
	for _, x := range listed {
		b, err := marshal(x.stats)
		if err != nil {
			writeError(w, http.StatusInternalServerError, "Internal", err.Error())
			return
		}
		e := streamEntry{Stream: x.name, Stats: b}
		if rate, ok := s.history.rate(x.name); ok {
			e.ValuesPerSecond = &rate
		}
		list.Streams = append(list.Streams, e)
	}
	writeJSON(w, list)
}

// streamStats is one stream's name and statistics.
type streamStats struct {
	name  string
	stats *pb.StatsResponse
}

// listStats asks for one page of stream names (req) and for the
// statistics of each (statsOf), and returns them and the token of the next
// page.
func listStats(ctx context.Context, a *api.Server, req *pb.ListStreamsRequest) ([]streamStats, string, error) {
	names, err := a.ListStreams(ctx, req)
	if err != nil {
		return nil, "", err
	}
	out, _, err := statsOf(ctx, a, names.Streams)
	if err != nil {
		return nil, "", err
	}
	return out, names.NextPageToken, nil
}

// statsOf asks for the statistics of each of the streams names, through
// the gRPC service's code. A stream deleted since it was listed (NotFound)
// is left out and counted in gone. It fails on any other error.
func statsOf(ctx context.Context, a *api.Server, names []string) (out []streamStats, gone int, _ error) {
	out = make([]streamStats, 0, len(names))
	for _, name := range names {
		st, err := a.Stats(ctx, &pb.StatsRequest{Stream: name})
		if status.Code(err) == codes.NotFound {
			gone++
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		out = append(out, streamStats{name, st})
	}
	return out, gone, nil
}

// firstNames returns the names of the first limit streams by name, page
// by page: O(limit + log N) for N streams.
func firstNames(ctx context.Context, a *api.Server, limit int) ([]string, error) {
	var out []string
	req := &pb.ListStreamsRequest{}
	for len(out) < limit {
		req.PageSize = int32(min(limit-len(out), api.MaxPageSize))
		page, err := a.ListStreams(ctx, req)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Streams...)
		if page.NextPageToken == "" {
			break
		}
		req.PageToken = page.NextPageToken
	}
	return out, nil
}

// historyResponse is the answer of /api/history.
type historyResponse struct {
	Stream string `json:"stream"`
	// Sampled is false when the stream is not sampled: beyond MaxStreams,
	// or with History off.
	Sampled    bool      `json:"sampled"`
	IntervalMS int64     `json:"intervalMs"`
	KeptMS     int64     `json:"keptMs"`
	Phis       []float64 `json:"phis"`
	// Samples are oldest first.
	Samples []sampleJSON `json:"samples"`
}

// sampleJSON is one sample of a stream's history.
type sampleJSON struct {
	TimeUnixMS   int64  `json:"timeUnixMs"`
	Count        uint64 `json:"count,string"`
	Rejected     uint64 `json:"rejected,string"`
	SummaryBytes uint64 `json:"summaryBytes,string"`
	// Quantiles are the all-history quantiles at Phis; null when Count is 0.
	Quantiles []float64 `json:"quantiles"`
}

// apiHistory answers /api/history?stream=&since=: the stream's samples
// taken after since (Unix milliseconds; all that are kept by default).
func (s *Server) apiHistory(w http.ResponseWriter, r *http.Request) {
	p, err := parseQuery(r.URL.Query(), "stream", "since")
	if err != nil {
		writeBadRequest(w, err)
		return
	}
	if _, err := s.Pipeline.Stream(p.stream); err != nil {
		writeError(w, http.StatusNotFound, "NotFound", fmt.Sprintf("history: %v", err))
		return
	}
	resp := historyResponse{
		Stream: p.stream, IntervalMS: s.Interval.Milliseconds(), KeptMS: s.History.Milliseconds(),
		Phis: s.history.phis, Samples: []sampleJSON{},
	}
	samples, ok := s.history.since(p.stream, int64(min(p.since, math.MaxInt64)))
	resp.Sampled = ok
	for _, x := range samples {
		resp.Samples = append(resp.Samples, sampleJSON{
			TimeUnixMS: x.unixMilli, Count: x.count, Rejected: x.rejected,
			SummaryBytes: x.bytes, Quantiles: x.quantiles,
		})
	}
	writeJSON(w, resp)
}

// params are the parsed query parameters of an API request.
type params struct {
	stream       string
	phis, values []float64
	items        []string
	support      float64
	lastN, since uint64
	last         *durationpb.Duration
	scope        pb.Scope
}

// parseQuery parses the query parameters of a request: stream (required),
// phi and value (lists of numbers, repeated or comma-separated), item
// (a list of strings, repeated only: an item may hold a comma), support
// (a number), last_n (or lastN) and since (unsigned integers), last (a
// duration: "5m", "90s", or protobuf's JSON form "300s") and scope
// ("local", "cluster", or the enum's names SCOPE_LOCAL and
// SCOPE_CLUSTER). Unknown parameters and malformed values are errors; the
// API checks the ranges.
func parseQuery(q url.Values, allowed ...string) (params, error) {
	var p params
	if v, ok := q["lastN"]; ok { // the field's JSON name
		if _, both := q["last_n"]; both {
			return p, errors.New("parameter last_n given twice, as last_n and lastN")
		}
		q = maps.Clone(q)
		delete(q, "lastN")
		q["last_n"] = v
	}
	if err := checkParams(q, allowed...); err != nil {
		return p, err
	}
	if p.stream = q.Get("stream"); p.stream == "" {
		return p, errors.New("parameter stream is required")
	}
	var err error
	if p.phis, err = floatList(q, "phi"); err != nil {
		return p, err
	}
	if p.values, err = floatList(q, "value"); err != nil {
		return p, err
	}
	p.items = q["item"]
	if v := q.Get("support"); v != "" {
		if p.support, err = strconv.ParseFloat(v, 64); err != nil {
			return p, fmt.Errorf("parameter support: %q is not a number", v)
		}
	}
	for name, dst := range map[string]*uint64{"last_n": &p.lastN, "since": &p.since} {
		if v := q.Get(name); v != "" {
			if *dst, err = strconv.ParseUint(v, 10, 64); err != nil {
				return p, fmt.Errorf("parameter %s: %q is not an unsigned integer", name, v)
			}
		}
	}
	if v := q.Get("last"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return p, fmt.Errorf("parameter last: %q is not a duration such as 5m or 90s", v)
		}
		p.last = durationpb.New(d) // the API refuses a negative one
	}
	switch v := q.Get("scope"); strings.ToUpper(v) {
	case "", "LOCAL", "SCOPE_LOCAL":
	case "CLUSTER", "SCOPE_CLUSTER":
		p.scope = pb.Scope_SCOPE_CLUSTER
	default:
		return p, fmt.Errorf("parameter scope: %q: want local or cluster", v)
	}
	return p, nil
}

// floatList parses the numbers of a list parameter, repeated or
// comma-separated.
func floatList(q url.Values, name string) ([]float64, error) {
	var xs []float64
	for _, v := range q[name] {
		for f := range strings.SplitSeq(v, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			x, err := strconv.ParseFloat(f, 64)
			if err != nil {
				return nil, fmt.Errorf("parameter %s: %q is not a number", name, f)
			}
			xs = append(xs, x)
		}
	}
	return xs, nil
}

// checkParams refuses parameters outside allowed, and repeated ones other
// than the lists phi, value and item, so that a misspelt one is not
// ignored.
func checkParams(q url.Values, allowed ...string) error {
	for name, vs := range q {
		ok := false
		for _, a := range allowed {
			ok = ok || a == name
		}
		if !ok {
			return fmt.Errorf("unknown parameter %q (want %s)", name, strings.Join(allowed, ", "))
		}
		if len(vs) > 1 && name != "phi" && name != "value" && name != "item" {
			return fmt.Errorf("parameter %q given %d times", name, len(vs))
		}
	}
	return nil
}

// marshal encodes an answer in protobuf's JSON mapping, with its JSON
// names (lowerCamelCase, as streamd query --json and grpcurl print them)
// and every field present.
func marshal(m proto.Message) ([]byte, error) {
	return protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(m)
}

// reply writes the answer of an RPC: the message, or its error.
func reply(w http.ResponseWriter, m proto.Message, err error) {
	if err != nil {
		writeStatus(w, err)
		return
	}
	b, err := marshal(m)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "Internal", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(append(b, '\n'))
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	// An error comes after the header is sent: the client sees a
	// truncated body, and there is nothing more to tell it.
	_ = json.NewEncoder(w).Encode(v)
}

// writeStatus writes a gRPC status error with its HTTP counterpart.
func writeStatus(w http.ResponseWriter, err error) {
	st := status.Convert(err)
	writeError(w, httpStatus(st.Code()), st.Code().String(), st.Message())
}

func writeBadRequest(w http.ResponseWriter, err error) {
	writeError(w, http.StatusBadRequest, codes.InvalidArgument.String(), err.Error())
}

// apiError is the body of every API error: the message and the gRPC
// status code's name.
type apiError struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

func writeError(w http.ResponseWriter, httpCode int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(httpCode)
	_ = json.NewEncoder(w).Encode(apiError{Error: message, Code: code})
}

// httpStatus maps a gRPC status code to the HTTP status of its answer.
func httpStatus(c codes.Code) int {
	switch c {
	case codes.OK:
		return http.StatusOK
	case codes.InvalidArgument, codes.OutOfRange, codes.FailedPrecondition:
		return http.StatusBadRequest
	case codes.NotFound:
		return http.StatusNotFound
	case codes.AlreadyExists:
		return http.StatusConflict
	case codes.ResourceExhausted:
		return http.StatusTooManyRequests
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	case codes.PermissionDenied:
		return http.StatusForbidden
	case codes.Unavailable, codes.Canceled:
		return http.StatusServiceUnavailable
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}
