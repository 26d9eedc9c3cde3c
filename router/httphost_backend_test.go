package router

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// The backend's Host and X-Forwarded-Host are ingress-nginx's
// $best_http_host, $http_host or else $host (lua_ingress.lua): the Host
// field as sent beside an absolute-form target, whose host only routes
// the request; without a Host field, the target's host. Both ways to a
// backend.
func TestBackendHostAbsoluteForm(t *testing.T) {
	_, addr := echoBackend(t, "web")
	for _, p := range proxyPaths() {
		t.Run(p.name, func(t *testing.T) {
			r := newTestRouter(Options{Transport: p.rt})
			t.Cleanup(r.CloseIdleConnections)
			r.Publish(table("abs", vhost("shop.example.com", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
			send := serveH1(t, r)
			for _, c := range []struct{ head, want string }{
				{fmt.Sprintf(absWithHost, "/x"), "b.example:81"},
				{fmt.Sprintf(absWithoutHost, "/x"), "shop.example.com"},
			} {
				res := send(c.head)
				require.Equal(t, 200, res.StatusCode, c.head)
				assert.Equal(t, c.want, res.Header.Get("X-Seen-Host"), c.head)
				assert.Equal(t, c.want, res.Header.Get("Seen-X-Forwarded-Host"), c.head)
			}
		})
	}
}

// With forwarded-host-header "Host", X-Original-Forwarded-Host is
// $http_host: the Host field as sent, beside an absolute-form target too,
// and none without one.
func TestOriginalForwardedHostAbsoluteForm(t *testing.T) {
	_, addr := echoBackend(t, "web")
	r := newTestRouter(Options{ForwardedHostHeader: "Host"})
	t.Cleanup(r.CloseIdleConnections)
	r.Publish(table("abs", vhost("shop.example.com", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
	send := serveH1(t, r)
	for _, c := range []struct{ head, want string }{
		{fmt.Sprintf(absWithHost, "/x"), "b.example:81"},
		{fmt.Sprintf(absWithoutHost, "/x"), ""},
	} {
		res := send(c.head)
		require.Equal(t, 200, res.StatusCode, c.head)
		assert.Equal(t, c.want, res.Header.Get("Seen-X-Original-Forwarded-Host"), c.head)
	}
}
