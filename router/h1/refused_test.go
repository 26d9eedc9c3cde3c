package h1

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Every request the server ends without the handler reaches Refused, as
// nginx logs every request it read a byte of: with the status answered,
// 400 for a head the client broke off and 408 for one that timed out
// (unanswered), the request line as far as it came, and the head's fields
// when it was read whole. A connection that sent nothing is no request.
func TestRefusedReported(t *testing.T) {
	long := strings.Repeat("a", 3000)
	cases := []struct {
		name, send  string
		close       bool // the client closes after send
		status      int  // reported
		line        string
		method, uri string
		host        string
		answered    bool
	}{
		{name: "bad request line", send: "GET /a b HTTP/1.1\r\nHost: a\r\n\r\n", status: 400, line: "GET /a b HTTP/1.1", answered: true},
		{name: "URI too long", send: "GET /" + long + " HTTP/1.1\r\nHost: a\r\n\r\n", status: 414, line: ("GET /" + long)[:2048], method: "GET", uri: "/" + long, host: "a", answered: true},
		{name: "header too long", send: "GET /h HTTP/1.1\r\nHost: a\r\nCookie: " + long + "\r\n\r\n", status: 400, line: "GET /h HTTP/1.1", method: "GET", uri: "/h", host: "a", answered: true},
		{name: "bad Host", send: "GET /x?q HTTP/1.1\r\nHost: a b\r\n\r\n", status: 400, line: "GET /x?q HTTP/1.1", method: "GET", uri: "/x?q", host: "a b", answered: true},
		{name: "framing", send: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", status: 400, line: "POST / HTTP/1.1", method: "POST", uri: "/", host: "a", answered: true},
		{name: "version", send: "GET / HTTP/3.0\r\nHost: a\r\n\r\n", status: 505, line: "GET / HTTP/3.0", method: "GET", uri: "/", host: "a", answered: true},
		{name: "broken off in the line", send: "GET /par", close: true, status: 400, line: "GET /par", answered: true},
		{name: "broken off in the fields", send: "GET /f HTTP/1.1\r\nHost: a\r\n", close: true, status: 400, line: "GET /f HTTP/1.1", answered: true},
		{name: "timed out", send: "GET /t HTTP/1.1\r\nHost: a\r\n", status: 408, line: "GET /t HTTP/1.1"},
		{name: "nothing sent", close: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan Refusal, 2)
			s := &Server{
				Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),
				HeaderBuffers:     HeaderBuffers{Number: 2, Size: 2048},
				ReadHeaderTimeout: 300 * time.Millisecond,
				Refused: func(r *Refusal) {
					c := *r
					c.Request = nil
					if r.Request.Method != tc.method || r.Request.RequestURI != tc.uri || r.Request.Host != tc.host || r.Request.RemoteAddr == "" || r.Request.Context() == nil {
						t.Errorf("request %q %q host %q from %q", r.Request.Method, r.Request.RequestURI, r.Request.Host, r.Request.RemoteAddr)
					}
					got <- c
				},
			}
			addr := serve(t, s)
			c, br := dial(t, addr)
			io.WriteString(c, tc.send)
			if tc.close {
				c.(interface{ CloseWrite() error }).CloseWrite()
			}
			answer, _ := io.ReadAll(br)
			select {
			case r := <-got:
				if tc.status == 0 {
					t.Fatalf("reported %+v for a connection that sent nothing", r)
				}
				if r.Status != tc.status || r.RequestLine != tc.line {
					t.Fatalf("reported %d %q, want %d %q", r.Status, r.RequestLine, tc.status, tc.line)
				}
				if tc.answered != (r.HeadBytes > 0 && r.BodyBytes > 0) || r.HeadBytes+r.BodyBytes != int64(len(answer)) {
					t.Fatalf("reported %d+%d bytes, %d sent", r.HeadBytes, r.BodyBytes, len(answer))
				}
				if r.Start.IsZero() || r.Duration < 0 || tc.status == 408 && r.Duration < 250*time.Millisecond {
					t.Fatalf("start %v duration %v", r.Start, r.Duration)
				}
			case <-time.After(time.Second):
				if tc.status != 0 {
					t.Fatal("not reported")
				}
			}
		})
	}
}

// A served request, and a kept-alive connection that idles out after it,
// report nothing.
func TestRefusedNotForServed(t *testing.T) {
	got := make(chan *Refusal, 1)
	s := &Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }),
		ReadHeaderTimeout: 100 * time.Millisecond,
		IdleTimeout:       100 * time.Millisecond,
		Refused:           func(r *Refusal) { got <- r },
	}
	addr := serve(t, s)
	c, br := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	if res, body := readResponse(t, br, "GET"); res.StatusCode != 200 || body != "ok" {
		t.Fatalf("%d %q", res.StatusCode, body)
	}
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("the connection did not idle out")
	}
	select {
	case r := <-got:
		t.Fatalf("reported %+v", r)
	case <-time.After(200 * time.Millisecond):
	}
}

// TRACE never reaches the handler: it answers 405 as nginx answers it, on a
// connection that stays open, and is reported as refused.
func TestTraceNotAllowed(t *testing.T) {
	got := make(chan Refusal, 1)
	var methods []string
	s := &Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { methods = append(methods, r.Method) }),
		Refused: func(r *Refusal) { c := *r; c.Request = nil; got <- c },
	}
	addr := serve(t, s)
	c, br := dial(t, addr)
	io.WriteString(c, "TRACE /t HTTP/1.1\r\nHost: a\r\nCookie: secret\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n")
	res, body := readResponse(t, br, "TRACE")
	if res.StatusCode != 405 || res.Close || strings.Contains(body, "secret") {
		t.Fatalf("%d close %v %q", res.StatusCode, res.Close, body)
	}
	if res, _ := readResponse(t, br, "GET"); res.StatusCode != 200 {
		t.Fatalf("the next request: %d", res.StatusCode)
	}
	if len(methods) != 1 || methods[0] != "GET" {
		t.Fatalf("the handler saw %v", methods)
	}
	r := <-got
	if r.Status != 405 || r.RequestLine != "TRACE /t HTTP/1.1" || r.HeadBytes == 0 || r.BodyBytes != int64(len(body)) {
		t.Fatalf("reported %+v", r)
	}
}

// A TRACE whose target nginx's parser refuses (a path that climbs above
// "/", a bad or NUL escape, userinfo) answers 400 and closes, as nginx
// refuses the request line before it reads the method's fate from the
// head, and as the router orders it on the other server paths.
func TestTraceMalformedTargetRefusedFirst(t *testing.T) {
	for _, target := range []string{"/../x", "/a/%2e%2e/%2E%2E/x", "/%zz", "/a%00", "http://u@a/", "/a/..%2f..%2fx"} {
		t.Run(target, func(t *testing.T) {
			got := make(chan Refusal, 1)
			s := &Server{
				Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Errorf("handler saw %s %s", r.Method, r.RequestURI) }),
				Refused: func(r *Refusal) { c := *r; c.Request = nil; got <- c },
			}
			addr := serve(t, s)
			c, br := dial(t, addr)
			io.WriteString(c, "TRACE "+target+" HTTP/1.1\r\nHost: a\r\n\r\n")
			res, _ := readResponse(t, br, "TRACE")
			if res.StatusCode != 400 || !res.Close {
				t.Fatalf("%d close %v", res.StatusCode, res.Close)
			}
			if r := <-got; r.Status != 400 || r.RequestLine != "TRACE "+target+" HTTP/1.1" {
				t.Fatalf("reported %+v", r)
			}
		})
	}
	// What nginx resolves within the root, or cuts at '#', is TRACE still.
	for _, target := range []string{"/a/../x", "/x#/../../y", "http://a/b"} {
		s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}
		c, br := dial(t, serve(t, s))
		io.WriteString(c, "TRACE "+target+" HTTP/1.1\r\nHost: a\r\n\r\n")
		if res, _ := readResponse(t, br, "TRACE"); res.StatusCode != 405 {
			t.Fatalf("%s: %d", target, res.StatusCode)
		}
	}
}
