package router

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// The HTTPS redirect names ingress-nginx's $best_http_host without its
// port (lua_ingress.lua's redirect_host): $http_host, the Host field as
// sent beside an absolute-form target too, or else $host, the target's.
func TestSSLRedirectHostAbsoluteForm(t *testing.T) {
	_, addr := echoBackend(t, "web")
	r := newTestRouter(Options{})
	t.Cleanup(r.CloseIdleConnections)
	r.Publish(redirectTable(addr))
	send := serveH1(t, r)
	for _, c := range []struct{ head, want string }{
		{fmt.Sprintf(absWithHost, "/api/x?a=1"), "https://b.example/api/x?a=1"},
		{fmt.Sprintf(absWithoutHost, "/api/x?a=1"), "https://shop.example.com/api/x?a=1"},
	} {
		res := send(c.head)
		require.Equal(t, 308, res.StatusCode, c.head)
		assert.Equal(t, c.want, res.Header.Get("Location"), c.head)
	}
}

// $best_http_host in an auth URL is $http_host, the Host field as sent
// beside an absolute-form target too, or else $host.
func TestExternalAuthBestHTTPHostAbsoluteForm(t *testing.T) {
	svc := newAuthService(t)
	r, _ := authRouter(t, Options{}, externalAuth(t, svc.srv.URL+"/ok?b=$best_http_host", nil))
	t.Cleanup(r.CloseIdleConnections)
	send := serveH1(t, r)
	for _, c := range []struct{ head, want string }{
		{fmt.Sprintf(absWithHost, "/app/page"), "b.example:81"},
		{fmt.Sprintf(absWithoutHost, "/app/page"), "shop.example.com"},
	} {
		res := send(c.head)
		require.Equal(t, 200, res.StatusCode, c.head)
		got, _ := svc.request()
		require.NotNil(t, got)
		assert.Equal(t, c.want, got.URL.Query().Get("b"), c.head)
	}
}

// app-root is ingress-nginx's "return 302 $scheme://$http_host<app-root>":
// the Host field as sent beside an absolute-form target, not the
// target's host. Without a Host field (HTTP/1.0) $http_host is empty and
// nginx 1.22 sends "Location: http:///app", to the absolute-form target's
// server and to the catch-all's alike.
func TestAppRootHostAbsoluteForm(t *testing.T) {
	_, addr := echoBackend(t, "web")
	r := newTestRouter(Options{})
	t.Cleanup(r.CloseIdleConnections)
	tbl := redirectActionTable(addr)
	catchAll := vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))
	catchAll.Actions = &match.HostActions{AppRoot: "/start"}
	// First, so it replaces the empty catch-all tbl was given.
	r.Publish(table("redirect-actions+catch-all", append([]*match.VirtualHost{catchAll}, slices.Collect(tbl.VirtualHosts())...)...))
	send := serveH1(t, r)
	for _, c := range []struct {
		head string
		code int
		want string
	}{
		{fmt.Sprintf(absWithHost, "/"), 302, "http://b.example:81/app"},
		{fmt.Sprintf(absWithoutHost, "/"), 302, "http:///app"},
		{"GET / HTTP/1.0\r\n", 302, "http:///start"},
		{"GET /x HTTP/1.0\r\n", 200, ""},
	} {
		res := send(c.head)
		require.Equal(t, c.code, res.StatusCode, c.head)
		assert.Equal(t, c.want, res.Header.Get("Location"), c.head)
	}
}
