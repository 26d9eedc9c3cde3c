package router

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match"
)

// answer is a response the router makes itself. Bodies are short, name the
// reason and never show an endpoint address.
type answer struct {
	status int
	reason string
	body   string
}

// The answers of a failed exchange with the backend (stepProxy).
var (
	ansUnreachable     = answer{http.StatusBadGateway, ReasonUpstreamUnreachable, "502 Bad Gateway: the backend could not be reached\n"}
	ansUpstreamError   = answer{http.StatusBadGateway, ReasonUpstreamError, "502 Bad Gateway: the backend failed to answer\n"}
	ansUpstreamTimeout = answer{http.StatusGatewayTimeout, ReasonUpstreamTimeout, "504 Gateway Timeout: the backend did not answer in time\n"}
)

// write sends the answer. To a gRPC client (grpc true) it is a
// trailers-only response: the HTTP status, Content-Type application/grpc,
// grpc-status and grpc-message, and no body, which is the only shape in
// which gRPC clients show the message rather than a bare HTTP status. The
// bodies are printable ASCII without '%', so grpc-message needs no
// percent-encoding.
func (a answer) write(w http.ResponseWriter, grpc bool) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	if grpc {
		msg := strings.TrimSuffix(a.body, "\n")
		if _, rest, ok := strings.Cut(msg, ": "); ok {
			msg = rest
		}
		h.Set("Content-Type", "application/grpc")
		h.Set("Grpc-Status", grpcCode(a.status))
		h.Set("Grpc-Message", msg)
		h.Set("Content-Length", "0")
		w.WriteHeader(a.status)
		return
	}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(a.body)))
	w.WriteHeader(a.status)
	_, _ = io.WriteString(w, a.body)
}

// grpcCode maps an HTTP status to a gRPC status code as gRPC's own HTTP
// mapping does.
func grpcCode(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "13" // INTERNAL
	case http.StatusUnauthorized:
		return "16" // UNAUTHENTICATED
	case http.StatusForbidden:
		return "7" // PERMISSION_DENIED
	case http.StatusNotFound:
		return "12" // UNIMPLEMENTED
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return "14" // UNAVAILABLE
	}
	return "2" // UNKNOWN
}

// ServeHTTP routes req with the serving table: decide routes it, the
// answer decorations (answerDecorations) put the router's own headers on
// whatever answers, the request steps (requestSteps) answer it when the
// table or the location's policies say so, and otherwise it is proxied to
// an endpoint of the chosen backend. Lookup reports the same decision
// without serving.
func (r *Router) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	s := requestState{w: w, req: req, grpc: isGRPC(req)}
	if r.observer != nil {
		s.start = time.Now()
	}
	r.decideTarget(&s.d, req, s.grpc, "", true) // s.d is zero
	if s.d.res.RegexTimedOut || s.d.res.RegexBudgetExceeded {
		r.regexTrouble(s.d.res, s.d.host)
	}
	live := r.live.Load()
	for _, dc := range answerDecorations {
		r.decorate(dc, &s, live)
	}
	if s.trace != nil {
		// After the compressed answer's end (deferred later, run first).
		defer r.endSpan(&s)
	}
	if s.gz != nil {
		defer s.gz.finish()
	}
	s.loc = s.d.res.Location()
	// The limit-connections ticket (stepLimits) is released on every way
	// out, panics included, once the exchange is over.
	defer func() { s.ticket.release() }()
	for i := 0; i < len(requestSteps); i++ {
		k := requestStepKinds[i]
		if k == kindNone {
			// A decided step: decide's answer, here at its place; nothing
			// else to run.
			if s.d.ans.status != 0 && s.d.at == requestSteps[i] {
				r.answerDecided(&s)
				return
			}
			continue
		}
		if r.runKind(k, &s) {
			return
		}
		if s.relocated {
			// A snippet's rewrite moved the request to another location:
			// its steps run from the start (snippet.go).
			s.relocated, i = false, -1
		}
	}
	r.forward(&s)
}

// stepProxy is the end of every request no step answered: an endpoint is
// picked and the request proxied to it. The answers that can end it are
// the backend's failures and the client's leaving (and those of the body
// streamed on its way, stepBody's).
var stepProxy = step{name: "proxy", reasons: []string{
	ReasonUpstreamUnreachable, ReasonUpstreamTimeout, ReasonUpstreamError, ReasonClientClosed,
	ReasonErrorPage, // response.go
}}

// forward proxies the request to an endpoint of the backend chosen.
func (r *Router) forward(s *requestState) {
	if len(s.upstreamEdits) > 0 {
		r.editRequest(s, s.upstreamEdits)
	}
	req, d := s.req, &s.d
	b := s.ch.backend
	// own: the exchange goes over the router's own HTTP/1.1 pools, HTTPS
	// backends' too unless backend TLS settings choose the dial.
	own := r.h1 != nil && (b.Protocol == match.HTTP || b.Protocol == match.AutoHTTP && req.TLS == nil ||
		(b.Protocol == match.HTTPS || b.Protocol == match.AutoHTTP) && s.loc.BackendTLS == nil)
	if s.cmh != nil || !own {
		// Only the HTTP/1.1 pool's request head writes a pending trace
		// context itself (tracing.go).
		s.traceHeaders()
	}
	// logged is the request the record shows: the ConfigMap's
	// proxy-set-headers are for the backend, and like nginx's
	// proxy_set_header they change neither $http_<name> nor
	// $request_length, so with an Observer they go on a copy.
	logged := req
	if s.cmh != nil {
		if r.observer != nil && len(s.cmh.proxy) > 0 {
			out := *req
			out.Header = req.Header.Clone()
			if out.Header == nil {
				out.Header = http.Header{}
			}
			req, s.req = &out, &out
		}
		s.cmh.setProxied(req.Header)
	}
	live := r.live.Load()
	// An exchange over the router's own pool ends on this goroutine
	// (serveH1), so it is taken from exchanges and given back once over:
	// the largest allocation of a request otherwise, and most of the
	// garbage collector's work under load. One handed to the reverse
	// proxy may be reached from its goroutines later, through the
	// request's context (x.ctx), and is left to the collector.
	var x *exchange
	ended := false // forward returned, not a panic (a response broken off)
	if own {
		x = exchanges.Get().(*exchange)
		if x.ids == nil {
			x.ids = newIDBlock()
		}
		// Run last, after finish and the error page.
		defer func() {
			if ended {
				ids := x.ids
				*x = exchange{}
				x.ids = ids
				exchanges.Put(x)
			}
		}()
	} else {
		x = new(exchange)
	}
	// x is zero but for its ids (new, or cleared before it went back to
	// exchanges): only the fields this request has are set, rather than the
	// whole exchange written over once more.
	x.w, x.gen, x.host, x.https, x.grpc, x.clientTLS = s.w, d.st.gen, d.host, d.proto == "https", s.grpc, req.TLS != nil
	x.backend, x.vhost, x.route, x.balancer = b, d.res.Host, d.res.Route, s.bal
	x.path, x.query, x.hasQuery = d.path, d.query, d.hasQuery
	x.reqBody, x.start, x.requestID, x.returnID, x.hsts, x.cmh = s.body, s.start, s.id, s.id != "", s.hsts, s.cmh
	x.fullForwardedFor, x.hdr, x.realIP, x.choice = live.fullForwardedFor, &live.headers, r.realIP(req), s.ch
	if s.ph.any() {
		x.added = s.ph
	}
	if req.ProtoMajor == 1 && req.ProtoMinor == 0 {
		// No informational response to HTTP/1.0, which has none (RFC 9110
		// §15.2): its client would take it for the final answer.
		x.informed = maxInformational
	}
	if s.id == "" && r.observer != nil && !live.headers.noRequestID {
		// The record names the ID the backend gets, so it is made here
		// rather than as the request head is written.
		x.requestID = requestIDOf(req)
	}
	d.act.apply(x)
	x.upstreamPolicy(r, d.pol)
	// finish releases the endpoint on every way out, panics included.
	defer r.finish(x, logged)
	if rp := s.loc.Response; rp != nil {
		// Before finish records the request: the error page's answer.
		r.startResponse(s, x, rp)
		defer r.endResponse(s, x)
	}
	if s.alt != nil {
		// The backendRef's mirrors, after the route's (Alternative.Mirrors).
		for _, m := range s.alt.Mirrors {
			r.mirror(s, m)
		}
	}
	x.key = s.bal.Key(req)
	switch k := s.bal.HashKey(); {
	case x.realIP != "" && x.key != "" && k.IsRemoteAddr():
		// nginx's $remote_addr is the client the realip rules found.
		x.key = x.realIP
	case k.Header() != "" && s.bal.Algorithm() == balance.Hash && (x.headers().underscoreNames() || k.Header() == "Host"):
		// nginx's $http_<name> reads the '_' spellings it keeps too, and
		// $http_host the Host field as sent, not an absolute-form
		// target's host.
		x.key, _ = x.headers().httpVariable(req, k.Header())
	}
	if !x.pick() {
		x.reason = ansNoEndpoints.reason
		x.answer(ansNoEndpoints)
		ended = true
		return
	}
	if p := x.proxying(); p != nil && p.RequestTimeout > 0 {
		var cancel context.CancelFunc
		req, cancel = withRequestTimeout(req, p.RequestTimeout)
		defer cancel()
	}
	if own {
		r.serveH1(x, req, s.trace)
		ended = true
		return
	}
	ctx := req.Context()
	if upgradeType(req.Header) != "" {
		// Hijack finds the tunnel in the context: the exchange has no
		// room for it.
		tun := r.tunnels.begin()
		defer r.tunnels.end(tun)
		ctx = context.WithValue(ctx, tunnelKey{}, &tunnelRef{ts: &r.tunnels, t: tun})
	}
	x.ctx = exchangeContext{Context: ctx, x: x}
	r.reverseProxy(x, req.WithContext(&x.ctx))
	if x.readErr != nil {
		// The backend broke its body off after the head went out.
		// ReverseProxy aborts only under a server that sets
		// http.ServerContextKey, which router/h1's and router/h2's do
		// not; returning would end the answer as if it were whole.
		x.cut()
	}
}

// reverseProxy proxies req through ReverseProxy. Under a server that sets
// http.ServerContextKey (net/http's) ReverseProxy aborts a body the
// backend broke off with http.ErrAbortHandler itself, which drops what the
// server still buffers, the head too for a short answer: as nginx sends
// what it read before it closes the connection, and as cut does, that is
// flushed first.
func (r *Router) reverseProxy(x *exchange, req *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				_ = http.NewResponseController(x.w).Flush()
			}
			panic(v)
		}
	}()
	r.proxy.ServeHTTP(x, req)
}

// matched is the declaration a lookup matched, for the record; nil when
// nothing matched. It points into the immutable table, so holding it costs
// a request one word.
func matched(res match.Result) *match.Source {
	switch {
	case res.Route != nil:
		return &res.Route.Source
	case res.Backend != nil:
		return &res.Host.FallbackSource
	}
	return nil
}

// recordRoute is Record.Route for src, what res matched: a fallback whose
// source names no Ingress (the global default backend) answered in a named
// host's default location, which is its creator's.
func recordRoute(src match.Source, res match.Result) match.Source {
	if h := res.Host; res.Route == nil && src.Name == "" && h != nil && h.Creator.Name != "" {
		src.Namespace, src.Name = h.Creator.Namespace, h.Creator.Name
	}
	return src
}

// refuse writes an answer a step makes without proxying.
func (r *Router) refuse(s *requestState, a answer) { r.reply(s, a, s.grpc) }

// reply writes the router's answer a, gRPC-shaped when grpc, and records
// it.
func (r *Router) reply(s *requestState, a answer, grpc bool) {
	if a.status == statusClose {
		r.closeConn(s, a)
	}
	if s.req.ProtoMajor == 1 && closesConnection(a.status) {
		s.w.Header().Set("Connection", "close")
	}
	if p := &s.ph; len(p.cookies) > 0 && (p.alwaysCookies || addHeaderStatus(a.status)) {
		// The auth service's cookie goes on the location's answers past
		// authentication, as nginx's add_header puts it on them.
		h := s.w.Header()
		h["Set-Cookie"] = append(h["Set-Cookie"], p.cookies...)
	}
	if s.ph.snippet != nil {
		// The location's snippet headers go on its every answer.
		match.ApplyResponse(s.ph.snippet.Response, s.w.Header(), a.status)
	}
	a.write(s.w, grpc)
	if r.observer == nil {
		return
	}
	rec := r.record(s)
	rec.Status, rec.Reason = a.status, a.reason
	if a.reason == ReasonRefused {
		rec.RequestLine = s.req.Method + " " + s.req.RequestURI + " " + s.req.Proto
	}
	if !grpc {
		rec.BytesOut = int64(len(a.body))
	}
	r.observe(s.w, rec)
}

// closesConnection reports an answer after which nginx closes the
// connection: ngx_http_special_response_handler turns keep-alive off for
// its own 400, 413, 414, 500 and 501 (and 495 to 497, sent as 400), error
// page or not, as router/h1 does after a head it refuses.
func closesConnection(status int) bool {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusRequestURITooLong,
		http.StatusInternalServerError, http.StatusNotImplemented:
		return true
	}
	return false
}

// closeConn ends the request as nginx's 444 does: nothing is sent and
// the client's connection (an HTTP/2 stream) is cut; the record shows 444
// and no bytes.
func (r *Router) closeConn(s *requestState, a answer) {
	if r.observer != nil {
		rec := r.record(s)
		rec.Status, rec.Reason = a.status, a.reason
		r.observer(rec)
	}
	panic(http.ErrAbortHandler)
}

// record fills in what a record knows from the decision alone.
func (r *Router) record(s *requestState) Record {
	req, d := s.req, &s.d
	rec := Record{
		Method:     req.Method,
		Host:       d.host,
		Path:       receivedTarget(req),
		Request:    req,
		RequestID:  s.id,
		ClientAddr: r.clientAddrText(req, ""),
		Start:      s.start,
		Duration:   time.Since(s.start),
	}
	if d.st != nil {
		rec.Generation = d.st.gen
	}
	if rp := s.loc.Response; rp != nil {
		rec.NoAccessLog = rp.NoAccessLog
	}
	rec.Rewritten = d.act.target
	if d.res.Host != nil {
		rec.VirtualHost = d.res.Host.Name
	}
	if d.src != nil {
		rec.Route = recordRoute(*d.src, d.res)
		rec.MatchedRoute = d.res.Route
		rec.Location, rec.StandIn = locationService(d.res)
	}
	if b := d.backend; b != nil {
		rec.Backend = b.ID
		rec.Service = declaredService(d.res, b)
	}
	return rec
}

// observe hands rec, the record of an answer written to w, to the
// Observer. A compressed answer's stream is ended first, so that BytesOut
// counts every byte the client got, as nginx's $body_bytes_sent counts
// what its gzip filter sent.
func (r *Router) observe(w http.ResponseWriter, rec Record) {
	if gw := compressed(w); gw != nil {
		gw.finish()
		rec.BytesOut = gw.sent
	}
	if rec.Status != 0 {
		// The server's own count when it keeps one (router/h1's),
		// else what the head would take.
		if hw, ok := underneath[interface{ HeadBytes() int64 }](w); ok && hw.HeadBytes() > 0 {
			rec.HeaderBytes = hw.HeadBytes()
		} else {
			rec.HeaderBytes = headBytes(rec.Status, w.Header())
		}
	}
	r.observer(rec)
}

// underneath is the first writer down w's Unwrap chain (w included) that
// is a T.
func underneath[T any](w http.ResponseWriter) (T, bool) {
	for w != nil {
		if t, ok := w.(T); ok {
			return t, true
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	var zero T
	return zero, false
}

// headBytes is the size of a response head with status and header h as
// HTTP/1.1 writes it: the status line, each field (trailers excepted), the
// Date a server adds when h has none, and the empty line.
func headBytes(status int, h http.Header) int64 {
	n := len("HTTP/1.1 000 ") + len(http.StatusText(status)) + len("\r\n")
	for k, vs := range h {
		if strings.HasPrefix(k, http.TrailerPrefix) {
			continue
		}
		for _, v := range vs {
			n += len(k) + len(": ") + len(v) + len("\r\n")
		}
	}
	if _, ok := h["Date"]; !ok {
		n += len("Date: Mon, 02 Jan 2006 15:04:05 GMT\r\n")
	}
	return int64(n + len("\r\n"))
}

// clientAddrText is ClientAddr as text for the record; realIP is the one
// already worked out for X-Real-IP ("" when not). Without trusted ranges
// it is the peer's IP, a window on RemoteAddr.
func (r *Router) clientAddrText(req *http.Request, realIP string) string {
	if len(r.live.Load().realIPFrom) == 0 {
		return peerHost(req.RemoteAddr)
	}
	if realIP == "" {
		realIP = r.realIP(req)
	}
	if realIP == "" {
		return peerHost(req.RemoteAddr)
	}
	return realIP
}

// finish ends a proxied request: it lets go of the ResponseWriter on the
// body's behalf, releases the endpoint it took and reports it.
func (r *Router) finish(x *exchange, req *http.Request) {
	x.reqBody.detach()
	if x.picked {
		x.endpoint.Release()
	}
	if x.reason == "" {
		switch {
		case x.readErr != nil:
			// The backend broke off mid-response; the client got a
			// truncated answer and a closed connection.
			x.reason = ReasonUpstreamError
		case x.writeErr != nil:
			x.reason = ReasonClientClosed
		}
	}
	if r.observer == nil {
		return
	}
	now := time.Now()
	rec := Record{
		Generation:   x.gen,
		Method:       req.Method,
		Host:         x.host,
		Path:         receivedTarget(req),
		Status:       x.status,
		Backend:      x.backend.ID,
		Reason:       x.reason,
		Tries:        int(x.tries),
		Request:      req,
		RequestID:    x.requestID,
		ClientAddr:   r.clientAddrText(req, x.realIP),
		VirtualHost:  x.vhost.Name,
		MatchedRoute: x.route,
		Start:        x.start,
		Duration:     now.Sub(x.start),
		BytesOut:     atomic.LoadInt64(&x.written), // a tunnel's copy may still count (tunnelConn)
		Rewritten:    x.act.target,
	}
	if x.picked {
		rec.Endpoint = x.endpoint.Addr
	}
	if x.passed != nil {
		rec.PassedOn = *x.passed
	}
	res := match.Result{Host: x.vhost, Route: x.route, Backend: x.backend}
	rec.Service = declaredService(res, x.backend)
	if src := matched(res); src != nil {
		rec.Route = recordRoute(*src, res)
		rec.Location, rec.StandIn = locationService(res)
	}
	if rp := res.Location().Response; rp != nil {
		rec.NoAccessLog = rp.NoAccessLog
	}
	if x.reqBody != nil {
		rec.BytesIn = x.reqBody.n.Load()
	}
	if !x.upstreamStart.IsZero() {
		rec.UpstreamTime = now.Sub(x.upstreamStart)
		rec.UpstreamConnectTime = x.connectTime
		rec.Unconnected = x.unconnected
		if x.passed != nil {
			for _, t := range *x.passed {
				rec.UpstreamConnectTime += max(t.Connect, 0)
			}
		}
		rec.UpstreamHeaderTime = x.headerAfter
		if x.headerAfter > 0 {
			// A response came: what was relayed is the backend's.
			rec.UpstreamBytes = rec.BytesOut
		}
		if rw, ok := x.w.(*responseWriter); ok && rw.page != nil {
			rec.ErrorPage, rec.UpstreamBytes = rw.page, 0
		}
	}
	r.observe(x.w, rec)
}

// exchange is one proxied request: the choice made for it and what was
// answered. It is also the ResponseWriter handed to the reverse proxy, so
// the status sent is known without a second wrapper.
type exchange struct {
	w        http.ResponseWriter
	status   int
	reason   string
	gen      uint64
	host     string
	backend  *match.Backend
	vhost    *match.VirtualHost
	route    *match.Route // nil when the fallback answered
	balancer *balance.Balancer
	endpoint balance.Endpoint
	// The flags share one word (the exchange fills an allocation size
	// class to the byte): picked, an endpoint is held; grpc, a gRPC
	// request; fullForwardedFor, Options.ComputeFullForwardedFor is in
	// effect; hasQuery, the target as received had a '?'; verbatim, the
	// outgoing URL cannot carry the target byte for byte (see
	// verbatimTransport); returnID, the request ID goes on the response;
	// hsts, setHSTS put the router's Strict-Transport-Security value first;
	// https, the client's scheme was https (clientProto), else http;
	// clientTLS, the client's own connection is TLS (nginx's $scheme);
	// unconnected, the last try opened no connection (exchangeFailed).
	picked, grpc, fullForwardedFor, hasQuery, verbatim, returnID, hsts, https, clientTLS, unconnected bool
	informed                                                                                          uint8 // informational responses relayed (see maxInformational)
	bodyFlush                                                                                         uint8 // what watchedBody flushes (see flushNone)
	// retries counts the tries a Gateway API rule's retry added
	// (retryRoute); it fills the flags' word.
	retries int32
	// tried holds every endpoint picked for this request, the current one
	// last; a retry never picks one of them again. It starts on triedBuf,
	// so up to maxTries cost no allocation.
	tried    []balance.Endpoint
	triedBuf [maxTries]balance.Endpoint
	// tries counts the endpoints picked; maxTries bounds them
	// (proxy-next-upstream-tries; negative: every endpoint once). One
	// word for both.
	tries, maxTries int32
	// passed are the tries that passed the request on, for the record
	// (nil without an Observer, or with one try): a pointer, as retries
	// are rare.
	passed *[]Try
	// timeouts bound the exchange (see upstreamPolicy).
	timeouts timeouts
	// readErr is the error that broke off the backend's response body,
	// writeErr the one that broke off the write to the client.
	readErr, writeErr error
	// body wraps the backend's response body (see modifyResponse),
	// reqBody the client's request body (nil when there is none): when an
	// exchange fails, its error says whether the client was at fault.
	body    watchedBody
	reqBody *clientBody
	// realIP is X-Real-IP when it is not the peer (see Router.realIP).
	realIP string
	// added are the response headers the route's policies set.
	added policyHeaders
	// cmh are the ConfigMap's headers (configmap_headers.go); nil: none.
	cmh *configMapHeaders
	// key is the request's hash key ("" unless the policy is Hash): a
	// window on the request's own strings but for a header sent on
	// several lines, so taking it does not allocate.
	key string
	// The request-target as received: escaped path and query.
	path, query string
	// act is the matched route's rewrite of this request (rewrite.go).
	act routeAction
	// choice is the backend chosen past its canary, and the session
	// (canary.go, affinity.go).
	choice choice

	// requestID is the X-Request-ID forwarded ("" until needed: then it
	// is made as the request head is written).
	requestID string
	// For the record (zero without an Observer): when the request came,
	// when the first try was sent, how long after it response headers
	// arrived (0: none did) and the connections took to open, in the
	// current try (passTo keeps the earlier tries'), and the response
	// body bytes written.
	start, upstreamStart     time.Time
	headerAfter, connectTime time.Duration
	written                  int64

	// ctx is the inbound request's context carrying the exchange, and
	// forwarded backs the forwarded header values: both live in this one
	// allocation (past nine values, the rare X-Original-Forwarded-Host and
	// X-Original-URI take one of their own).
	ctx       exchangeContext
	forwarded [9]string
	// hdr are the header keys' settings (headers.go).
	hdr *headerSettings
	// ids is the request ID block of an exchange of the router's own pool
	// (nil for others), kept with it from one request to the next: its IDs
	// cost no trip to idBlocks.
	ids *idBlock
}

// protocol is how the exchange's backend is dialled: its Protocol, with
// AutoHTTP resolved by the client's own connection, as nginx's
// proxy_pass $scheme:// (not the scheme a trusted X-Forwarded-Proto names).
func (x *exchange) protocol() match.Protocol {
	p := x.backend.Protocol
	if p != match.AutoHTTP {
		return p
	}
	if x.clientTLS {
		return match.HTTPS
	}
	return match.HTTP
}

// gotHeader notes that the response headers arrived.
func (x *exchange) gotHeader() {
	x.headerAfter = max(time.Since(x.upstreamStart), 1)
}

// exchangeContext answers Value(exchangeKey{}) with its exchange and
// delegates everything else, so cancellation still comes from the client.
type exchangeContext struct {
	context.Context
	x *exchange
}

func (c *exchangeContext) Value(key any) any {
	if _, ok := key.(exchangeKey); ok {
		return c.x
	}
	return c.Context.Value(key)
}

// pick moves the request to an endpoint not tried yet for it, releasing
// the one it held; false when none is left or the tries are used up.
func (x *exchange) pick() bool {
	if x.maxTries > 0 && x.tries >= x.maxTries {
		return false
	}
	if x.tried == nil {
		x.tried = x.triedBuf[:0]
	}
	e, ok := x.pickEndpoint(x.tried)
	if !ok {
		return false
	}
	if x.picked {
		x.endpoint.Release()
	}
	x.endpoint, x.picked = e, true
	x.tried = append(x.tried, e)
	x.tries++
	return true
}

func (x *exchange) Header() http.Header { return x.w.Header() }

func (x *exchange) WriteHeader(code int) {
	// 1xx other than 101 are informational and precede the final status.
	if code < 200 && code != http.StatusSwitchingProtocols {
		if x.informed >= maxInformational {
			return // ReverseProxy relays every one the backend sends
		}
		x.informed++
	}
	if (code >= 200 || code == http.StatusSwitchingProtocols) && x.status == 0 {
		x.status = code
		if x.returnID {
			// Over whatever the backend sent: the client gets the ID the
			// router logged and forwarded.
			x.w.Header()["X-Request-Id"] = []string{x.requestID}
		}
		if x.hsts {
			keepHSTS(x.w.Header())
		}
		if x.cmh != nil {
			x.cmh.setAdded(x.w.Header())
		}
		// The location's headers (CORS, snippets) after the ConfigMap's:
		// headers-more runs the http level's more_set_headers first
		// (configmap_headers.go).
		if x.added.any() {
			x.added.apply(x.w.Header(), code)
		}
	}
	x.w.WriteHeader(code)
}

func (x *exchange) Write(p []byte) (int, error) {
	if x.status == 0 {
		x.status = http.StatusOK
	}
	n, err := x.w.Write(p)
	x.written += int64(n)
	if err != nil && x.writeErr == nil {
		x.writeErr = err
	}
	return n, err
}

// FlushError and Unwrap let http.ResponseController reach the connection
// (streaming flushes, Upgrade hijacks) through the exchange.
func (x *exchange) FlushError() error {
	return http.NewResponseController(x.w).Flush()
}

func (x *exchange) Unwrap() http.ResponseWriter { return x.w }

// Hijack is used by ReverseProxy only to tunnel an Upgrade after the
// backend answered 101, which it then writes on the hijacked connection
// itself rather than through WriteHeader.
func (x *exchange) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := x.hijack()
	if err != nil {
		return nil, nil, err
	}
	if x.ctx.Context != nil {
		if ref, _ := x.ctx.Value(tunnelKey{}).(*tunnelRef); ref != nil {
			ref.ts.hold(ref.t, c)
		}
	}
	// What the backend sends through the tunnel is the response's body to
	// nginx ($body_bytes_sent), as serveH1's tunnel counts it. Closing
	// the client's end when idle ends ReverseProxy's copies, and it
	// closes the backend's.
	return &tunnelConn{Conn: c, x: x, idle: watchIdle(x.timeouts.read, func() { _ = c.Close() })}, rw, nil
}

// hijack takes the client's connection for a tunnel, as Hijack without
// the count: serveH1 counts its own copy.
func (x *exchange) hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(x.w).Hijack()
	if err == nil && x.status == 0 {
		x.status = http.StatusSwitchingProtocols
	}
	return c, rw, err
}

// tunnelConn is the client's side of a tunnel ReverseProxy copies the
// backend's bytes to. The copy may outlive ServeHTTP by a moment (when the
// other direction failed first), so the count is added atomically.
type tunnelConn struct {
	net.Conn
	x    *exchange
	idle *tunnelIdle // bytes either way pass through this end
}

func (c *tunnelConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && c.idle != nil {
		c.idle.passed()
	}
	return n, err
}

func (c *tunnelConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	atomic.AddInt64(&c.x.written, int64(n))
	if n > 0 && c.idle != nil {
		c.idle.passed()
	}
	return n, err
}

func (c *tunnelConn) Close() error {
	c.idle.stop()
	return c.Conn.Close()
}

// CloseWrite passes the backend's end of the stream on, as ReverseProxy
// does on a connection that can half-close.
func (c *tunnelConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

// requestTarget splits the request-target as received into its escaped
// path and query. Origin form ("/p?q") and absolute form
// ("http://h/p?q") are accepted; anything else ("*", authority form, a
// '#' in an absolute form's authority) is not.
func requestTarget(req *http.Request) (path, query string, hasQuery, ok bool) {
	t := req.RequestURI
	if t == "" {
		// Built in process rather than read from the wire.
		if req.URL == nil {
			return "", "", false, false
		}
		path = req.URL.EscapedPath()
		if path == "" {
			path = "/"
		}
		return path, req.URL.RawQuery, req.URL.ForceQuery || req.URL.RawQuery != "", strings.HasPrefix(path, "/")
	}
	if t[0] != '/' {
		i := strings.Index(t, "://")
		if i <= 0 {
			return "", "", false, false
		}
		rest := t[i+3:]
		j := strings.IndexAny(rest, "/?#")
		if j < 0 {
			j = len(rest)
		}
		if strings.IndexByte(rest[:j], '@') >= 0 {
			// Userinfo in a request-target is never legitimate (RFC 9110
			// §4.2.4), and backends disagree on which host it names.
			return "", "", false, false
		}
		if j < len(rest) && rest[j] == '#' {
			// nginx's parser takes no '#' in the host or port (400), as
			// net/http and router/h1 refuse it on the wire.
			return "", "", false, false
		}
		if j == len(rest) {
			return "/", "", false, true
		}
		t = rest[j:]
		if t[0] != '/' {
			t = "/" + t
		}
	}
	// HTTP/1 never delivers a space or control byte in a target, but an
	// HTTP/2 :path may carry spaces; copied into the backend's request line
	// they would let the client write its own request line there.
	if hasCTLOrSpace(t) {
		return "", "", false, false
	}
	path, query, hasQuery = strings.Cut(t, "?")
	return path, query, hasQuery, true
}

// hasUserinfo reports an absolute-form target whose authority holds '@'.
func hasUserinfo(target string) bool {
	i := strings.Index(target, "://")
	if i <= 0 || target[0] == '/' {
		return false
	}
	rest := target[i+3:]
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		rest = rest[:j]
	}
	return strings.IndexByte(rest, '@') >= 0
}

// beforeFragment is the part of an escaped path that routing looks at: a
// '#' ends the path, as in nginx and in every common backend's parser, so
// "/admin#x" is routed, redirected and exempted as "/admin" (SPEC §13).
// The backend still receives the target byte for byte.
func beforeFragment(path string) string {
	if i := strings.IndexByte(path, '#'); i >= 0 {
		return path[:i]
	}
	return path
}

// receivedTarget is the request-target for records.
func receivedTarget(req *http.Request) string {
	if req.RequestURI != "" {
		return req.RequestURI
	}
	if req.URL != nil {
		return req.URL.RequestURI()
	}
	return ""
}

// isGRPC reports a gRPC request: Content-Type application/grpc, alone or
// followed by "+codec" or parameters. gRPC-Web ("application/grpc-web") is
// plain HTTP and is not.
func isGRPC(req *http.Request) bool {
	v := req.Header["Content-Type"]
	if len(v) == 0 {
		return false
	}
	const p = "application/grpc"
	ct := v[0]
	if len(ct) < len(p) || !strings.EqualFold(ct[:len(p)], p) {
		return false
	}
	return len(ct) == len(p) || ct[len(p)] == '+' || ct[len(p)] == ';'
}
