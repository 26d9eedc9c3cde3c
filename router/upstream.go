package router

import (
	"bufio"
	"net/http"
	"strconv"

	"ramjet.dev/ramjet/router/h1"
)

// Request headers net/http's server leaves in the header map but a proxy
// must not pass on: hop-by-hop headers (RFC 9110 §7.6.1), the framing the
// fast path writes itself, Expect (the router answers it: see wrapBody),
// Proxy (see setForwarded), and what no path forwards (see withheld).
func skipRequestHeader(k string, x *exchange) bool {
	switch k {
	case "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
		"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Host", "Content-Length", "Proxy", "Expect":
		return true
	}
	return x.withheld(k)
}

// upgradeType is the protocol a request asks to switch to ("" when it
// asks for none), as ReverseProxy reads it.
func upgradeType(h http.Header) string {
	if !h1.ListsToken(h["Connection"], "Upgrade") {
		return ""
	}
	return h.Get("Upgrade")
}

// teTrailers reports that the client accepts trailers, the one TE value a
// proxy passes on.
func teTrailers(h http.Header) bool {
	for _, v := range h["Te"] {
		if h1.ListsToken([]string{v}, "trailers") {
			return true
		}
	}
	return false
}

// writeRequestHead writes the request line and headers of the request to
// the backend straight into the connection's buffer: the client's headers
// without hop-by-hop ones, the trace context of the request's span (trace,
// nil when not traced) when it is not on the headers, then the forwarded
// headers of SPEC §13. Nothing is copied into a header map first, and the
// head is put together in bw's free buffer and handed to it in one write
// when it fits there (headBuf). Each field line is written with the line
// end before it rather than after, so that the text between two values is
// one piece: a field the router sets costs two appends.
func writeRequestHead(bw *bufio.Writer, x *exchange, req *http.Request, upgrade string, length int64, trace *tracedWriter) {
	hb := headBuf{bw: bw, b: bw.AvailableBuffer()}
	hb.str(req.Method)
	hb.str(" ")
	hb.str(x.path)
	if x.hasQuery {
		hb.str("?")
		hb.str(x.query)
	}
	http10, conn := false, ""
	if p := x.proxying(); p != nil {
		conn = p.Connection
		http10 = p.HTTP10
	}
	switch {
	case conn != "":
		// connection-proxy-header: nginx.tmpl's proxy_set_header
		// Connection with its value, an upgrade's included.
		if http10 {
			hb.str(" HTTP/1.0\r\nConnection: ")
		} else {
			hb.str(" HTTP/1.1\r\nConnection: ")
		}
		hb.str(conn)
		hb.str("\r\nHost: ")
	case http10:
		// proxy-http-version 1.0: the connection ends with the response.
		hb.str(" HTTP/1.0\r\nConnection: close\r\nHost: ")
	default:
		hb.str(" HTTP/1.1\r\nHost: ")
	}
	hb.str(x.backendHost(req))
	if len(req.Header) > 0 {
		writeClientFields(&hb, x, req, trace)
	}
	switch {
	case upgrade == "" || http10:
	case conn != "":
		hb.str("\r\nUpgrade: ")
		hb.str(upgrade)
	default:
		hb.str("\r\nConnection: Upgrade\r\nUpgrade: ")
		hb.str(upgrade)
	}
	if tp, ts := trace.pendingTraceparent(); tp != "" {
		hb.str(tp) // the whole field, its line end first (tracing.go)
		if ts != "" {
			hb.field("Tracestate", ts)
		}
	}
	switch {
	case length > 0:
		var n [20]byte
		hb.str("\r\nContent-Length: ")
		hb.bytes(strconv.AppendInt(n[:0], length, 10))
	case length < 0:
		// No Trailer: the client's trailer is not passed on (see bodySender).
		hb.str("\r\nTransfer-Encoding: chunked")
	case req.Method == http.MethodPost || req.Method == http.MethodPut || req.Method == http.MethodPatch:
		hb.str("\r\nContent-Length: 0")
	}
	var f forwarding
	forwardingOf(&f, req, x)
	writeForwarded(&hb, &f)
	writeActionHeaders(&hb, x)
	hb.str("\r\n\r\n")
	hb.done()
}

// writeClientFields writes the client's header fields that are passed on,
// and TE: trailers when the client accepts trailers.
func writeClientFields(hb *headBuf, x *exchange, req *http.Request, trace *tracedWriter) {
	conn := req.Header["Connection"]
	tp, _ := trace.pendingTraceparent()
	for k, vs := range req.Header {
		if skipRequestHeader(k, x) || len(conn) > 0 && h1.ListsToken(conn, k) || x.act.replacesHeader(k) ||
			tp != "" && (k == "Traceparent" || k == "Tracestate") {
			// The span's context replaces the client's.
			continue
		}
		for _, v := range vs {
			hb.field(k, v)
		}
	}
	if teTrailers(req.Header) {
		hb.str("\r\nTe: trailers")
	}
}

func writeHeader(bw *bufio.Writer, k, v string) { h1.WriteField(bw, k, v) }

// headBuf puts a head together in the free part of bw's buffer (b, a
// window on it) and hands it to bw with one Write (done): a dozen fields
// written to bw one by one cost a call, a bounds check and a copy each,
// and the Write copies b onto itself once. A piece that does not fit in
// what is left goes to bw the usual way, which sends what bw holds, and b
// starts again on bw's free buffer after it.
type headBuf struct {
	bw *bufio.Writer
	b  []byte
}

// str is called, not inlined: a head is written by a few dozen calls,
// each site run once a request, and a copy of the append at every one of
// them spread writeRequestHead and writeForwarded over 13 KiB of code,
// most of it fetched from outside the instruction cache on every request.
// The reslice within capacity stores the length alone (no append's grow
// path, no write barrier).
//
//go:noinline
func (h *headBuf) str(s string) {
	n := len(h.b)
	if len(s) > cap(h.b)-n {
		h.strSlow(s)
		return
	}
	h.b = h.b[:n+len(s)]
	copy(h.b[n:], s)
}

func (h *headBuf) strSlow(s string) {
	h.bw.Write(h.b)
	h.bw.WriteString(s)
	h.b = h.bw.AvailableBuffer()
}

// bytes is str for a short p on the caller's stack, which it keeps there:
// only the rare piece that does not fit is copied to the heap.
func (h *headBuf) bytes(p []byte) {
	if len(p) > cap(h.b)-len(h.b) {
		h.strSlow(string(p))
		return
	}
	h.b = append(h.b, p...)
}

// field writes the field line "k: v", after the line end of the one
// before it.
func (h *headBuf) field(k, v string) {
	if len(k)+len(v)+4 > cap(h.b)-len(h.b) {
		h.strSlow("\r\n")
		h.str(k)
		h.str(": ")
		h.str(v)
		return
	}
	b := append(h.b, "\r\n"...)
	b = append(b, k...)
	b = append(b, ": "...)
	h.b = append(b, v...)
}

// joined writes the values of a repeated header as one, comma-separated.
func (h *headBuf) joined(vs []string) {
	for i, v := range vs {
		if i > 0 {
			h.str(", ")
		}
		h.str(v)
	}
}

// done hands what b holds to bw.
func (h *headBuf) done() {
	h.bw.Write(h.b)
	h.b = nil
}

// The fields of the client's scheme, the same for every request of it:
// ingress-nginx sets X-Scheme and X-Forwarded-Scheme, as
// X-Forwarded-Proto, to $pass_access_scheme.
const (
	schemeFieldsHTTP  = "\r\nX-Forwarded-Proto: http\r\nX-Scheme: http\r\nX-Forwarded-Scheme: http"
	schemeFieldsHTTPS = "\r\nX-Forwarded-Proto: https\r\nX-Scheme: https\r\nX-Forwarded-Scheme: https"
)

// writeForwarded writes what setForwarded sets, without building strings.
func writeForwarded(hb *headBuf, f *forwarding) {
	switch {
	case !f.full:
		if f.client != "" {
			hb.str("\r\nX-Forwarded-For: ")
			hb.str(f.client)
		}
	case len(f.prior) > 0 || f.peer != "":
		hb.str("\r\nX-Forwarded-For: ")
		hb.joined(f.prior)
		if f.peer != "" {
			if len(f.prior) > 0 {
				hb.str(", ")
			}
			hb.str(f.peer)
		}
	}
	if f.client != "" {
		hb.str("\r\nX-Real-Ip: ")
		hb.str(f.client)
	}
	if len(f.original) > 0 {
		hb.str("\r\nX-Original-Forwarded-For: ")
		hb.joined(f.original)
	}
	if f.host != "" {
		hb.str("\r\nX-Forwarded-Host: ")
		hb.str(f.host)
	}
	if len(f.originalHost) > 0 {
		hb.str("\r\nX-Original-Forwarded-Host: ")
		hb.joined(f.originalHost)
	}
	if f.originalURI != "" {
		hb.str("\r\nX-Original-Uri: ")
		hb.str(f.originalURI)
	}
	hb.str("\r\nX-Forwarded-Port: ")
	if f.port != 0 {
		var n [20]byte
		hb.bytes(strconv.AppendInt(n[:0], int64(f.port), 10))
	} else {
		hb.str(f.portText)
	}
	switch f.proto {
	case "http":
		hb.str(schemeFieldsHTTP)
	case "https":
		hb.str(schemeFieldsHTTPS)
	default:
		hb.str("\r\nX-Forwarded-Proto: ")
		hb.str(f.proto)
		hb.str("\r\nX-Scheme: ")
		hb.str(f.proto)
		hb.str("\r\nX-Forwarded-Scheme: ")
		hb.str(f.proto)
	}
	switch {
	case f.requestID != "":
		hb.str("\r\nX-Request-Id: ")
		hb.str(f.requestID)
	case !f.noID:
		var id [32]byte
		hb.str("\r\nX-Request-Id: ")
		if f.ids != nil {
			hb.bytes(f.ids.appendID(id[:0]))
		} else {
			hb.bytes(appendRequestID(id[:0]))
		}
	}
}
