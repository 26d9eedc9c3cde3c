package router

import (
	"bufio"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/h1"
)

// TestRecordHeaderBytes: HeaderBytes is the size of the response head the
// client got, so that with BytesOut it is nginx's $bytes_sent, which
// ingress-nginx's response_size and bytes_sent metrics observe: counted
// here on the wire of a real HTTP/1.1 server, for a proxied answer and
// one the router made.
func TestRecordHeaderBytes(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("X-Backend", "some value")
		w.Header().Set("Content-Length", "5")
		_, _ = io.WriteString(w, "hello")
	}))
	t.Cleanup(backend.Close)
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe})
	t.Cleanup(r.CloseIdleConnections)
	r.Publish(table("hb", vhost("shop.example.com", nil, route(match.Prefix, "/", httpBackend("prod/api:80", backend.Listener.Addr().String())))))
	front := httptest.NewServer(r)
	t.Cleanup(front.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	own := &h1.Server{Handler: r, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = own.Serve(ln) }()
	t.Cleanup(func() { _ = own.Close() })

	for _, tc := range []struct {
		server, host, addr string
	}{
		{"nethttp", "shop.example.com", front.Listener.Addr().String()},
		{"nethttp", "other.example.com", front.Listener.Addr().String()},
		{"h1", "shop.example.com", ln.Addr().String()},
		{"h1", "other.example.com", ln.Addr().String()},
	} {
		host := tc.server + " " + tc.host
		c, err := net.Dial("tcp", tc.addr)
		require.NoError(t, err)
		_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost: "+tc.host+"\r\nConnection: close\r\n\r\n")
		require.NoError(t, err)
		raw, err := io.ReadAll(c)
		require.NoError(t, err)
		c.Close()
		res, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(raw))), nil)
		require.NoError(t, err)
		body, _ := io.ReadAll(res.Body)
		<-rs.ch
		rec := rs.raw[len(rs.raw)-1]
		head := int64(len(raw) - len(body))
		// The server adds "Connection: close" to this request's answer
		// as the handler returns, after the record.
		head -= int64(len("Connection: close\r\n"))
		assert.Equal(t, int64(len(body)), rec.BytesOut, host)
		assert.Equal(t, head, rec.HeaderBytes, "%s: the head as sent:\n%s", host, raw[:len(raw)-len(body)])
	}
}
