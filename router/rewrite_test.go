package router

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

func rewriteRoute(t testing.TB, typ match.PathType, path string, b *match.Backend, rw match.Rewrite) *match.Route {
	t.Helper()
	r := route(typ, path, b)
	if typ == match.Regex {
		re, err := match.CompileRegex(path, 0)
		require.NoError(t, err)
		r.Regexp = re
	}
	built, err := match.NewRewrite(rw)
	require.NoError(t, err)
	r.Rewrite = built
	return r
}

// Both upstream paths, the HTTP/1.1 fast path and net/http's, send the
// rewritten target, the upstream Host and X-Forwarded-Prefix, and leave an
// unrewritten request's target byte for byte.
func TestRewriteUpstreamPaths(t *testing.T) {
	_, addr := echoBackend(t, "echo")
	be := httpBackend("prod/echo:80", addr)
	tab := table("rewrite",
		vhost("rw.example.com", be,
			rewriteRoute(t, match.Regex, `/something(/|$)(.*)`, be, match.Rewrite{Target: "/$2", Host: "internal.svc:8080", ForwardedPrefix: "/something", ForwardedPrefixSet: true}),
			rewriteRoute(t, match.Regex, `/moved/(.*)`, be, match.Rewrite{Target: "https://new.example.com/$1"}),
			rewriteRoute(t, match.Prefix, "/api", be, match.Rewrite{Target: "/v2", Syntax: match.NativeSyntax}),
			rewriteRoute(t, match.Regex, `/opt(x?)/(.*)`, be, match.Rewrite{Target: "/$2", ForwardedPrefix: "$1", ForwardedPrefixSet: true})))
	tests := []struct {
		target, host string
		header       http.Header
		status       int
		seenURI      string
		seenHost     string
		seenPrefix   string
		noPrefix     bool // no X-Forwarded-Prefix at all, not even an empty one
		location     string
	}{
		{target: "/something/new?a=1", status: 200, seenURI: "/new?a=1", seenHost: "internal.svc:8080", seenPrefix: "/something"},
		{target: "/SOMETHING//x/%7E", header: http.Header{"X-Forwarded-Prefix": {"/forged"}}, status: 200, seenURI: "/x/~", seenHost: "internal.svc:8080", seenPrefix: "/something"},
		{target: "/api/users?id=1", status: 200, seenURI: "/v2/users?id=1", seenHost: "rw.example.com"},
		{target: "//other/%41?", header: http.Header{"X-Forwarded-Prefix": {"/client"}}, status: 200, seenURI: "//other/%41?", seenHost: "rw.example.com", seenPrefix: "/client"},
		{target: "/moved/a%20b?q", status: 302, location: "https://new.example.com/a%20b?q"},
		{target: "/optx/a", status: 200, seenURI: "/a", seenHost: "rw.example.com", seenPrefix: "x"},
		{target: "/opt/a", header: http.Header{"X-Forwarded-Prefix": {"/forged"}}, status: 200, seenURI: "/a", seenHost: "rw.example.com", noPrefix: true},
	}
	for _, p := range upstreamPaths {
		t.Run(p.name, func(t *testing.T) {
			r := newPathRouter(Options{}, p.netHTTP)
			t.Cleanup(r.CloseIdleConnections)
			r.Publish(tab)
			for _, tt := range tests {
				res := serve(r, http.MethodGet, "rw.example.com", tt.target, tt.header)
				body(t, res)
				require.Equal(t, tt.status, res.StatusCode, tt.target)
				if tt.status == http.StatusFound {
					require.Equal(t, tt.location, res.Header.Get("Location"))
					require.Empty(t, res.Header.Get("X-Backend"), "a redirect is not proxied")
					continue
				}
				require.Equal(t, tt.seenURI, res.Header.Get("X-Seen-Uri"), tt.target)
				require.Equal(t, tt.seenHost, res.Header.Get("X-Seen-Host"), tt.target)
				require.Equal(t, tt.seenPrefix, res.Header.Get("Seen-X-Forwarded-Prefix"), tt.target)
				if tt.noPrefix {
					require.Empty(t, res.Header.Values("Seen-X-Forwarded-Prefix"), tt.target)
				}
				require.Equal(t, "rw.example.com", res.Header.Get("Seen-X-Forwarded-Host"), tt.target)
			}
		})
	}
}

// BenchmarkRewrite measures the cost of a rewrite through the handler on
// the HTTP/1.1 fast path: the same request to the same kind of route with
// and without one. Budget: a rewritten request allocates at most 2 more
// times than an unrewritten one.
//
//	go test -run '^$' -bench Rewrite -count 6 ./router/ | benchstat -col /route -
func BenchmarkRewrite(b *testing.B) {
	_, backend := benchSetup(b)
	addr := backend.Listener.Addr().String()
	be := httpBackend("prod/web:80", addr)
	r := newTestRouter(Options{})
	b.Cleanup(r.CloseIdleConnections)
	r.Publish(table("bench-rewrite",
		vhost("regex.example.com", nil, rewriteRoute(b, match.Regex, `/api/(.*)`, be, match.Rewrite{})),
		vhost("regex-rewrite.example.com", nil, rewriteRoute(b, match.Regex, `/api/(.*)`, be, match.Rewrite{Target: "/v2/$1"})),
		vhost("prefix.example.com", nil, route(match.Prefix, "/api", be)),
		vhost("prefix-rewrite.example.com", nil, rewriteRoute(b, match.Prefix, "/api", be, match.Rewrite{Target: "/v2", Syntax: match.NativeSyntax})),
		vhost("vhost.example.com", nil, rewriteRoute(b, match.Prefix, "/api", be, match.Rewrite{Host: "internal.svc", ForwardedPrefix: "/api", ForwardedPrefixSet: true})),
	))
	// The backend runs in this process, so its allocations count too: the
	// header the route adds is sent by the client in the baseline
	// prefix-client-xfp, so that both backends parse the same request.
	for _, c := range []struct{ name, host, xfp string }{
		{"regex", "regex.example.com", ""},
		{"regex-rewrite", "regex-rewrite.example.com", ""},
		{"prefix", "prefix.example.com", ""},
		{"prefix-rewrite", "prefix-rewrite.example.com", ""},
		{"prefix-client-xfp", "prefix.example.com", "/api"},
		{"prefix-vhost-xfp", "vhost.example.com", ""},
	} {
		b.Run("route="+c.name, func(b *testing.B) {
			req, _ := http.NewRequest(http.MethodGet, "http://"+c.host+"/api/v1/items?id=42", nil)
			req.RequestURI = "/api/v1/items?id=42"
			req.RemoteAddr = "192.0.2.1:1234"
			req.Header.Set("User-Agent", "bench")
			if c.xfp != "" {
				req.Header.Set("X-Forwarded-Prefix", c.xfp)
			}
			w := &discardWriter{h: make(http.Header)}
			b.ReportAllocs()
			for b.Loop() {
				w.serveOK(b, r, req)
			}
		})
	}
}

// A rewrite that repeats a capture cannot make a request build more than
// match.MaxRewriteTarget: "/$1" as often as a template may hold it, on a
// 5 KB path, would be 6.8 MB per request; it answers 500 without reaching
// the backend, on both upstream paths and for the X-Forwarded-Prefix too,
// while a rewrite that stays under the bound is served.
func TestRewriteAmplificationBounded(t *testing.T) {
	_, addr := echoBackend(t, "echo")
	be := httpBackend("prod/echo:80", addr)
	refs := (match.MaxRewriteTemplate - 32) / 3
	repeat := strings.Repeat("/$1", refs)
	tab := table("rewrite-bound",
		vhost("target.example.com", nil, rewriteRoute(t, match.Regex, `/a/(.*)`, be, match.Rewrite{Target: repeat})),
		vhost("redirect.example.com", nil, rewriteRoute(t, match.Regex, `/a/(.*)`, be, match.Rewrite{Target: "https://x.example.com" + repeat})),
		vhost("prefix.example.com", nil, rewriteRoute(t, match.Regex, `/a/(.*)`, be, match.Rewrite{ForwardedPrefix: repeat, ForwardedPrefixSet: true})))
	long := "/a/" + strings.Repeat("x", 5000)
	// Each reference writes "/" and the capture: this stays just under.
	under := "/a/" + strings.Repeat("y", match.MaxRewriteTarget/refs-1)
	for _, p := range upstreamPaths {
		t.Run(p.name, func(t *testing.T) {
			r := newPathRouter(Options{}, p.netHTTP)
			t.Cleanup(r.CloseIdleConnections)
			r.Publish(tab)
			for _, host := range []string{"target.example.com", "redirect.example.com", "prefix.example.com"} {
				start := time.Now()
				res := serve(r, http.MethodGet, host, long+"?q=1", nil)
				require.Equal(t, http.StatusInternalServerError, res.StatusCode, host)
				require.Contains(t, body(t, res), "too long")
				require.Empty(t, res.Header.Get("X-Backend"), "never proxied")
				require.Less(t, time.Since(start), 2*time.Second, host)

				req := httptest.NewRequest(http.MethodGet, long, nil)
				req.Host = host
				d := r.Lookup(req)
				require.Equal(t, http.StatusInternalServerError, d.Status)
				require.Equal(t, ReasonRewriteTooLong, d.Reason)
			}
			res := serve(r, http.MethodGet, "target.example.com", under, nil)
			body(t, res)
			require.Equal(t, http.StatusOK, res.StatusCode)
			seen := res.Header.Get("X-Seen-Uri")
			require.LessOrEqual(t, len(seen), match.MaxRewriteTarget)
			require.Equal(t, strings.Repeat("/"+under[3:], refs), seen)
		})
	}
}

// TestRewriteRecord: the record names the request-target a rewrite
// built, from which an access log reads nginx's $uri and $args after the
// location's rewrite; none when nothing rewrote the request.
func TestRewriteRecord(t *testing.T) {
	_, addr := echoBackend(t, "echo")
	be := httpBackend("prod/echo:80", addr)
	recs := newRecords()
	r := newTestRouter(Options{Observer: recs.observe})
	r.Publish(table("rewrite", vhost("rw.example.com", be,
		rewriteRoute(t, match.Regex, `/something(/|$)(.*)`, be, match.Rewrite{Target: "/$2"}),
		route(match.Prefix, "/plain", be))))
	for target, want := range map[string]string{
		"/something/a%20b?x=1": "/a%20b?x=1",
		"/plain/a?x=1":         "",
	} {
		res := serve(r, http.MethodGet, "rw.example.com", target, nil)
		body(t, res)
		require.Equal(t, http.StatusOK, res.StatusCode, target)
		recs.mu.Lock()
		rec := recs.raw[len(recs.raw)-1]
		recs.mu.Unlock()
		require.Equal(t, want, rec.Rewritten, target)
		require.Equal(t, target, rec.Path, target)
	}
}
