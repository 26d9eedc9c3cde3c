package h2

import (
	"encoding/binary"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"ramjet.dev/ramjet/router/h1"
)

// Requests RFC 9113 §8.3.1 calls malformed, which nginx refuses too, are
// reset (PROTOCOL_ERROR) and never reach the handler: a proxy would
// otherwise copy them into a backend's HTTP/1 request line.

// refusedWith sends block on stream 1 and reports the status answered
// (0: the stream was reset with PROTOCOL_ERROR first), whether the
// handler ran, and what Server.Refused was told of (nil: nothing).
func refusedWith(t *testing.T, block []byte) (status int, served bool, r *h1.Refusal) {
	t.Helper()
	return refusedBy(t, &Server{}, block)
}

// refusedBy is refusedWith with s, whose Refused it sets and whose
// Handler, if any, it wraps.
func refusedBy(t *testing.T, s *Server, block []byte) (status int, served bool, r *h1.Refusal) {
	t.Helper()
	ran := make(chan struct{}, 1)
	got := make(chan h1.Refusal, 1)
	inner := s.Handler
	s.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if inner != nil {
			inner.ServeHTTP(w, r)
		}
		ran <- struct{}{}
	})
	s.Refused = func(r *h1.Refusal) {
		c := *r
		c.Request = &http.Request{Method: r.Request.Method, RequestURI: r.Request.RequestURI, Host: r.Request.Host}
		got <- c
	}
	rc := dialRaw(t, s)
	rc.frame(frameHeaders, flagEndHeaders|flagEndStream, 1, block)
	for {
		fh, p, err := rc.nextAny()
		if err != nil {
			t.Fatalf("no answer on stream 1: %v", err)
		}
		if fh.stream != 1 {
			continue
		}
		if fh.typ == frameRSTStream {
			if code := errCode(binary.BigEndian.Uint32(p)); code != codeProtocol {
				t.Fatalf("reset %d", code)
			}
			return 0, false, nil
		}
		if fh.typ != frameHeaders {
			t.Fatalf("frame %d on stream 1", fh.typ)
		}
		_ = newDecoder(4096, 1<<10).decode(p, sinkFunc(func(f field) error {
			if f.name == ":status" {
				status, _ = strconv.Atoi(f.value)
			}
			return nil
		}))
		break
	}
	select {
	case <-ran:
		served = true
	default:
	}
	select {
	case c := <-got:
		r = &c
	case <-time.After(100 * time.Millisecond):
	}
	return status, served, r
}

// TestServerRefusesMethodNotNginxs: a :method nginx does not read as one
// (ngx_http_v2_parse_method: upper-case letters, '_' and '-') answers
// 400 without the handler, as nginx answers it and router/h1 its request
// line's, and is told to Refused: one holding a space would put the
// client's own words into the backend's request line.
func TestServerRefusesMethodNotNginxs(t *testing.T) {
	head := func(method string) []byte {
		b := appendField(nil, ":method", method)
		b = append(b, 0x86, 0x84) // :scheme http, :path /
		return appendField(b, ":authority", "h2.test")
	}
	for _, m := range []string{"GET /admin", "GET\t/admin", "GET(", "G\"T", "GÉT", "get", ""} {
		status, served, r := refusedWith(t, head(m))
		if status != 400 || served {
			t.Errorf("method %q: status %d, served %v; want 400, not served", m, status, served)
			continue
		}
		if r == nil || r.Status != 400 || r.RequestLine != m+" / HTTP/2.0" || r.Request.Host != "h2.test" || r.HeadBytes == 0 || r.BodyBytes == 0 {
			t.Errorf("method %q: reported %+v", m, r)
		}
	}
	for _, m := range []string{"GET", "PROPFIND", "M-SEARCH", "X_Y"} {
		if status, served, r := refusedWith(t, head(m)); status != 200 || !served || r != nil {
			t.Errorf("method %q: status %d, served %v, reported %+v; want served", m, status, served, r)
		}
	}
	// Without a :method the request is malformed (RFC 9113 §8.3.1).
	if status, served, _ := refusedWith(t, []byte{0x86, 0x84}); status != 0 || served {
		t.Errorf("no :method: status %d, served %v; want reset", status, served)
	}
}

// TestServerRefusesPathNotAbsolute: a :path is an absolute path with its
// query (RFC 9113 §8.3.1), as nginx requires: it answers any other 400
// ("client sent invalid :path header"), OPTIONS * included, and so does
// the server, without the handler, telling Refused; an absolute URI there
// was served as its path. An empty :path is reset, as h2spec requires.
func TestServerRefusesPathNotAbsolute(t *testing.T) {
	head := func(method, path string) []byte {
		b := appendField(nil, ":method", method)
		b = append(b, 0x86) // :scheme http
		b = appendField(b, ":path", path)
		return appendField(b, ":authority", "h2.test")
	}
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"GET", "http://evil.test/x", 400},
		{"GET", "https://h2.test/", 400},
		{"GET", "x/y", 400},
		{"GET", "?q", 400},
		{"GET", "*", 400},
		{"OPTIONS", "*", 400},
		{"GET", "", 0},
		{"GET", "/%zz", 400},
		{"GET", "/x?y=http://z", 200},
		{"GET", "//x", 200},
	} {
		status, served, r := refusedWith(t, head(c.method, c.path))
		if status != c.status || served != (c.status == 200) {
			t.Errorf("%s %q: status %d, served %v; want %d", c.method, c.path, status, served, c.status)
			continue
		}
		if c.status == 400 && (r == nil || r.RequestLine != c.method+" "+c.path+" HTTP/2.0" || r.BodyBytes != int64(len("400 Bad Request: invalid request target"))) {
			t.Errorf("%s %q: reported %+v", c.method, c.path, r)
		}
	}
}

// TestServerRefusesFieldsNginxRefuses: a field value with a control byte
// (CR, LF, NUL and the rest but HTAB), a field name with a space, a colon,
// a control byte or DEL, and a :scheme nginx does not read as one answer
// 400 without the handler and are told to Refused, as router/h1 refuses
// the first two and nginx answers the CR, LF and NUL, a space or colon in
// a name, and the scheme 400: a reset was never logged. A name in upper
// case is still reset, as h2spec requires.
func TestServerRefusesFieldsNginxRefuses(t *testing.T) {
	for _, c := range []struct {
		fields []string
		status int
	}{
		{[]string{"x-a", "a\rb"}, 400},
		{[]string{"x-a", "a\nb"}, 400},
		{[]string{"x-a", "a\x00b"}, 400},
		{[]string{"x-a", "a\x01b"}, 400},
		{[]string{"user-agent", "a\x7f"}, 400},
		{[]string{"x a", "b"}, 400},
		{[]string{"x:a", "b"}, 400},
		{[]string{"x\x01a", "b"}, 400},
		{[]string{"x\x7f", "b"}, 400},
		{[]string{"X-A", "b"}, 0},
		{[]string{"x-a", "a\tb c"}, 200},
		{[]string{"x_a.b", "c"}, 200},
	} {
		b := []byte{0x82, 0x86, 0x84} // :method GET, :scheme http, :path /
		b = appendField(b, ":authority", "h2.test")
		for i := 0; i < len(c.fields); i += 2 {
			b = appendField(b, c.fields[i], c.fields[i+1])
		}
		status, served, r := refusedWith(t, b)
		if status != c.status || served != (c.status == 200) {
			t.Errorf("%q: status %d, served %v; want %d", c.fields, status, served, c.status)
			continue
		}
		if c.status == 400 && (r == nil || r.Status != 400 || r.RequestLine != "GET / HTTP/2.0") {
			t.Errorf("%q: reported %+v", c.fields, r)
		}
	}
	for _, c := range []struct {
		scheme string
		status int
	}{
		{"1http", 400},
		{"ht tp", 400},
		{"h/", 400},
		{"coap+tcp", 200},
		{"HTTPS", 200},
	} {
		b := []byte{0x82, 0x84} // :method GET, :path /
		b = appendField(b, ":scheme", c.scheme)
		b = appendField(b, ":authority", "h2.test")
		if status, served, _ := refusedWith(t, b); status != c.status || served != (c.status == 200) {
			t.Errorf(":scheme %q: status %d, served %v; want %d", c.scheme, status, served, c.status)
		}
	}
}

// TestServerDropsNonTokenName: a field whose name has a byte no token has
// but nginx reads ('@', '(', past 0x7f) is dropped and the request served,
// as nginx drops it under ignore-invalid-headers (checked on loopback over
// h2c: "x@a" and "x\xe9" never reach the backend, the request is answered
// 200) and router/h1 drops it; it was answered 400.
func TestServerDropsNonTokenName(t *testing.T) {
	got := make(chan http.Header, 1)
	for _, name := range []string{"x@a", "x(a)", "x\xe9", "{}"} {
		s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.Header.Clone() })}
		b := []byte{0x82, 0x86, 0x84} // :method GET, :scheme http, :path /
		b = appendField(b, ":authority", "h2.test")
		b = appendField(b, name, "b")
		b = appendField(b, "x-ok", "1")
		status, served, r := refusedBy(t, s, b)
		if status != 200 || !served || r != nil {
			t.Errorf("%q: status %d, served %v, reported %+v; want 200, served", name, status, served, r)
			continue
		}
		h := <-got
		if len(h) != 1 || h.Get("X-Ok") != "1" {
			t.Errorf("%q: handler got %v; want X-Ok alone", name, h)
		}
	}
}

// TestServerRefusesHostDisagreeing: a Host field naming another host than
// :authority, or a second :authority, answers 400 without the handler and
// is told to Refused, as nginx answers it ("client sent duplicate host
// header") and logs it: one was routed by :authority and the other
// dropped, so the front and the back of a chain could route the same
// request to different hosts. A reset was not logged.
func TestServerRefusesHostDisagreeing(t *testing.T) {
	for _, c := range []struct {
		fields []string
		ok     bool
	}{
		{[]string{":authority", "h2.test", "host", "other.test"}, false},
		{[]string{":authority", "h2.test", "host", "h2.test:80"}, false},
		{[]string{":authority", "h2.test", ":authority", "other.test"}, false},
		{[]string{":authority", "h2.test", ":authority", "h2.test"}, false},
		{[]string{":authority", "h2.test", "host", "h2.test"}, true},
		{[]string{":authority", "h2.test", "host", "H2.Test"}, true},
		{[]string{"host", "h2.test"}, true},
		{[]string{":authority", "h2.test"}, true},
	} {
		b := []byte{0x82, 0x86, 0x84} // :method GET, :scheme http, :path /
		for i := 0; i < len(c.fields); i += 2 {
			b = appendField(b, c.fields[i], c.fields[i+1])
		}
		servedOrRefused(t, c.fields, b, c.ok)
	}
}

// TestServerRefusesTwoHosts: two Host fields answer 400 without the
// handler, as nginx answers them ("client sent duplicate host header"),
// and are told to Refused: which one a server behind takes is anyone's
// guess.
func TestServerRefusesTwoHosts(t *testing.T) {
	for _, fields := range [][]string{
		{"host", "h2.test", "host", "other.test"},
		{"host", "h2.test", "host", "h2.test"},
		{":authority", "h2.test", "host", "h2.test", "host", "h2.test"},
	} {
		b := []byte{0x82, 0x86, 0x84} // :method GET, :scheme http, :path /
		for i := 0; i < len(fields); i += 2 {
			b = appendField(b, fields[i], fields[i+1])
		}
		status, served, r := refusedWith(t, b)
		if status != 400 || served {
			t.Errorf("%q: status %d, served %v; want 400, not served", fields, status, served)
			continue
		}
		if r == nil || r.Status != 400 || r.RequestLine != "GET / HTTP/2.0" || r.Request.Host != "h2.test" {
			t.Errorf("%q: reported %+v", fields, r)
		}
	}
}

// TestServerRefusesFramingFields: a field nginx takes once sent twice
// (two Content-Lengths, equal ones too, two Authorizations), a
// Content-Length that is not a number, and one above 0 on a request that
// ends with its head answer 400 without the handler and are told to
// Refused, as nginx answers and logs them ("client sent duplicate header
// line", "invalid Content-Length", "client prematurely closed stream")
// and router/h1 refuses the first two: a reset was not logged, and two
// Authorizations reached a handler that may take the other one than a
// backend.
func TestServerRefusesFramingFields(t *testing.T) {
	for _, c := range []struct {
		fields []string
		ok     bool
	}{
		{[]string{"content-length", "0", "content-length", "1"}, false},
		{[]string{"content-length", "0", "content-length", "0"}, false},
		{[]string{"content-length", "x"}, false},
		{[]string{"content-length", "-1"}, false},
		{[]string{"content-length", "5"}, false}, // the head ends the stream
		{[]string{"authorization", "Basic YTpi", "authorization", "Basic Yzpk"}, false},
		{[]string{"if-none-match", `"a"`, "if-none-match", `"b"`}, false},
		{[]string{"content-length", "0"}, true},
		{[]string{"accept", "a/b", "accept", "c/d"}, true},
	} {
		b := []byte{0x82, 0x86, 0x84} // :method GET, :scheme http, :path /
		b = appendField(b, ":authority", "h2.test")
		for i := 0; i < len(c.fields); i += 2 {
			b = appendField(b, c.fields[i], c.fields[i+1])
		}
		servedOrRefused(t, c.fields, b, c.ok)
	}
}

// TestServerRefusesTrace: TRACE answers 405 without the handler, as nginx
// answers it once the head is read and router/h1 does, and is told to
// Refused: a handler other than the router (the controller's health
// check) answered it, and a backend may echo the client's credentials
// back. A path nginx's parser refuses answers 400 first, as in router/h1.
func TestServerRefusesTrace(t *testing.T) {
	head := func(path string) []byte {
		b := appendField(nil, ":method", "TRACE")
		b = append(b, 0x86) // :scheme http
		b = appendField(b, ":path", path)
		return appendField(b, ":authority", "h2.test")
	}
	for _, c := range []struct {
		path   string
		status int
		body   string
	}{
		{"/x?y", 405, "405 Not Allowed\n"},
		{"/healthz", 405, "405 Not Allowed\n"},
		{"/../x", 400, "400 Bad Request: malformed request path"},
	} {
		status, served, r := refusedWith(t, head(c.path))
		if status != c.status || served {
			t.Errorf("TRACE %s: status %d, served %v; want %d, not served", c.path, status, served, c.status)
			continue
		}
		if r == nil || r.Status != c.status || r.RequestLine != "TRACE "+c.path+" HTTP/2.0" || r.BodyBytes != int64(len(c.body)) {
			t.Errorf("TRACE %s: reported %+v", c.path, r)
		}
	}
}

// TestServerReportsHeaderListTooLarge: a header list over the advertised
// size answers 431 on its stream and is told to Refused, so that it is
// logged as nginx logs the stream it ends (with no request line, nginx's
// "-"); it was answered unlogged.
func TestServerReportsHeaderListTooLarge(t *testing.T) {
	b := []byte{0x82, 0x86, 0x84} // :method GET, :scheme http, :path /
	b = appendField(b, ":authority", "h2.test")
	b = appendField(b, "x-big", strings.Repeat("b", 2000))
	status, served, r := refusedBy(t, &Server{MaxHeaderBytes: 1000}, b)
	if status != 431 || served {
		t.Fatalf("status %d, served %v; want 431, not served", status, served)
	}
	if r == nil || r.Status != 431 || r.RequestLine != "" || r.HeadBytes == 0 || r.BodyBytes == 0 {
		t.Errorf("reported %+v", r)
	}
}

// servedOrRefused sends b, a GET / for h2.test with fields: served when
// ok, else answered 400 without the handler and told to Refused.
func servedOrRefused(t *testing.T, fields []string, b []byte, ok bool) {
	t.Helper()
	status, served, r := refusedWith(t, b)
	if ok {
		if status != 200 || !served || r != nil {
			t.Errorf("%q: status %d, served %v, reported %+v; want served", fields, status, served, r)
		}
		return
	}
	if status != 400 || served {
		t.Errorf("%q: status %d, served %v; want 400, not served", fields, status, served)
		return
	}
	if r == nil || r.Status != 400 || r.RequestLine != "GET / HTTP/2.0" || r.Request.Host != "h2.test" {
		t.Errorf("%q: reported %+v", fields, r)
	}
}

// TestServerRefusesConnect: a CONNECT names only :authority (RFC 9113
// §8.5), and nginx answers it 400 without a request line
// (ngx_http_v2_construct_request_line: "client sent no :scheme header"):
// it reached the handler, which took its authority for a path. One with
// :scheme and :path is malformed, and reset.
func TestServerRefusesConnect(t *testing.T) {
	b := appendField(nil, ":method", "CONNECT")
	b = appendField(b, ":authority", "h2.test:443")
	status, served, r := refusedWith(t, b)
	if status != 400 || served {
		t.Fatalf("status %d, served %v; want 400, not served", status, served)
	}
	if r == nil || r.Status != 400 || r.RequestLine != "" || r.Request.Host != "h2.test:443" || r.BodyBytes == 0 {
		t.Errorf("reported %+v", r)
	}
	b = appendField(nil, ":method", "CONNECT")
	b = append(b, 0x86, 0x84) // :scheme http, :path /
	b = appendField(b, ":authority", "h2.test:443")
	if status, served, _ := refusedWith(t, b); status != 0 || served {
		t.Errorf("with :scheme and :path: status %d, served %v; want reset", status, served)
	}
}
