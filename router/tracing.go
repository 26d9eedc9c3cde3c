package router

import (
	"bufio"
	"encoding/binary"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/match/vars"
	"ramjet.dev/ramjet/router/h1"
)

// Tracing (SPEC §23): a location the table traces (match.Location.Tracing,
// ingress-nginx's enable-opentelemetry) makes one server span per request
// through Options.Tracer, with the attributes ingress-nginx's OpenTelemetry
// module sets, and sends the span's W3C trace context (traceparent,
// tracestate) to the backend; the external auth service gets none and
// the error backend the client's, as ingress-nginx sends them. The
// library has no OpenTelemetry dependency: the Tracer adapts an SDK (the
// example controller's uses OpenTelemetry's, with an OTLP exporter).
// Without a Tracer, or on a location that is not traced, a request costs
// nothing more, and its trace headers pass through untouched.

// Tracer makes the server spans. It must be safe for concurrent use.
type Tracer interface {
	// StartSpan starts the server span of a request that came at start.
	// parent is the incoming trace context when the location trusts it
	// (Tracing.TrustIncomingSpan) and the request carried a valid
	// traceparent; otherwise it is the zero TraceContext and the span
	// starts a trace of its own. name is the span's name as the request
	// starts; SpanEnd.Name is its final one.
	StartSpan(parent TraceContext, name string, start time.Time) Span
}

// SpanRestarter is a Tracer that starts a span in the record of one
// that ended: the router keeps a traced request's span with its own
// pooled state of the request and hands it back to start a later
// request's, so that a traced request takes one pooled object, not the
// router's and the tracer's. A Tracer that implements it must leave a
// span that ended to the router: not reuse it itself.
type SpanRestarter interface {
	Tracer
	// RestartSpan is StartSpan in the record of ended, a span that this
	// or another Tracer returned and that ended, or nil. A span it cannot
	// restart (another Tracer's) it leaves, and makes one anew.
	RestartSpan(ended Span, parent TraceContext, name string, start time.Time) Span
}

// Span is one server span.
type Span interface {
	// Context is the span's trace context, sent on as traceparent and
	// tracestate. A span its sampler dropped still has one (flags 00), as
	// OpenTelemetry propagates it.
	Context() TraceContext
	// End ends the span once the answer is written in full. e is valid
	// only during the call.
	End(e *SpanEnd)
}

// SpanEnd is what a span reports as it ends.
type SpanEnd struct {
	// Name is the span's name: the location's opentelemetry-operation-name
	// with its variables expanded, else the location's name
	// (match.LocationSpanName).
	Name string
	// Attributes are those ingress-nginx's module (otel_ngx_module.cpp)
	// sets, by its names: http.method, http.flavor, http.target,
	// http.server_name, http.host, http.user_agent (the last two when the
	// request has them), http.status_code, http.scheme, net.host.port,
	// net.peer.ip and net.peer.port.
	Attributes []SpanAttribute
	// Status is the answer's status, 499 when the client went away
	// before any (as nginx logs it); Error says it is 500 or more, for
	// which the module sets the span's status to Error (else Ok).
	Status int
	Error  bool
	// Time is when the answer was written in full.
	Time time.Time
}

// SpanAttribute is one attribute of a span: a string, or an integer when
// IsInt.
type SpanAttribute struct {
	Key   string
	Value string
	Int   int64
	IsInt bool
}

// TraceContext is a W3C trace context (https://www.w3.org/TR/trace-context/).
type TraceContext struct {
	TraceID [16]byte
	SpanID  [8]byte
	// Flags are the trace flags; bit 0 is sampled.
	Flags byte
	// State is the tracestate header's value, "" for none.
	State string
}

// IsValid reports a context with a trace and a span ID, neither all zero.
func (c TraceContext) IsValid() bool {
	return c.TraceID != [16]byte{} && c.SpanID != [8]byte{}
}

// Sampled reports the sampled flag.
func (c TraceContext) Sampled() bool { return c.Flags&1 != 0 }

// Traceparent is c as a traceparent header value (version 00).
func (c TraceContext) Traceparent() string {
	var b [55]byte
	c.appendTraceparent(&b)
	return string(b[:])
}

// appendTraceparent writes c's traceparent into b, as every traced
// request sends on: four bytes at a time as eight digits (hex8).
func (c *TraceContext) appendTraceparent(b *[55]byte) {
	b[0], b[1], b[2], b[35], b[52] = '0', '0', '-', '-', '-'
	t, sp := &c.TraceID, &c.SpanID
	binary.LittleEndian.PutUint64(b[3:], hex8(t[0:4]))
	binary.LittleEndian.PutUint64(b[11:], hex8(t[4:8]))
	binary.LittleEndian.PutUint64(b[19:], hex8(t[8:12]))
	binary.LittleEndian.PutUint64(b[27:], hex8(t[12:16]))
	binary.LittleEndian.PutUint64(b[36:], hex8(sp[0:4]))
	binary.LittleEndian.PutUint64(b[44:], hex8(sp[4:8]))
	b[53], b[54] = hexPairs[c.Flags][0], hexPairs[c.Flags][1]
}

// hex8 is the eight lower-case hex digits of p's four bytes, the first
// in the low byte: each byte's nibbles spread to bytes of their own,
// then each nibble made its digit, '0' to '9' or 'a' to 'f', all eight
// at once.
func hex8(p []byte) uint64 {
	x := uint64(binary.LittleEndian.Uint32(p))
	x = (x | x<<16) & 0x0000ffff0000ffff
	x = (x | x<<8) & 0x00ff00ff00ff00ff
	// The high nibble first, in the low byte of its 16 bits.
	x = x>>4&0x000f000f000f000f | (x&0x000f000f000f000f)<<8
	letters := (x + 0x0606060606060606) >> 4 & 0x0101010101010101
	return x + 0x3030303030303030 + letters*('a'-'0'-10)
}

const hexDigits = "0123456789abcdef"

// hexPairs is a byte's two lower-case hex digits.
var hexPairs = func() (t [256][2]byte) {
	for i := range t {
		t[i] = [2]byte{hexDigits[i>>4], hexDigits[i&15]}
	}
	return t
}()

// hexValue is a lower-case hex digit's value, 0xff for any other byte.
var hexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := range byte(16) {
		t[hexDigits[i]] = i
	}
	return t
}()

// ParseTraceparent reads a traceparent header value as the W3C
// specification (and OpenTelemetry's propagator) does: version 00 is
// exactly "00-<32 hex>-<16 hex>-<2 hex>", lower case; a later version
// (not ff) may append "-..." after those fields; an all-zero trace or
// span ID is invalid. Of the flags only sampled is kept, as
// ingress-nginx's module passes on only that one (its SDK keeps W3C's
// version 00 flags): a reserved bit sent on would make the backend's
// propagator drop the trace. Every traced request with a parent reads
// one, so the digits are read by table, their errors gathered in one test.
func ParseTraceparent(v string) (TraceContext, bool) {
	var c TraceContext
	if len(v) < 55 || v[2] != '-' || v[35] != '-' || v[52] != '-' {
		return c, false
	}
	ver, ok := unhex(v[0:2])
	if !ok || ver == 0xff || ver == 0 && len(v) != 55 || ver != 0 && len(v) > 55 && v[55] != '-' {
		return c, false
	}
	bad := unhexInto(c.TraceID[:], v[3:35]) | unhexInto(c.SpanID[:], v[36:52])
	if c.Flags, ok = unhex(v[53:55]); !ok || bad > 15 || !c.IsValid() {
		return TraceContext{}, false
	}
	c.Flags &= 1
	return c, true
}

// unhex reads two lower-case hex digits.
func unhex(s string) (byte, bool) {
	h, l := hexValue[s[0]], hexValue[s[1]]
	return h<<4 | l, h|l < 16
}

// unhexInto reads the 2×len(dst) lower-case hex digits of s into dst; the
// result is over 15 when one is not such a digit.
func unhexInto(dst []byte, s string) (bad byte) {
	s = s[:2*len(dst)]
	for i := range dst {
		h, l := hexValue[s[2*i]], hexValue[s[2*i+1]]
		bad |= h | l
		dst[i] = h<<4 | l
	}
	return bad
}

// incomingContext is the request's trace context: its first traceparent
// and its first tracestate header, as the module's propagator reads the
// first header of each name (propagate.cpp FindHeader).
func incomingContext(h http.Header) TraceContext {
	tp := h["Traceparent"]
	if len(tp) == 0 {
		return TraceContext{}
	}
	c, ok := ParseTraceparent(tp[0])
	if !ok {
		return TraceContext{}
	}
	if ts := h["Tracestate"]; len(ts) > 0 {
		c.State = ts[0]
	}
	return c
}

// decorTrace starts the request's span, first of the decorations so
// that it sees the status the client gets, whatever wraps the answer
// after it (compression).
var decorTrace = decoration{name: "tracing"}

// tracingOf is the tracing of the location d chose; nil for an answer
// made before any location (no table, a request that cannot be routed,
// the www and app-root redirects ingress-nginx writes in the server
// block), which ingress-nginx's module does not trace: it starts its span
// in a location's rewrite phase, where a permanent- or
// temporal-redirect's return is answered, so those are traced.
func tracingOf(d *decision) *match.Tracing {
	if d.at == &stepUnlocated && d.ans.status != 0 && d.ans.reason != ReasonRedirect {
		return nil
	}
	switch res := &d.res; {
	case res.Route != nil:
		return res.Route.Tracing
	case res.Host != nil:
		return res.Host.FallbackLocation.Tracing
	}
	return nil
}

// refusedBeforeSpan reports a request checkBodySize will refuse: nginx
// answers a declared Content-Length over client_max_body_size with 413
// in its find-config phase, before the location's rewrite phase where
// the module starts its span, so that answer has none.
func (r *Router) refusedBeforeSpan(s *requestState) bool {
	if s.req.ContentLength <= 0 || s.d.at == &stepUnlocated && s.d.ans.status != 0 {
		return false
	}
	var p *match.Policy
	switch res := &s.d.res; {
	case s.d.at == &stepDenied:
		// The router's limit, as checkBodySize has it.
	case res.Route != nil:
		p = res.Route.Policy
	case res.Host != nil:
		p = res.Host.FallbackLocation.Policy
	}
	maxBody, _, _ := r.bodyLimits(p)
	return maxBody > 0 && s.req.ContentLength > maxBody
}

// startSpan starts the span of a traced request, sends its context on
// with the request (the backend gets the request's headers) and wraps
// the answer to learn its status.
func (r *Router) startSpan(s *requestState) {
	t := tracingOf(&s.d)
	if t == nil || r.refusedBeforeSpan(s) {
		return
	}
	var parent TraceContext
	if t.TrustIncomingSpan {
		parent = incomingContext(s.req.Header)
	}
	start := s.start
	if start.IsZero() {
		start = time.Now()
	}
	tw := tracedWriters.Get().(*tracedWriter)
	tw.w, tw.tracing = s.w, t
	tw.name, tw.nameRoute, tw.namePath = r.spanName(s, t, tw), s.d.res.Route, s.d.path
	if r.restarter != nil {
		// The span tw kept from its last request, or nil.
		tw.span = r.restarter.RestartSpan(tw.span, parent, tw.name, start)
	} else {
		tw.span = r.tracer.StartSpan(parent, tw.name, start)
	}
	if c := tw.span.Context(); c.IsValid() {
		// A span without a context (a no-op tracer's) sends none. The
		// context goes on the request's headers, in place of the
		// client's, where they are sent on (traceHeaders); the HTTP/1.1
		// backend's request head gets it written by itself
		// (writeRequestHead). The steps between see the client's
		// headers, as nginx's see the client's and the module's
		// proxy_set_header sets the upstream request's only, and a map
		// without those headers is left as it is.
		tw.setTraceparent(&c)
		tw.state, tw.pending = c.State, true
	}
	s.w, s.trace = tw, tw
}

// traceHeaders puts the span's context on the request's headers if it is
// not there yet, before anything sends the headers on (a backend not
// reached over the HTTP/1.1 pool) or edits them (a snippet's edits, the
// ConfigMap's proxy-set-headers): traceparent and tracestate replace the
// client's, as the module's opentelemetry_propagate sets them with
// proxy_set_header (an empty tracestate is not sent). The traceparent's
// text and its value slice are the tracedWriter's, so that they cost no
// allocation of their own.
func (s *requestState) traceHeaders() {
	if tw := s.trace; tw != nil && tw.pending {
		h := s.req.Header
		tw.client = [2][]string{h["Traceparent"], h["Tracestate"]}
		tw.putContext(h)
		tw.pending, tw.replaced = false, true
	}
}

// clientContext puts the client's trace headers back on h, a copy of the
// request's headers sent where ingress-nginx passes the client's as
// received (the error backend, a mirror, which outlives the request):
// they are there unless traceHeaders replaced them with the span's
// context; tw may be nil.
func (tw *tracedWriter) clientContext(h http.Header, outlives bool) {
	if tw == nil || !tw.replaced {
		return
	}
	for i, k := range [2]string{"Traceparent", "Tracestate"} {
		if v := tw.client[i]; v != nil {
			if outlives {
				v = slices.Clone(v)
			}
			h[k] = v
		} else {
			delete(h, k)
		}
	}
}

// putContext puts the span's context on h, the request's headers, when
// it is not there yet; tw may be nil.
func (tw *tracedWriter) putContext(h http.Header) {
	if tw == nil || !tw.pending {
		return
	}
	h["Traceparent"] = tw.value[:]
	if tw.state != "" {
		h["Tracestate"] = []string{tw.state}
	} else {
		delete(h, "Tracestate")
	}
}

// pendingTraceparent is the Traceparent field writeRequestHead writes
// for a span whose context is not on the request's headers, "" for
// none: the whole field with the line end before it, as the head writer
// puts lines ("\r\nTraceparent: <value>"), written at once; and the
// tracestate's value with it.
func (tw *tracedWriter) pendingTraceparent() (field, tracestate string) {
	if tw == nil || !tw.pending {
		return "", ""
	}
	return unsafe.String(&tw.field[0], len(tw.field)), tw.state
}

// tracedFieldName is the start of the Traceparent field tracedWriter
// keeps, the value after it.
const tracedFieldName = "\r\nTraceparent: "

// setTraceparent writes c's traceparent into tw's field, whose name and
// line end stay from one request to the next, and makes it the header
// value.
func (tw *tracedWriter) setTraceparent(c *TraceContext) {
	if tw.field[0] == 0 {
		copy(tw.field[:], tracedFieldName)
	}
	v := (*[55]byte)(tw.field[len(tracedFieldName):])
	c.appendTraceparent(v)
	tw.value[0] = unsafe.String(&v[0], len(v))
}

// spanName is the span's name for the location s is at; tw keeps the
// last location name it made.
func (r *Router) spanName(s *requestState, t *match.Tracing, tw *tracedWriter) string {
	n := t.OperationName
	switch {
	case n.IsZero():
		path := s.d.path
		rt := s.d.res.Route
		if rt != nil && rt.Type == match.Prefix && rt.Path != "" {
			// Only a prefix's own path names its exact twin.
			if clean, err := match.NormalizePath(beforeFragment(path)); err == nil {
				path = clean
			}
		}
		// The name depends on the route and whether path is the route's
		// own, and a prefix's or a regex's is made anew each time: the
		// writer, pooled, keeps the last, holding its route.
		exact := rt != nil && path == rt.Path
		if rt != nil && rt == tw.cacheRoute && exact == tw.cacheExact {
			return tw.cacheName
		}
		name := match.LocationSpanName(rt, path)
		tw.cacheRoute, tw.cacheExact, tw.cacheName = rt, exact, name
		return name
	case n.HasVariables():
		return n.Expand(r.snippetRequest(s.req, &s.d, false))
	}
	return n.String()
}

// errorPageLocation is the name of the nginx location ingress-nginx
// serves the page of rw's intercepted status from, @custom_<upstream>_<code>
// (nginx.tmpl CUSTOM_ERRORS): the upstream is the Ingress's
// default-backend's when it has an endpoint (controller.go), else the
// global default backend's.
func errorPageLocation(rw *responseWriter) string {
	up := "upstream-default-backend"
	if p := rw.page; p != nil && p.Own {
		up = "custom-default-backend-" + p.Service.Namespace + "-" + p.Service.Name
	}
	return "@custom_" + up + "_" + strconv.Itoa(rw.caught)
}

// errorPageSpanName is the name of a span whose request an error page
// answered: the module names it as it ends, in the @custom_ location,
// which has the http block's operation name only, and whose
// "rewrite (.*) / break" made $uri "/".
func (r *Router) errorPageSpanName(s *requestState, tw *tracedWriter) string {
	n := tw.tracing.ErrorPageName
	switch {
	case n.IsZero():
		return tw.errorPage
	case n.HasVariables():
		sr := r.snippetRequest(s.req, &s.d, false)
		sr.URI = "/"
		return n.Expand(sr)
	}
	return n.String()
}

// tracedWriters hold the writers of traced requests, reused: a traced
// request allocates nothing of its own. A writer goes back once its span
// ended, as ServeHTTP returns: nothing of the request is used after that
// (a mirror sends the client's trace headers, not the writer's
// traceparent, mirror.go).
var tracedWriters = sync.Pool{New: func() any { return new(tracedWriter) }}

// endSpan ends the request's span once the answer is written, with the
// module's attributes, and frees the request's tracedWriter.
func (r *Router) endSpan(s *requestState) {
	tw := s.trace
	req := s.req
	e := &tw.end
	if tw.errorPage != "" {
		e.Name = r.errorPageSpanName(s, tw)
	} else if tw.tracing.OperationName.IsZero() && s.d.res.Route == tw.nameRoute && s.d.path == tw.namePath {
		// The location's name as at the start, not made again.
		e.Name = tw.name
	} else {
		e.Name = r.spanName(s, tw.tracing, tw)
	}
	status := tw.status
	if status == 0 && req.Context().Err() != nil {
		// The client went away before any answer: nginx ends the request
		// with 499 as its status (ngx_http_terminate_request), which the
		// module reads at the log phase.
		status = 499
	}
	e.Status = status
	e.Error = status >= 500
	// One time.Now (two clock reads) costs fewer instructions than the
	// start's time plus the monotonic time since (time.Since, Add).
	e.Time = time.Now()
	a := &tw.attrs
	a[0] = SpanAttribute{Key: "http.method", Value: req.Method}
	a[1] = SpanAttribute{Key: "http.flavor", Value: httpFlavor(req)}
	// The module's req->unparsed_uri, $request_uri: an absolute-form
	// target from its path on.
	a[2] = SpanAttribute{Key: "http.target", Value: vars.RequestURIOf(receivedTarget(req))}
	a[3] = SpanAttribute{Key: "http.server_name", Value: tw.serverName(&s.d)}
	n := 4
	host, hasHost := req.Host, req.Host != ""
	if t := req.RequestURI; t != "" && t[0] != '/' {
		// The module's req->headers_in.host, the Host field as sent
		// ($http_host), not an absolute-form target's host.
		if f, present, ok := h1.HostField(req); ok {
			host, hasHost = f, present
		}
	}
	if hasHost {
		a[n] = SpanAttribute{Key: "http.host", Value: host}
		n++
	}
	if ua := req.Header["User-Agent"]; len(ua) > 0 {
		a[n] = SpanAttribute{Key: "http.user_agent", Value: ua[0]}
		n++
	}
	a[n] = SpanAttribute{Key: "http.status_code", Int: int64(status), IsInt: true}
	a[n+1] = SpanAttribute{Key: "http.scheme", Value: s.d.proto}
	n += 2
	if p := ServerPort(req); p != 0 {
		// The socket's port, as nginx's $server_port, even behind PROXY
		// protocol.
		a[n] = SpanAttribute{Key: "net.host.port", Int: int64(p), IsInt: true}
		n++
	}
	ip, port, ok := ipv4Peer(req.RemoteAddr)
	if !ok || len(r.live.Load().realIPFrom) > 0 {
		// The client's address as ClientAddr has it, in tw as String
		// would make it, and the peer's port.
		b := r.ClientAddr(req).AppendTo(tw.ip[:0])
		ip = unsafe.String(unsafe.SliceData(b), len(b))
		port, ok = -1, false
		if _, p, err := net.SplitHostPort(req.RemoteAddr); err == nil {
			if p, err := strconv.Atoi(p); err == nil {
				port, ok = p, true
			}
		}
	}
	a[n] = SpanAttribute{Key: "net.peer.ip", Value: ip}
	n++
	if ok {
		a[n] = SpanAttribute{Key: "net.peer.port", Int: int64(port), IsInt: true}
		n++
	}
	e.Attributes = a[:n]
	tw.span.End(e)
	tw.reset(n, r.restarter != nil)
	tracedWriters.Put(tw)
}

// reset clears tw, whose first n attributes were used, for the pool:
// nothing of the request stays, the fields that refer to it cleared one
// by one (the text buffers are written over; of an attribute, its value:
// its key is a constant, its number no reference), the location name
// kept, and the span that ended when keepSpan, for a SpanRestarter to
// start the next in (TestTracedWriterReset).
func (tw *tracedWriter) reset(n int, keepSpan bool) {
	for i := range tw.attrs[:n] {
		tw.attrs[i].Value = ""
	}
	if !keepSpan {
		tw.span = nil
	}
	tw.w, tw.status, tw.tracing = nil, 0, nil
	tw.name, tw.nameRoute, tw.namePath, tw.errorPage = "", nil, "", ""
	tw.value[0], tw.pending, tw.state = "", false, ""
	tw.replaced, tw.client = false, [2][]string{}
	tw.end = SpanEnd{}
}

// ipv4Peer reads a peer address "a.b.c.d:port" whose address is an IPv4
// address in its canonical text (as the kernel's peer addresses are), so
// that the text is what ClientAddr's String would be: the address's text
// and the port, without parsing either twice. ok is false for any other
// form, which the caller reads the general way.
func ipv4Peer(remote string) (ip string, port int, ok bool) {
	// Four fields of one to three digits, no leading zero (netip refuses
	// those), none over 255, each followed by '.' and the last by ':':
	// a field's digits read one by one, unrolled.
	i := 0
	for f := range 4 {
		if i >= len(remote) {
			return "", 0, false
		}
		v := int(remote[i] - '0')
		if v > 9 {
			return "", 0, false
		}
		i++
		if i < len(remote) && remote[i]-'0' <= 9 {
			if v == 0 {
				return "", 0, false
			}
			v = v*10 + int(remote[i]-'0')
			i++
			if i < len(remote) && remote[i]-'0' <= 9 {
				if v = v*10 + int(remote[i]-'0'); v > 255 {
					return "", 0, false
				}
				i++
			}
		}
		sep := byte('.')
		if f == 3 {
			sep = ':'
		}
		if i >= len(remote) || remote[i] != sep {
			return "", 0, false
		}
		i++
	}
	ip = remote[:i-1]
	if n := len(remote) - i; n < 1 || n > 9 {
		return "", 0, false
	}
	for ; i < len(remote); i++ {
		d := remote[i] - '0'
		if d > 9 {
			return "", 0, false
		}
		port = port*10 + int(d)
	}
	return ip, port, true
}

// httpFlavor is the module's http.flavor: "1.0", "1.1", "2.0", else "".
func httpFlavor(req *http.Request) string {
	switch {
	case req.ProtoMajor == 1 && req.ProtoMinor == 1:
		return "1.1"
	case req.ProtoMajor == 2:
		return "2.0"
	case req.ProtoMajor == 1 && req.ProtoMinor == 0:
		return "1.0"
	}
	return ""
}

// serverName is nginx's server_name of the server block that answered:
// the host's name, "_" for the catch-all (ingress-nginx's default
// server).
func serverName(d *decision) string {
	if vh := d.res.Host; vh != nil && vh.Name != "" {
		return vh.Name
	}
	return "_"
}

// serverName is the module's http.server_name, nginx's server_name of
// the server block: serverName's, but a wildcard Ingress host is the
// regex ingress-nginx writes for it (template.go buildServerName:
// "*.example.com" is `~^(?<subdomain>[\w-]+)\.example\.com$`). tw
// keeps the last it made, for its host.
func (tw *tracedWriter) serverName(d *decision) string {
	vh := d.res.Host
	if vh == nil || !strings.HasPrefix(vh.Name, "*.") || vh.DeepWildcard {
		return serverName(d)
	}
	if vh != tw.cacheHost {
		tw.cacheHost = vh
		tw.cacheServer = `~^(?<subdomain>[\w-]+)\.` + strings.ReplaceAll(vh.Name[2:], ".", `\.`) + `$`
	}
	return tw.cacheServer
}

// tracedWriter notes the status a traced request is answered with, and
// holds the span and what it ends with (tracedWriters).
type tracedWriter struct {
	w       http.ResponseWriter
	status  int
	tracing *match.Tracing
	span    Span
	// name is the span's name at the start, for the location nameRoute
	// and the path namePath.
	name      string
	nameRoute *match.Route
	namePath  string
	// errorPage is the nginx location of the error page that answered
	// (errorPageLocation), "" for none.
	errorPage string
	// field is the Traceparent header field's line, its value never
	// changed once set; value is the header's slice, the value's text
	// in field. pending: the context is not on the request's headers yet
	// (traceHeaders), state is its tracestate.
	field   [len(tracedFieldName) + 55]byte
	value   [1]string
	pending bool
	state   string
	// replaced: traceHeaders put the context on the request's headers in
	// place of client, the client's traceparent and tracestate lines.
	replaced bool
	client   [2][]string
	// end is what the span ends with: its attributes in attrs, the
	// client address's text in ip.
	end   SpanEnd
	attrs [12]SpanAttribute
	ip    [64]byte
	// cacheName is the location name spanName made last, for the route
	// cacheRoute and a path that was (cacheExact) or was not the route's
	// own; it outlives the request.
	cacheRoute *match.Route
	cacheExact bool
	cacheName  string
	// cacheServer is the server name serverName made last, for the
	// wildcard host cacheHost; it outlives the request.
	cacheHost   *match.VirtualHost
	cacheServer string
}

func (t *tracedWriter) Header() http.Header { return t.w.Header() }

func (t *tracedWriter) WriteHeader(code int) {
	if t.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		t.status = code
	}
	t.w.WriteHeader(code)
}

func (t *tracedWriter) Write(p []byte) (int, error) {
	if t.status == 0 {
		t.status = http.StatusOK
	}
	return t.w.Write(p)
}

// Relay lets a traced response head go to the client as an untraced one
// does, straight from the backend's fields (h1.Relayer), when the writer
// under it can; the status is noted as WriteHeader notes it.
func (t *tracedWriter) Relay(res *h1.Response, hide h1.Hider) bool {
	rl, ok := t.w.(h1.Relayer)
	if !ok || !rl.Relay(res, hide) {
		return false
	}
	if t.status == 0 {
		t.status = res.Status // Relay takes final answers only
	}
	return true
}

// Hijack is an Upgrade's tunnel once the backend answered 101.
func (t *tracedWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(t.w).Hijack()
	if err == nil && t.status == 0 {
		t.status = http.StatusSwitchingProtocols
	}
	return c, rw, err
}

// FlushError and Unwrap let http.ResponseController reach the
// connection through the writer.
func (t *tracedWriter) FlushError() error { return http.NewResponseController(t.w).Flush() }

func (t *tracedWriter) Unwrap() http.ResponseWriter { return t.w }

// asRestarter is t as a SpanRestarter, nil when it is not one.
func asRestarter(t Tracer) SpanRestarter {
	rs, _ := t.(SpanRestarter)
	return rs
}
