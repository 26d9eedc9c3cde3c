package router

import (
	"net/http"
	"strings"

	"ramjet.dev/ramjet/match"
)

// Route rewrites (SPEC §11.1, §13): rewrite-target, upstream-vhost and
// x-forwarded-prefix, as the matched route's match.Rewrite says.
//
//   - rewrite-target gives the backend a new request-target built from the
//     normalized path the route matched (captures included) and keeps the
//     client's query unless the target says otherwise; a request no
//     rewrite touches keeps its target byte for byte. A target that is an
//     absolute URL answers 302 to it instead, as nginx's rewrite does,
//     before any HTTPS redirect: nginx runs the location's rewrite first.
//   - upstream-vhost replaces the Host the backend receives;
//     X-Forwarded-Host still carries the client's. One that expands to ""
//     ($http_host without a Host field) keeps the client's: nginx would
//     send no Host field, which an HTTP/1.1 backend refuses.
//   - x-forwarded-prefix sets X-Forwarded-Prefix, replacing the client's;
//     one whose captures leave it empty removes it.
//   - A target or prefix that would be longer than match.MaxRewriteTarget
//     (a template repeating a capture grows with the path) answers 500
//     instead, before the location's checks, as nginx's rewrite phase comes
//     before its access phase.

// ReasonRewriteRedirect is the Record.Reason of a 302 made by a
// rewrite-target that is an absolute URL.
const ReasonRewriteRedirect = "rewrite-redirect"

// ReasonRewriteTooLong is the Record.Reason of a 500: the route's rewrite
// would build a request-target or X-Forwarded-Prefix longer than
// match.MaxRewriteTarget.
const ReasonRewriteTooLong = "rewrite-too-long"

var (
	ansRewriteRedirect = answer{http.StatusFound, ReasonRewriteRedirect, "302 Found: rewrite-target sends this path elsewhere\n"}
	ansRewriteTooLong  = answer{http.StatusInternalServerError, ReasonRewriteTooLong, "500 Internal Server Error: the rewritten request-target is too long\n"}
)

// routeAction is what the matched route's rewrite asks of one request.
type routeAction struct {
	// target is the new request-target, path and query; "" keeps the
	// client's.
	target string
	// host is the Host the backend receives; "" keeps the client's.
	host string
	// prefix is X-Forwarded-Prefix, when prefixSet: the client's is
	// replaced, and none is sent when prefix is empty, as nginx sends no
	// proxy_set_header field whose value is empty.
	prefix    string
	prefixSet bool
}

// routeActionOf works out the rewrite rw (not nil) of the location of a
// request matched to res, whose normalized path is clean and query (as
// received) query. When the rewrite
// answers the request itself, ans is that answer (status 0 otherwise) and
// location its Location: a redirect, or a 500 when what it would build is
// over match.MaxRewriteTarget. It writes nothing: decide calls it, so
// Lookup reports the answer too.
func routeActionOf(req *http.Request, res *match.Result, rw *match.Rewrite, host, clean, query, proto string) (a routeAction, ans answer, location string) {
	out := rw.Apply(res.Route, clean, query, proto, host)
	switch {
	case out.Overflow:
		return a, ansRewriteTooLong, ""
	case out.Redirect:
		return a, ansRewriteRedirect, out.Target
	}
	var hv match.HostVars
	if rw.HostVaries() {
		sent, _ := httpHost(req)
		hv = match.HostVars{Host: host, HTTPHost: sent}
	}
	return routeAction{target: out.Target, host: rw.UpstreamHost(hv), prefix: out.Prefix, prefixSet: out.PrefixSet}, ans, ""
}

// apply puts the action into the exchange: the target both upstream paths
// send, and what they set in the request head.
func (a *routeAction) apply(x *exchange) {
	x.act = *a
	if a.target != "" {
		x.path, x.query, x.hasQuery = a.target, "", false
		if p, q, ok := strings.Cut(a.target, "?"); ok {
			x.path, x.query, x.hasQuery = p, q, true
		}
	}
}

// backendHost is the Host header the backend receives: upstream-vhost's,
// else $best_http_host.
func (x *exchange) backendHost(req *http.Request) string {
	if x.act.host != "" {
		return x.act.host
	}
	return bestHost(req)
}

// replacesHeader reports a client request header the route's action sets
// itself, so the client's is not passed on.
func (a *routeAction) replacesHeader(k string) bool {
	return a.prefixSet && k == "X-Forwarded-Prefix"
}

// writeActionHeaders writes the action's headers into the fast path's
// request head.
func writeActionHeaders(hb *headBuf, x *exchange) {
	if x.act.prefix != "" {
		hb.field("X-Forwarded-Prefix", x.act.prefix)
	}
}

// setActionHeaders sets the action's Host and headers on the net/http
// path's outgoing request.
func setActionHeaders(x *exchange, out *http.Request) {
	if x.act.host != "" {
		out.Host = x.act.host
	}
	switch {
	case x.act.prefix != "":
		out.Header["X-Forwarded-Prefix"] = []string{x.act.prefix}
	case x.act.prefixSet:
		delete(out.Header, "X-Forwarded-Prefix")
	}
}
