package web

import (
	"fmt"
	"net/http"
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
	agg := strings.ToUpper(q.Get("aggregate"))
	v, ok := pb.SumAggregate_value["SUM_AGGREGATE_"+agg]
	if !ok {
		v, ok = pb.SumAggregate_value[agg]
	}
	if agg != "" && !ok {
		writeBadRequest(w, fmt.Errorf("parameter aggregate: %q: want constant, quantile, min, max or mean", q.Get("aggregate")))
		return
	}
	req.Aggregate = pb.SumAggregate(v)
	side := strings.ToUpper(q.Get("side"))
	v, ok = pb.SumSide_value["SUM_SIDE_"+side]
	if !ok {
		v, ok = pb.SumSide_value[side]
	}
	if side != "" && !ok {
		writeBadRequest(w, fmt.Errorf("parameter side: %q: want both, at_most or at_least", q.Get("side")))
		return
	}
	req.Side = pb.SumSide(v)
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
