package router

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

func TestHTTPSLocation(t *testing.T) {
	tests := []struct {
		host, path, query  string
		hasQuery, preserve bool
		want               string
		ok                 bool
	}{
		{"shop.example.com", "/cart/", "", false, false, "https://shop.example.com/cart", true},
		{"shop.example.com", "/cart/", "", false, true, "https://shop.example.com/cart/", true},
		{"shop.example.com", "/cart//", "", false, false, "https://shop.example.com/cart/", true},
		{"shop.example.com", "/", "", false, false, "https://shop.example.com", true},
		{"shop.example.com", "/", "", false, true, "https://shop.example.com/", true},
		{"shop.example.com:8080", "/a", "", false, false, "https://shop.example.com/a", true},
		{"Shop.Example.COM.", "/a", "", false, false, "https://Shop.Example.COM./a", true},
		{"shop.example.com", "/a/", "x=1", true, false, "https://shop.example.com/a/?x=1", true},
		{"shop.example.com", "/a", "next=/", true, false, "https://shop.example.com/a?next=", true},
		{"shop.example.com", "/a", "next=/", true, true, "https://shop.example.com/a?next=/", true},
		{"shop.example.com", "/a/", "next=/b", true, false, "https://shop.example.com/a/?next=/b", true},
		{"shop.example.com", "/a", "", true, false, "https://shop.example.com/a?", true},
		{"shop.example.com", "/caf%C3%A9/%2F", "q=%41", true, false, "https://shop.example.com/caf%C3%A9/%2F?q=%41", true},
		{"[fd00::1]:80", "/a", "", false, false, "https://[fd00::1]/a", true},
		{"192.0.2.1:80", "/a", "", false, false, "https://192.0.2.1/a", true},
		{"", "/a", "", false, false, "", false},
		{":80", "/a", "", false, false, "", false},
		{"evil.com/x", "/a", "", false, false, "", false},
		{"user@evil.com", "/a", "", false, false, "", false},
		{"a b", "/a", "", false, false, "", false},
		{"shop.example.com:80x", "/a", "", false, false, "", false},
		{"[fd00::1", "/a", "", false, false, "", false},
		{"[]", "/a", "", false, false, "", false},
		{"[fd00::1]x", "/a", "", false, false, "", false},
		{"[fd00::g]", "/a", "", false, false, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.host+tt.path, func(t *testing.T) {
			got, ok := httpsLocation(tt.host, "", tt.path, tt.query, tt.hasQuery, tt.preserve)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

// redirectTable has a TLS host whose routes and fallback carry every
// combination of settings, a non-TLS host with force-ssl-redirect on one
// route, and a catch-all that forces the redirect.
func redirectTable(addr string) *match.Table {
	web := httpBackend("prod/web:80", addr)
	missing := backend("prod/gone:80", match.HTTP, match.ServiceNotFound)
	tlsHost := vhost("shop.example.com", nil,
		&match.Route{Type: match.Prefix, Path: "/api", Backend: web, SSLRedirect: true},
		&match.Route{Type: match.Prefix, Path: "/keep", Backend: web, SSLRedirect: true, PreserveTrailingSlash: true},
		&match.Route{Type: match.Prefix, Path: "/plain", Backend: web, SSLRedirect: false},
		&match.Route{Type: match.Prefix, Path: "/gone", Backend: missing, SSLRedirect: true},
	)
	tlsHost.TLS, tlsHost.SSLRedirect = true, true
	open := vhost("open.example.com", nil,
		&match.Route{Type: match.Prefix, Path: "", Backend: web, SSLRedirect: true},
		&match.Route{Type: match.Prefix, Path: "/secure", Backend: web, ForceSSLRedirect: true},
	)
	open.SSLRedirect = true
	forced := vhost("", web)
	forced.ForceSSLRedirect = true
	return table("redirects", tlsHost, open, forced)
}

func TestSSLRedirect(t *testing.T) {
	_, addr := echoBackend(t, "web")
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe})
	r.Publish(redirectTable(addr))

	tests := []struct {
		name         string
		method       string
		host, target string
		tls          bool
		header       http.Header
		wantStatus   int
		wantLocation string
	}{
		{"tls host route", "GET", "shop.example.com", "/api/x?a=1", false, nil, 308, "https://shop.example.com/api/x?a=1"},
		{"trailing slash dropped", "GET", "shop.example.com", "/api/", false, nil, 308, "https://shop.example.com/api"},
		{"trailing slash kept", "GET", "shop.example.com", "/keep/", false, nil, 308, "https://shop.example.com/keep/"},
		{"port dropped, case kept", "GET", "Shop.Example.com:8080", "/api", false, nil, 308, "https://Shop.Example.com/api"},
		{"post keeps method with 308", "POST", "shop.example.com", "/api", false, nil, 308, "https://shop.example.com/api"},
		{"head", "HEAD", "shop.example.com", "/api", false, nil, 308, "https://shop.example.com/api"},
		{"route turns it off", "GET", "shop.example.com", "/plain/x", false, nil, 200, ""},
		{"no route: the host's setting", "GET", "shop.example.com", "/nothing", false, nil, 308, "https://shop.example.com/nothing"},
		{"missing service still redirected", "GET", "shop.example.com", "/gone", false, nil, 308, "https://shop.example.com/gone"},
		{"acme challenge never", "GET", "shop.example.com", "/.well-known/acme-challenge/tok3n", false, nil, 404, ""},
		{"acme challenge encoded", "GET", "shop.example.com", "/.well-known/%61cme-challenge/tok3n", false, nil, 404, ""},
		{"acme-challenge lookalike", "GET", "shop.example.com", "/.well-known/acme-challenges", false, nil, 308, "https://shop.example.com/.well-known/acme-challenges"},
		{"already https", "GET", "shop.example.com", "/api", true, nil, 200, ""},
		{"forwarded proto not trusted", "GET", "shop.example.com", "/api", false, http.Header{"X-Forwarded-Proto": {"https"}}, 308, "https://shop.example.com/api"},
		{"host not tls", "GET", "open.example.com", "/x", false, nil, 200, ""},
		{"force on a non-tls host", "GET", "open.example.com", "/secure/x/", false, nil, 308, "https://open.example.com/secure/x"},
		{"force on the catch-all", "GET", "anything.example.org", "/", false, nil, 308, "https://anything.example.org"},
		// $request_uri of an absolute-form target without a path starts
		// at its query: lua_ingress.lua appends it as it is.
		{"absolute form without a path", "GET", "anything.example.org", "http://anything.example.org?a=1", false, nil, 308, "https://anything.example.org?a=1"},
		{"absolute form without a path, slash dropped", "GET", "anything.example.org", "http://anything.example.org?a=/", false, nil, 308, "https://anything.example.org?a="},
		{"absolute form", "GET", "shop.example.com", "http://shop.example.com/api/x?a=1", false, nil, 308, "https://shop.example.com/api/x?a=1"},
		{"force without a host", "GET", "", "/x", false, nil, 400, ""},
		{"bad path answers 400 first", "GET", "shop.example.com", "/../x", false, nil, 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, "/", nil)
			req.RequestURI = tt.target
			req.Host = tt.host
			if tt.tls {
				req.TLS = &tls.ConnectionState{HandshakeComplete: true, ServerName: tt.host}
			} else {
				req.TLS = nil
			}
			for k, v := range tt.header {
				req.Header[k] = v
			}
			w := httptest.NewRecorder()
			r.ServeHTTP(w, req)
			res := w.Result()
			b := body(t, res)
			require.Equal(t, tt.wantStatus, res.StatusCode, b)
			assert.Equal(t, tt.wantLocation, res.Header.Get("Location"))
			rec := rs.last(t)
			switch tt.wantStatus {
			case 308:
				assert.Equal(t, ReasonSSLRedirect, rec.Reason)
				assert.Empty(t, rec.Backend, "a redirect proxies nowhere")
				assert.Empty(t, rec.Endpoint)
				if tt.method != "HEAD" {
					assert.Contains(t, b, "HTTPS")
				}
			case 200:
				assert.Equal(t, "prod/web:80", rec.Backend)
				assert.Equal(t, "web\n", b)
			}
			if tt.name == "force without a host" {
				assert.Equal(t, ReasonBadHost, rec.Reason)
			}
		})
	}
	assert.Zero(t, r.InFlight(addr))
}

func TestTrustForwardedProto(t *testing.T) {
	_, addr := echoBackend(t, "web")
	r := newTestRouter(Options{TrustForwardedProto: true})
	r.Publish(redirectTable(addr))

	tests := []struct {
		proto      []string
		wantStatus int
		wantSeen   string
	}{
		{nil, 308, ""},
		{[]string{"https"}, 200, "https"},
		{[]string{"HTTPS"}, 200, "https"},
		{[]string{"https, http"}, 200, "https"},
		{[]string{"http"}, 308, ""},
		{[]string{"wss"}, 308, ""},
	}
	for _, tt := range tests {
		res := serve(r, http.MethodGet, "shop.example.com", "/api", http.Header{"X-Forwarded-Proto": tt.proto})
		body(t, res)
		assert.Equal(t, tt.wantStatus, res.StatusCode, "%q", tt.proto)
		if tt.wantStatus == 200 {
			assert.Equal(t, []string{tt.wantSeen}, res.Header.Values("Seen-X-Forwarded-Proto"), "%q", tt.proto)
		}
	}
}

// TestRedirectGRPC: a redirect is a plain 308 even for a gRPC
// request, which a gRPC client reports as an HTTP status it cannot follow.
func TestRedirectGRPC(t *testing.T) {
	_, addr := echoBackend(t, "web")
	r := newTestRouter(Options{})
	r.Publish(redirectTable(addr))
	res := serve(r, http.MethodPost, "shop.example.com", "/api/pkg.S/M", http.Header{"Content-Type": {"application/grpc"}})
	body(t, res)
	assert.Equal(t, http.StatusPermanentRedirect, res.StatusCode)
	assert.Equal(t, "https://shop.example.com/api/pkg.S/M", res.Header.Get("Location"))
	assert.Empty(t, res.Header.Get("Grpc-Status"))
}

// A request read through a PROXY protocol header (a connection marked
// with PeerIsClient) whose destination port is 443 came through a load
// balancer that terminated TLS there: ingress-nginx with use-proxy-protocol
// takes it as https (lua_ingress.lua: proxy_protocol_server_port "443"),
// so it is not redirected, which would loop through the balancer forever,
// and the backend reads X-Forwarded-Proto https. A header that named no
// client (the mark says true) and a connection without the mark prove
// nothing.
func TestProxyProtocolPort443IsHTTPS(t *testing.T) {
	_, addr := echoBackend(t, "web")
	r := newTestRouter(Options{})
	r.Publish(redirectTable(addr))
	for _, tt := range []struct {
		name       string
		marked     bool
		peerClient bool
		port       int
		want       int
	}{
		{"PROXY to 443", true, false, 443, 200},
		{"PROXY to 80", true, false, 80, 308},
		{"PROXY naming no client", true, true, 443, 308},
		{"no PROXY header", false, false, 443, 308},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/api", nil)
			req.Host = "shop.example.com"
			ctx := context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: tt.port})
			if tt.marked {
				ctx = PeerIsClient(ctx, func() bool { return tt.peerClient })
			}
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, req.WithContext(ctx))
			require.Equal(t, tt.want, rec.Code)
			if tt.want == 200 {
				assert.Equal(t, []string{"https"}, rec.Header().Values("Seen-X-Forwarded-Proto"))
			}
		})
	}
}

// use-port-in-redirects: the Location names the HTTPS port after the
// Host header's name, its own port dropped (lua_ingress.lua:168-171).
func TestHTTPSLocationPort(t *testing.T) {
	got, ok := httpsLocation("shop.example.com:8080", "8443", "/a/", "b=/", true, false)
	assert.True(t, ok)
	assert.Equal(t, "https://shop.example.com:8443/a/?b=", got)
	got, ok = httpsLocation("[fd00::1]:80", "443", "/", "", false, false)
	assert.True(t, ok)
	assert.Equal(t, "https://[fd00::1]:443", got)
}
