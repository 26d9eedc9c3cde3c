package h2

import (
	"encoding/binary"
	"net/http"
	"testing"
)

// Requests RFC 9113 §8.3.1 calls malformed, which nginx refuses too, are
// reset (PROTOCOL_ERROR) and never reach the handler: a proxy would
// otherwise copy them into a backend's HTTP/1 request line.

// refused sends block on stream 1 and reports whether the stream was
// reset with PROTOCOL_ERROR before any answer; served: the handler ran.
func refused(t *testing.T, block []byte) (reset, served bool) {
	t.Helper()
	ran := make(chan struct{}, 1)
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ran <- struct{}{} })}
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
		select {
		case <-ran:
			served = true
		default:
		}
		return fh.typ == frameRSTStream && errCode(binary.BigEndian.Uint32(p)) == codeProtocol, served
	}
}

// TestServerRefusesMethodNotAToken: a :method is a token (RFC 9110
// §9.1), as router/h1 requires of the request line's; one holding a space
// would put the client's own words into the backend's request line.
func TestServerRefusesMethodNotAToken(t *testing.T) {
	head := func(method string) []byte {
		b := appendField(nil, ":method", method)
		b = append(b, 0x86, 0x84) // :scheme http, :path /
		return appendField(b, ":authority", "h2.test")
	}
	for _, m := range []string{"GET /admin", "GET\t/admin", "GET(", "G\"T", "GÉT"} {
		if reset, served := refused(t, head(m)); !reset || served {
			t.Errorf("method %q: reset %v, served %v; want reset, not served", m, reset, served)
		}
	}
	for _, m := range []string{"GET", "PROPFIND", "M-SEARCH", "get"} {
		if reset, served := refused(t, head(m)); reset || !served {
			t.Errorf("method %q: reset %v, served %v; want served", m, reset, served)
		}
	}
}

// TestServerRefusesPathNotAbsolute: a :path is an absolute path with its
// query, or "*" for OPTIONS (RFC 9113 §8.3.1), as nginx requires (it
// answers any other 400); an absolute URI there was served as its path.
func TestServerRefusesPathNotAbsolute(t *testing.T) {
	head := func(method, path string) []byte {
		b := appendField(nil, ":method", method)
		b = append(b, 0x86) // :scheme http
		b = appendField(b, ":path", path)
		return appendField(b, ":authority", "h2.test")
	}
	for _, c := range []struct {
		method, path string
		ok           bool
	}{
		{"GET", "http://evil.test/x", false},
		{"GET", "https://h2.test/", false},
		{"GET", "x/y", false},
		{"GET", "?q", false},
		{"GET", "*", false},
		{"OPTIONS", "*", true},
		{"GET", "/x?y=http://z", true},
		{"GET", "//x", true},
	} {
		reset, served := refused(t, head(c.method, c.path))
		if reset == c.ok || served != c.ok {
			t.Errorf("%s %q: reset %v, served %v; want served %v", c.method, c.path, reset, served, c.ok)
		}
	}
}

// TestServerRefusesHostDisagreeing: a Host field naming another host than
// :authority, or two Host fields, make a request malformed (RFC 9113
// §8.3.1; nginx answers both 400): one was routed by :authority and the
// other dropped, so the front and the back of a chain could route the
// same request to different hosts.
func TestServerRefusesHostDisagreeing(t *testing.T) {
	for _, c := range []struct {
		fields []string
		ok     bool
	}{
		{[]string{":authority", "h2.test", "host", "other.test"}, false},
		{[]string{":authority", "h2.test", "host", "h2.test:80"}, false},
		{[]string{"host", "h2.test", "host", "other.test"}, false},
		{[]string{"host", "h2.test", "host", "h2.test"}, false},
		{[]string{":authority", "h2.test", "host", "h2.test"}, true},
		{[]string{":authority", "h2.test", "host", "H2.Test"}, true},
		{[]string{"host", "h2.test"}, true},
		{[]string{":authority", "h2.test"}, true},
	} {
		b := []byte{0x82, 0x86, 0x84} // :method GET, :scheme http, :path /
		for i := 0; i < len(c.fields); i += 2 {
			b = appendField(b, c.fields[i], c.fields[i+1])
		}
		reset, served := refused(t, b)
		if reset == c.ok || served != c.ok {
			t.Errorf("%q: reset %v, served %v; want served %v", c.fields, reset, served, c.ok)
		}
	}
}
