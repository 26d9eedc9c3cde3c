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

// TestUnbufferedBodyWholeWithHeadIsResent: under proxy-request-buffering
// "off", a body that came whole with the request head is held as nginx
// holds it (ngx_http_read_client_request_body clears
// request_body_no_buffering when the whole body was pre-read), so a try
// that failed after sending it is sent again: on a new connection when
// the backend dropped the kept-alive one, to the next endpoint under
// proxy-next-upstream. A body that came after the head streams and is
// not, as in nginx 1.22 (checked on loopback: 200 after "502, 200" for
// the first, 502 for the second).
func TestUnbufferedBodyWholeWithHeadIsResent(t *testing.T) {
	t.Run("kept-alive connection dropped", func(t *testing.T) {
		bodies := make(chan string, 8)
		backend := rawServer(t, func(c net.Conn) {
			br := bufio.NewReader(c)
			for n := 1; ; n++ {
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				b, _ := io.ReadAll(req.Body)
				if len(b) > 0 {
					bodies <- string(b)
				}
				if n == 2 {
					return // the second request on each connection: dropped
				}
				if _, err := io.WriteString(c, okResponse); err != nil {
					return
				}
			}
		})
		front := h1EdgeRouter(t, backend, &match.Policy{StreamRequestBody: true}, nil)
		exchange := func(late bool) int {
			c, br := h1EdgeDial(t, front)
			head := "PUT / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\n"
			if late {
				_, _ = io.WriteString(c, head)
				time.Sleep(100 * time.Millisecond)
				_, _ = io.WriteString(c, "data")
			} else {
				_, _ = io.WriteString(c, head+"data")
			}
			res, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, res.Body)
			return res.StatusCode
		}
		// The first request on the first connection; the second, dropped,
		// is sent again on a second connection.
		require.Equal(t, http.StatusOK, exchange(false))
		assert.Equal(t, http.StatusOK, exchange(false), "a body whole with the head is sent again")
		assert.Equal(t, []string{"data", "data", "data"}, drain(bodies))
		// The second connection's second request: its body came late.
		assert.Equal(t, http.StatusBadGateway, exchange(true), "a body that streamed is not")
	})

	t.Run("proxy-next-upstream http_503", func(t *testing.T) {
		unavailable, asked := statusBackend(t, http.StatusServiceUnavailable)
		echo := bodyEcho(t)
		r := newTestRouter(Options{})
		t.Cleanup(r.CloseIdleConnections)
		// Round-robin starts with the first endpoint: the 503.
		rt := policyRoute("/", httpBackend("prod/web:80", unavailable, echo), &match.Policy{
			StreamRequestBody: true,
			Proxy:             &match.Proxying{NextUpstream: match.RetryError | match.Retry503, MaxTempFileSize: -1},
		})
		r.Publish(table("edge", vhost("", nil, rt)))
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		s := &h1.Server{Handler: r, ErrorLog: log.New(io.Discard, "", 0)}
		go func() { _ = s.Serve(ln) }()
		t.Cleanup(func() { _ = s.Close() })
		c, br := h1EdgeDial(t, ln.Addr().String())
		_, _ = io.WriteString(c, "PUT / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\ndata")
		res, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		b, _ := io.ReadAll(res.Body)
		assert.Equal(t, http.StatusOK, res.StatusCode)
		assert.Equal(t, "data", string(b), "the next endpoint got the body")
		assert.Equal(t, int32(1), asked.Load())
	})
}

// drain is what ch holds now.
func drain(ch chan string) []string {
	var out []string
	for {
		select {
		case s := <-ch:
			out = append(out, s)
		default:
			return out
		}
	}
}
