package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	pb "streamd/api/proto/streamd/v1"
)

// apiCorrelatedSum answers
// /api/correlated-sum?stream=&aggregate=&constant=&phi=&factor=&side=
// like the CorrelatedSum RPC: aggregate is constant (the default),
// quantile, min, max or mean (or the enum's names), side is both (the
// default), at_most or at_least (or the enum's names); constant, phi and
// factor are numbers, factor 1 when left out.
func (s *Server) apiCorrelatedSum(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := checkParams(q, "stream", "aggregate", "constant", "phi", "factor", "side"); err != nil {
		writeBadRequest(w, err)
		return
	}
	req := &pb.CorrelatedSumRequest{Stream: q.Get("stream")}
	if req.Stream == "" {
		writeBadRequest(w, fmt.Errorf("parameter stream is required"))
		return
	}
	agg, err := enumParam(q, "aggregate", pb.SumAggregate_value, "SUM_AGGREGATE_", "constant, quantile, min, max or mean")
	if err != nil {
		writeBadRequest(w, err)
		return
	}
	req.Aggregate = pb.SumAggregate(agg)
	side, err := enumParam(q, "side", pb.SumSide_value, "SUM_SIDE_", "both, at_most or at_least")
	if err != nil {
		writeBadRequest(w, err)
		return
	}
	req.Side = pb.SumSide(side)
	for _, p := range []struct {
		name string
		dst  *float64
	}{{"constant", &req.Constant}, {"phi", &req.Phi}} {
		if v := q.Get(p.name); v != "" {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				writeBadRequest(w, fmt.Errorf("parameter %s: %q is not a number", p.name, v))
				return
			}
			*p.dst = x
		}
	}
	if v := q.Get("factor"); v != "" {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			writeBadRequest(w, fmt.Errorf("parameter factor: %q is not a number", v))
			return
		}
		req.Factor = &x
	}
	resp, err := s.api.CorrelatedSum(r.Context(), req)
	reply(w, resp, err)
}

// enumParam returns the value of the enum parameter name of q, 0 when q
// leaves it out. values maps the enum's names to its values, as the
// generated code's _value maps do; the parameter names a value in any
// case, in full or without prefix. The error for any other text lists
// want, the names accepted.
func enumParam(q url.Values, name string, values map[string]int32, prefix, want string) (int32, error) {
	s := strings.ToUpper(q.Get(name))
	v, ok := values[prefix+s]
	if !ok {
		v, ok = values[s]
	}
	if s != "" && !ok {
		return 0, fmt.Errorf("parameter %s: %q: want %s", name, q.Get(name), want)
	}
	return v, nil
}
