package router

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/match/htpasswd"
)

// TestFallbackAuthOverH1AndH2C: a host's fallback and the catch-all's are
// guarded by their Ingress's authentication (SPEC §6) whatever protocol
// the client speaks; only the right credentials reach the backend.
func TestFallbackAuthOverH1AndH2C(t *testing.T) {
	_, addr := echoBackend(t, "protected")
	users, problems := htpasswd.ParseHtpasswd([]byte("eve:{PLAIN}plain\n"))
	require.Empty(t, problems)
	auth := &match.Auth{Basic: match.NewBasicAuth(match.BasicAuth{Realm: "r", Secret: "prod/s", SecretType: "auth-file", Users: users})}

	b := httpBackend("prod/app:80", addr)
	app := vhost("app.test", b, route(match.Exact, "/app", b))
	app.Routes[0].Auth = auth
	app.FallbackLocation.Auth = auth
	catchAll := vhost("", b)
	catchAll.FallbackLocation.Auth = auth

	r := newTestRouter(Options{})
	r.Publish(table("fallback-auth", catchAll, app))
	front := h1AndH2CServer(t, r)

	h2c := h2cTransport(t)
	h1 := &http.Transport{}
	defer h1.CloseIdleConnections()

	for name, tr := range map[string]*http.Transport{"h1": h1, "h2c": h2c} {
		for _, target := range []struct{ host, path string }{
			{"app.test", "/other"}, {"app.test", "/"}, {"app.test", "/App"}, {"app.test", "/app;"},
			{"app.test", "/app"}, {"elsewhere.test", "/"}, {"elsewhere.test", "/x/y"},
		} {
			for _, cred := range []string{"", "Basic ZXZlOndyb25n", "Basic ZXZlOnBsYWlu"} {
				req, err := http.NewRequest(http.MethodGet, front.URL+target.path, nil)
				require.NoError(t, err)
				req.Host = target.host
				if cred != "" {
					req.Header.Set("Authorization", cred)
				}
				res, err := tr.RoundTrip(req)
				require.NoError(t, err)
				got := body(t, res)
				want := http.StatusUnauthorized
				if cred == "Basic ZXZlOnBsYWlu" {
					want = http.StatusOK
				}
				wantProto := 1
				if name == "h2c" {
					wantProto = 2
				}
				require.Equal(t, wantProto, res.ProtoMajor, "%s %s%s", name, target.host, target.path)
				assert.Equal(t, want, res.StatusCode, "%s %s%s with %q", name, target.host, target.path, cred)
				if want != http.StatusOK {
					assert.NotContains(t, got, "protected", "the backend never answers without credentials")
				}
			}
		}
	}
}
