package router

import (
	"bufio"
	"io"
	"log"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/h1"
)

// http.host is the module's req->headers_in.host: the Host field as sent
// ($http_host), also beside an absolute-form target, whose host routes
// the request ($host); without a Host field the span has no http.host
// (nginx 1.22 on loopback: "GET http://a.example/x" with
// "Host: b.example:81" has $http_host "b.example:81" and $host
// "a.example"; with HTTP/1.0 and no Host, $http_host is empty). Served
// by router/h1, which keeps that field for the router.
func TestTracingHostAbsoluteForm(t *testing.T) {
	tr := newEndedTracer()
	r, _ := tracingRouter(t, &match.Tracing{}, Options{Tracer: tr})
	t.Cleanup(r.CloseIdleConnections)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	own := &h1.Server{Handler: r, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = own.Serve(ln) }()
	t.Cleanup(func() { _ = own.Close() })
	for _, c := range []struct {
		head string
		want any
	}{
		{"GET http://shop.example.com/api/x HTTP/1.1\r\nHost: b.example:81\r\n", "b.example:81"},
		{"GET http://shop.example.com/api/x HTTP/1.0\r\n", nil},
		{"GET /api/x HTTP/1.1\r\nHost: shop.example.com:8080\r\n", "shop.example.com:8080"},
	} {
		conn, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		_, err = io.WriteString(conn, c.head+"Connection: close\r\n\r\n")
		require.NoError(t, err)
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err, c.head)
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		conn.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, c.head)
		s := tr.next(t)
		assert.Equal(t, c.want, s.attrs()["http.host"], c.head)
	}
}
