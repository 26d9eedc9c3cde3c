package router

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/configmap"
)

// upstream-keepalive-time "0" is nginx's keepalive_time 0: a connection
// older than 0 ms goes back to no pool, so each request opens its own.
func TestUpstreamKeepaliveTimeZero(t *testing.T) {
	s, warns := configmap.Parse("ingress", "nginx", map[string]string{"upstream-keepalive-time": "0"})
	require.Empty(t, warns)
	var o Options
	o.ApplyConfigMap(s)
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok\n") }))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	r := newTestRouter(o)
	r.Publish(table("keepalive", vhost("shop.example.com", nil, route(match.Prefix, "/", httpBackend("prod/web:80", srv.Listener.Addr().String())))))
	for range 3 {
		res := serve(r, http.MethodGet, "shop.example.com", "/", nil)
		require.Equal(t, http.StatusOK, res.StatusCode)
	}
	require.Equal(t, int64(3), conns.Load())
}
