package router

import (
	"errors"
	"net/http"
	"strings"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/match/vars"
	"ramjet.dev/ramjet/router/h1"
)

// Match is what the serving table chose for a request: handed to
// Options.Hook, and part of a Decision.
type Match struct {
	// Generation and Table are the serving state the request was looked up
	// in (0 and nil before the first Publish); the request is proxied with
	// this same table.
	Generation uint64
	Table      *match.Table
	// VirtualHost is the chosen virtual host; nil when the request was
	// refused before the lookup (no table, a malformed target).
	VirtualHost *match.VirtualHost
	// Route is the route that matched; nil when the virtual host's
	// fallback answered or nothing matched.
	Route *match.Route
	// Backend is the route's or fallback's backend; nil when none, and in
	// a Decision when the router answers before choosing one (the HTTPS
	// redirect).
	Backend *match.Backend
}

// Source is the declaration that matched: the route's, else the fallback's.
func (m Match) Source() match.Source {
	switch {
	case m.Route != nil:
		return m.Route.Source
	case m.VirtualHost != nil && m.VirtualHost.Fallback != nil:
		return m.VirtualHost.FallbackSource
	}
	return match.Source{}
}

// Extensions are the embedder's annotations of the location that
// matched: the route's, else the fallback's (match.Location.Extensions);
// nil when it has none.
func (m Match) Extensions() *match.Extensions {
	switch {
	case m.Route != nil:
		return m.Route.Extensions
	case m.VirtualHost != nil && m.VirtualHost.Fallback != nil:
		return m.VirtualHost.FallbackLocation.Extensions
	}
	return nil
}

// Decision is what ServeHTTP does with a request, as Lookup reports it.
type Decision struct {
	Match
	// Host is the request's host as routed: no port, lower case, no
	// trailing dot.
	Host string
	// Declaration is what the request matched, as Record.Route names it:
	// the route's Source, the fallback's (on a named host, with its
	// creator's Ingress when the fallback names none), or zero when
	// nothing matched (or a from-to-www-redirect twin answered, a server
	// of its own).
	Declaration match.Source
	// Status and Reason are the answer the router makes itself (see the
	// Reason constants); Status 0 means the request is proxied to
	// Match.Backend. Location is the redirect target of a 308.
	Status   int
	Reason   string
	Location string
	// Canary is the backend's canary (SPEC §10), nil when it has none: a
	// proxied request goes there instead when the canary's rules choose
	// it. They are applied when serving, since the weight rotation moves
	// with every request it decides.
	Canary *match.Backend
	// Shares are a proxied request's route's weighted backends
	// (match.Split), each with the answer serving makes when the rotation
	// chooses it (see Share); nil without a split.
	Shares []Share
	// Target is the request-target the location was chosen for when a
	// snippet's rewrite moved the request to another location (see
	// relocate), "" when none did.
	Target string
}

// Proxied reports that the request goes to a backend rather than being
// answered by the router.
func (d Decision) Proxied() bool { return d.Status == 0 }

// Lookup reports what ServeHTTP would do with req against the serving
// table, without serving it: the same code decides both. The request
// steps that only serving runs are not part of it, and a Decision may
// still end in one of their answers (Decision.LeavesToServing reads them
// from the steps' declarations): the location's rate limits and source
// ranges, which count requests, its CORS preflight and authentication,
// which may ask a service, Options.Hook, the canary's choice (see
// Decision.Canary), a route's weighted choice among its backends
// (match.Split: Backend is then its first valid one, and Decision.Shares
// says what each choice answers), the request body, and the backend's
// answer.
func (r *Router) Lookup(req *http.Request) Decision {
	grpc := isGRPC(req)
	d, target := r.followRewrites(req, grpc, r.decide(req, grpc))
	out := Decision{Host: d.host, Status: d.ans.status, Reason: d.ans.reason, Location: d.location, Target: target}
	if d.src != nil {
		out.Declaration = recordRoute(*d.src, d.res)
	}
	if d.st != nil {
		out.Generation, out.Table = d.st.gen, d.st.table
		out.VirtualHost, out.Route, out.Backend = d.res.Host, d.res.Route, d.backend
		if b := d.backend; b != nil && b.Traffic != nil && b.Traffic.Canary != nil {
			out.Canary = b.Traffic.Canary.Backend
		}
	}
	out.Shares = d.splitShares(grpc)
	return out
}

// decision is the outcome of routing one request: shared by ServeHTTP and
// Lookup so that the two cannot disagree.
type decision struct {
	st   *serving
	host string
	res  match.Result
	// The request-target as received: escaped path, query, and whether a
	// '?' was present.
	path, query string
	hasQuery    bool
	proto       string // the client's scheme (see clientProto)
	// ans is the router's own answer (status 0: proxy); location the
	// redirect target; plain that the answer is never gRPC-shaped.
	ans      answer
	location string
	plain    bool
	// src is the declaration matched, for the record; nil when none, or
	// when a www twin's redirect answers (a server of its own).
	src *match.Source
	// backend is the backend to name in the record: the chosen one once
	// the redirects are ruled out.
	backend *match.Backend
	bal     *balance.Balancer
	// at is the request step that writes ans (one of the decided steps):
	// decide moves it on as it gets past each stage, so an answer made
	// before the location is written before the location's CORS, and one
	// made past its rate limits and source ranges (pol) after them.
	at *step
	// pol is the location's request policy, act the route's rewrite.
	pol *match.Policy
	act routeAction
}

// stepDecide declares the answers decide makes, which Lookup reports:
// the steps below write them, each at its place in requestSteps.
var stepDecide = step{name: "decide", decided: true, reasons: []string{
	ReasonNoTable, ReasonBadHost, ReasonBadPath, ReasonRefused, ReasonBlocked, // a request not routed
	ReasonWWWRedirect, ReasonAppRoot, ReasonRedirect, // redirect_action.go
	ReasonLocationDenied, ReasonAuthDenied, ReasonBackendTLSDenied, ReasonHeadersDenied, // stepDenied
	ReasonRewriteRedirect, ReasonRewriteTooLong, // rewrite.go
	ReasonSSLRedirect, ReasonNoRoute, ReasonRegexBudget,
	ReasonServiceNotFound, ReasonPortNotFound, ReasonExternalName, ReasonGRPCNotEnabled, ReasonNoEndpoints, // backendFor
	ReasonNoValidBackend, // split.go
}}

// The request steps that write decide's answer (see decision.at).
var (
	// stepUnlocated: no table, a request that cannot be routed, and the
	// server-level redirects (the www twin's, app-root's): they come
	// before the location, so its CORS headers are not added.
	stepUnlocated = step{name: "unlocated answer", decided: true}
	// stepLocated: a route's permanent- or temporal-redirect, the
	// rewrite's redirect or refusal and the HTTPS redirect, past the CORS
	// preflight and the snippet and before the rate limits.
	stepLocated = step{name: "located answer", decided: true}
	// stepUnavailable: the backend has no ready endpoints, or no Service,
	// port or proxiable address (503), past Options.Hook and before the
	// location's rate limits, source ranges and authentication: nginx
	// answers it in the location's rewrite phase, where ingress-nginx's
	// balancer.rewrite() exits 503 for an upstream it holds no balancer
	// for (rootfs/etc/nginx/lua/balancer.lua), before limit_req (preaccess)
	// and allow/deny, auth_basic and auth_request (access).
	stepUnavailable = step{name: "unavailable backend", decided: true}
	// stepNoBackend: nothing matched (404), past authentication.
	stepNoBackend = step{name: "no backend", decided: true}
	// stepPending: the backend does not speak gRPC (backendFor), past
	// authentication, where nginx would proxy the request.
	stepPending = step{name: "pending answer", decided: true}
)

// answerDecided writes the router's own answer that decide made; it
// answers.
func (r *Router) answerDecided(s *requestState) bool {
	if s.d.location != "" {
		s.w.Header().Set("Location", s.d.location)
	}
	r.reply(s, s.d.ans, s.grpc && !s.d.plain)
	return true
}

var (
	ansNoTable     = answer{http.StatusServiceUnavailable, ReasonNoTable, "503 Service Unavailable: no routing table yet\n"}
	ansBadTarget   = answer{http.StatusBadRequest, ReasonBadPath, "400 Bad Request: the request-target is not an absolute path\n"}
	ansTargetBytes = answer{http.StatusBadRequest, ReasonBadPath, "400 Bad Request: the request-target contains a space or control character\n"}
	ansBadEscape   = answer{http.StatusBadRequest, ReasonBadPath, "400 Bad Request: malformed percent-encoding in path\n"}
	ansPathClimbs  = answer{http.StatusBadRequest, ReasonBadPath, "400 Bad Request: path climbs above /\n"}
	ansPathNUL     = answer{http.StatusBadRequest, ReasonBadPath, "400 Bad Request: decoded NUL in path\n"}
	ansUserinfo    = answer{http.StatusBadRequest, ReasonBadPath, "400 Bad Request: the request-target carries userinfo\n"}
	ansNoHost      = answer{http.StatusBadRequest, ReasonBadHost, "400 Bad Request: the request has no Host\n"}
	// What nginx refuses once it has read a head, before any location,
	// and router/h1 refuses with it (Refused): answered here for the
	// servers that pass such a request on (net/http's, router/h2), with
	// the loop's bodies, so that $body_bytes_sent is the same.
	ansBadMethod       = answer{http.StatusBadRequest, ReasonRefused, "400 Bad Request: invalid method"}
	ansAsterisk        = answer{http.StatusBadRequest, ReasonRefused, "400 Bad Request: invalid request target"}
	ansDuplicate       = answer{http.StatusBadRequest, ReasonRefused, "400 Bad Request: duplicate header line"}
	ansTraceRefused    = answer{http.StatusMethodNotAllowed, ReasonRefused, "405 Not Allowed\n"}
	ansNoRoute         = answer{http.StatusNotFound, ReasonNoRoute, "404 Not Found: no route for this host and path\n"}
	ansRegexBudget     = answer{http.StatusNotFound, ReasonRegexBudget, "404 Not Found: no route for this host and path within the match budget\n"}
	ansNoEndpoints     = answer{http.StatusServiceUnavailable, ReasonNoEndpoints, "503 Service Unavailable: the backend has no ready endpoints\n"}
	ansServiceNotFound = answer{http.StatusServiceUnavailable, ReasonServiceNotFound, "503 Service Unavailable: the backend Service does not exist\n"}
	ansPortNotFound    = answer{http.StatusServiceUnavailable, ReasonPortNotFound, "503 Service Unavailable: the backend Service has no such port\n"}
	ansExternalName    = answer{http.StatusServiceUnavailable, ReasonExternalName, "503 Service Unavailable: the backend is an ExternalName Service, which is not proxied\n"}
	ansGRPCNotEnabled  = answer{http.StatusBadGateway, ReasonGRPCNotEnabled,
		"502 Bad Gateway: gRPC request to a backend not marked for gRPC; set the annotation nginx.ingress.kubernetes.io/backend-protocol: GRPC (or GRPCS) on the Ingress\n"}
)

// decide routes req with the serving table: the router's own answer, or
// the backend and balancer to proxy to. It has no side effects.
func (r *Router) decide(req *http.Request, grpc bool) (d decision) {
	r.decideTarget(&d, req, grpc, "", true)
	return d
}

// decideTarget is decide into d, which is zero, for target, an escaped
// path and query that replaces the request's own ("" keeps it): a URI a
// snippet rewrote, which nginx searches the location for again
// (snippet.go). serverPhase: the server block's rewrite phase (app-root)
// runs for it, as it does for a request and after a server-snippet's
// rewrite, but not after a location's. Filling the caller's decision in
// place spares a request the copy of a returned one (ServeHTTP's is in
// its requestState).
func (r *Router) decideTarget(d *decision, req *http.Request, grpc bool, target string, serverPhase bool) {
	d.at = &stepUnlocated
	d.host = match.NormalizeHost(req.Host)
	st := r.state.Load()
	if st == nil {
		d.ans = ansNoTable
		return
	}
	d.st = st
	if !validMethod(req.Method) {
		d.ans = ansBadMethod
		return
	}
	if req.RequestURI == "*" {
		// nginx reads a path or an absolute URI only (OPTIONS *: "client
		// sent invalid request"), as router/h1 does.
		d.ans = ansAsterisk
		return
	}
	if duplicateField(req.Header) {
		d.ans = ansDuplicate
		return
	}
	if req.Host == "" && req.ProtoAtLeast(1, 1) {
		// HTTP/1.1 requires a Host, HTTP/2 an :authority (or Host); without
		// one the backend would see its own address as the Host. nginx
		// answers 400; HTTP/1.0 may omit it and gets the catch-all.
		d.ans = ansNoHost
		return
	}
	if req.Host != "" && !validHost(req.Host) {
		d.ans = ansMalformedHost
		return
	}
	if req.ProtoMajor == 2 && !hostAgrees(req) {
		d.ans = ansHostDisagrees
		return
	}
	ok := true
	if target == "" {
		d.path, d.query, d.hasQuery, ok = requestTarget(req)
	} else {
		d.path, d.query, d.hasQuery = target, "", false
		if p, q, found := strings.Cut(target, "?"); found {
			d.path, d.query, d.hasQuery = p, q, true
		}
	}
	if !ok {
		d.ans = ansBadTarget
		switch {
		case hasCTLOrSpace(req.RequestURI):
			d.ans = ansTargetBytes
		case hasUserinfo(req.RequestURI):
			d.ans = ansUserinfo
		}
		return
	}
	clean, err := match.NormalizePath(beforeFragment(d.path))
	if err != nil {
		d.ans = ansBadTarget
		switch {
		case errors.Is(err, match.ErrBadEscape):
			d.ans = ansBadEscape
		case errors.Is(err, match.ErrPathClimbs):
			d.ans = ansPathClimbs
		case errors.Is(err, match.ErrNUL):
			d.ans = ansPathNUL
		}
		return
	}
	if req.Method == "TRACE" {
		// nginx answers it once the head is read
		// (ngx_http_process_request_header), as router/h1 does: a backend
		// may echo the request back, credentials and cookies included.
		d.ans = ansTraceRefused
		return
	}
	if target == "" && r.live.Load().blocked(req.Header) {
		// The server's "if ($block_ua) { return 403; }", which
		// ingress-nginx writes first in every server (nginx.tmpl).
		d.ans = ansBlocked
		return
	}
	if st.table.HasListeners() {
		l := r.listenerOf(req)
		if req.TLS != nil && st.table.Misdirected(l, match.NormalizeHost(req.TLS.ServerName), d.host) {
			d.ans = ansMisdirected
			return
		}
		d.res = st.table.LookupOn(l, d.host, clean, &match.Request{Method: req.Method, Header: req.Header, Query: d.query, Host: req.Host})
	} else {
		d.res = st.table.LookupRequest(d.host, clean, &match.Request{Method: req.Method, Header: req.Header, Query: d.query, Host: req.Host})
	}
	d.src = matched(d.res)
	d.proto = r.clientProto(req)
	redirect, redirectTo, unrouted, redirected := r.redirectAction(req, d.res, d.host, d.path, d.query, d.hasQuery, clean, serverPhase)
	if redirected && redirect.reason != ReasonRedirect {
		// The www twin's and app-root's, from the server block.
		d.ans, d.location, d.plain = redirect, redirectTo, true
		if unrouted {
			d.src = nil
		}
		return
	}
	// From here on the answer is the location's. A denied location
	// answers before anything else of it; past that its CORS headers
	// apply.
	loc := d.res.Location()
	if a, denied := deniedAnswer(&loc); denied {
		d.at, d.ans, d.backend = &stepDenied, a, d.res.Backend
		return
	}
	d.at = &stepLocated
	if redirected {
		// permanent- or temporal-redirect: the location's "return", past
		// its CORS preflight and snippet, before its rewrite and the
		// HTTPS redirect.
		d.ans, d.location, d.plain = redirect, redirectTo, true
		return
	}
	if loc.Rewrite != nil {
		if d.act, d.ans, d.location = routeActionOf(req, &d.res, loc.Rewrite, d.host, clean, d.query, d.proto); d.ans.status != 0 {
			d.plain = d.location != ""
			return
		}
	}
	if d.proto == "http" && redirects(d.res, clean, st.table, d.host, r.live.Load().noTLSRedirect) {
		d.plain = true
		path, query, hasQuery := d.path, d.query, d.hasQuery
		if target != "" {
			// nginx redirects to $request_uri, which no rewrite changes.
			path, query, hasQuery, _ = requestTarget(req)
		}
		if strings.HasPrefix(vars.RequestURIOf(req.RequestURI), "?") {
			// "http://h?q": its $request_uri, which lua_ingress.lua
			// appends to the host, has no path.
			path = ""
		}
		preserveSlash, usePort := redirectForm(d.res)
		port := ""
		if usePort {
			port = r.httpsPort
		}
		to, ok := httpsLocation(r.redirectHost(req), port, path, query, hasQuery, preserveSlash)
		if !ok {
			d.ans = ansNoHostToTLS
			return
		}
		d.location, d.ans = to, r.live.Load().ansSSLRedirect
		return
	}
	// Answers from here on come after the location's rate limits, source
	// ranges and authentication (stepLimits, stepAuth: only serving
	// applies them), but for the backend's 503 (stepUnavailable).
	d.at = &stepNoBackend
	d.pol = loc.Policy
	b := d.res.Backend
	split := d.res.Route != nil && d.res.Route.Split != nil
	if b == nil {
		d.ans = ansNoRoute
		switch {
		case split:
			d.ans = ansNoValidBackend
		case d.res.RegexBudgetExceeded:
			d.ans = ansRegexBudget
		}
		return
	}
	d.backend = b
	d.at = &stepPending
	if split {
		// The weighted choice is made when serving (splitRequest), which
		// checks the backend it chose.
		return
	}
	d.bal, d.ans = st.backendFor(b, grpc)
	if d.ans.status == http.StatusServiceUnavailable {
		d.at = &stepUnavailable
	}
}

// backendFor is the balancer of backend b for a request (grpc: a gRPC
// one), or the answer when b cannot take it: it cannot be proxied to, it
// does not speak gRPC, or it has no ready endpoints. decide asks it of the
// primary, stepSteer of the canary it chose instead.
func (st *serving) backendFor(b *match.Backend, grpc bool) (*balance.Balancer, answer) {
	if a, refused := backendRefusal(b); refused {
		return nil, a
	}
	if grpc && b.Protocol != match.GRPC && b.Protocol != match.GRPCS {
		return nil, ansGRPCNotEnabled
	}
	bal := st.balancers[b]
	if bal == nil {
		return nil, ansNoEndpoints
	}
	return bal, answer{}
}

// backendRefusal is the answer for a backend that cannot be proxied to.
func backendRefusal(b *match.Backend) (answer, bool) {
	switch b.State {
	case match.Serving:
		if len(b.Endpoints) == 0 {
			return ansNoEndpoints, true
		}
		return answer{}, false
	case match.ServiceNotFound:
		return ansServiceNotFound, true
	case match.PortNotFound:
		return ansPortNotFound, true
	case match.ExternalName:
		return ansExternalName, true
	}
	return ansNoEndpoints, true
}

// ansMalformedHost answers a Host (or HTTP/2 :authority) nginx refuses.
var ansMalformedHost = answer{http.StatusBadRequest, ReasonBadHost, "400 Bad Request: the Host is malformed\n"}

var ansHostDisagrees = answer{http.StatusBadRequest, ReasonBadHost, "400 Bad Request: the Host field disagrees with :authority\n"}

// hostAgrees reports an HTTP/2 request without a Host field, or with one
// naming the host it is routed by: net/http's HTTP/2 server routes by
// :authority and leaves a Host field beside it, which RFC 9113 §8.3.1
// makes the request malformed when it differs (nginx answers 400, and so
// does router/h2 itself), as it would be routed elsewhere by a proxy reading
// Host.
func hostAgrees(req *http.Request) bool {
	h := req.Header["Host"]
	return len(h) == 0 || len(h) == 1 && strings.EqualFold(h[0], req.Host)
}

// hostByte are the bytes net/http's HTTP/1 server accepts in a Host
// (httpguts.ValidHostHeader): those of a URI's reg-name, IP literal and
// port. Its HTTP/2 server does not check :authority the same way.
var hostByte = func() (t [256]bool) {
	for _, c := range []byte("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!$%&'()*+,-.:;=[]_~") {
		t[c] = true
	}
	return t
}()

// Classes of Host bytes for validHost: one table load per byte, and most
// bytes are hostPlain.
const (
	hostRefused = iota
	hostPlain
	hostDot
	hostColon
	hostOpen
	hostClose
)

var hostClass = func() (t [256]uint8) {
	for c, ok := range hostByte {
		if ok {
			t[c] = hostPlain
		}
	}
	t['.'], t[':'], t['['], t[']'] = hostDot, hostColon, hostOpen, hostClose
	return t
}()

// validMethod reports a method as nginx reads one, in a request line and
// in an HTTP/2 :method alike (h1.NginxMethod): net/http's servers and
// router/h2 pass any token ("get", which a backend may take for GET past
// a rule on GET), and net/http's HTTP/2 server one with spaces, which the
// router would copy into an HTTP/1 backend's request line.
func validMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodPost, http.MethodHead:
		return true
	}
	return h1.NginxMethod(m)
}

// duplicateField reports a field nginx takes once sent twice
// (h1.UniqueField, and Host): a backend may take the other value than the
// router did, say the other Authorization or Content-Length. Over HTTP/1
// router/h1 and net/http's server refuse two Content-Lengths or Hosts
// first, but net/http passes the rest on, as its HTTP/2 server passes
// them all (router/h2 refuses them itself).
func duplicateField(h http.Header) bool {
	for k, vs := range h {
		if len(vs) > 1 && (k == "Host" || h1.UniqueField(k)) {
			return true
		}
	}
	return false
}

// validHost reports whether a request's Host is one both nginx
// (ngx_http_validate_host) and net/http's HTTP/1 server accept, whatever
// the protocol it came by: only hostByte bytes (no space, TAB, '/', '?',
// '#', '\'), no empty label ("h.test.."), and a host before the port that
// is not empty once one trailing dot is dropped (":80", an unbracketed
// "::1", ".").
func validHost(h string) bool {
	const (
		usual = iota
		literal
		rest
	)
	state, hostLen, lastDot := usual, len(h), -2
	for i := 0; i < len(h); i++ {
		k := hostClass[h[i]]
		for k == hostPlain && i+1 < len(h) {
			i++
			k = hostClass[h[i]]
		}
		switch k {
		case hostRefused:
			return false
		case hostDot:
			if lastDot == i-1 {
				return false
			}
			lastDot = i
		case hostColon:
			if state == usual {
				hostLen, state = i, rest
			}
		case hostOpen:
			if i == 0 {
				state = literal
			}
		case hostClose:
			if state == literal {
				hostLen, state = i+1, rest
			}
		}
	}
	if lastDot == hostLen-1 {
		hostLen--
	}
	return hostLen > 0
}
