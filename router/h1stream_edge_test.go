package router

import (
	"bufio"
	"io"
	"log"
	"net"
	"net/http"
	"testing"
	"time"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/h1"
)

// h1EdgeRouter serves a router with one catch-all route to the backend at
// backendAddr over router/h1's server, its handler wrapped by wrap when
// not nil, and returns the router's address.
func h1EdgeRouter(t *testing.T, backendAddr string, pol *match.Policy, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	r := newTestRouter(Options{})
	b := httpBackend("prod/web:80", backendAddr)
	rt := route(match.Prefix, "/", b)
	if pol != nil {
		rt = policyRoute("/", b, pol)
	}
	r.Publish(table("edge", vhost("", nil, rt)))
	t.Cleanup(r.CloseIdleConnections)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = r
	if wrap != nil {
		h = wrap(r)
	}
	s := &h1.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return ln.Addr().String()
}

func h1EdgeDial(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	return c, bufio.NewReader(c)
}

// TestStreamedBodyReachesEchoingBackendWhole: with request buffering
// off, a backend that answers while it still reads the request body (an
// echo, a bidirectional stream) gets the whole body. The response's
// first flush sends the client its head as the body sender still
// forwards the body: the server leaves the body to it (full duplex)
// rather than draining it then, as it would for a handler that did not
// read it.
func TestStreamedBodyReachesEchoingBackendWhole(t *testing.T) {
	got := make(chan string, 1)
	backend := rawServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		first := make([]byte, 4)
		if _, err := io.ReadFull(req.Body, first); err != nil {
			got <- "error: " + err.Error()
			return
		}
		// Answer at once with what came so far, as an echo would.
		io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n"+string(first)+"\r\n")
		rest, err := io.ReadAll(req.Body)
		io.WriteString(c, "0\r\n\r\n")
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- string(first) + string(rest)
	})
	addr := h1EdgeRouter(t, backend, &match.Policy{StreamRequestBody: true}, nil)
	c, br := h1EdgeDial(t, addr)
	io.WriteString(c, "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n4\r\naaaa\r\n")
	time.Sleep(100 * time.Millisecond)
	io.WriteString(c, "4\r\nbbbb\r\n")
	time.Sleep(100 * time.Millisecond)
	io.WriteString(c, "4\r\ncccc\r\n")
	time.Sleep(100 * time.Millisecond)
	io.WriteString(c, "4\r\ndddd\r\n0\r\n\r\n")
	res, err := http.ReadResponse(br, &http.Request{Method: "POST"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	if string(b) != "aaaa" {
		t.Errorf("the client got %q, want the echo's \"aaaa\"", b)
	}
	select {
	case body := <-got:
		if body != "aaaabbbbccccdddd" {
			t.Fatalf("the backend got the request body %q; the client sent \"aaaabbbbccccdddd\"", body)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the backend never got the body's end")
	}
}
