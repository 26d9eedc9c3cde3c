package router

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// redirectActionTable: a host with an app-root, a redirecting route, a
// fallback redirect and a plain route; a www twin; a host whose route
// answers 300 (no Location).
func redirectActionTable(addr string) *match.Table {
	web := httpBackend("prod/web:80", addr)
	moved := route(match.Prefix, "/old", web)
	moved.Redirect = &match.Redirect{Code: 301, URL: "/new"}
	relative := route(match.Prefix, "/rel", web)
	relative.Redirect = &match.Redirect{Code: 307, URL: "/new", Relative: true}
	shop := vhost("shop.example.com", nil, moved, relative, route(match.Prefix, "/api", web))
	shop.Actions = &match.HostActions{AppRoot: "/app", Fallback: &match.Redirect{Code: 302, URL: "https://elsewhere.example.com"}}
	www := vhost("www.shop.example.com", nil)
	www.Actions = &match.HostActions{WWWTo: "shop.example.com"}
	choice := route(match.Prefix, "/", web)
	choice.Redirect = &match.Redirect{Code: 300, URL: "https://choices.example.com"}
	return table("redirect-actions", shop, www, vhost("choice.example.com", nil, choice))
}

func TestRedirectActions(t *testing.T) {
	recs := newRecords()
	r := newTestRouter(Options{Observer: recs.observe})
	r.Publish(redirectActionTable("10.0.0.1:80"))
	tests := []struct {
		name, host, target string
		header             http.Header
		status             int
		location, reason   string
	}{
		{"app-root", "shop.example.com", "/", nil, 302, "http://shop.example.com/app", ReasonAppRoot},
		{"app-root keeps the Host port", "shop.example.com:8080", "/?a=1", nil, 302, "http://shop.example.com:8080/app", ReasonAppRoot},
		{"app-root without a usable host", "shop.example.com:x", "/", nil, 400, "", ReasonBadHost},
		{"absolute from relative", "Shop.Example.com:81", "/old/x?y=1", nil, 301, "http://shop.example.com/new", ReasonRedirect},
		{"relative-redirects", "shop.example.com", "/rel", nil, 307, "/new", ReasonRedirect},
		{"fallback redirect", "shop.example.com", "/nothing", nil, 302, "https://elsewhere.example.com", ReasonRedirect},
		{"www twin", "www.shop.example.com", "/a/?b=c", nil, 308, "http://shop.example.com:80/a/?b=c", ReasonWWWRedirect},
		{"www twin drops one slash", "www.shop.example.com", "/a//", nil, 308, "http://shop.example.com:80/a/", ReasonWWWRedirect},
		// $request_uri of an absolute form without a path starts at its
		// query; ngx_srv_redirect.lua appends it as it is.
		{"www twin, absolute form without a path", "www.shop.example.com", "http://www.shop.example.com?b=c/", nil, 308, "http://shop.example.com:80?b=c", ReasonWWWRedirect},
		{"www twin, absolute form", "www.shop.example.com", "http://www.shop.example.com/a?b=c", nil, 308, "http://shop.example.com:80/a?b=c", ReasonWWWRedirect},
		{"forwarded port untrusted", "www.shop.example.com", "/", http.Header{"X-Forwarded-Port": {"8443"}}, 308, "http://shop.example.com:80", ReasonWWWRedirect},
		{"300 has no Location", "choice.example.com", "/", nil, 300, "", ReasonRedirect},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := serve(r, http.MethodGet, tt.host, tt.target, tt.header)
			assert.Equal(t, tt.status, res.StatusCode)
			assert.Equal(t, tt.location, res.Header.Get("Location"))
			rec := recs.last(t)
			assert.Equal(t, tt.reason, rec.Reason)
			assert.Empty(t, rec.Endpoint, "a redirect is never proxied")
		})
	}
	res := serve(r, http.MethodGet, "choice.example.com", "/", nil)
	require.Equal(t, "https://choices.example.com\n", body(t, res), "nginx's return 300 sends the URL as the body")
}

func TestRedirectPortForwarded(t *testing.T) {
	r := newTestRouter(Options{TrustForwardedProto: true})
	r.Publish(redirectActionTable("10.0.0.1:80"))
	res := serve(r, http.MethodGet, "www.shop.example.com", "/x", http.Header{"X-Forwarded-Proto": {"https"}, "X-Forwarded-Port": {"8443"}})
	require.Equal(t, 308, res.StatusCode)
	require.Equal(t, "https://shop.example.com:8443/x", res.Header.Get("Location"))
	res = serve(r, http.MethodGet, "www.shop.example.com", "/x", http.Header{"X-Forwarded-Port": {"84x"}})
	require.Equal(t, "http://shop.example.com:80/x", res.Header.Get("Location"), "a malformed port is ignored")
}

// Behind a PROXY protocol header a connection's LocalAddr is the header's
// destination; the www redirect's port is nginx's $server_port, the
// socket's (SocketPort).
func TestRedirectPortSocketPort(t *testing.T) {
	r := newTestRouter(Options{})
	r.Publish(redirectActionTable("10.0.0.1:80"))
	req := httptest.NewRequest(http.MethodGet, "/x", nil)
	req.Host = "www.shop.example.com"
	ctx := context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 8443})
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req.WithContext(SocketPort(ctx, 8080)))
	require.Equal(t, 308, rec.Code)
	require.Equal(t, "http://shop.example.com:8080/x", rec.Header().Get("Location"))
}

// A www twin's redirect keeps the connection's scheme behind a PROXY
// protocol header naming port 443: ingress-nginx's ngx_srv_redirect.lua
// takes ngx.var.scheme (and X-Forwarded-Proto only with
// use-forwarded-headers), never proxy_protocol_server_port, and the port
// is the socket's. An https scheme with the plain socket's port would
// send the client to a TLS handshake with a plain-HTTP port.
func TestWWWRedirectBehindProxyProtocol(t *testing.T) {
	r := newTestRouter(Options{})
	r.Publish(redirectActionTable("10.0.0.1:80"))
	req := httptest.NewRequest(http.MethodGet, "/x", nil)
	req.Host = "www.shop.example.com"
	ctx := context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 443})
	ctx = PeerIsClient(SocketPort(ctx, 80), func() bool { return false })
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req.WithContext(ctx))
	require.Equal(t, 308, rec.Code)
	require.Equal(t, "http://shop.example.com:80/x", rec.Header().Get("Location"))
}
