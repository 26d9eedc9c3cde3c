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

// upstream-keepalive-connections "0" is nginx's upstream without
// keepalive: every proxied request opens a connection of its own. Unset,
// the pool reuses one.
func TestUpstreamKeepaliveOff(t *testing.T) {
	for _, tt := range []struct {
		name  string
		k     *configmap.UpstreamKeepalive
		conns int64
	}{
		{"default", nil, 1},
		{"upstream-keepalive-connections 0", &configmap.UpstreamKeepalive{Timeout: 60e9, Requests: 10000}, 3},
		{"upstream-keepalive-requests 2", &configmap.UpstreamKeepalive{Connections: 8, Timeout: 60e9, Requests: 2}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var conns atomic.Int64
			s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok\n") }))
			s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
				if st == http.StateNew {
					conns.Add(1)
				}
			}
			s.Start()
			t.Cleanup(s.Close)
			r := newTestRouter(Options{UpstreamKeepalive: tt.k})
			r.Publish(table("keepalive", vhost("shop.example.com", nil, route(match.Prefix, "/", httpBackend("prod/web:80", s.Listener.Addr().String())))))
			for range 3 {
				res := serve(r, http.MethodGet, "shop.example.com", "/", nil)
				require.Equal(t, http.StatusOK, res.StatusCode)
			}
			require.Equal(t, tt.conns, conns.Load())
		})
	}
}
