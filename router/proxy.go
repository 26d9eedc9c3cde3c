package router

import (
	"crypto/rand"
	"crypto/tls"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/match/vars"
	"ramjet.dev/ramjet/router/h1"
	"ramjet.dev/ramjet/router/h2"
)

// rewrite turns the inbound request into the one sent to the chosen
// endpoint: the same request-target byte for byte and the same Host header
// unless the route's rewrite (rewrite.go) changes them, and the forwarded
// headers of SPEC §13. ReverseProxy has already removed
// hop-by-hop headers and the client's X-Forwarded-For/-Host/-Proto.
func rewrite(pr *httputil.ProxyRequest) {
	in, out := pr.In, pr.Out
	x := in.Context().Value(exchangeKey{}).(*exchange)

	u := out.URL
	u.Scheme = "http"
	if p := x.protocol(); p == match.HTTPS || p == match.GRPCS {
		u.Scheme = "https"
	}
	u.Host = x.endpoint.Addr
	u.User = nil
	u.Fragment, u.RawFragment = "", ""
	// Opaque is written to the wire verbatim; Path and RawPath describe the
	// same target for RoundTrippers that read them. Opaque cannot start
	// with "//" (URL.RequestURI would turn it into a scheme-relative URL),
	// so such paths go through RawPath, which is kept whenever it is a
	// valid encoding of Path.
	p, err := url.PathUnescape(x.path)
	if err != nil {
		p = x.path
	}
	u.Path, u.RawPath = p, x.path
	if strings.HasPrefix(x.path, "//") {
		u.Opaque = ""
		// RawPath is re-escaped when it holds a byte RFC 3986 does not
		// allow; then only the verbatim transport keeps it byte for byte.
		x.verbatim = u.EscapedPath() != x.path
	} else {
		u.Opaque = x.path
	}
	if p := x.proxying(); p != nil && p.HTTP10 {
		// proxy-http-version 1.0 on an HTTPS backend: net/http's
		// transport writes only HTTP/1.1 (see verbatimTransport).
		x.verbatim = true
	}
	// ReverseProxy drops query parameters it cannot parse; restore the
	// query exactly as sent.
	u.RawQuery = x.query
	u.ForceQuery = x.hasQuery && x.query == ""

	// $best_http_host: the Host field as sent, not an absolute-form
	// target's host, which ReverseProxy copied.
	out.Host = bestHost(in)
	setForwarded(in, out.Header, x)
	setActionHeaders(x, out)
	if out.Host == "" {
		// An HTTP/1.0 request without a Host: net/http's transport would
		// send the endpoint's address in its place (SPEC §13).
		x.verbatim = true
	}
	if p := x.proxying(); p != nil && p.Connection != "" && (x.protocol() == match.HTTP || x.protocol() == match.HTTPS) {
		// connection-proxy-header; ReverseProxy writes "Upgrade" over it
		// for an upgrade.
		out.Header["Connection"] = []string{p.Connection}
	}
	// The client's trailer is not passed on, as nginx passes none
	// (ReverseProxy already drops the Trailer header as hop-by-hop).
	out.Trailer = nil
}

// forwarding is what SPEC §13 forwards about one request, worked out once
// for whichever upstream path carries it: setForwarded puts it in the
// outgoing header map of the net/http path, writeForwarded writes it
// straight into the request head of the fast path.
type forwarding struct {
	// peer is the connection's address; client the address the request
	// is judged by (Router.ClientAddr): X-Real-IP, and X-Forwarded-For
	// unless full.
	peer, client string
	// prior is the client's X-Forwarded-For; with full
	// (Options.ComputeFullForwardedFor) X-Forwarded-For is prior with peer
	// appended, nginx's "$http_x_forwarded_for, $realip_remote_addr".
	// original is the client's forwarded-for-header (prior unless it is
	// another), passed on as X-Original-Forwarded-For.
	prior, original []string
	full            bool
	host            string // X-Forwarded-Host: the client's Host
	// port is the listener's port (nginx's $server_port); 0 when the
	// handler runs without a listener, and portText says it instead.
	port     int
	portText string
	proto    string // X-Forwarded-Proto (see Router.clientProto)
	// requestID is the client's first X-Request-ID; "" when it sent none,
	// and then a new one is generated as it is written, unless noID
	// (generate-request-id "false").
	requestID string
	noID      bool
	// ids are the exchange's own request ID block (nil: one from idBlocks).
	ids *idBlock
	// originalHost is the client's forwarded-host-header (X-Forwarded-Host
	// unless it is another), joined, sent as X-Original-Forwarded-Host; originalURI is
	// $request_uri, sent as X-Original-URI with proxy-add-original-uri-header.
	originalHost []string
	originalURI  string
}

// forwardingOf works out into f, zero, the forwarded values of the
// exchange x for its inbound request.
func forwardingOf(f *forwarding, in *http.Request, x *exchange) {
	f.full, f.host, f.proto, f.noID = x.fullForwardedFor, bestHost(in), "http", x.headers().noRequestID
	if x.https {
		f.proto = "https"
	}
	switch h := x.headers().originalHost; h {
	case "":
		f.originalHost = nonEmpty(in.Header["X-Forwarded-Host"])
	case "Host":
		// net/http keeps the Host field out of Header; for HTTP/2 it is
		// :authority, which nginx reads as Host too.
		if h, _ := httpHost(in); h != "" {
			f.originalHost = []string{h}
		}
	default:
		f.originalHost = nonEmpty(in.Header[h])
	}
	if x.headers().originalURI {
		f.originalURI = vars.RequestURIOf(in.RequestURI)
	}
	// An empty header is none, as nginx sends no empty header.
	f.prior = nonEmpty(in.Header["X-Forwarded-For"])
	f.original = f.prior
	if h := x.headers().originalFor; h != "" {
		f.original = nonEmpty(in.Header[h])
	}
	ip := splitPeer(in.RemoteAddr)
	f.peer, f.client = ip, ip
	if x.realIP != "" {
		f.client = x.realIP
	}
	if a, ok := in.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr); ok {
		f.port = a.Port
	} else {
		f.portText = serverPort(in)
	}
	if x.headers().forwardedHostPort {
		// use-forwarded-headers: the balancer in front names the host and
		// port the client used, as lua_ingress.lua's rewrite() takes them
		// for $best_http_host (X-Forwarded-Host's first value) and
		// $pass_server_port; the Host header stays the client's.
		if v := in.Header["X-Forwarded-Host"]; len(v) > 0 {
			if h, _, _ := strings.Cut(v[0], ","); strings.TrimSpace(h) != "" {
				f.host = strings.TrimSpace(h)
			}
		}
		if v := in.Header["X-Forwarded-Port"]; len(v) > 0 && strings.TrimSpace(v[0]) != "" {
			f.port, f.portText = 0, strings.TrimSpace(v[0])
		}
	}
	f.ids = x.ids
	// Exactly one, the client's first, as nginx's $http_x_request_id.
	if f.requestID = x.requestID; f.requestID == "" {
		if id := in.Header["X-Request-Id"]; len(id) > 0 {
			f.requestID = id[0]
		}
	}
}

// nonEmpty is a header's values, nil when none is non-empty: an empty
// header is none, as nginx sends no empty header.
func nonEmpty(vs []string) []string {
	for _, v := range vs {
		if v != "" {
			return vs
		}
	}
	return nil
}

// splitPeer is the host of RemoteAddr as net.SplitHostPort splits it, or
// the whole of it when that fails. The usual "a.b.c.d:port", one colon and
// no bracket, is told by four vector searches; anything else is left to
// SplitHostPort.
func splitPeer(addr string) string {
	i := strings.IndexByte(addr, ':')
	if i < 0 {
		return addr // no port: SplitHostPort fails
	}
	if strings.IndexByte(addr[i+1:], ':') >= 0 || strings.IndexByte(addr, '[') >= 0 || strings.IndexByte(addr, ']') >= 0 {
		return splitPeerSlow(addr)
	}
	return addr[:i]
}

func splitPeerSlow(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return host
}

// withheld reports a client request header that never reaches a backend,
// on either path, besides hop-by-hop ones: the headers the router sets
// itself, so that a client cannot forge what the proxy vouches for, and
// names nginx calls invalid, which it drops (ignore_invalid_headers, with
// '_' invalid unless underscores_in_headers: headers.go). The
// client's X-Request-ID is withheld too; forwarding carries its first value.
func withheld(k string, hs *headerSettings) bool {
	switch k {
	case "Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Port", "X-Forwarded-Proto",
		"X-Real-Ip", "X-Scheme", "X-Forwarded-Scheme", "X-Request-Id", "X-Original-Forwarded-For",
		"X-Original-Forwarded-Host":
		return true
	case "X-Original-Uri":
		return hs.originalURI
	}
	return hs.invalidName(k)
}

// setForwarded puts the forwarding headers of the exchange x into the
// outgoing header map h and removes every withheld client header,
// Proxy, which ingress-nginx's locations clear against httpoxy (a CGI
// backend reads it as HTTP_PROXY; its auth location passes it), and
// Expect, which nginx never passes on (the router answers it). The
// values share the backing array x.forwarded, each capped so appending to
// one cannot touch another.
func setForwarded(in *http.Request, h http.Header, x *exchange) {
	var f forwarding
	forwardingOf(&f, in, x)
	for k := range h {
		if x.withheld(k) || k == "Proxy" || k == "Expect" {
			delete(h, k)
		}
	}
	v := x.forwarded[:0]
	set := func(key, value string) {
		v = append(v, value)
		h[key] = v[len(v)-1 : len(v) : len(v)]
	}
	prior := ""
	if len(f.prior) > 0 {
		prior = strings.Join(f.prior, ", ")
	}
	switch {
	case !f.full:
		if f.client != "" {
			set("X-Forwarded-For", f.client)
		}
	case prior != "" && f.peer != "":
		set("X-Forwarded-For", prior+", "+f.peer)
	case prior != "":
		set("X-Forwarded-For", prior)
	case f.peer != "":
		set("X-Forwarded-For", f.peer)
	}
	if f.client != "" {
		set("X-Real-Ip", f.client)
	}
	if len(f.original) > 0 {
		set("X-Original-Forwarded-For", strings.Join(f.original, ", "))
	}
	if f.host != "" {
		set("X-Forwarded-Host", f.host)
	}
	if len(f.originalHost) > 0 {
		set("X-Original-Forwarded-Host", strings.Join(f.originalHost, ", "))
	}
	if f.originalURI != "" {
		set("X-Original-Uri", f.originalURI)
	}
	if f.port != 0 {
		set("X-Forwarded-Port", strconv.Itoa(f.port))
	} else {
		set("X-Forwarded-Port", f.portText)
	}
	set("X-Forwarded-Proto", f.proto)
	// ingress-nginx sets both to $pass_access_scheme, the same scheme.
	set("X-Scheme", f.proto)
	set("X-Forwarded-Scheme", f.proto)
	switch {
	case f.requestID != "":
		set("X-Request-Id", f.requestID)
	case !f.noID:
		set("X-Request-Id", newRequestID())
	}
}

// serverPort is the port the client connected to when the handler runs
// without a listener: the Host header's, or the scheme's default.
func serverPort(req *http.Request) string {
	// The Host header's port, if any, without SplitHostPort's error
	// allocation for the common portless Host.
	if i := strings.LastIndexByte(req.Host, ':'); i >= 0 && i+1 < len(req.Host) && !strings.Contains(req.Host[i:], "]") {
		return req.Host[i+1:]
	}
	if req.TLS != nil {
		return "443"
	}
	return "80"
}

// upstream carries an outgoing request with the transport its backend's
// protocol needs, and retries it on another endpoint when the connection
// could not be opened (see retry.go).
type upstream struct {
	h1  http.RoundTripper // HTTP and HTTPS backends
	h2c http.RoundTripper // GRPC: cleartext HTTP/2 with prior knowledge
	h2  http.RoundTripper // GRPCS: HTTP/2 over TLS
	// verbatim carries HTTP and HTTPS requests whose target the URL
	// cannot express byte for byte; nil with Options.Transport.
	verbatim http.RoundTripper
	// base are the router's timeouts, which h1, h2c, h2 and verbatim
	// apply; a location with others uses variants (nil with
	// Options.Transport, whose timeouts are the embedder's).
	base     timeouts
	variants *transportVariants
	// backendTLS are the transports of locations with backend TLS
	// (backendtls.go); nil with Options.Transport.
	backendTLS *tlsVariants
}

func (u *upstream) RoundTrip(req *http.Request) (*http.Response, error) {
	x, _ := req.Context().Value(exchangeKey{}).(*exchange)
	if x == nil {
		return u.h1.RoundTrip(req)
	}
	h1, h2c, h2, verbatim := u.h1, u.h2c, u.h2, u.verbatim
	if u.variants != nil && x.timeouts != u.base {
		set, once := u.variants.forTimeouts(x.timeouts)
		if once {
			defer set.closeIdle()
		}
		h1, h2c, h2, verbatim = set.h1, set.h2c, set.h2, set.verbatim
	}
	if u.backendTLS != nil {
		if bt := backendTLSOf(x); bt != nil {
			set := u.backendTLS.forTLS(bt, tlsName(bt, x.host), x.timeouts)
			h1, h2, verbatim = set.h1, set.h2, set.verbatim
		}
	}
	rt := h1
	switch x.backend.Protocol {
	case match.GRPC, match.H2C:
		rt = h2c
	case match.GRPCS:
		rt = h2
	default:
		if x.verbatim && verbatim != nil {
			rt = verbatim
		}
	}
	if u.variants == nil && x.timeouts.read > 0 {
		// Options.Transport: the location's read timeout bounds the head.
		rt = headTimed{rt: rt, read: x.timeouts.read}
	}
	if !x.start.IsZero() {
		if x.upstreamStart.IsZero() {
			x.upstreamStart = time.Now()
		}
		rt = connectTimed{rt: rt, x: x}
	}
	res, err := x.roundTrip(rt, req)
	if err == nil && !x.start.IsZero() {
		x.gotHeader()
	}
	return res, err
}

// connectTimed sends one try of the exchange x with rt, noting how long
// opening the try's connection took in x.connectTime, for the record
// ($upstream_connect_time): net/http's transports and the router's own
// report it through httptrace. A second connection within the try is
// net/http's transport sending the request again after the backend
// dropped the kept-alive one: the try that failed is noted, as nginx
// lists it (502).
type connectTimed struct {
	rt http.RoundTripper
	x  *exchange
}

func (c connectTimed) RoundTrip(req *http.Request) (*http.Response, error) {
	x := c.x
	var again bool
	trace := connectTrace(func(d time.Duration) {
		if again {
			x.notePassed(x.endpoint.Addr, match.RetryError, true)
		}
		again = true
		x.connectTime += d
	})
	return c.rt.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
}

// connectTrace calls opened with how long it took to get a connection
// that was not reused, from when the transport asked for one to when it
// had it (the dial and the TLS handshake), and with 0 for a reused one.
// The hooks run on the caller's goroutine (net/http calls GotConn from
// RoundTrip, HTTP/2's too).
func connectTrace(opened func(time.Duration)) *httptrace.ClientTrace {
	var asked time.Time
	return &httptrace.ClientTrace{
		GetConn: func(string) {
			if asked.IsZero() {
				asked = time.Now()
			}
		},
		GotConn: func(info httptrace.GotConnInfo) {
			switch {
			case info.Reused:
				opened(0)
			case !asked.IsZero():
				opened(max(time.Since(asked), 1))
			}
			asked = time.Time{}
		},
	}
}

// modifyResponse watches the backend's response body so that a body the
// backend breaks off is reported. A 101's body is the tunnel's connection
// and is left as it is: ReverseProxy needs it to be writable.
//
// The trailer fields ReverseProxy announces (res.Trailer's names) are
// the passed ones (see trailerPassed); the body sees to the values.
func modifyResponse(res *http.Response) error {
	x, _ := res.Request.Context().Value(exchangeKey{}).(*exchange)
	hs := &defaultHeaderSettings
	if x != nil {
		hs = x.headers()
		// ReverseProxy adds the backend's fields to the answer's own.
		hs.backendServer(x.Header())
	}
	for k := range res.Header {
		if hs.hidden(k) {
			delete(res.Header, k) // as respond's CopyTo (headers.go)
		}
	}
	if x != nil {
		x.rewriteHead(res.Header, 0)
		if res.Header["Content-Type"] == nil {
			// ReverseProxy adds the backend's fields to the answer's.
			untyped(x.Header())
		}
	}
	for k := range res.Trailer {
		if !trailerPassed(k) {
			delete(res.Trailer, k)
		}
	}
	if res.StatusCode == http.StatusSwitchingProtocols {
		if x != nil {
			// ReverseProxy adds the backend's fields to the map, where
			// the router's take their place (see switchProtocols).
			for k := range res.Header {
				if replacesOnUpgrade(x.Header(), k) {
					delete(res.Header, k)
				}
			}
			if x.added.any() {
				// The location's header edits act on the whole head, the
				// backend's fields among it (see switchProtocols): they
				// move to the map first, the Upgrade's own fields stay.
				h := x.Header()
				for k, v := range res.Header {
					if !h1.HopByHop(k) {
						h[k] = append(h[k], v...)
						delete(res.Header, k)
					}
				}
				x.added.apply(h, http.StatusSwitchingProtocols)
			}
		}
		// ReverseProxy writes the 101 itself, past the server that adds
		// Date to other answers; nginx dates it too.
		res.Header.Set("Date", time.Now().UTC().Format(http.TimeFormat))
		return nil
	}
	if res.Body == nil || res.Body == http.NoBody {
		return nil
	}
	if x != nil && x.intercepts(res.StatusCode) {
		// Replaced by an error page: the body is dropped unread.
		res.Body.Close()
		res.Body = http.NoBody
		return nil
	}
	if x != nil {
		body := res.Body
		if x.timeouts.read > 0 {
			body = &stallBody{ReadCloser: body, read: x.timeouts.read}
		}
		x.body = watchedBody{ReadCloser: body, x: x, res: res}
		x.bodyFlush = flushNone
		if ct, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); res.ContentLength != -1 && ct != "text/event-stream" {
			// ReverseProxy flushes only bodies of unknown length and
			// event streams (its flushInterval, read the same way).
			x.bodyFlush = flushPending
		}
		// Over HTTP/1 only announced fields are passed on; HTTP/2 frames a
		// trailer apart from the header, and gRPC servers send theirs
		// unannounced.
		switch {
		case res.ProtoMajor >= 2:
		case len(res.Trailer) == 0:
			x.body.announced = &noneAnnounced
		default:
			names := make([]string, 0, len(res.Trailer))
			for k := range res.Trailer {
				names = append(names, k)
			}
			x.body.announced = &names
		}
		res.Body = &x.body
	}
	return nil
}

// watchedBody records the first error other than io.EOF that reading the
// backend's response body returns, and at its end removes from the
// response's trailer what may not reach the client.
type watchedBody struct {
	io.ReadCloser
	x *exchange
	// res is the response whose trailer is checked; announced are the
	// names it announced before the body, the only ones passed on unless
	// announced is nil. (A pointer: the exchange that holds the body
	// stays in its size class.)
	res       *http.Response
	announced *[]string
}

var noneAnnounced = []string{}

// What watchedBody flushes (exchange.bodyFlush).
const (
	// flushNone: ReverseProxy flushes the body as it copies it (one of
	// unknown length, an event stream), or there is none.
	flushNone = iota
	// flushDone: a body of known length, all it relayed flushed.
	flushDone
	// flushPending: its head, or bytes read since the last flush, may
	// still sit in the client's writer.
	flushPending
)

func (b *watchedBody) Read(p []byte) (int, error) {
	x := b.x
	if x.bodyFlush == flushPending && b.mayWait() {
		// What came goes to the client before the wait for more, as nginx
		// sends it under proxy_buffering off (ingress-nginx's default)
		// and as the router's own pool does (h1Try.respond): a body of
		// known length that comes in pieces is not held until the
		// writer's buffer fills or the body ends.
		x.bodyFlush = flushDone
		if err := http.NewResponseController(x.w).Flush(); err != nil && x.writeErr == nil {
			x.writeErr = err
		}
	}
	n, err := b.ReadCloser.Read(p)
	if n > 0 && x.bodyFlush == flushDone {
		x.bodyFlush = flushPending
	}
	if err != nil && err != io.EOF && b.x.readErr == nil {
		b.x.readErr = err
	}
	if err == io.EOF && len(b.res.Trailer) > 0 {
		// The transport has filled in the trailer by the end of the body.
		for k := range b.res.Trailer {
			if !trailerPassed(k) || b.announced != nil && !contains(*b.announced, k) {
				delete(b.res.Trailer, k)
			}
		}
	}
	return n, err
}

// mayWait reports whether the next read of the body may wait for the
// backend. router/h2's client knows; of another transport's body, any
// read once some of it was relayed may, but not the first: a body that
// came whole with the head then leaves with it in one write.
func (b *watchedBody) mayWait() bool {
	r := io.Reader(b.ReadCloser)
	if s, ok := r.(*stallBody); ok {
		r = s.ReadCloser
	}
	if w, ok := r.(interface{ Waits() bool }); ok {
		return w.Waits()
	}
	return b.x.written > 0
}

// stallBody bounds the wait for each read of a backend's body on the
// net/http way out by read (proxy-read-timeout, as nginx's
// proxy_read_timeout between two reads; SPEC §13): a read that waits
// longer closes the body, which ends the exchange. The time spent writing
// to the client between reads does not count. (The fast path moves its
// connection's read deadline instead: h1.Conn.Body.)
type stallBody struct {
	io.ReadCloser
	read    time.Duration
	timer   *time.Timer
	stalled atomic.Bool
}

// errBodyStalled is the read error of a body that stalled past the read
// timeout.
var errBodyStalled = errors.New("the backend's response body stalled past the read timeout (proxy-read-timeout)")

func (b *stallBody) Read(p []byte) (int, error) {
	if b.timer == nil {
		b.timer = time.AfterFunc(b.read, b.stall)
	} else {
		b.timer.Reset(b.read)
	}
	n, err := b.ReadCloser.Read(p)
	b.timer.Stop()
	if err != nil && err != io.EOF && b.stalled.Load() {
		err = errBodyStalled
	}
	return n, err
}

func (b *stallBody) stall() {
	b.stalled.Store(true)
	_ = b.ReadCloser.Close()
}

func (b *stallBody) Close() error {
	if b.timer != nil {
		b.timer.Stop()
	}
	return b.ReadCloser.Close()
}

// proxyError answers a request whose exchange with the backend failed
// before a response arrived.
func (r *Router) proxyError(_ http.ResponseWriter, req *http.Request, err error) {
	r.exchangeFailed(req.Context().Value(exchangeKey{}).(*exchange), req, err)
}

// exchangeFailed answers through the exchange itself (it is the
// ResponseWriter ReverseProxy was given).
func (r *Router) exchangeFailed(x *exchange, req *http.Request, err error) {
	x.unconnected = notConnected(err)
	if a, failed := x.reqBody.answer(); failed {
		// The client's body broke off, stalled, was too large or was
		// malformed: its error, not the backend's, and no warning. This
		// comes first: a failed read of the body also cancels the
		// request's context, which does not mean the client left.
		x.reason = a.reason
		r.logger.Debug("client request body failed", "backend", x.backend.ID, "error", x.reqBody.failure())
		if x.status == 0 {
			closeAfter(x, req)
			x.answer(a)
		}
		return
	}
	if err := routeTimedOut(req.Context(), nil); err != nil {
		// The route's request timeout ran out (SPEC §20): 504, as for a
		// backend too slow.
		x.reason = ansUpstreamTimeout.reason
		r.logger.Warn("backend request failed",
			"backend", x.backend.ID, "endpoint", x.endpoint.Addr, "reason", x.reason, "error", err)
		if x.status == 0 {
			x.answer(ansUpstreamTimeout)
		}
		return
	}
	if req.Context().Err() != nil {
		// The client went away; nobody is left to read an answer.
		x.status, x.reason = 499, ReasonClientClosed
		r.logger.Debug("client closed the request before the backend answered",
			"backend", x.backend.ID, "endpoint", x.endpoint.Addr)
		return
	}
	a := ansUpstreamError
	switch {
	case timedOut(err):
		// A connect that timed out too: nginx's "upstream timed out while
		// connecting to upstream" is a 504, a refused one a 502.
		a = ansUpstreamTimeout
	case unreachable(err):
		a = ansUnreachable
	}
	x.reason = a.reason
	r.logger.Warn("backend request failed",
		"backend", x.backend.ID, "endpoint", x.endpoint.Addr, "reason", a.reason, "error", err)
	if x.status != 0 {
		return // a 101 or other answer is already on its way
	}
	x.answer(a)
}

// unreachable reports a failure to open the connection (dial or TLS
// handshake): nothing of the request reached the backend.
func unreachable(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var rh tls.RecordHeaderError
	var alert tls.AlertError
	var verify *tls.CertificateVerificationError
	return errors.As(err, &rh) || errors.As(err, &alert) || errors.As(err, &verify)
}

// notConnected reports a try that failed before its connection was open,
// so that nothing of the request was sent: unreachable, or a TLS
// handshake past the connect timeout on net/http's transport (nginx's
// "timeout" while connecting). The latter is still answered as a timeout.
func notConnected(err error) bool {
	// net/http does not export that error's type; its text is fixed.
	return unreachable(err) || errors.Is(err, h1.ErrHandshakeTimeout) ||
		timedOut(err) && err.Error() == "net/http: TLS handshake timeout"
}

// notSent reports a try whose request never reached the backend: its
// connection could not be opened (notConnected), or router/h2's client
// lost it before the call's HEADERS were written. Like a request nginx
// has not sent, it may go to the next upstream, a POST too.
func notSent(err error) bool {
	var ns *h2.NotSentError
	return notConnected(err) || errors.As(err, &ns)
}

func timedOut(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// bufferPool recycles ReverseProxy's copy buffers.
type bufferPool struct{}

const copyBufferSize = 32 << 10

var copyBuffers = sync.Pool{New: func() any { return new([copyBufferSize]byte) }}

// exchanges are the exchanges of requests served over the router's own
// pool (Router.forward).
var exchanges = sync.Pool{New: func() any { return new(exchange) }}

func (bufferPool) Get() []byte { return copyBuffers.Get().(*[copyBufferSize]byte)[:] }

func (bufferPool) Put(b []byte) {
	if len(b) == copyBufferSize {
		copyBuffers.Put((*[copyBufferSize]byte)(b))
	}
}

// Request IDs are 16 random bytes in hex. Random bytes are read from
// crypto/rand in blocks and handed out 16 at a time, each exactly once.
type idBlock struct {
	buf [1024]byte
	off int
}

var idBlocks = sync.Pool{New: func() any { return newIDBlock() }}

// decorRequestID returns the request's ID to the client
// (Options.ReturnRequestID).
var decorRequestID = decoration{name: "request id", headers: []string{"X-Request-Id"}}

// requestIDOf is the request's ID: the client's first X-Request-ID, else
// a new one.
func requestIDOf(req *http.Request) string {
	// An empty value is none, as nginx's map of $http_x_request_id reads "".
	if id := req.Header["X-Request-Id"]; len(id) > 0 && id[0] != "" {
		return id[0]
	}
	return newRequestID()
}

func newRequestID() string {
	var out [32]byte
	return string(appendRequestID(out[:0]))
}

// appendRequestID appends a new request ID to dst.
func appendRequestID(dst []byte) []byte {
	b := idBlocks.Get().(*idBlock)
	dst = b.appendID(dst)
	idBlocks.Put(b)
	return dst
}

// newIDBlock is an empty block: its first ID reads the random bytes.
func newIDBlock() *idBlock { return &idBlock{off: len(idBlock{}.buf)} }

// appendID appends a new request ID from b to dst.
func (b *idBlock) appendID(dst []byte) []byte {
	if b.off+16 > len(b.buf) {
		_, _ = rand.Read(b.buf[:]) // never fails (crypto/rand crashes the program instead)
		b.off = 0
	}
	src := (*[16]byte)(b.buf[b.off : b.off+16])
	dst = slices.Grow(dst, 32)
	n := len(dst)
	out := (*[32]byte)(dst[n : n+32])
	// Two digits a byte from one load of hexPairs (tracing.go).
	for i, c := range src {
		d := hexPairs[c]
		out[2*i], out[2*i+1] = d[0], d[1]
	}
	b.off += 16
	return dst[:n+32]
}
