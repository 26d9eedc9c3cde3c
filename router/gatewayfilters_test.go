package router

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// serveLoopback serves r on a loopback listener until the test ends and
// returns its URL.
func serveLoopback(t *testing.T, r http.Handler) string {
	t.Helper()
	s := httptest.NewServer(r)
	t.Cleanup(s.Close)
	return s.URL
}

// sendTo makes one request to the router at base over loopback.
func sendTo(t *testing.T, base, method, host, path string, header http.Header) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, base+path, nil)
	require.NoError(t, err)
	req.Host = host
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, res.Body)
	require.NoError(t, res.Body.Close())
	return res
}

// A Gateway API CORS filter (match.CORS.Gateway) over real loopback HTTP:
// the router answers every preflight 204 itself, with the CORS headers
// only for an allowed origin; other requests reach the backend and only
// an allowed origin's answer gets Allow-Origin (echoed), credentials and
// expose headers.
func TestGatewayCORSOverLoopback(t *testing.T) {
	_, addr := echoBackend(t, "app")
	app := httpBackend("prod/app:80", addr)
	rt := route(match.Prefix, "/", app)
	rt.CORS = match.NewCORS(match.CORS{Gateway: true, Origins: []string{"https://*.example.com", "http://plain.test"},
		Methods: "GET, PUT", Headers: "*", ExposeHeaders: "X-Total", Credentials: true})
	anyRoute := route(match.Prefix, "/any", app)
	anyRoute.CORS = match.NewCORS(match.CORS{Gateway: true, AnyOrigin: true, Methods: "*", MaxAge: 600})
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe})
	r.Publish(mustTable(match.Spec{VirtualHosts: []*match.VirtualHost{vhost("shop.test", nil, rt, anyRoute)}, Backends: []*match.Backend{app}}))
	base := serveLoopback(t, r)
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			out.Add(kv[i], kv[i+1])
		}
		return out
	}

	res := sendTo(t, base, "OPTIONS", "shop.test", "/cart", h("Origin", "https://a.b.example.com",
		"Access-Control-Request-Method", "PUT", "Access-Control-Request-Headers", "x-a, x-b"))
	assert.Equal(t, 204, res.StatusCode)
	assert.Empty(t, res.Header.Get("X-Backend"), "a preflight is the router's")
	assert.Equal(t, "https://a.b.example.com", res.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "GET, PUT", res.Header.Get("Access-Control-Allow-Methods"))
	assert.Equal(t, "x-a, x-b", res.Header.Get("Access-Control-Allow-Headers"), "\"*\" echoes what the preflight asks")
	assert.Equal(t, "X-Total", res.Header.Get("Access-Control-Expose-Headers"))
	assert.Equal(t, "true", res.Header.Get("Access-Control-Allow-Credentials"))
	assert.Equal(t, "5", res.Header.Get("Access-Control-Max-Age"), "the API's default")
	assert.Equal(t, "Origin", res.Header.Get("Vary"))
	assert.Equal(t, ReasonCORSPreflight, rs.last(t).Reason)

	for _, origin := range []string{"https://example.com", "https://evil.test", "http://a.example.com", "https://a.example.com:8443", "https://a..example.com"} {
		res = sendTo(t, base, "OPTIONS", "shop.test", "/cart", h("Origin", origin, "Access-Control-Request-Method", "GET"))
		assert.Equal(t, 204, res.StatusCode, origin)
		assert.Empty(t, res.Header.Get("X-Backend"), origin)
		assert.Empty(t, res.Header.Get("Access-Control-Allow-Origin"), origin)
		assert.Empty(t, res.Header.Get("Access-Control-Allow-Methods"), origin)
		assert.Equal(t, ReasonCORSPreflightDenied, rs.last(t).Reason, origin)
	}

	// The scheme's default port is the same origin, written or not.
	for _, origin := range []string{"https://x.example.com:443", "http://plain.test", "http://PLAIN.test:80"} {
		res = sendTo(t, base, "GET", "shop.test", "/cart", h("Origin", origin))
		assert.Equal(t, "app", res.Header.Get("X-Backend"), origin)
		assert.Equal(t, origin, res.Header.Get("Access-Control-Allow-Origin"), origin)
		assert.Equal(t, "true", res.Header.Get("Access-Control-Allow-Credentials"), origin)
		assert.Equal(t, "X-Total", res.Header.Get("Access-Control-Expose-Headers"), origin)
		assert.Empty(t, res.Header.Get("Access-Control-Allow-Methods"), "methods are a preflight's")
	}

	// Neither an OPTIONS without Access-Control-Request-Method nor a
	// request without Origin is a preflight: both are proxied.
	res = sendTo(t, base, "OPTIONS", "shop.test", "/cart", h("Origin", "https://x.example.com"))
	assert.Equal(t, "app", res.Header.Get("X-Backend"))
	assert.Equal(t, "https://x.example.com", res.Header.Get("Access-Control-Allow-Origin"))
	res = sendTo(t, base, "OPTIONS", "shop.test", "/cart", h("Access-Control-Request-Method", "GET"))
	assert.Equal(t, "app", res.Header.Get("X-Backend"))
	assert.Empty(t, res.Header.Get("Access-Control-Allow-Origin"))

	// Any origin, echoed; "*" methods echo the requested one, and without
	// one send none; no credentials header when not asked.
	res = sendTo(t, base, "OPTIONS", "shop.test", "/any", h("Origin", "https://foobar.com:12345", "Access-Control-Request-Method", "PATCH"))
	assert.Equal(t, 204, res.StatusCode)
	assert.Equal(t, "https://foobar.com:12345", res.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "PATCH", res.Header.Get("Access-Control-Allow-Methods"))
	assert.Empty(t, res.Header.Values("Access-Control-Allow-Headers"))
	assert.Empty(t, res.Header.Values("Access-Control-Allow-Credentials"))
	assert.Equal(t, "600", res.Header.Get("Access-Control-Max-Age"))
	res = sendTo(t, base, "DELETE", "shop.test", "/any", h("Origin", "null"))
	assert.Equal(t, "app", res.Header.Get("X-Backend"))
	assert.Equal(t, "null", res.Header.Get("Access-Control-Allow-Origin"))
}

// Header edits on one alternative of a split (a Gateway API backendRef's
// filters, match.Alternative.Snippet) reach only the requests sent to it
// and its answers, after the route's own, over real loopback HTTP.
func TestBackendHeaderFiltersOverLoopback(t *testing.T) {
	_, aAddr := echoBackend(t, "a")
	_, bAddr := echoBackend(t, "b")
	a, b := httpBackend("prod/a:80", aAddr), httpBackend("prod/b:80", bAddr)
	snippet := func(ops ...match.SnippetOp) *match.Snippet {
		sn, err := match.NewSnippet(match.Snippet{Ops: ops})
		require.NoError(t, err)
		return sn
	}
	rt := route(match.Prefix, "/", a)
	rt.Snippet = snippet(match.SnippetOp{Kind: match.OpSetInput, Name: "Rule", Value: "all", Always: true},
		match.SnippetOp{Kind: match.OpSetInput, Name: "Backend", Value: "rule", Always: true})
	rt.Split = &match.Split{Alternatives: []match.Alternative{
		{Backend: a, Weight: 1, Snippet: snippet(match.SnippetOp{Kind: match.OpSetInput, Name: "Backend", Value: "a", Always: true},
			match.SnippetOp{Kind: match.OpSetHeader, Name: "X-From", Value: "a"})},
		{Backend: b, Weight: 1, Snippet: snippet(match.SnippetOp{Kind: match.OpSetInput, Name: "Backend", Value: "b", Always: true},
			match.SnippetOp{Kind: match.OpClearInput, Name: "X-Drop"})},
	}}
	r := newTestRouter(Options{})
	r.Publish(mustTable(match.Spec{VirtualHosts: []*match.VirtualHost{vhost("shop.test", nil, rt)}, Backends: []*match.Backend{a, b}}))
	base := serveLoopback(t, r)
	got := map[string]int{}
	for range 10 {
		res := sendTo(t, base, "GET", "shop.test", "/", http.Header{"X-Drop": {"1"}, "Backend": {"client"}})
		require.Equal(t, 200, res.StatusCode)
		name := res.Header.Get("X-Backend")
		got[name]++
		assert.Equal(t, []string{name}, res.Header.Values("Seen-Backend"), "the backend's own value, over the rule's and the client's")
		assert.Equal(t, "all", res.Header.Get("Seen-Rule"), "the rule's edits run for every backend")
		switch name {
		case "a":
			assert.Equal(t, "a", res.Header.Get("X-From"))
			assert.Equal(t, "1", res.Header.Get("Seen-X-Drop"))
		case "b":
			assert.Empty(t, res.Header.Values("X-From"), "a's response edit is a's only")
			assert.Empty(t, res.Header.Values("Seen-X-Drop"))
		}
	}
	assert.Equal(t, map[string]int{"a": 5, "b": 5}, got)
}

// A backend of protocol H2C (appProtocol kubernetes.io/h2c) is dialled
// with HTTP/2 prior knowledge, whatever the client spoke.
func TestH2CBackend(t *testing.T) {
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Seen-Proto", r.Proto)
	}))
	s.Config.Protocols = new(http.Protocols)
	s.Config.Protocols.SetUnencryptedHTTP2(true) // and nothing else
	s.Start()
	t.Cleanup(s.Close)
	be := backend("prod/h2c:80", match.H2C, match.Serving, strings.TrimPrefix(s.URL, "http://"))
	r := newTestRouter(Options{})
	r.Publish(mustTable(match.Spec{VirtualHosts: []*match.VirtualHost{vhost("shop.test", be)}, Backends: []*match.Backend{be}}))
	res := sendTo(t, serveLoopback(t, r), "GET", "shop.test", "/", nil)
	require.Equal(t, 200, res.StatusCode)
	assert.Equal(t, "HTTP/2.0", res.Header.Get("X-Seen-Proto"))
	assert.Equal(t, "HTTP/1.1", res.Proto)
}
