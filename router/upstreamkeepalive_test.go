package router

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/configmap"
	"ramjet.dev/ramjet/router/h2"
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

// The keys bound a GRPC backend's connections too, router/h2's client's
// and net/http's: "0" opens one per call, as nginx's grpc_pass without
// keepalive; upstream-keepalive-requests 2 a new one every two calls.
// router/h2's client kept reusing one.
func TestUpstreamKeepaliveGRPC(t *testing.T) {
	for _, netHTTP2 := range []bool{false, true} {
		for _, tt := range []struct {
			name  string
			k     *configmap.UpstreamKeepalive
			conns int64
		}{
			{"default", nil, 1},
			{"upstream-keepalive-connections 0", &configmap.UpstreamKeepalive{Timeout: 60e9, Requests: 10000}, 4},
			{"upstream-keepalive-requests 2", &configmap.UpstreamKeepalive{Connections: 8, Timeout: 60e9, Requests: 2}, 2},
		} {
			if netHTTP2 && tt.k != nil && tt.k.Connections > 0 {
				continue // net/http cannot bound a connection's requests
			}
			t.Run(fmt.Sprintf("%s netHTTP2 %v", tt.name, netHTTP2), func(t *testing.T) {
				var conns atomic.Int64
				s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/grpc")
					w.Header().Set("Grpc-Status", "0")
				}))
				s.Config.Protocols = new(http.Protocols)
				s.Config.Protocols.SetUnencryptedHTTP2(true)
				s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
					if st == http.StateNew {
						conns.Add(1)
					}
				}
				s.Start()
				t.Cleanup(s.Close)
				r := newTestRouter(Options{UpstreamKeepalive: tt.k, NetHTTP2Client: netHTTP2})
				t.Cleanup(r.CloseIdleConnections)
				r.Publish(table("keepalive", vhost("grpc.example.com", nil,
					route(match.Prefix, "/", backend("prod/grpc:50051", match.GRPC, match.Serving, s.Listener.Addr().String())))))
				for range 4 {
					res := serve(r, http.MethodPost, "grpc.example.com", "/pkg.Svc/Get", http.Header{"Content-Type": {"application/grpc"}})
					require.Equal(t, http.StatusOK, res.StatusCode)
					_, _ = io.Copy(io.Discard, res.Body)
				}
				require.Equal(t, tt.conns, conns.Load())
			})
		}
	}
}

// The upstream-keepalive-* keys bound every pool a proxied request can
// take: HTTPS, GRPC and GRPCS backends, locations with timeouts of their
// own or backend TLS, and DefaultTransport for an embedder who wraps it.
func TestUpstreamKeepaliveEveryTransport(t *testing.T) {
	k := &configmap.UpstreamKeepalive{Connections: 5, Timeout: 7 * time.Second, Requests: 10000, Time: time.Hour}
	for _, netHTTP2 := range []bool{false, true} {
		o := Options{UpstreamKeepalive: k, NetHTTP2Client: netHTTP2}
		up := newTestRouter(o).proxy.Transport.(*upstream)
		policy, _ := up.variants.forTimeouts(timeouts{connect: time.Second, read: 2 * time.Second, send: 3 * time.Second})
		tlsSet := up.backendTLS.forTLS(match.NewBackendTLS(match.BackendTLS{Secret: "prod/up"}), "", up.base)
		dt := DefaultTransport(o)
		for name, rts := range map[string][3]http.RoundTripper{
			"router":           {up.h1, up.h2c, up.h2},
			"proxy-*-timeout":  {policy.h1, policy.h2c, policy.h2},
			"proxy-ssl-*":      {tlsSet.h1, tlsSet.h2c, tlsSet.h2},
			"DefaultTransport": {dt.h1, dt.h2c, dt.h2},
		} {
			for i, rt := range rts {
				switch c := rt.(type) {
				case *http.Transport:
					assert.Equal(t, 5, c.MaxIdleConnsPerHost, "%s %d netHTTP2 %v", name, i, netHTTP2)
					assert.Equal(t, 7*time.Second, c.IdleConnTimeout, "%s %d netHTTP2 %v", name, i, netHTTP2)
				case *h2.Client:
					assert.Equal(t, 7*time.Second, c.IdleConnTimeout, "%s %d", name, i)
					assert.Equal(t, 10000, c.MaxConnRequests, "%s %d", name, i)
					assert.Equal(t, time.Hour, c.MaxConnAge, "%s %d", name, i)
					assert.Equal(t, 5, c.MaxIdleConnsPerHost, "%s %d", name, i)
				}
			}
		}
	}
}

// Unset, the pool keys take ingress-nginx's defaults, as every ConfigMap
// key does (SPEC §1): setting one key changes that key alone.
func TestUpstreamKeepaliveDefaults(t *testing.T) {
	assert.Equal(t, configmap.DefaultUpstreamKeepalive(), poolingOf(Options{}).keepalive)
	assert.Equal(t, 320, DefaultTransport(Options{}).h1.MaxIdleConnsPerHost)
	s, _ := configmap.Parse("ingress", "nginx", map[string]string{"upstream-keepalive-timeout": "5"})
	var o Options
	o.ApplyConfigMap(s)
	want := poolingOf(Options{}).keepalive
	want.Timeout = 5 * time.Second
	assert.Equal(t, want, poolingOf(o).keepalive)
}
