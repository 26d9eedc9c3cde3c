package router

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// Tests for the classes of issue 14, each through the real handler behind a
// real http.Server on loopback, so that net/http's own parsing is in the
// path. The expected answers are nginx's.

// TestFragmentEndsPath: nginx's URI parser stops at '#' (the rest never
// reaches $uri), so location matching, the TLS redirect and the ACME
// exemption all see only what comes before it; proxy_pass without a URI
// still sends $request_uri, '#' and all.
func TestFragmentEndsPath(t *testing.T) {
	_, bAddr := echoBackend(t, "b")
	_, cAddr := echoBackend(t, "c")
	b, c := httpBackend("prod/b:80", bAddr), httpBackend("prod/c:80", cAddr)
	tlsHost := vhost("tls.test", nil, &match.Route{Type: match.Prefix, Path: "", Backend: c, SSLRedirect: true})
	tlsHost.TLS, tlsHost.SSLRedirect = true, true
	r := newTestRouter(Options{})
	r.Publish(table("d",
		vhost("h2.test", nil, route(match.Prefix, "/", c), route(match.Prefix, "/admin", b)),
		tlsHost))
	front := httptest.NewServer(r)
	defer front.Close()

	tests := []struct {
		host, target string
		wantStatus   int
		wantBackend  string
		wantLocation string
	}{
		{"h2.test", "/admin#x", 200, "b", ""},
		{"h2.test", "/admin#", 200, "b", ""},
		{"h2.test", "/admin/#/../x", 200, "b", ""},
		{"h2.test", "/x#/../admin", 200, "c", ""},
		{"h2.test", "/admin#x?q=1", 200, "b", ""},
		{"h2.test", "/adm%69n#x", 200, "b", ""},
		{"h2.test", "/%23/../admin", 200, "b", ""}, // a decoded %23 is an ordinary byte
		{"h2.test", "/x#/../../../etc", 200, "c", ""},
		{"tls.test", "/secret#/../.well-known/acme-challenge/x", 308, "", "https://tls.test/secret#/../.well-known/acme-challenge/x"},
		{"tls.test", "/.well-known/acme-challenge/t#/../../../secret", 200, "c", ""},
	}
	for _, tt := range tests {
		t.Run(tt.host+tt.target, func(t *testing.T) {
			res := rawRequest(t, front.Listener.Addr().String(),
				"GET "+tt.target+" HTTP/1.1\r\nHost: "+tt.host+"\r\nConnection: close\r\n\r\n")
			require.Equal(t, tt.wantStatus, res.StatusCode)
			assert.Equal(t, tt.wantBackend, res.Header.Get("X-Backend"))
			assert.Equal(t, tt.wantLocation, res.Header.Get("Location"))
			if tt.wantStatus == http.StatusOK {
				assert.Equal(t, tt.target, res.Header.Get("X-Seen-Uri"), "the backend gets the target byte for byte")
			}
		})
	}
}
