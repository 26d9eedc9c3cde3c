package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Heads the HTTP/1 loop refuses are access-logged as nginx logs them, with
// $request as far as it was read (nginx's ngx_http_variable_request_line;
// a request line over a buffer is logged as the buffer held it) and the
// status sent, but no request series counts them: ingress-nginx's monitor
// runs in its locations' log_by_lua, and these reach no location.
func TestRefusedHeadsLogged(t *testing.T) {
	accessLog := &syncBuffer{}
	cfg := config{manifests: t.TempDir(), httpAddr: "127.0.0.1:0", debugAddr: "127.0.0.1:0", pollInterval: time.Hour,
		enableMetrics: true, enableAccessLog: true, accessLogFormat: accessLogUpstreamInfo, accessLogOut: accessLog}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inst, err := start(ctx, cfg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)

	long := "GET /" + strings.Repeat("a", 9000) + " HTTP/1.1"
	for _, tc := range []struct{ head, logged string }{
		{"HELLO\r\n\r\n", `"HELLO" 400 15 "-" "-" 0 `},
		{long + "\r\nHost: a.test\r\n\r\n", `"` + long[:8192] + `" 414 `},
		{"GET / HTTP/1.1\r\nHost: a.test\r\nCookie: " + strings.Repeat("c", 9000) + "\r\n\r\n", `"GET / HTTP/1.1" 400 `},
	} {
		c, err := net.Dial("tcp", inst.HTTPAddr)
		require.NoError(t, err)
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		go io.WriteString(c, tc.head)
		_, _ = io.ReadAll(c)
		c.Close()
		require.Eventually(t, func() bool { return accessLog.count(tc.logged) == 1 }, 5*time.Second, 10*time.Millisecond,
			"want %.60q in %.300q", tc.logged, accessLog.String())
	}
	client := &http.Client{}
	s := scrapeURL(t, client, inst.DebugAddr)
	for _, status := range []string{"400", "414"} {
		assert.Zero(t, s.value("nginx_ingress_controller_requests", map[string]string{"status": status}), status)
	}
	cancel()
	require.NoError(t, inst.Wait())
}

// TRACE, a method nginx does not read, a field nginx takes once sent
// twice and a "*" target are logged the same whichever server read them: the HTTP/1 loop
// refuses them itself, net/http's servers (-http1-server, -http2-server
// net/http) leave them to the router, which refuses them as the loop
// does, and router/h2 refuses a method itself and leaves it the rest.
// None reaches a backend or a request series.
func TestRefusedLoggedOnEveryServer(t *testing.T) {
	for _, tc := range []struct {
		name         string
		http1, http2 string
		h2c          bool
	}{
		{"loop", "", "", false},
		{"net/http HTTP/1", http1NetHTTP, "", false},
		{"router/h2", "", "", true},
		{"net/http HTTP/2", "", http1NetHTTP, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			accessLog := &syncBuffer{}
			cfg := config{manifests: t.TempDir(), httpAddr: "127.0.0.1:0", debugAddr: "127.0.0.1:0", pollInterval: time.Hour,
				enableMetrics: true, enableAccessLog: true, accessLogFormat: accessLogUpstreamInfo, accessLogOut: accessLog,
				http1Server: tc.http1, http2Server: tc.http2}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			inst, err := start(ctx, cfg, slog.New(slog.DiscardHandler))
			require.NoError(t, err)
			tr := &http.Transport{}
			proto := "HTTP/1.1"
			if tc.h2c {
				tr.Protocols = new(http.Protocols)
				tr.Protocols.SetUnencryptedHTTP2(true)
				proto = "HTTP/2.0"
			}
			defer tr.CloseIdleConnections()
			for _, c := range []struct {
				method, target string
				header         http.Header
				status, bytes  int
			}{
				{"TRACE", "/r?x", nil, 405, len("405 Not Allowed\n")},
				{"get", "/r?x", nil, 400, len("400 Bad Request: invalid method")},
				{"GET", "/r?x", http.Header{"Authorization": {"Basic YTpi", "Basic Yzpk"}}, 400, len("400 Bad Request: duplicate header line")},
				{"OPTIONS", "*", nil, 400, len("400 Bad Request: invalid request target")},
			} {
				target := c.target
				if target == "*" {
					target = ""
				}
				req, err := http.NewRequest(c.method, "http://"+inst.HTTPAddr+target, nil)
				require.NoError(t, err)
				if c.target == "*" {
					req.URL.Opaque = "*"
				}
				req.Host = "a.test"
				for k, v := range c.header {
					req.Header[k] = v
				}
				res, err := tr.RoundTrip(req)
				require.NoError(t, err)
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				assert.Equal(t, c.status, res.StatusCode, c.method)
				logged := fmt.Sprintf(`"%s %s %s" %d %d `, c.method, c.target, proto, c.status, c.bytes)
				require.Eventually(t, func() bool { return accessLog.count(logged) == 1 }, 5*time.Second, 10*time.Millisecond,
					"want %q in %.900q", logged, accessLog.String())
			}
			s := scrapeURL(t, &http.Client{}, inst.DebugAddr)
			for _, status := range []string{"400", "405"} {
				assert.Zero(t, s.value("nginx_ingress_controller_requests", map[string]string{"status": status}), status)
			}
			cancel()
			require.NoError(t, inst.Wait())
		})
	}
}
