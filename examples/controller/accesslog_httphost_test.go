package main

import (
	"bufio"
	"bytes"
	"io"
	"log"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/router/h1"
)

// $http_host is the Host field as sent, also beside an absolute-form
// target whose host the router routes on ($host): nginx 1.22 on loopback
// logs "b.example:81" for "GET http://a.example/x" with
// "Host: b.example:81", and nothing ("-") for such a request without a
// Host field.
func TestNginxAccessLogHTTPHostAbsoluteForm(t *testing.T) {
	var out bytes.Buffer
	logged := make(chan struct{}, 1)
	write, _ := newNginxAccessLog(&out, `$http_host|$host`, escapeDefault, false)
	r := router.New(router.Options{Observer: func(rec router.Record) {
		write(rec)
		logged <- struct{}{}
	}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	own := &h1.Server{Handler: r, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = own.Serve(ln) }()
	t.Cleanup(func() { _ = own.Close() })
	for _, c := range []struct{ head, want string }{
		{"GET http://a.example/x HTTP/1.1\r\nHost: b.example:81\r\n", "b.example:81|a.example\n"},
		{"GET http://a.example/x HTTP/1.0\r\n", "-|a.example\n"},
		{"GET /x HTTP/1.1\r\nHost: B.example:81\r\n", "B.example:81|b.example\n"},
	} {
		out.Reset()
		conn, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		_, err = io.WriteString(conn, c.head+"Connection: close\r\n\r\n")
		require.NoError(t, err)
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err, c.head)
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		conn.Close()
		select {
		case <-logged:
		case <-time.After(5 * time.Second):
			t.Fatal("no record for " + c.head)
		}
		assert.Equal(t, c.want, out.String(), c.head)
	}
}
