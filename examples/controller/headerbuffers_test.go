package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// large-client-header-buffers "4 8k" (config.go NewDefault,
// nginx.tmpl:272 large_client_header_buffers): nginx answers 414 to a
// request line longer than one buffer and 400 "Request Header Or Cookie
// Too Large" to a header field longer than one, or to fields that fill
// every buffer.
func TestHeaderBuffers(t *testing.T) {
	h := headerBuffers(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }), 4, 8<<10)
	serve := func(target string, header map[string]string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	assert.Equal(t, 204, serve("/"+strings.Repeat("a", 8000), nil).Code)
	w := serve("/"+strings.Repeat("a", 8200), nil)
	assert.Equal(t, 414, w.Code)
	w = serve("/", map[string]string{"Cookie": strings.Repeat("c", 8200)})
	assert.Equal(t, 400, w.Code)
	assert.Contains(t, w.Body.String(), "Request Header Or Cookie Too Large")
	assert.Equal(t, 204, serve("/", map[string]string{"Cookie": strings.Repeat("c", 8000)}).Code)
	// Fields each within a buffer, all together over the four.
	many := map[string]string{}
	for _, k := range []string{"A", "B", "C"} {
		many["X-"+k] = strings.Repeat("v", 8000)
	}
	assert.Equal(t, 204, serve("/", many).Code)
	many["X-D"], many["X-E"] = strings.Repeat("v", 8000), strings.Repeat("v", 1000)
	w = serve("/", many)
	assert.Equal(t, 400, w.Code)
	assert.Contains(t, w.Body.String(), "Request Header Or Cookie Too Large")
}

// Through the controller's listeners, under either HTTP/1 server: heads
// of every size over the buffers get nginx's answers, never 431 (net/http
// answers 431 past netHTTPHeadRoom only).
func TestHeaderBuffersListeners(t *testing.T) {
	for _, value := range []string{http1Ramjet, http1NetHTTP} {
		cfg := config{manifests: t.TempDir(), httpAddr: "127.0.0.1:0", pollInterval: time.Hour, http1Server: value}
		ctx, cancel := context.WithCancel(context.Background())
		inst, err := start(ctx, cfg, slog.New(slog.DiscardHandler))
		require.NoError(t, err)
		for _, tc := range []struct {
			head string
			code int
		}{
			{"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n", 404},
			{"GET /" + strings.Repeat("a", 9000) + " HTTP/1.1\r\nHost: a.test\r\n\r\n", 414},
			{"GET /" + strings.Repeat("a", 50000) + " HTTP/1.1\r\nHost: a.test\r\n\r\n", 414},
			{"GET / HTTP/1.1\r\nHost: a.test\r\nCookie: " + strings.Repeat("c", 9000) + "\r\n\r\n", 400},
			{"GET / HTTP/1.1\r\nHost: a.test\r\nCookie: " + strings.Repeat("c", 50000) + "\r\n\r\n", 400},
			{"GET / HTTP/1.1\r\nHost: a.test\r\n" + strings.Repeat("X-A: "+strings.Repeat("a", 7000)+"\r\n", 5) + "\r\n", 400},
			{"GET / HTTP/1.1\r\nHost: a.test\r\n" + strings.Repeat("X-A: "+strings.Repeat("a", 7000)+"\r\n", 9) + "\r\n", 400},
		} {
			c, err := net.Dial("tcp", inst.HTTPAddr)
			require.NoError(t, err)
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			go io.WriteString(c, tc.head)
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			require.NoError(t, err, value)
			body, _ := io.ReadAll(res.Body)
			assert.Equal(t, tc.code, res.StatusCode, "%s: head of %d bytes", value, len(tc.head))
			if tc.code == 400 {
				assert.Contains(t, string(body), "Request Header Or Cookie Too Large", value)
			}
			c.Close()
		}
		// HTTP/2 (cleartext, prior knowledge): 400 for a field, :path
		// too, over a buffer or a list over all, never 431.
		h2c := new(http.Protocols)
		h2c.SetUnencryptedHTTP2(true)
		client := &http.Client{Transport: &http.Transport{Protocols: h2c}}
		for _, tc := range []struct {
			path   string
			header http.Header
			code   int
		}{
			{"/", nil, 404},
			{"/" + strings.Repeat("a", 9000), nil, 400},
			{"/", http.Header{"Cookie": {strings.Repeat("c", 9000)}}, 400},
			{"/", http.Header{"Cookie": {strings.Repeat("c", 50000)}}, 400},
			{"/", http.Header{"X-A": {strings.Repeat("a", 7000)}, "X-B": {strings.Repeat("a", 7000)}, "X-C": {strings.Repeat("a", 7000)}, "X-D": {strings.Repeat("a", 7000)}, "X-E": {strings.Repeat("a", 7000)}}, 400},
		} {
			req, err := http.NewRequest(http.MethodGet, "http://"+inst.HTTPAddr+tc.path, nil)
			require.NoError(t, err)
			req.Host = "a.test"
			for k, v := range tc.header {
				req.Header[k] = v
			}
			res, err := client.Do(req)
			require.NoError(t, err, value)
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			assert.Equal(t, 2, res.ProtoMajor)
			assert.Equal(t, tc.code, res.StatusCode, "%s: HTTP/2 %s", value, tc.path[:min(len(tc.path), 10)])
			if tc.code == 400 {
				assert.Contains(t, string(body), "Request Header Or Cookie Too Large", value)
			}
		}
		client.CloseIdleConnections()
		cancel()
		require.NoError(t, inst.Wait())
	}
}
