package main

import (
	"context"
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
