package router

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"time"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/h1"
)

// A location's Response (SPEC §11 "Also served"): its error pages
// (custom-http-errors), its response bandwidth (limit-rate) and its mirror
// (mirror-target) are served around the exchange with the backend, from
// forward; a location without them costs forward one nil check.

// ReasonErrorPage is the Record.Reason of an answer the router made in
// place of an intercepted status (custom-http-errors) because the error
// backend could not give one: 404 when there is no default backend or it
// has no endpoints (as ingress-nginx's built-in one then answers), 504
// when it did not answer in time, 502 when it failed otherwise.
const ReasonErrorPage = "error-page"

var (
	ansErrorPageNone    = answer{http.StatusNotFound, ReasonErrorPage, "404 Not Found: default backend - 404\n"}
	ansErrorPageFailed  = answer{http.StatusBadGateway, ReasonErrorPage, "502 Bad Gateway: the default backend failed to answer\n"}
	ansErrorPageTimeout = answer{http.StatusGatewayTimeout, ReasonErrorPage, "504 Gateway Timeout: the default backend did not answer in time\n"}
)

// MirrorInFlight bounds the mirrored copies in flight per Router. A copy
// over the bound is not sent (Stats.MirrorsDropped): a mirror target that
// hangs costs at most this many goroutines and connections, and never the
// real requests.
const MirrorInFlight = 64

// maxErrorPage bounds the error backend's answer relayed in place of an
// intercepted one; past it the answer is cut, as a response that broke off.
const maxErrorPage = 1 << 20

// startResponse sets up what the location's Response asks of the
// exchange x: the mirrored copy, sent now, and the writer that intercepts
// the listed statuses and paces the body.
func (r *Router) startResponse(s *requestState, x *exchange, rp *match.Response) {
	if rp.StandIn != nil {
		standInHeaders(s, rp.StandIn)
	}
	if rp.Mirror != nil {
		r.mirror(s, rp.Mirror)
	}
	for _, m := range rp.Mirrors {
		r.mirror(s, m)
	}
	if rp.RewriteLog && s.d.act.target != "" {
		// nginx's rewrite_log writes each rewrite to its error log at
		// notice level; the router's log takes it at debug level.
		r.logger.Debug("rewrite (enable-rewrite-log)", "host", s.d.host, "from", receivedTarget(s.req), "to", s.d.act.target)
	}
	// nginx intercepts what proxy_pass answers; grpc_pass has its own
	// switch, which ingress-nginx never sets.
	intercept := len(rp.ErrorCodes) > 0 && s.ch.backend.Protocol != match.GRPC && s.ch.backend.Protocol != match.GRPCS
	if !intercept && rp.LimitRate == 0 {
		return
	}
	rw := &responseWriter{w: x.w, ctx: s.req.Context(), rate: rp.LimitRate, after: rp.LimitRateAfter, start: time.Now()}
	if intercept {
		rw.codes = rp
		// Made now, so that the backend and the error backend get the same
		// one, as nginx's $req_id is one value per request.
		x.requestIDOrNew(s.req)
	}
	x.w = rw
}

// standInHeaders tells a default-backend Service standing in for a route's
// own (without endpoints) what ingress-nginx tells it (nginx.tmpl: the
// proxy_set_header lines of a custom-default-backend- location): X-Code
// 503, X-Format, X-Namespace, X-Ingress-Name, X-Service-Name and
// X-Service-Port, replacing the client's; an empty value is not sent.
// X-Request-ID is forwarded as on every request. They are set on the
// request before the mirror may read it.
func standInHeaders(s *requestState, si *match.StandIn) {
	h := s.req.Header
	ns, ing := "", ""
	if src := s.d.src; src != nil {
		ns, ing = src.Namespace, src.Name
	}
	for _, kv := range [...][2]string{
		{"X-Code", "503"}, {"X-Format", h.Get("Accept")}, {"X-Namespace", ns}, {"X-Ingress-Name", ing},
		{"X-Service-Name", si.Service}, {"X-Service-Port", si.Port},
	} {
		if kv[1] == "" {
			delete(h, kv[0])
		} else {
			h[kv[0]] = []string{kv[1]}
		}
	}
}

// endResponse serves an intercepted status once the exchange is over: the
// error backend's answer replaces it.
func (r *Router) endResponse(s *requestState, x *exchange) {
	rw, ok := x.w.(*responseWriter)
	if !ok || rw.caught == 0 || x.readErr != nil {
		// A backend that broke off mid-answer cuts the client's
		// connection (serveH1, ReverseProxy), error page or not.
		return
	}
	r.serveErrorPage(s, x, rw)
}

// responseWriter sits between the exchange and the client's
// ResponseWriter for a location with error pages or a bandwidth limit.
type responseWriter struct {
	w   http.ResponseWriter
	ctx context.Context
	// codes are the statuses intercepted (nil: none); caught is the one
	// that was, whose head and body are then dropped.
	codes  *match.Response
	caught int
	// own: the answer is the router's own, not the backend's (see
	// exchange.answer).
	own bool
	// page is the error backend's exchange, for the record; nil until
	// one is asked.
	page *ErrorPage
	// rate is bytes per second past after bytes (0: no pacing), sent the
	// body bytes written, start when the request came.
	rate, after, sent int64
	start             time.Time
}

func (w *responseWriter) Header() http.Header { return w.w.Header() }

// intercepts reports whether the exchange's answer with status is
// replaced by an error page. Its body is then never read: nginx's
// proxy_intercept_errors finalizes the upstream on the head, so a slow or
// stalled body does not hold the error page back.
func (x *exchange) intercepts(status int) bool {
	w, ok := x.w.(*responseWriter)
	return ok && w.codes != nil && !w.codes.OwnOnly && status >= 300 && w.codes.Intercepts(status)
}

// answer writes the router's own answer a through the exchange: error
// pages that take only the router's answers (OwnOnly) take it.
func (x *exchange) answer(a answer) {
	if w, ok := x.w.(*responseWriter); ok {
		w.own = true
	}
	a.write(x, x.grpc)
}

func (w *responseWriter) WriteHeader(code int) {
	if w.caught != 0 {
		return
	}
	if code >= 300 && w.codes != nil && (w.own || !w.codes.OwnOnly) && w.codes.Intercepts(code) {
		w.caught = code
		return
	}
	w.w.WriteHeader(code)
}

// Write drops an intercepted answer's body, and paces the rest as nginx's
// limit_rate does: by the time t seconds have passed since the request
// came, at most after + rate × (t + 1) bytes have been sent.
func (w *responseWriter) Write(p []byte) (int, error) {
	if w.caught != 0 {
		return len(p), nil
	}
	if w.rate == 0 {
		return w.w.Write(p)
	}
	done := 0
	for len(p) > 0 {
		n := len(p)
		if w.sent >= w.after {
			// Pieces of a tenth of a second's worth keep the pace smooth.
			n = int(min(int64(n), max(w.rate/10, 1)))
			if err := w.wait(int64(n)); err != nil {
				return done, err
			}
		} else if rest := w.after - w.sent; int64(n) > rest {
			n = int(rest)
		}
		m, err := w.w.Write(p[:n])
		done += m
		w.sent += int64(m)
		if err != nil {
			return done, err
		}
		if w.sent > w.after {
			// Paced bytes must leave now, not when a buffer fills.
			if err := http.NewResponseController(w.w).Flush(); err != nil {
				return done, err
			}
		}
		p = p[n:]
	}
	return done, nil
}

// wait sleeps until n more bytes are within the limit, or the client
// goes away.
func (w *responseWriter) wait(n int64) error {
	// Bytes allowed past after by time t: rate × (t + 1 s).
	due := w.start.Add(time.Duration(float64(w.sent+n-w.after)/float64(w.rate)*float64(time.Second)) - time.Second)
	d := time.Until(due)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
}

// FlushError, Unwrap and Hijack pass through, except that an intercepted
// answer is never flushed.
func (w *responseWriter) FlushError() error {
	if w.caught != 0 {
		return nil
	}
	return http.NewResponseController(w.w).Flush()
}

func (w *responseWriter) Unwrap() http.ResponseWriter { return w.w }

func (w *responseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.w).Hijack()
}

// serveErrorPage answers an intercepted status with the error backend's
// answer to the request nginx's @custom_<upstream>_<code> location makes
// (nginx.tmpl CUSTOM_ERRORS): the client's method and headers, the URI
// "/" with the client's query, X-Code, X-Format, X-Original-URI,
// X-Namespace, X-Ingress-Name, X-Service-Name, X-Service-Port,
// X-Request-ID, X-Forwarded-For and the client's Host. nginx sends the
// error backend's status and head as they are (error_page code =
// @location); so does the router, with the session cookie the exchange
// set, the request ID and the router's headers (Server, HSTS, the
// ConfigMap's add-headers) set again. The location's own response
// headers (CORS, auth cookies, snippets) are not: the named location
// nginx answers from has none of them (headers-more and add_header read
// the location the request is in when the head goes out).
func (r *Router) serveErrorPage(s *requestState, x *exchange, rw *responseWriter) {
	h := rw.w.Header()
	// The decorations' Server and HSTS go on the error page as on every
	// answer; the backend's head, which follows them, does not.
	server, hsts := h["Server"], h["Strict-Transport-Security"]
	hs := x.headers()
	if hs.passServer {
		// The map holds the intercepted backend's Server, or none.
		server = r.live.Load().serverTokens
	}
	clear(h)
	x.written = 0
	status, a := 0, answer{}
	start := time.Now()
	res, err := r.errorPageExchange(s, x, rw, s.loc.Response.ErrorBackend)
	if tw := s.trace; tw != nil {
		tw.errorPage = errorPageLocation(rw)
	}
	switch {
	case err == errNoErrorBackend:
		a = ansErrorPageNone
	case err != nil && timedOut(err):
		// nginx's proxy_connect_timeout or proxy_read_timeout in the
		// @custom_ location.
		a = ansErrorPageTimeout
	case err != nil:
		a = ansErrorPageFailed
	default:
		defer res.Body.Close()
		if rw.page != nil {
			rw.page.Header = max(time.Since(start), 1)
		}
		for k, vs := range res.Header {
			if !h1.HopByHop(k) && !hs.hidden(k) {
				h[k] = vs
			}
		}
		if hs.passServer {
			// The error backend's, or none: ingress-nginx's
			// proxy_pass_header Server holds in the @custom_ location too.
			server = nil
		}
		status = res.StatusCode
	}
	if ch := &x.choice; ch.setCookie {
		// The sticky balancer set it on the request's answer before the
		// backend's head came; nginx's error_page clears none of those.
		c := sessionCookie(ch, ch.session+"|"+x.balancer.Token(), time.Now())
		h["Set-Cookie"] = append([]string{c}, h["Set-Cookie"]...)
	}
	if a.status != 0 {
		status = a.status
		x.reason = a.reason
	} else {
		x.reason = ""
	}
	x.status = status
	if x.returnID {
		h["X-Request-Id"] = []string{x.requestID}
	}
	if server != nil {
		h["Server"] = server
	}
	if x.hsts && len(hsts) > 0 {
		h["Strict-Transport-Security"] = hsts[:1:1]
	}
	if x.cmh != nil {
		x.cmh.setAdded(h)
	}
	if a.status != 0 {
		a.write(rw.w, false)
		x.written = int64(len(a.body))
		if rw.page != nil {
			rw.page.Status, rw.page.Time = a.status, time.Since(start)
		}
		return
	}
	rw.w.WriteHeader(status)
	n, err := io.Copy(rw.w, io.LimitReader(res.Body, maxErrorPage))
	x.written = n
	if err != nil && x.writeErr == nil {
		x.writeErr = err
	}
	rw.page.Status, rw.page.Time, rw.page.Bytes = status, time.Since(start), n
}

type errorPageKey struct{}

// IsErrorPage reports whether an outgoing request asks the error backend
// for the page of an intercepted status (custom-http-errors), for a
// RoundTripper given in Options.Transport. EndpointFromContext names the
// error backend and its endpoint.
func IsErrorPage(ctx context.Context) bool { return ctx.Value(errorPageKey{}) != nil }

type errorPageError string

func (e errorPageError) Error() string { return string(e) }

// errNoErrorBackend: no default backend, or one without endpoints, which
// ingress-nginx replaces with its built-in server answering 404.
const errNoErrorBackend = errorPageError("no default backend with endpoints")

// errorPageExchange asks the error backend for the page of status code.
func (r *Router) errorPageExchange(s *requestState, x *exchange, rw *responseWriter, be *match.Backend) (*http.Response, error) {
	code := rw.caught
	if be == nil {
		return nil, errNoErrorBackend
	}
	bal := s.d.st.balancers[be]
	if !be.Servable() || bal == nil {
		return nil, errNoErrorBackend
	}
	e, ok := bal.Pick("")
	if !ok {
		return nil, errNoErrorBackend
	}
	// The endpoint is in flight until its page is read (the body's Close).
	kept := false
	defer func() {
		if !kept {
			e.Release()
		}
	}()
	page := &ErrorPage{Intercepted: code, Endpoint: e.Addr, Connect: -1,
		Service: Service{Namespace: be.Namespace, Name: be.Name, Port: be.Port}, Own: s.loc.Response.OwnErrorBackend}
	rw.page = page
	req := s.req
	target := "/"
	if d := &s.d; d.hasQuery {
		target += "?" + d.query
	}
	out, err := http.NewRequestWithContext(req.Context(), req.Method, "http://"+e.Addr+target, nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range req.Header {
		if !skipErrorPageHeader(k) {
			out.Header[k] = vs
		}
	}
	// The @custom_ location propagates no trace context: the client's
	// trace headers go as received.
	s.trace.clientContext(out.Header, false)
	// $best_http_host: the Host field as sent, not an absolute-form
	// target's host.
	out.Host = bestHost(req)
	src := s.d.src
	ns, ing := "", ""
	if src != nil {
		ns, ing = src.Namespace, src.Name
	}
	svc, port := "", ""
	if ob := x.backend; ob != nil && src != nil {
		// nginx's $service_name and $service_port are the location's,
		// whichever backend answered: a canary has no location of its own.
		loc, _ := locationService(s.d.res)
		if loc.Name == "" {
			loc = declaredService(s.d.res, ob)
		}
		svc, port = loc.Name, loc.WrittenPort()
	}
	set := func(k, v string) {
		// nginx sends no header whose proxy_set_header value is empty.
		if v != "" {
			out.Header[k] = []string{v}
		}
	}
	set("X-Code", strconv.Itoa(code))
	set("X-Format", req.Header.Get("Accept"))
	set("X-Original-Uri", receivedTarget(req))
	set("X-Namespace", ns)
	set("X-Ingress-Name", ing)
	set("X-Service-Name", svc)
	set("X-Service-Port", port)
	set("X-Request-Id", x.requestIDOrNew(req))
	set("X-Forwarded-For", r.clientAddrText(req, x.realIP))
	ctx := context.WithValue(req.Context(), exchangeKey{}, &exchange{backend: be, endpoint: e})
	ctx, cancel := context.WithTimeout(context.WithValue(ctx, errorPageKey{}, true), r.timeouts.connect+r.timeouts.read)
	ctx = httptrace.WithClientTrace(ctx, connectTrace(func(d time.Duration) { page.Connect = max(page.Connect, 0) + d }))
	out = out.WithContext(ctx)
	res, err := r.auth.rt.RoundTrip(out)
	if err != nil {
		cancel()
		return nil, err
	}
	kept = true
	res.Body = cancelOnClose{res.Body, func() { cancel(); e.Release() }}
	return res, nil
}

// requestIDOrNew is the request ID forwarded, made now if the exchange
// has none yet (the error page needs the one the backend gets); with
// generate-request-id "false" only the client's, "" when it sent none.
func (x *exchange) requestIDOrNew(req *http.Request) string {
	if x.requestID == "" {
		if x.headers().noRequestID {
			if id := req.Header["X-Request-Id"]; len(id) > 0 {
				return id[0]
			}
			return ""
		}
		x.requestID = requestIDOf(req)
	}
	return x.requestID
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// skipErrorPageHeader drops the client's headers the error location does
// not pass: hop-by-hop ones, those with '_' (which nginx ignores), and the
// ones it sets itself.
func skipErrorPageHeader(k string) bool {
	if strings.IndexByte(k, '_') >= 0 || hopHeader(k) {
		return true
	}
	switch k {
	case "X-Code", "X-Format", "X-Original-Uri", "X-Namespace", "X-Ingress-Name", "X-Service-Name",
		"X-Service-Port", "X-Request-Id", "X-Forwarded-For", "Content-Length":
		return true
	}
	return false
}

// hopHeader reports a hop-by-hop request header (RFC 9110 §7.6.1) or
// one naming the proxy.
func hopHeader(k string) bool {
	switch k {
	case "Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization",
		"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Expect":
		return true
	}
	return false
}
