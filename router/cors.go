package router

import (
	"net/http"

	"ramjet.dev/ramjet/match"
)

// ReasonCORSPreflight is the Record.Reason of the 204 answering a CORS
// preflight the route's policy allows.
const ReasonCORSPreflight = "cors-preflight"

// ReasonCORSPreflightDenied is the Record.Reason of the 204 without CORS
// headers answering a preflight whose Origin a Gateway API CORS filter
// does not allow (match.CORS.Gateway).
const ReasonCORSPreflightDenied = "cors-preflight-denied"

// stepPreflight applies the location's CORS policy (serveCORS).
var stepPreflight = step{name: "cors preflight", kind: kindPreflight, reasons: []string{ReasonCORSPreflight, ReasonCORSPreflightDenied}}

// policyHeaders are the response headers a route's policies add to a
// proxied answer: the CORS headers, which replace any the backend sent
// (nginx's more_set_headers), and the auth service's Set-Cookie.
type policyHeaders struct {
	cors   *match.CORS
	origin []string
	// cookies are the auth service's Set-Cookie values; alwaysCookies
	// sends them whatever the status.
	cookies       []string
	alwaysCookies bool
	// snippet holds the snippet's response header edits (snippet.go),
	// then those of the weighted backend chosen (split.go).
	snippet *match.SnippetResult
}

// any reports whether p holds anything to apply.
func (p *policyHeaders) any() bool {
	return p.cors != nil || p.origin != nil || p.cookies != nil || p.alwaysCookies || p.snippet != nil
}

// apply sets the headers on h for a final answer with status.
func (p *policyHeaders) apply(h http.Header, status int) {
	if p.cors != nil {
		p.cors.SetHeaders(h, p.origin)
	}
	if len(p.cookies) > 0 && (p.alwaysCookies || addHeaderStatus(status)) {
		h["Set-Cookie"] = append(h["Set-Cookie"], p.cookies...)
	}
	if p.snippet != nil {
		match.ApplyResponse(p.snippet.Response, h, status)
	}
}

// addHeaderStatus reports the statuses nginx's add_header applies to.
func addHeaderStatus(status int) bool {
	switch status {
	case 200, 201, 204, 206, 301, 302, 303, 304, 307, 308:
		return true
	}
	return false
}

var preflightLength = []string{"0"}

// serveCORS applies the location's CORS policy (SPEC §6, §11.6): a request
// whose Origin the policy allows gets the CORS headers on whatever answers
// it, so they are set now, before anything else can answer; an OPTIONS
// request that qualifies is the preflight and is answered here with 204,
// before the TLS redirect and authentication, as ingress-nginx answers it
// in its rewrite phase. It reports whether it answered.
func (r *Router) serveCORS(s *requestState) bool {
	c := s.loc.CORS
	if c == nil {
		return false
	}
	req := s.req
	origin := req.Header["Origin"]
	first := ""
	if len(origin) > 0 {
		first = origin[0]
	}
	if c.Gateway {
		return r.serveGatewayCORS(s, c, origin, first)
	}
	if !c.Allows(first) {
		return false
	}
	s.ph.cors, s.ph.origin = c, origin
	h := s.w.Header()
	c.SetHeaders(h, origin)
	if req.Method != http.MethodOptions {
		return false
	}
	r.answerPreflight(s, ReasonCORSPreflight)
	return true
}

// serveGatewayCORS is serveCORS for a Gateway API CORS filter (the
// Gateway form of match.CORS): a preflight, an OPTIONS request with an
// Origin and an Access-Control-Request-Method, is answered 204 here, with
// the CORS headers only when the origin is allowed; any other request
// from an allowed origin goes on with the headers set for its answer.
func (r *Router) serveGatewayCORS(s *requestState, c *match.CORS, origin []string, first string) bool {
	req := s.req
	method := req.Header["Access-Control-Request-Method"]
	allowed := c.Allows(first)
	if req.Method != http.MethodOptions || first == "" || len(method) == 0 {
		if allowed {
			s.ph.cors, s.ph.origin = c, origin
			c.SetHeaders(s.w.Header(), origin)
		}
		return false
	}
	reason := ReasonCORSPreflightDenied
	if allowed {
		c.SetPreflightHeaders(s.w.Header(), origin, method, req.Header["Access-Control-Request-Headers"])
		reason = ReasonCORSPreflight
	}
	r.answerPreflight(s, reason)
	return true
}

// clearCORSHeaders removes the headers match.CORS.SetHeaders sets.
func clearCORSHeaders(h http.Header) {
	for _, k := range [...]string{"Access-Control-Allow-Origin", "Access-Control-Allow-Credentials", "Access-Control-Allow-Methods",
		"Access-Control-Allow-Headers", "Access-Control-Expose-Headers", "Access-Control-Max-Age"} {
		delete(h, k)
	}
}

// answerPreflight writes the empty 204 answering a preflight, without a
// Content-Type: ingress-nginx's template sets one, but nginx's header
// filter clears the content type of every 204.
func (r *Router) answerPreflight(s *requestState, reason string) {
	h := s.w.Header()
	h["Content-Length"] = preflightLength
	s.w.WriteHeader(http.StatusNoContent)
	if r.observer != nil {
		if s.d.backend == nil {
			s.d.backend = s.d.res.Backend
		}
		rec := r.record(s)
		rec.Status, rec.Reason = http.StatusNoContent, reason
		r.observe(s.w, rec)
	}
}
