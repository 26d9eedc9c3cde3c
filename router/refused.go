package router

import (
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/h1"
)

// Refused hands the Observer a record of a request router/h1's or
// router/h2's server ended before the router saw it (h1.Server.Refused,
// h2.Server.Refused): a head it refused, one the client broke off, one
// that timed out. nginx logs each of them, from no location
// (ReasonRefused, RequestLine).
func (r *Router) Refused(x *h1.Refusal) {
	if r.observer == nil {
		return
	}
	req := x.Request
	rec := Record{
		Generation:  r.Generation(),
		Method:      req.Method,
		Host:        match.NormalizeHost(req.Host),
		Path:        req.RequestURI,
		Status:      x.Status,
		Reason:      ReasonRefused,
		Request:     req,
		ClientAddr:  r.clientAddrText(req, ""),
		Start:       x.Start,
		Duration:    x.Duration,
		HeaderBytes: x.HeadBytes,
		BytesOut:    x.BodyBytes,
		RequestLine: x.RequestLine,
	}
	r.observer(rec)
}
