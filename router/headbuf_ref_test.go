package router

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/h1"
)

func writeFieldRef(bw *bufio.Writer, k, v string) {
	bw.WriteString(k)
	bw.WriteString(": ")
	bw.WriteString(v)
	bw.WriteString("\r\n")
}

// writeRequestHeadRef is writeRequestHead as it was before it put the head
// together in one buffer (headBuf), a write to bw per piece: the reference
// TestRequestHeadWriter holds the new one to. It writes the request line and headers of the request to
// the backend straight into the connection's buffer: the client's headers
// without hop-by-hop ones, the trace context of the request's span (trace,
// nil when not traced) when it is not on the headers, then the forwarded
// headers of SPEC §13. Nothing is copied into a header map first.
func writeRequestHeadRef(bw *bufio.Writer, x *exchange, req *http.Request, upgrade string, length int64, trace *tracedWriter) {
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
		if skipRequestHeader(k, x) || len(conn) > 0 && h1.ListsToken(conn, k) || x.act.replacesHeader(k) ||
			tp != "" && (k == "Traceparent" || k == "Tracestate") {
			// The span's context replaces the client's.
			continue
		}
		for _, v := range vs {
			writeFieldRef(bw, k, v)
		}
	}
	if upgrade != "" && !http10 {
		writeFieldRef(bw, "Connection", "Upgrade")
		writeFieldRef(bw, "Upgrade", upgrade)
	}
	if tp != "" {
		writeFieldRef(bw, "Traceparent", tp[len(tracedFieldName):])
		if ts != "" {
			writeFieldRef(bw, "Tracestate", ts)
		}
	}
	if teTrailers(req.Header) {
		writeFieldRef(bw, "Te", "trailers")
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
	var f forwarding
	forwardingOf(&f, req, x)
	writeForwardedRef(bw, &f)
	if x.act.prefixSet {
		writeFieldRef(bw, "X-Forwarded-Prefix", x.act.prefix)
	}
	bw.WriteString("\r\n")
}

// writeJoined writes the values of a repeated header as one, comma-separated.
func writeJoinedRef(bw *bufio.Writer, vs []string) {
	for i, v := range vs {
		if i > 0 {
			bw.WriteString(", ")
		}
		bw.WriteString(v)
	}
}

// writeForwarded writes what setForwarded sets, without building strings.
func writeForwardedRef(bw *bufio.Writer, f *forwarding) {
	switch {
	case !f.full:
		if f.client != "" {
			writeFieldRef(bw, "X-Forwarded-For", f.client)
		}
	case len(f.prior) > 0 || f.peer != "":
		bw.WriteString("X-Forwarded-For: ")
		writeJoinedRef(bw, f.prior)
		if f.peer != "" {
			if len(f.prior) > 0 {
				bw.WriteString(", ")
			}
			bw.WriteString(f.peer)
		}
		bw.WriteString("\r\n")
	}
	if f.client != "" {
		writeFieldRef(bw, "X-Real-Ip", f.client)
	}
	if len(f.original) > 0 {
		bw.WriteString("X-Original-Forwarded-For: ")
		writeJoinedRef(bw, f.original)
		bw.WriteString("\r\n")
	}
	if f.host != "" {
		writeFieldRef(bw, "X-Forwarded-Host", f.host)
	}
	if len(f.originalHost) > 0 {
		bw.WriteString("X-Original-Forwarded-Host: ")
		writeJoinedRef(bw, f.originalHost)
		bw.WriteString("\r\n")
	}
	if f.originalURI != "" {
		writeFieldRef(bw, "X-Original-Uri", f.originalURI)
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
		writeFieldRef(bw, "X-Request-Id", f.requestID)
	case !f.noID:
		bw.WriteString("X-Request-Id: ")
		bw.Write(appendRequestID(bw.AvailableBuffer()))
		bw.WriteString("\r\n")
	}
}

// headCase is one input class of the request head writer.
type headCase struct {
	name    string
	req     func() *http.Request
	x       func(x *exchange)
	upgrade string
	length  int64
	trace   *tracedWriter
}

// TestRequestHeadWriter holds writeRequestHead to writeRequestHeadRef, its
// former piece-by-piece self, on every input class and with bw's buffer
// from too small for any field to large enough for the whole head, so that
// every way a piece spills over (headBuf) is taken. A generated request
// ID, different each time, is compared by its shape.
func TestRequestHeadWriter(t *testing.T) {
	base := func() *http.Request {
		r := httptest.NewRequest("GET", "http://a.test/p?q=1", nil)
		r.RemoteAddr = "192.0.2.7:5555"
		r.RequestURI = "/p?q=1"
		return r
	}
	with := func(f func(r *http.Request)) func() *http.Request {
		return func() *http.Request { r := base(); f(r); return r }
	}
	long := strings.Repeat("v", 5000)
	tw := &tracedWriter{pending: true, state: "k=v"}
	tw.value[0] = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	copy(tw.field[:], tracedFieldName+tw.value[0])
	http10 := &match.Route{Location: match.Location{Policy: &match.Policy{Proxy: &match.Proxying{HTTP10: true}}}}
	cases := []headCase{
		{name: "plain", req: base},
		{name: "no query", req: with(func(r *http.Request) { r.RequestURI = "/p" }), x: func(x *exchange) { x.hasQuery, x.query = false, "" }},
		{name: "empty query", x: func(x *exchange) { x.query = "" }},
		{name: "one client field", req: with(func(r *http.Request) { r.Header.Set("User-Agent", "ua") })},
		{name: "repeated field", req: with(func(r *http.Request) { r.Header["Accept"] = []string{"a", "b"} })},
		{name: "long field", req: with(func(r *http.Request) { r.Header.Set("Cookie", long) })},
		{name: "long target", x: func(x *exchange) { x.path = "/" + long }},
		{name: "hop-by-hop", req: with(func(r *http.Request) {
			r.Header.Set("Connection", "X-Drop, keep-alive")
			r.Header.Set("X-Drop", "1")
			r.Header.Set("Keep-Alive", "5")
		})},
		{name: "te trailers", req: with(func(r *http.Request) { r.Header["Te"] = []string{"gzip", "trailers"} })},
		{name: "withheld", req: with(func(r *http.Request) {
			r.Header.Set("X-Real-Ip", "6.6.6.6")
			r.Header.Set("X_Bad", "1")
		})},
		{name: "forwarded", req: with(func(r *http.Request) {
			r.Header["X-Forwarded-For"] = []string{"10.0.0.1", "10.0.0.2"}
			r.Header["X-Forwarded-Host"] = []string{"h1", "h2"}
			r.Header["X-Request-Id"] = []string{"client-id", "second"}
		})},
		{name: "full forwarded", req: with(func(r *http.Request) { r.Header["X-Forwarded-For"] = []string{"10.0.0.1"} }),
			x: func(x *exchange) { x.fullForwardedFor = true }},
		{name: "full forwarded alone", x: func(x *exchange) { x.fullForwardedFor = true }},
		{name: "real ip", x: func(x *exchange) { x.realIP = "203.0.113.9" }},
		{name: "no peer", req: with(func(r *http.Request) { r.RemoteAddr = "" })},
		{name: "listener port", req: with(func(r *http.Request) {
			*r = *r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8443}))
		})},
		{name: "host port", req: with(func(r *http.Request) { r.Host = "a.test:8080" })},
		{name: "request id given", x: func(x *exchange) { x.requestID = "given" }},
		{name: "no request id", x: func(x *exchange) { x.hdr = &headerSettings{noRequestID: true} }},
		{name: "original uri", x: func(x *exchange) { x.hdr = &headerSettings{originalURI: true} }},
		{name: "action", x: func(x *exchange) { x.act = routeAction{host: "b.test", prefix: "/p", prefixSet: true} }},
		{name: "http10", x: func(x *exchange) { x.route = http10 }, upgrade: "websocket"},
		{name: "upgrade", upgrade: "websocket"},
		{name: "trace", req: with(func(r *http.Request) { r.Header.Set("Traceparent", "client") }), trace: tw},
		{name: "length", length: 12345},
		{name: "chunked", length: -1},
		{name: "post", req: with(func(r *http.Request) { r.Method = "POST" })},
		{name: "https", x: func(x *exchange) { x.https = true }},
		{name: "own id block", x: func(x *exchange) { x.ids = newIDBlock() }},
	}
	idShape := regexp.MustCompile(`X-Request-Id: [0-9a-f]{32}\r\n`)
	for _, c := range cases {
		if c.req == nil {
			c.req = base
		}
		write := func(size int, f func(*bufio.Writer, *exchange, *http.Request, string, int64, *tracedWriter)) string {
			req := c.req()
			x := &exchange{path: "/p", query: "q=1", hasQuery: true}
			if c.x != nil {
				c.x(x)
			}
			var out bytes.Buffer
			bw := bufio.NewWriterSize(&out, size)
			f(bw, x, req, c.upgrade, c.length, c.trace)
			if err := bw.Flush(); err != nil {
				t.Fatal(err)
			}
			return idShape.ReplaceAllString(out.String(), "X-Request-Id: <generated>\r\n")
		}
		want := write(64<<10, writeRequestHeadRef)
		for _, size := range []int{16, 40, 64, 100, 200, 333, 4096, 64 << 10} {
			if got := write(size, writeRequestHead); !sameHead(got, want) {
				t.Errorf("%s, buffer %d:\n%q\nwant\n%q", c.name, size, got, want)
			}
		}
	}
}

// sameHead compares two heads whose client fields may come in any order
// (a header map's): the same request line and Host, the same lines.
func sameHead(a, b string) bool {
	la, lb := strings.Split(a, "\r\n"), strings.Split(b, "\r\n")
	if len(la) != len(lb) || len(la) < 2 || la[0] != lb[0] || la[1] != lb[1] {
		return false
	}
	slices.Sort(la)
	slices.Sort(lb)
	return slices.Equal(la, lb)
}

// writeForwarded writes a scheme other than http and https, which no
// exchange has today, field by field as writeForwardedRef does.
func TestWriteForwardedOtherScheme(t *testing.T) {
	f := forwarding{peer: "192.0.2.1", client: "192.0.2.1", host: "a", port: 80, proto: "h", requestID: "id"}
	var got, want bytes.Buffer
	bw := bufio.NewWriter(&got)
	hb := headBuf{bw: bw, b: bw.AvailableBuffer()}
	hb.str("GET / HTTP/1.1\r\nHost: a")
	writeForwarded(&hb, &f)
	hb.str("\r\n\r\n")
	hb.done()
	_ = bw.Flush()
	rw := bufio.NewWriter(&want)
	rw.WriteString("GET / HTTP/1.1\r\nHost: a\r\n")
	writeForwardedRef(rw, &f)
	rw.WriteString("\r\n")
	_ = rw.Flush()
	if got.String() != want.String() {
		t.Fatalf("%q\nwant\n%q", got.String(), want.String())
	}
}
