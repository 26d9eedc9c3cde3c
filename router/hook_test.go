package router

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// TestHook: the hook sees the table the request is served with, answers
// before a backend's state is looked at, passes requests on with headers
// it adds, and is not called when no backend was chosen.
func TestHook(t *testing.T) {
	_, web := echoBackend(t, "web")
	rs := newRecords()
	var calls []Match
	hook := func(w http.ResponseWriter, req *http.Request, m Match) bool {
		calls = append(calls, m)
		if _, ok := m.Route.Extensions.Get("example.com/deny"); ok {
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte("denied"))
			return true
		}
		req.Header.Set("X-Hooked", m.Source().Ingress())
		req.Header.Set("X-Real-Ip", "6.6.6.6") // the router sets its own
		return false
	}
	r := newTestRouter(Options{Observer: rs.observe, Hook: hook})
	deny := match.NewExtensions(map[string]string{"example.com/deny": ""})
	denied := route(match.Prefix, "/admin", httpBackend("prod/empty:80"))
	denied.Extensions = deny
	r.Publish(table("h", vhost("shop.example.com", nil,
		route(match.Prefix, "/", httpBackend("prod/web:80", web)), denied)))

	res := serve(r, http.MethodGet, "shop.example.com", "/x", nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "prod/test", res.Header.Get("Seen-X-Hooked"))
	assert.Equal(t, "192.0.2.1", res.Header.Get("Seen-X-Real-Ip"))
	require.Len(t, calls, 1)
	assert.Equal(t, uint64(1), calls[0].Generation)
	assert.Same(t, r.Table(), calls[0].Table)
	assert.Equal(t, "prod/web:80", calls[0].Backend.ID)

	// The backend has no endpoints (503), but the hook answers first.
	res = serve(r, http.MethodGet, "shop.example.com", "/admin/x", nil)
	assert.Equal(t, http.StatusForbidden, res.StatusCode)
	assert.Equal(t, "denied", body(t, res))
	rec := rs.raw[len(rs.raw)-1]
	assert.Equal(t, ReasonHook, rec.Reason)
	assert.Equal(t, http.StatusForbidden, rec.Status)
	assert.Equal(t, int64(6), rec.BytesOut)
	assert.Same(t, denied, rec.MatchedRoute)

	// No route, no backend: the hook is not asked.
	res = serve(r, http.MethodGet, "other.example.com", "/", nil)
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	assert.Len(t, calls, 2)

	// Lookup says what the table decides; the hook is the embedder's.
	req, _ := http.NewRequest(http.MethodGet, "/admin/x", nil)
	req.Host = "shop.example.com"
	d := r.Lookup(req)
	assert.Equal(t, http.StatusServiceUnavailable, d.Status)
	assert.Same(t, denied, d.Route)
	assert.Len(t, calls, 2)
}

// TestBodyHook: the body hook runs after the hook, on the same request,
// and only for a backend that can take it: a backend without endpoints
// answers 503 first, as ingress-nginx's balancer answers in the rewrite
// phase before ModSecurity reads the body in the preaccess phase; it
// answers before the location's source ranges (nginx's access phase).
func TestBodyHook(t *testing.T) {
	_, web := echoBackend(t, "web")
	rs := newRecords()
	var hooked *http.Request
	var bodies []string
	hook := func(w http.ResponseWriter, req *http.Request, m Match) bool {
		hooked = req
		return false
	}
	bodyHook := func(w http.ResponseWriter, req *http.Request, m Match) bool {
		assert.Same(t, hooked, req, "the request Hook saw")
		b, err := io.ReadAll(req.Body)
		require.NoError(t, err)
		bodies = append(bodies, string(b))
		if string(b) == "evil" {
			w.WriteHeader(http.StatusForbidden)
			return true
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		return false
	}
	r := newTestRouter(Options{Observer: rs.observe, Hook: hook, BodyHook: bodyHook})
	closed := &match.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}
	r.Publish(table("h", vhost("shop.example.com", nil,
		route(match.Prefix, "/", httpBackend("prod/web:80", web)),
		route(match.Prefix, "/empty", httpBackend("prod/empty:80")),
		policyRoute("/admin", httpBackend("prod/web:80", web), closed))))

	post := func(host, path, body string) *http.Response {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Host = host
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		return rec.Result()
	}
	res := post("shop.example.com", "/x", "fine")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "web", res.Header.Get("X-Backend"))

	res = post("shop.example.com", "/empty", "evil")
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode, "no endpoints: the body is not read")
	assert.Equal(t, []string{"fine"}, bodies)

	res = post("shop.example.com", "/admin", "evil")
	assert.Equal(t, http.StatusForbidden, res.StatusCode)
	rec := rs.raw[len(rs.raw)-1]
	assert.Equal(t, ReasonBodyHook, rec.Reason, "before the source ranges")
	assert.Equal(t, []string{"fine", "evil"}, bodies)

	res = post("other.example.com", "/", "evil")
	assert.Equal(t, http.StatusNotFound, res.StatusCode, "no backend: not asked")
	assert.Len(t, bodies, 2)
}
