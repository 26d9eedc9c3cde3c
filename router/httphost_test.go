package router

import (
	"bufio"
	"io"
	"log"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/router/h1"
)

// absoluteFormHeads are requests whose absolute-form target names
// shop.example.com while the Host field, if any, names another host: nginx
// 1.22 on loopback gives "GET http://a.example/x" with "Host: b.example:81"
// $http_host "b.example:81" and $host "a.example"; with HTTP/1.0 and no
// Host field, $http_host is empty.
const (
	absWithHost    = "GET http://shop.example.com%s HTTP/1.1\r\nHost: b.example:81\r\n"
	absWithoutHost = "GET http://shop.example.com%s HTTP/1.0\r\n"
)

// serveH1 serves h with router/h1, which keeps an absolute-form request's
// Host field, and returns a function sending one request head (without
// its final CRLF) on a new connection.
func serveH1(t *testing.T, h http.Handler) func(head string) *http.Response {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	own := &h1.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = own.Serve(ln) }()
	t.Cleanup(func() { _ = own.Close() })
	return func(head string) *http.Response {
		t.Helper()
		conn, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer conn.Close()
		_, err = io.WriteString(conn, head+"Connection: close\r\n\r\n")
		require.NoError(t, err)
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err, head)
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
}
