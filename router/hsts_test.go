package router

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// stsBackend answers with a Strict-Transport-Security of its own.
func stsBackend(t *testing.T) string {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Strict-Transport-Security", "max-age=1")
	}))
	t.Cleanup(s.Close)
	return s.Listener.Addr().String()
}

// TestHSTSReplacesBackends: over TLS the client gets the router's value
// alone, on the fast path and through a Transport (ReverseProxy), as
// ingress-nginx's ngx.header[...] = value replaces the upstream's; with
// DisableHSTS the backend's own passes through, and over plain HTTP the
// router adds nothing.
func TestHSTSReplacesBackends(t *testing.T) {
	addr := stsBackend(t)
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"default", Options{}, DefaultHSTS},
		{"transport", Options{Transport: http.DefaultTransport}, DefaultHSTS},
		{"settings", Options{HSTS: HSTSHeader(600, false, true)}, "max-age=600; preload"},
		{"disabled", Options{DisableHSTS: true}, "max-age=1"},
		{"control character", Options{HSTS: "max-age=1\r\nX-A: b"}, "max-age=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRouter(tc.o)
			r.Publish(table("hsts", vhost("shop.example.com", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
			res := serve(r, http.MethodGet, "shop.example.com", "https://shop.example.com/x", nil)
			require.Equal(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, []string{tc.want}, res.Header.Values("Strict-Transport-Security"))

			res = serve(r, http.MethodGet, "shop.example.com", "/x", nil)
			require.Equal(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, []string{"max-age=1"}, res.Header.Values("Strict-Transport-Security"), "plain HTTP: the backend's alone")
		})
	}
}

func TestHSTSHeader(t *testing.T) {
	assert.Equal(t, DefaultHSTS, HSTSHeader(31536000, true, false))
	assert.Equal(t, "max-age=0", HSTSHeader(0, false, false))
	assert.Equal(t, "max-age=5; includeSubDomains; preload", HSTSHeader(5, true, true))
}

// TestSetHSTS: SetHSTS changes the header from the next request on.
func TestSetHSTS(t *testing.T) {
	r := newTestRouter(Options{DisableHSTS: true})
	r.Publish(table("hsts", vhost("shop.example.com", nil)))
	res := serve(r, http.MethodGet, "shop.example.com", "https://shop.example.com/x", nil)
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	assert.Empty(t, res.Header.Values("Strict-Transport-Security"))

	r.SetHSTS("max-age=5", false)
	res = serve(r, http.MethodGet, "shop.example.com", "https://shop.example.com/x", nil)
	assert.Equal(t, []string{"max-age=5"}, res.Header.Values("Strict-Transport-Security"))
	r.SetHSTS("", false)
	res = serve(r, http.MethodGet, "shop.example.com", "https://shop.example.com/x", nil)
	assert.Equal(t, []string{DefaultHSTS}, res.Header.Values("Strict-Transport-Security"))
	r.SetHSTS("x", true)
	res = serve(r, http.MethodGet, "shop.example.com", "https://shop.example.com/x", nil)
	assert.Empty(t, res.Header.Values("Strict-Transport-Security"))
}
