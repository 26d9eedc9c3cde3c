package router

import (
	"bufio"
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

// upgradeBackend answers every request 101 with a Server field of its own
// and holds the tunnel until the client's first line.
func upgradeBackend(t *testing.T) string {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		c, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\nServer: backend/1.0\r\n\r\n")
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
	addr := upgradeBackend(t)
	for _, tr := range []struct {
		name string
		rt   http.RoundTripper
	}{{"fast", nil}, {"nethttp", &http.Transport{}}} {
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
