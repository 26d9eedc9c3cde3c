package router

import (
	"bufio"
	"io"
	"log"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/h1"
)

// TestOwnAnswerClosesConnection: nginx closes the connection after an
// answer of its own with 400, 413, 414, 500 or 501
// (ngx_http_special_response_handler turns keepalive off for them; 495,
// 496 and 497 too, which it sends as 400), error page or not, and keeps it
// after its other answers (404, 503). A request pipelined behind such an
// answer is not served: the answer says Connection: close and the
// connection ends after it.
func TestOwnAnswerClosesConnection(t *testing.T) {
	ok := httpBackend("prod/web:80", "10.0.0.1:8080")
	none := route(match.Prefix, "/none", nil)
	none.Split = &match.Split{Alternatives: []match.Alternative{{Weight: 1}}}
	tab := mustTable(match.Spec{
		VirtualHosts: []*match.VirtualHost{vhost("shop.example.com", nil, route(match.Prefix, "/", ok), none,
			route(match.Prefix, "/empty", httpBackend("prod/empty:80")))},
		Backends: []*match.Backend{ok, httpBackend("prod/empty:80")},
	})
	r := newTestRouter(Options{Transport: &countingTransport{counts: map[string]int{}}})
	r.Publish(tab)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	own := &h1.Server{Handler: r, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = own.Serve(ln) }()
	t.Cleanup(func() { _ = own.Close() })

	const next = "GET /next HTTP/1.1\r\nHost: shop.example.com\r\n\r\n"
	for _, tc := range []struct {
		name, req string
		status    int
		closes    bool
	}{
		{"path above /", "GET /../x HTTP/1.1\r\nHost: shop.example.com\r\n\r\n", 400, true},
		{"decoded NUL", "GET /a%00 HTTP/1.1\r\nHost: shop.example.com\r\n\r\n", 400, true},
		{"userinfo", "GET http://u@shop.example.com/ HTTP/1.1\r\nHost: shop.example.com\r\n\r\n", 400, true},
		{"empty Host", "GET / HTTP/1.1\r\nHost:\r\n\r\n", 400, true},
		{"malformed Host", "GET / HTTP/1.1\r\nHost: shop..example.com\r\n\r\n", 400, true},
		{"no valid backend", "GET /none HTTP/1.1\r\nHost: shop.example.com\r\n\r\n", 500, true},
		{"no route", "GET / HTTP/1.1\r\nHost: other.example.com\r\n\r\n", 404, false},
		{"no endpoints", "GET /empty HTTP/1.1\r\nHost: shop.example.com\r\n\r\n", 503, false},
		{"served", "GET / HTTP/1.1\r\nHost: shop.example.com\r\n\r\n", 200, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", ln.Addr().String())
			require.NoError(t, err)
			defer c.Close()
			require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
			_, err = io.WriteString(c, tc.req+next)
			require.NoError(t, err)
			br := bufio.NewReader(c)
			res, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			_, err = io.Copy(io.Discard, res.Body)
			require.NoError(t, err)
			require.Equal(t, tc.status, res.StatusCode)
			assert.Equal(t, tc.closes, res.Close, "Connection: close")
			if tc.closes {
				rest, err := io.ReadAll(br)
				require.NoError(t, err)
				assert.Empty(t, string(rest), "the pipelined request is not served")
				return
			}
			res, err = http.ReadResponse(br, nil)
			require.NoError(t, err, "the pipelined request is served")
			res.Body.Close()
		})
	}
}
