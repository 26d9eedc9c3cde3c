package router

import (
	"io"
	"log"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/h1"
)

// proxy-redirect-from/-to and proxy-cookie-domain/-path rewrite the
// backend's Location, Refresh and Set-Cookie on every way out: the
// router's own HTTP/1 server (whose relay of the backend's head is given
// up for them), net/http's HTTP/1 and HTTP/2 servers, a buffered
// response, and an HTTP/2 backend; a location without them and the
// router's own answers are untouched.
func TestHeaderRewritesOnRealResponses(t *testing.T) {
	backend := h1AndH2CServer(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h := w.Header()
		h.Set("Location", "http://inner.svc:8080/next?a=1")
		h.Set("Refresh", "3; url=http://inner.svc:8080/later")
		h["Set-Cookie"] = []string{"sid=1; Domain=Inner.SVC; Path=/v1/x; HttpOnly", "other=2;Path=/elsewhere"}
		w.WriteHeader(http.StatusFound)
	}))
	addr := backend.Listener.Addr().String()
	rewrites := func(p match.Proxying) *match.Policy {
		p.MaxTempFileSize = -1
		p.Redirect = &match.HeaderRewrite{From: "http://inner.svc:8080/", To: "/app/"}
		p.CookieDomain = &match.HeaderRewrite{From: "inner.svc", To: "shop.example.com"}
		p.CookiePath = &match.HeaderRewrite{From: "/v1/", To: "/app/"}
		return &match.Policy{Proxy: &p}
	}
	h2c := backend2("prod/grpcish:80", match.H2C, addr)
	r := newTestRouter(Options{})
	t.Cleanup(r.CloseIdleConnections)
	r.Publish(table("rewrites", vhost("shop.example.com", nil,
		policyRoute("/", httpBackend("prod/web:80", addr), rewrites(match.Proxying{})),
		policyRoute("/buffered", httpBackend("prod/web:80", addr), rewrites(match.Proxying{Buffering: true})),
		policyRoute("/h2", h2c, rewrites(match.Proxying{})),
		route(match.Prefix, "/plain", httpBackend("prod/web:80", addr)),
	)))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	own := &h1.Server{Handler: r, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = own.Serve(ln) }()
	t.Cleanup(func() { _ = own.Close() })
	front := h1AndH2CServer(t, r)

	noRedirects := func(tr *http.Transport) *http.Client {
		return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	h1c := &http.Transport{}
	t.Cleanup(h1c.CloseIdleConnections)
	clients := map[string]struct {
		c    *http.Client
		addr string
	}{
		"own h1":      {noRedirects(h1c), ln.Addr().String()},
		"net/http h1": {noRedirects(h1c), front.Listener.Addr().String()},
		"net/http h2": {noRedirects(h2cTransport(t)), front.Listener.Addr().String()},
	}
	for name, c := range clients {
		for _, path := range []string{"/", "/buffered", "/h2"} {
			req, err := http.NewRequest(http.MethodGet, "http://"+c.addr+path, nil)
			require.NoError(t, err)
			req.Host = "Shop.Example.com:8080"
			res, err := c.c.Do(req)
			require.NoError(t, err, "%s %s", name, path)
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			at := name + " " + path
			assert.Equal(t, http.StatusFound, res.StatusCode, at)
			assert.Equal(t, "http://shop.example.com/app/next?a=1", res.Header.Get("Location"), at)
			assert.Equal(t, "3; url=/app/later", res.Header.Get("Refresh"), at)
			assert.Equal(t, []string{"sid=1; Domain=shop.example.com; Path=/app/x; HttpOnly", "other=2;Path=/elsewhere"}, res.Header["Set-Cookie"], at)
		}
		req, err := http.NewRequest(http.MethodGet, "http://"+c.addr+"/plain", nil)
		require.NoError(t, err)
		req.Host = "shop.example.com"
		res, err := c.c.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, "http://inner.svc:8080/next?a=1", res.Header.Get("Location"), name)
		assert.Equal(t, "sid=1; Domain=Inner.SVC; Path=/v1/x; HttpOnly", res.Header.Get("Set-Cookie"), name)
	}
}

func backend2(id string, proto match.Protocol, endpoints ...string) *match.Backend {
	return backend(id, proto, match.Serving, endpoints...)
}
