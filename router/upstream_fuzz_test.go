package router

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// FuzzH1Response sends whatever a backend might answer through the
// router's HTTP/1.1 path. It must never panic or leave the endpoint in
// flight, and a response net/http reads as complete and final must reach
// the client with the same status and body.
func FuzzH1Response(f *testing.F) {
	for _, seed := range []string{
		okResponse,
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n3\r\nabc\r\n0\r\nX-T: v\r\n\r\n",
		"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\nuntil close",
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"garbage\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX-F: a\r\n b\r\nContent-Length: 2\r\n\r\nok",
	} {
		f.Add([]byte(seed))
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(f, err)
	var mu sync.Mutex
	var answer []byte
	var wg sync.WaitGroup
	f.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			// Read one request head, answer with the current bytes, close.
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
				mu.Lock()
				_, _ = c.Write(answer)
				mu.Unlock()
			}
			c.Close()
		}
	})
	addr := l.Addr().String()
	r := newTestRouter(Options{ReadTimeout: 2 * time.Second})
	r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
	f.Cleanup(r.CloseIdleConnections)

	f.Fuzz(func(t *testing.T, data []byte) {
		mu.Lock()
		answer = data
		mu.Unlock()
		// Whatever the previous answer left in the pool is not this one's.
		r.CloseIdleConnections()
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Host = "web"
		rec := httptest.NewRecorder()
		aborted := serveRecovering(r, rec, req)
		require.Zero(t, r.InFlight(addr))
		require.GreaterOrEqual(t, rec.Code, 100)

		want, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(data)), req)
		if err != nil || want.StatusCode < 200 {
			return
		}
		wantBody, err := io.ReadAll(want.Body)
		if err != nil {
			return
		}
		for k := range want.Header {
			if strings.Contains(k, " ") {
				// A name with a space before its colon: net/http reads
				// it, the router refuses it as nginx does (see h1Head).
				require.Equal(t, http.StatusBadGateway, rec.Code)
				return
			}
		}
		for k := range want.Trailer {
			if strings.Contains(k, " ") {
				return // the same refusal in the trailer: the response is cut off
			}
		}
		if folded(string(data)) && (rec.Code == http.StatusBadGateway || aborted) {
			return // obs-fold: net/http joins the lines, the router refuses them as nginx does
		}
		require.False(t, aborted, "a complete response was cut off")
		require.Equal(t, want.StatusCode, rec.Code)
		require.Equal(t, string(wantBody), rec.Body.String())
	})
}

// serveRecovering serves req and reports whether the handler aborted the
// response with http.ErrAbortHandler, the one panic it may raise.
func serveRecovering(h http.Handler, w http.ResponseWriter, req *http.Request) (aborted bool) {
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				panic(v)
			}
			aborted = true
		}
	}()
	h.ServeHTTP(w, req)
	return false
}

// folded reports a line of data that starts with a space or a tab: what
// net/textproto reads as the continuation of the field before.
func folded(data string) bool {
	return strings.Contains(data, "\n ") || strings.Contains(data, "\n\t")
}
