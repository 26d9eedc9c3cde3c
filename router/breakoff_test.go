package router

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// breakingBackend answers every request with head and then closes its
// connection, whatever head promised.
func breakingBackend(t *testing.T, head string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					l, err := br.ReadString('\n')
					if err != nil || l == "\r\n" {
						break
					}
				}
				_, _ = io.WriteString(c, head)
				time.Sleep(20 * time.Millisecond)
			}()
		}
	}()
	return ln.Addr().String()
}

// TestBackendBreaksOffBody: a backend that closes its connection partway
// through the body leaves the client with the status and the bytes that
// came, then a cut connection (no last chunk), buffered or not, over
// the router's own HTTP/1.1 client and over ReverseProxy: nginx
// sends what it read before it closes the client's connection (nginx
// 1.22 on loopback: "200 OK … abc" for a Content-Length of 10, and a
// chunked answer's first chunk), where the router cut the connection
// with the head and bytes still unsent, and the client got no answer at
// all.
func TestBackendBreaksOffBody(t *testing.T) {
	testBreakOff(t, func(t *testing.T, o Options, backend string, pol *match.Policy) string {
		return h1EdgeRouterWith(t, o, backend, pol, nil)
	})
}

// TestProxiedAnswerWithoutContentType: a backend's answer without a
// Content-Type reaches the client without one, as nginx passes it (nginx
// 1.22 on loopback), where the server sniffed one from the body
// ("text/plain; charset=utf-8"). Buffered or not, relayed or through the
// header map, over the router's own HTTP/1.1 client and over ReverseProxy.
func TestProxiedAnswerWithoutContentType(t *testing.T) {
	for _, head := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
	} {
		for _, tr := range proxyPaths() {
			for _, o := range []Options{{Transport: tr.rt}, {Transport: tr.rt, ServerTokens: "ramjet"}} {
				for _, buffering := range []bool{false, true} {
					pol := &match.Policy{Proxy: &match.Proxying{Buffering: buffering, MaxTempFileSize: -1}}
					addr := h1EdgeRouterWith(t, o, breakingBackend(t, head), pol, nil)
					c, br := h1EdgeDial(t, addr)
					_, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: shop.example.com\r\n\r\n")
					require.NoError(t, err)
					res, err := http.ReadResponse(br, nil)
					require.NoError(t, err)
					b, _ := io.ReadAll(res.Body)
					assert.Equal(t, "abc", string(b))
					assert.Empty(t, res.Header.Values("Content-Type"), "%s server tokens %q buffering %v: %q", tr.name, o.ServerTokens, buffering, head)
				}
			}
		}
	}
}

// TestBackendBreaksOffBodyNetHTTP: under net/http's own server (an
// embedder serving the Router with http.Server) a backend that breaks its
// body off leaves the client with the head and the bytes that came, then
// a cut connection, as under router/h1 (TestBackendBreaksOffBody) and as
// nginx does; ReverseProxy's abort dropped what the server still
// buffered, and the client got no answer at all.
func TestBackendBreaksOffBodyNetHTTP(t *testing.T) {
	testBreakOff(t, func(t *testing.T, o Options, backend string, pol *match.Policy) string {
		r := newTestRouter(o)
		r.Publish(table("edge", vhost("", nil, policyRoute("/", httpBackend("prod/web:80", backend), pol))))
		t.Cleanup(r.CloseIdleConnections)
		front := httptest.NewUnstartedServer(r)
		front.Config.ErrorLog = log.New(io.Discard, "", 0)
		front.Start()
		t.Cleanup(front.Close)
		return front.Listener.Addr().String()
	})
}

// testBreakOff asks, through the router a front serves on the address it
// returns, for an answer its backend breaks off after "abc" (length
// given, or chunked), on each proxy path, buffered or not: the client
// gets the status and "abc", then the connection ends short.
func testBreakOff(t *testing.T, front func(t *testing.T, o Options, backend string, pol *match.Policy) string) {
	for _, tc := range []struct {
		name, head string
	}{
		{"length", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n"},
	} {
		for _, tr := range proxyPaths() {
			for _, buffering := range []bool{false, true} {
				t.Run(fmt.Sprint(tc.name, " ", tr.name, " buffering=", buffering), func(t *testing.T) {
					pol := &match.Policy{Proxy: &match.Proxying{Buffering: buffering, MaxTempFileSize: -1}}
					addr := front(t, Options{Transport: tr.rt}, breakingBackend(t, tc.head), pol)
					c, br := h1EdgeDial(t, addr)
					_, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: shop.example.com\r\n\r\n")
					require.NoError(t, err)
					res, err := http.ReadResponse(br, nil)
					require.NoError(t, err, "the client got no answer")
					assert.Equal(t, http.StatusOK, res.StatusCode)
					b, err := io.ReadAll(res.Body)
					assert.Equal(t, "abc", string(b))
					assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "the answer looked whole")
				})
			}
		}
	}
}
