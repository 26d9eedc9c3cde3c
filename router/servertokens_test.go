package router

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// TestServerTokens: the backend's Server header never reaches the client,
// on the fast path and through a Transport (ReverseProxy), as nginx's
// proxy_hide_header default; ServerTokens puts the router's own on the
// proxied answers and on its own (a 404).
func TestServerTokens(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Server", "backend/1.0")
	}))
	t.Cleanup(s.Close)
	addr := s.Listener.Addr().String()
	for _, tc := range []struct {
		name string
		o    Options
		want []string
	}{
		{"default", Options{}, nil},
		{"transport", Options{Transport: http.DefaultTransport}, nil},
		{"tokens", Options{ServerTokens: "ramjet"}, []string{"ramjet"}},
		{"tokens transport", Options{ServerTokens: "ramjet", Transport: http.DefaultTransport}, []string{"ramjet"}},
		{"control character", Options{ServerTokens: "a\r\nX-B: c"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRouter(tc.o)
			r.Publish(table("tokens", vhost("shop.example.com", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
			res := serve(r, http.MethodGet, "shop.example.com", "/x", nil)
			require.Equal(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, tc.want, res.Header.Values("Server"))
			res = serve(r, http.MethodGet, "other.example.com", "/x", nil)
			require.Equal(t, http.StatusNotFound, res.StatusCode)
			assert.Equal(t, tc.want, res.Header.Values("Server"), "the router's own answer")
		})
	}
}

// TestProxyHiddenHeaders: besides Server, nginx's proxy_hide_header hides
// Date, X-Pad and the X-Accel-* fields by default
// (ngx_http_proxy_hide_headers): the client gets the proxy's clock, not a
// backend's, and instructions to nginx, such as an internal
// X-Accel-Redirect path, never reach it. (The recorder adds no Date of
// its own; servers do.)
func TestProxyHiddenHeaders(t *testing.T) {
	hidden := []string{"Date", "X-Pad", "X-Accel-Expires", "X-Accel-Redirect", "X-Accel-Limit-Rate", "X-Accel-Buffering", "X-Accel-Charset"}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for _, k := range hidden {
			w.Header().Set(k, "1")
		}
		w.Header().Set("X-Accel-Other", "kept")
	}))
	t.Cleanup(s.Close)
	for _, o := range []Options{{}, {Transport: http.DefaultTransport}} {
		r := newTestRouter(o)
		r.Publish(table("hide", vhost("shop.example.com", nil, route(match.Prefix, "/", httpBackend("prod/web:80", s.Listener.Addr().String())))))
		res := serve(r, http.MethodGet, "shop.example.com", "/x", nil)
		require.Equal(t, http.StatusOK, res.StatusCode)
		for _, k := range hidden {
			assert.Empty(t, res.Header.Values(k), "%s (transport %v)", k, o.Transport != nil)
		}
		assert.Equal(t, "kept", res.Header.Get("X-Accel-Other"))
	}
}

// upgradeBackend answers every request 101 with field (a "Name: value"
// line) and holds the tunnel until the client's first line.
func upgradeBackend(t *testing.T, field string) string {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		c, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n" + field + "\r\n\r\n")
		_ = rw.Flush()
		_, _ = rw.ReadString('\n')
	}))
	t.Cleanup(backend.Close)
	return backend.Listener.Addr().String()
}

// upgradeServer asks front for an Upgrade and returns the 101's Server
// fields.
func upgradeServer(t *testing.T, r *Router) []string {
	front := httptest.NewServer(r)
	t.Cleanup(front.Close)
	c, err := net.Dial("tcp", front.Listener.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: shop.example.com\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
	require.NoError(t, err)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusSwitchingProtocols, res.StatusCode)
	return res.Header.Values("Server")
}

// TestServerTokensOnUpgrade: nginx's header filter writes its Server on a
// 101 as on any answer (server-tokens "true"), the backend's hidden; over
// the router's own HTTP/1.1 client as over ReverseProxy.
func TestServerTokensOnUpgrade(t *testing.T) {
	addr := upgradeBackend(t, "Server: backend/1.0")
	for _, tr := range proxyPaths() {
		t.Run(tr.name, func(t *testing.T) {
			for _, tc := range []struct {
				tokens string
				want   []string
			}{{"", nil}, {"ramjet", []string{"ramjet"}}} {
				r := newTestRouter(Options{Transport: tr.rt, ServerTokens: tc.tokens})
				r.Publish(table("", vhost("shop.example.com", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
				assert.Equal(t, tc.want, upgradeServer(t, r), "server tokens %q", tc.tokens)
			}
		})
	}
}

// serverBackend answers with Server: server when it is not empty, and
// with X-Answer's status unless the request is an error page's (X-Code).
func serverBackend(t *testing.T, server string) string {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if server != "" {
			w.Header().Set("Server", server)
		}
		if v := r.Header.Get("X-Answer"); v != "" && r.Header.Get("X-Code") == "" {
			w.WriteHeader(atoiOr(v, http.StatusOK))
		}
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(s.Close)
	return s.Listener.Addr().String()
}

// TestBackendServerHeader: allow-backend-server-header with server-tokens
// "true" is nginx's proxy_pass_header Server: a proxied answer carries
// the backend's Server, and none when the backend sends none (nginx 1.22
// on loopback), its 101 and an error backend's page included, while the
// router's own answers keep ServerTokens. Buffered or not, over the
// router's own HTTP/1.1 client and over ReverseProxy. Without
// ServerTokens no answer carries one (more_clear_headers Server).
func TestBackendServerHeader(t *testing.T) {
	with, without := serverBackend(t, "backend/1.0"), serverBackend(t, "")
	up := upgradeBackend(t, "Server: backend/1.0")
	for _, tr := range proxyPaths() {
		for _, buffering := range []bool{false, true} {
			t.Run(fmt.Sprint(tr.name, " buffering=", buffering), func(t *testing.T) {
				p := &match.Proxying{MaxTempFileSize: -1, Buffering: buffering}
				for _, tc := range []struct {
					tokens        string
					with, own, up []string
				}{
					{"ramjet", []string{"backend/1.0"}, []string{"ramjet"}, []string{"backend/1.0"}},
					{"", nil, nil, nil},
				} {
					r := newTestRouter(Options{Transport: tr.rt, ServerTokens: tc.tokens, BackendServerHeader: true})
					t.Cleanup(r.CloseIdleConnections)
					r.Publish(table("", vhost("shop.example.com", nil,
						policyRoute("/with", httpBackend("prod/with:80", with), &match.Policy{Proxy: p}),
						policyRoute("/without", httpBackend("prod/without:80", without), &match.Policy{Proxy: p}),
						route(match.Prefix, "/ws", httpBackend("prod/ws:80", up)))))
					res := serve(r, http.MethodGet, "shop.example.com", "/with", nil)
					require.Equal(t, http.StatusOK, res.StatusCode)
					assert.Equal(t, tc.with, res.Header.Values("Server"), "tokens %q: the backend's", tc.tokens)
					res = serve(r, http.MethodGet, "shop.example.com", "/without", nil)
					require.Equal(t, http.StatusOK, res.StatusCode)
					assert.Empty(t, res.Header.Values("Server"), "tokens %q: the backend sent none", tc.tokens)
					res = serve(r, http.MethodGet, "other.example.com", "/", nil)
					require.Equal(t, http.StatusNotFound, res.StatusCode)
					assert.Equal(t, tc.own, res.Header.Values("Server"), "tokens %q: the router's own answer", tc.tokens)
					assert.Equal(t, tc.up, upgradeServer(t, r), "tokens %q: the 101", tc.tokens)
				}
			})
		}
	}
}

// TestBackendServerHeaderErrorPage: an intercepted answer's page carries
// the error backend's Server, or none, as proxy_pass_header Server holds
// in the @custom_ location; with no error backend to ask, the router's
// own page carries ServerTokens.
func TestBackendServerHeaderErrorPage(t *testing.T) {
	for _, tr := range proxyPaths() {
		t.Run(tr.name, func(t *testing.T) {
			for _, tc := range []struct {
				errors string
				want   []string
			}{{"errors/1.0", []string{"errors/1.0"}}, {"", nil}} {
				r := newTestRouter(Options{Transport: tr.rt, ServerTokens: "ramjet", BackendServerHeader: true})
				t.Cleanup(r.CloseIdleConnections)
				web := httpBackend("prod/web:80", serverBackend(t, "backend/1.0"))
				eb := httpBackend("prod/errors:80", serverBackend(t, tc.errors))
				r.Publish(responseTable(web, &match.Response{ErrorCodes: []int{503}, ErrorBackend: eb}, eb))
				res := serve(r, http.MethodGet, "app.example.com", "/", http.Header{"X-Answer": {"503"}})
				require.Equal(t, http.StatusOK, res.StatusCode)
				assert.Equal(t, tc.want, res.Header.Values("Server"), "error backend's Server %q", tc.errors)
			}
			r := newTestRouter(Options{Transport: tr.rt, ServerTokens: "ramjet", BackendServerHeader: true})
			web := httpBackend("prod/web:80", serverBackend(t, "backend/1.0"))
			r.Publish(responseTable(web, &match.Response{ErrorCodes: []int{503}}))
			res := serve(r, http.MethodGet, "app.example.com", "/", http.Header{"X-Answer": {"503"}})
			require.NotEqual(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, []string{"ramjet"}, res.Header.Values("Server"), "the router's own page")
		})
	}
}

// TestBackendServerHeaderRelayed: over router/h1's server, whose Relay
// writes the backend's head without the header map, the backend's Server
// goes out once, and none when the backend sends none.
func TestBackendServerHeaderRelayed(t *testing.T) {
	o := Options{ServerTokens: "ramjet", BackendServerHeader: true}
	for _, tc := range []struct {
		server string
		want   []string
	}{{"backend/1.0", []string{"backend/1.0"}}, {"", nil}} {
		addr := h1EdgeRouterWith(t, o, serverBackend(t, tc.server), nil, nil)
		c, br := h1EdgeDial(t, addr)
		_, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: shop.example.com\r\n\r\n")
		require.NoError(t, err)
		res, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode)
		assert.Equal(t, tc.want, res.Header.Values("Server"), "backend's Server %q", tc.server)
	}
}
