package router

import (
	"bufio"
	"net/http"
	"strconv"

	"ramjet.dev/ramjet/router/h1"
)

// Request headers net/http's server leaves in the header map but a proxy
// must not pass on: hop-by-hop headers (RFC 9110 §7.6.1), the framing the
// fast path writes itself, and what no path forwards (see withheld).
func skipRequestHeader(k string, hs *headerSettings) bool {
	switch k {
	case "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
		"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Host", "Content-Length":
		return true
	}
	return withheld(k, hs)
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
// headers of SPEC §13. Nothing is copied into a header map first.
func writeRequestHead(bw *bufio.Writer, x *exchange, req *http.Request, upgrade string, length int64, trace *tracedWriter) {
	bw.WriteString(req.Method)
	bw.WriteByte(' ')
	bw.WriteString(x.path)
	if x.hasQuery {
		bw.WriteByte('?')
		bw.WriteString(x.query)
	}
	http10 := false
	if p := x.proxying(); p != nil && p.HTTP10 {
		// proxy-http-version 1.0: the connection ends with the response.
		http10 = true
		bw.WriteString(" HTTP/1.0\r\nConnection: close\r\nHost: ")
	} else {
		bw.WriteString(" HTTP/1.1\r\nHost: ")
	}
	bw.WriteString(x.backendHost(req))
	bw.WriteString("\r\n")
	conn := req.Header["Connection"]
	tp, ts := trace.pendingTraceparent()
	for k, vs := range req.Header {
		if skipRequestHeader(k, x.headers()) || len(conn) > 0 && h1.ListsToken(conn, k) || x.act.replacesHeader(k) ||
			tp != "" && (k == "Traceparent" || k == "Tracestate") {
			// The span's context replaces the client's.
			continue
		}
		for _, v := range vs {
			writeHeader(bw, k, v)
		}
	}
	if upgrade != "" && !http10 {
		writeHeader(bw, "Connection", "Upgrade")
		writeHeader(bw, "Upgrade", upgrade)
	}
	if tp != "" {
		bw.WriteString(tp) // the whole field (tracing.go)
		if ts != "" {
			writeHeader(bw, "Tracestate", ts)
		}
	}
	if teTrailers(req.Header) {
		writeHeader(bw, "Te", "trailers")
	}
	switch {
	case length > 0:
		bw.WriteString("Content-Length: ")
		bw.Write(strconv.AppendInt(bw.AvailableBuffer(), length, 10))
		bw.WriteString("\r\n")
	case length < 0:
		// No Trailer: the client's trailer is not passed on (see bodySender).
		bw.WriteString("Transfer-Encoding: chunked\r\n")
	case req.Method == http.MethodPost || req.Method == http.MethodPut || req.Method == http.MethodPatch:
		bw.WriteString("Content-Length: 0\r\n")
	}
	f := forwardingOf(req, x)
	writeForwarded(bw, &f)
	writeActionHeaders(bw, x)
	bw.WriteString("\r\n")
}

func writeHeader(bw *bufio.Writer, k, v string) { h1.WriteField(bw, k, v) }

// writeJoined writes the values of a repeated header as one, comma-separated.
func writeJoined(bw *bufio.Writer, vs []string) {
	for i, v := range vs {
		if i > 0 {
			bw.WriteString(", ")
		}
		bw.WriteString(v)
	}
}

// writeForwarded writes what setForwarded sets, without building strings.
func writeForwarded(bw *bufio.Writer, f *forwarding) {
	switch {
	case !f.full:
		if f.client != "" {
			writeHeader(bw, "X-Forwarded-For", f.client)
		}
	case len(f.prior) > 0 || f.peer != "":
		bw.WriteString("X-Forwarded-For: ")
		writeJoined(bw, f.prior)
		if f.peer != "" {
			if len(f.prior) > 0 {
				bw.WriteString(", ")
			}
			bw.WriteString(f.peer)
		}
		bw.WriteString("\r\n")
	}
	if f.client != "" {
		writeHeader(bw, "X-Real-Ip", f.client)
	}
	if len(f.prior) > 0 {
		bw.WriteString("X-Original-Forwarded-For: ")
		writeJoined(bw, f.prior)
		bw.WriteString("\r\n")
	}
	if f.host != "" {
		writeHeader(bw, "X-Forwarded-Host", f.host)
	}
	if len(f.originalHost) > 0 {
		bw.WriteString("X-Original-Forwarded-Host: ")
		writeJoined(bw, f.originalHost)
		bw.WriteString("\r\n")
	}
	if f.originalURI != "" {
		writeHeader(bw, "X-Original-Uri", f.originalURI)
	}
	// The fields every request gets, put together in bw's buffer and
	// copied once when they fit (see h1.WriteField).
	const fixed = len("X-Forwarded-Port: 65535\r\nX-Forwarded-Proto: \r\nX-Scheme: \r\nX-Forwarded-Scheme: \r\nX-Request-Id: \r\n") + 2*16
	if fixed+len(f.portText)+3*len(f.proto)+len(f.requestID) <= bw.Available() {
		b := append(bw.AvailableBuffer(), "X-Forwarded-Port: "...)
		if f.port != 0 {
			b = strconv.AppendInt(b, int64(f.port), 10)
		} else {
			b = append(b, f.portText...)
		}
		b = append(b, "\r\nX-Forwarded-Proto: "...)
		b = append(b, f.proto...)
		b = append(b, "\r\nX-Scheme: "...)
		b = append(b, f.proto...)
		b = append(b, "\r\nX-Forwarded-Scheme: "...)
		b = append(b, f.proto...)
		b = append(b, "\r\n"...)
		switch {
		case f.requestID != "":
			b = append(b, "X-Request-Id: "...)
			b = append(b, f.requestID...)
			b = append(b, "\r\n"...)
		case !f.noID:
			b = append(b, "X-Request-Id: "...)
			b = appendRequestID(b)
			b = append(b, "\r\n"...)
		}
		bw.Write(b)
		return
	}
	bw.WriteString("X-Forwarded-Port: ")
	if f.port != 0 {
		bw.Write(strconv.AppendInt(bw.AvailableBuffer(), int64(f.port), 10))
	} else {
		bw.WriteString(f.portText)
	}
	bw.WriteString("\r\nX-Forwarded-Proto: ")
	bw.WriteString(f.proto)
	bw.WriteString("\r\nX-Scheme: ")
	bw.WriteString(f.proto)
	bw.WriteString("\r\nX-Forwarded-Scheme: ")
	bw.WriteString(f.proto)
	bw.WriteString("\r\n")
	switch {
	case f.requestID != "":
		writeHeader(bw, "X-Request-Id", f.requestID)
	case !f.noID:
		bw.WriteString("X-Request-Id: ")
		bw.Write(appendRequestID(bw.AvailableBuffer()))
		bw.WriteString("\r\n")
	}
}
