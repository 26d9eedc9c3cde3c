package compile

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// mkHTTPRoute is a route on host with one rule per path, each to svc:80.
func mkHTTPRoute(ns, name string, created int64, host string, ms ...HTTPRouteMatch) *HTTPRoute {
	r := &HTTPRoute{Namespace: ns, Name: name, Created: time.Unix(created, 0), Hostnames: []string{host}}
	r.Rules = []HTTPRouteRule{{
		Field:    "spec.rules[0]",
		Matches:  ms,
		Backends: []WeightedBackend{{Service: ServiceRef{Namespace: ns, Name: name, Port: "80"}, Weight: 1, Field: "spec.rules[0].backendRefs[0]"}},
	}}
	return r
}

func routeSnapshot(t *testing.T, ings []string, routes ...*HTTPRoute) Snapshot {
	t.Helper()
	s := mkSnapshot()
	for _, r := range routes {
		s.HTTPRoutes = append(s.HTTPRoutes, r)
		require.NoError(t, s.Add(mkService(r.Namespace, r.Name, ":80:"), mkSlice(r.Namespace, r.Name, r.Name, "", 80, "10.0.0.1")))
	}
	for _, n := range ings {
		require.NoError(t, s.Add(mkService("prod", n, ":80:"), mkSlice("prod", n, n, "", 80, "10.0.0.2")))
	}
	return s
}

func TestHTTPRouteServed(t *testing.T) {
	s := routeSnapshot(t, nil,
		mkHTTPRoute("prod", "exact", 1, "shop.example.com", HTTPRouteMatch{Field: "spec.rules[0].matches[0]", Type: match.Exact, Path: "/cart"}),
		mkHTTPRoute("prod", "prefix", 1, "shop.example.com", HTTPRouteMatch{Field: "spec.rules[0].matches[0]", Type: match.Prefix, Path: "/cart/"}),
		mkHTTPRoute("prod", "regex", 1, "shop.example.com", HTTPRouteMatch{Field: "spec.rules[0].matches[0]", Type: match.Regex, Path: "/item/[0-9]+"}),
		mkHTTPRoute("prod", "all", 1, "*.example.com"),
	)
	tab, ws := compileOK(t, s, Options{})
	require.Empty(t, ws)
	for path, want := range map[string]string{
		"/cart": "prod/exact:80", "/cart/x": "prod/prefix:80", "/cartx": "404",
		"/item/12": "prod/regex:80", "/other": "404",
	} {
		require.Equal(t, want, served(tab, "shop.example.com", path), path)
	}
	require.Equal(t, "prod/all:80", served(tab, "www.example.com", "/anything"))
	require.Equal(t, "404", served(tab, "other.test", "/"))
	require.Contains(t, tab.String(), "from HTTPRoute prod/exact spec.rules[0].matches[0]")
}

func TestHTTPRoutePrecedenceAmongRoutes(t *testing.T) {
	m := HTTPRouteMatch{Field: "spec.rules[0].matches[0]", Type: match.Prefix, Path: "/api"}
	tests := []struct {
		name   string
		a, b   *HTTPRoute
		winner string
	}{
		{"older wins", mkHTTPRoute("prod", "z", 1, "h.test", m), mkHTTPRoute("prod", "a", 2, "h.test", m), "prod/z"},
		{"tie: namespace/name ascending", mkHTTPRoute("prod", "b", 5, "h.test", m), mkHTTPRoute("prod", "a", 5, "h.test", m), "prod/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, ws := compileOK(t, routeSnapshot(t, nil, tt.a, tt.b), Options{})
			require.Equal(t, tt.winner+":80", served(tab, "h.test", "/api/x"))
			w := findWarning(t, ws, RouteConflict, "spec.rules[0].matches[0]")
			require.Equal(t, "HTTPRoute "+tt.winner+" spec.rules[0].matches[0]", w.WinnerText())
		})
	}
}

// TestHTTPRouteAgainstIngress: the older object wins the same host and
// path, the Ingress on equal age, and the loser's warning names the winner.
func TestHTTPRouteAgainstIngress(t *testing.T) {
	m := HTTPRouteMatch{Field: "spec.rules[0].matches[0]", Type: match.Prefix, Path: "/api"}
	for _, tt := range []struct {
		name                string
		ingAge, routeAge    int64
		winner, loser, wfld string
	}{
		{"ingress older", 1, 2, "Ingress prod/ing spec.rules[0].http.paths[0]", "HTTPRoute prod/rt", "spec.rules[0].matches[0]"},
		{"same age: ingress", 3, 3, "Ingress prod/ing spec.rules[0].http.paths[0]", "HTTPRoute prod/rt", "spec.rules[0].matches[0]"},
		{"route older", 4, 3, "HTTPRoute prod/rt spec.rules[0].matches[0]", "Ingress prod/ing", "spec.rules[0].http.paths[0]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := routeSnapshot(t, []string{"ing"}, mkHTTPRoute("prod", "rt", tt.routeAge, "h.test", m))
			require.NoError(t, s.Add(mkIngress("prod", "ing", tt.ingAge, withRules(mkRule("h.test", prefix("/api", "ing", 80))))))
			tab, ws := compileOK(t, s, Options{})
			w := findWarning(t, ws, RouteConflict, tt.wfld)
			require.Equal(t, tt.winner, w.WinnerText())
			require.Equal(t, tt.loser, w.Object.String())
			want := "prod/ing:80"
			if tt.routeAge < tt.ingAge {
				want = "prod/rt:80"
			}
			require.Equal(t, want, served(tab, "h.test", "/api"))
		})
	}
}

// TestHTTPRouteDigest: the digest covers a route source's rules.
func TestHTTPRouteDigest(t *testing.T) {
	a := Compile(routeSnapshot(t, nil, mkHTTPRoute("prod", "rt", 1, "h.test", HTTPRouteMatch{Type: match.Prefix, Path: "/a"})), Options{}).Table.Digest()
	b := Compile(routeSnapshot(t, nil, mkHTTPRoute("prod", "rt", 1, "h.test", HTTPRouteMatch{Type: match.Prefix, Path: "/b"})), Options{}).Table.Digest()
	require.NotEqual(t, a, b)
}

func TestHTTPRouteRefused(t *testing.T) {
	r := mkHTTPRoute("prod", "rt", 1, "h.test", HTTPRouteMatch{Field: "spec.rules[0].matches[0]", Type: match.Exact, Path: "a"})
	split := mkHTTPRoute("prod", "split", 1, "h.test")
	split.Rules[0].Backends = append(split.Rules[0].Backends, WeightedBackend{Service: ServiceRef{Namespace: "prod", Name: "x", Port: "80"}, Weight: 1, Field: "spec.rules[0].backendRefs[1]"})
	missing := mkHTTPRoute("prod", "missing", 1, "h.test", HTTPRouteMatch{Field: "spec.rules[0].matches[0]", Type: match.Exact, Path: "/m"})
	s := routeSnapshot(t, nil, r, split)
	s.HTTPRoutes = append(s.HTTPRoutes, missing)
	tab, ws := compileOK(t, s, Options{})
	require.Equal(t, []short{
		{ServiceNotFound, "HTTPRoute prod/missing", "spec.rules[0].backendRefs[0].name"},
		{PathRejected, "HTTPRoute prod/rt", "spec.rules[0].matches[0].path"},
		{ServiceNotFound, "HTTPRoute prod/split", "spec.rules[0].backendRefs[1].name"},
	}, shorten(ws))
	// The split's missing Service is its invalid half: 500 for its share.
	res := tab.Lookup("h.test", "/")
	require.Equal(t, "prod/split:80", res.Backend.ID)
	require.Len(t, res.Route.Split.Alternatives, 2)
	require.Nil(t, res.Route.Split.Alternatives[1].Backend)
	// A lone backend that does not exist is invalid: every request 500.
	m := tab.Lookup("h.test", "/m")
	require.Nil(t, m.Backend)
	require.Equal(t, []match.Alternative{{Weight: 1}}, m.Route.Split.Alternatives)
}

// TestHTTPRouteSplitAndConditions: weighted backends become the route's
// Split (a lone valid backend stays its Backend; none answers 500 by a
// Split without a Backend); matches with method, headers or query become
// routes of their own key with conditions, the same conditions twice a
// conflict.
func TestHTTPRouteSplitAndConditions(t *testing.T) {
	r := mkHTTPRoute("prod", "a", 1, "h.test",
		HTTPRouteMatch{Field: "spec.rules[0].matches[0]", Type: match.Prefix, Path: "/x", Method: "GET"},
		HTTPRouteMatch{Field: "spec.rules[0].matches[1]", Type: match.Prefix, Path: "/x", Headers: []match.ValueMatch{{Name: "v", Value: "2"}}},
		HTTPRouteMatch{Field: "spec.rules[0].matches[2]", Type: match.Prefix, Path: "/x"})
	r.Rules[0].Backends = append(r.Rules[0].Backends,
		WeightedBackend{Service: ServiceRef{Namespace: "prod", Name: "b", Port: "80"}, Weight: 3, Field: "spec.rules[0].backendRefs[1]"},
		WeightedBackend{Weight: 0, Field: "spec.rules[0].backendRefs[2]", Invalid: "not a Service"})
	dup := mkHTTPRoute("prod", "dup", 2, "h.test",
		HTTPRouteMatch{Field: "spec.rules[0].matches[0]", Type: match.Prefix, Path: "/x", Method: "GET"},
		HTTPRouteMatch{Field: "spec.rules[0].matches[1]", Type: match.Exact, Path: "/none"})
	dup.Rules[0].Backends = nil
	b := mkHTTPRoute("prod", "b", 3, "other.test")
	tab, ws := compileOK(t, routeSnapshot(t, nil, r, dup, b), Options{})
	require.Equal(t, []short{
		{BackendUnsupported, "HTTPRoute prod/dup", "spec.rules[0].backendRefs"},
		{RouteConflict, "HTTPRoute prod/dup", "spec.rules[0].matches[0]"},
	}, shorten(ws))
	get := tab.LookupRequest("h.test", "/x", &match.Request{Method: "GET"})
	require.Equal(t, "spec.rules[0].matches[0]", get.Route.Source.Field)
	require.Equal(t, "prod/a", get.Route.Source.Ingress())
	require.Equal(t, []match.Alternative{{Backend: get.Backend, Weight: 1}, {Backend: tab.Lookup("other.test", "/").Backend, Weight: 3}, {Weight: 0}},
		get.Route.Split.Alternatives)
	hdr := tab.LookupRequest("h.test", "/x", &match.Request{Method: "PUT", Header: map[string][]string{"V": {"2"}}})
	require.Equal(t, "spec.rules[0].matches[1]", hdr.Route.Source.Field)
	require.Equal(t, "spec.rules[0].matches[2]", tab.Lookup("h.test", "/x").Route.Source.Field)
	none := tab.Lookup("h.test", "/none")
	require.Nil(t, none.Backend)
	require.NotNil(t, none.Route.Split)
	require.Equal(t, "prod/b:80", served(tab, "other.test", "/"), "a lone backend is no split")
	require.Nil(t, tab.Lookup("other.test", "/").Route.Split)
}

// TestHTTPRouteRewrite: a URLRewrite becomes the route's match.Rewrite, a
// prefix replacement keeping the rest of the path and the query.
func TestHTTPRouteRewrite(t *testing.T) {
	mk := func(name string, u *URLRewrite, ms ...HTTPRouteMatch) *HTTPRoute {
		r := mkHTTPRoute("prod", name, 1, "h.test", ms...)
		r.Rules[0].Rewrite, r.Rules[0].FilterField = u, "spec.rules[0].filters[0]"
		return r
	}
	s := routeSnapshot(t, nil,
		mk("prefix", &URLRewrite{Path: "/one", PathSet: true, ReplacePrefix: true}, HTTPRouteMatch{Type: match.Prefix, Path: "/prefix/one"}),
		mk("strip", &URLRewrite{Path: "/", PathSet: true, ReplacePrefix: true}, HTTPRouteMatch{Type: match.Prefix, Path: "/strip"}),
		mk("full", &URLRewrite{Path: "/one", PathSet: true, Hostname: "backend.test"}, HTTPRouteMatch{Type: match.Prefix, Path: "/full"}),
		mk("bad", &URLRewrite{Path: "/x", PathSet: true, ReplacePrefix: true}, HTTPRouteMatch{Field: "spec.rules[0].matches[0]", Type: match.Exact, Path: "/bad"}),
	)
	tab, ws := compileOK(t, s, Options{})
	require.Equal(t, []short{{RuleRejected, "HTTPRoute prod/bad", "spec.rules[0].filters[0].urlRewrite.path"}}, shorten(ws))
	for _, tt := range []struct{ path, query, target, host string }{
		{"/prefix/one/two", "a=1", "/one/two?a=1", ""}, // "": the client's Host
		{"/prefix/one", "", "/one", ""},
		{"/strip/three", "", "/three", ""},
		{"/strip", "", "/", ""},
		{"/full/one/two", "q", "/one?q", "backend.test"},
	} {
		res := tab.Lookup("h.test", tt.path)
		require.NotNil(t, res.Route, tt.path)
		got := res.Route.Rewrite.Apply(res.Route, tt.path, tt.query, "http", "h.test")
		require.Equal(t, tt.target, got.Target, tt.path)
		require.False(t, got.Redirect)
		require.Equal(t, tt.host, res.Route.Rewrite.UpstreamHost(match.HostVars{Host: "h.test"}), tt.path)
	}
	require.Equal(t, "404", served(tab, "h.test", "/bad"))
}

// BenchmarkCompileHTTPRoutes is BenchmarkCompile's snapshot with each
// Ingress replaced by an HTTPRoute with the same host, matches and
// Service (issue 27's budget: within 1.5× of the Ingresses).
func BenchmarkCompileHTTPRoutes(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			s := benchSnapshot(n)
			for _, ing := range s.Ingresses {
				rule := ing.Spec.Rules[0]
				svc := rule.HTTP.Paths[0].Backend.Service.Name
				s.HTTPRoutes = append(s.HTTPRoutes, &HTTPRoute{Namespace: ing.Namespace, Name: ing.Name, Created: ing.CreationTimestamp.Time,
					Hostnames: []string{rule.Host},
					Rules: []HTTPRouteRule{{Field: "spec.rules[0]",
						Matches: []HTTPRouteMatch{
							{Field: "spec.rules[0].matches[0]", Type: match.Exact, Path: "/exact"},
							{Field: "spec.rules[0].matches[1]", Type: match.Prefix, Path: "/prefix/"},
						},
						Backends: []WeightedBackend{{Service: ServiceRef{Namespace: ing.Namespace, Name: svc, Port: "80"}, Weight: 1}},
					}}})
			}
			s.Ingresses = nil
			tab, ws := compileTable(s, Options{})
			if len(ws) != 0 || tab.Size().Backends != n || tab.Size().VirtualHosts != n+1 {
				b.Fatalf("unexpected table: %d warnings, %d backends, %d hosts", len(ws), tab.Size().Backends, tab.Size().VirtualHosts)
			}
			b.ReportAllocs()
			for b.Loop() {
				Compile(s, Options{})
			}
		})
	}
}

// TestHTTPRouteHeaderModifiers: the header filters become the route's
// snippet steps: set replaces, add appends to a present request header
// (",value") or adds a response header, remove clears; a name that is not
// a token refuses the rule.
func TestHTTPRouteHeaderModifiers(t *testing.T) {
	r := mkHTTPRoute("prod", "hdr", 1, "h.test")
	r.Rules[0].RequestHeaders = &HeaderModifier{Field: "spec.rules[0].filters[0]",
		Set:    []HeaderValue{{"X-Set", "set-value"}},
		Add:    []HeaderValue{{"X-Add", "add-1"}, {"X-Add-Append", "add-2"}},
		Remove: []string{"X-Remove"}}
	r.Rules[0].ResponseHeaders = &HeaderModifier{Field: "spec.rules[0].filters[1]",
		Set: []HeaderValue{{"X-Resp-Set", "rs"}}, Add: []HeaderValue{{"X-Resp-Add", "ra"}}, Remove: []string{"X-Resp-Remove"}}
	bad := mkHTTPRoute("prod", "bad", 1, "bad.test")
	bad.Rules[0].ResponseHeaders = &HeaderModifier{Field: "spec.rules[0].filters[0]", Set: []HeaderValue{{"X Var", "v"}}}
	tab, ws := compileOK(t, routeSnapshot(t, nil, r, bad), Options{})
	require.Equal(t, []short{{RuleRejected, "HTTPRoute prod/bad", "spec.rules[0].filters[0]"}}, shorten(ws))
	require.Equal(t, "404", served(tab, "bad.test", "/"))

	res := tab.Lookup("h.test", "/x")
	require.NotNil(t, res.Route)
	require.NotNil(t, res.Route.Snippet)
	req := map[string][]string{"X-Set": {"old"}, "X-Add-Append": {"old"}, "X-Remove": {"gone"}, "X-Keep": {"kept"}}
	out := res.Route.Snippet.Run(&match.SnippetRequest{Host: "h.test", URI: "/x", Header: req})
	h := map[string][]string{}
	for k, v := range req {
		h[k] = v
	}
	match.ApplyRequest(out.Request, h)
	require.Equal(t, map[string][]string{"X-Set": {"set-value"}, "X-Add": {"add-1"}, "X-Add-Append": {"old,add-2"}, "X-Keep": {"kept"}}, h)
	resp := map[string][]string{"X-Resp-Set": {"old"}, "X-Resp-Add": {"old"}, "X-Resp-Remove": {"gone"}}
	match.ApplyResponse(out.Response, resp, 500)
	require.Equal(t, map[string][]string{"X-Resp-Set": {"rs"}, "X-Resp-Add": {"old", "ra"}}, resp)

	// With snippets allowed, the snippet step keeps the route's own steps.
	on, _ := compileOK(t, routeSnapshot(t, nil, r), Options{AllowSnippetAnnotations: true, AnnotationsRiskLevel: "Critical"})
	require.Equal(t, res.Route.Snippet.Ops, on.Lookup("h.test", "/x").Route.Snippet.Ops)
}

// TestHTTPRouteRedirect: a RequestRedirect answers from the route's
// snippet steps; a prefix replacement keeps the rest of the path and a
// replaced path the query. A rule with a redirect needs no backend.
func TestHTTPRouteRedirect(t *testing.T) {
	mk := func(name string, rd *RequestRedirect, ms ...HTTPRouteMatch) *HTTPRoute {
		r := mkHTTPRoute("prod", name, 1, "h.test", ms...)
		rd.Field = "spec.rules[0].filters[0]"
		r.Rules[0].Redirect, r.Rules[0].Backends = rd, nil
		return r
	}
	bad := mk("bad", &RequestRedirect{StatusCode: 200}, HTTPRouteMatch{Type: match.Prefix, Path: "/bad"})
	both := mk("both", &RequestRedirect{Scheme: "https"}, HTTPRouteMatch{Type: match.Prefix, Path: "/both"})
	both.Rules[0].Rewrite = &URLRewrite{Hostname: "x.test"}
	s := routeSnapshot(t, nil,
		mk("prefix", &RequestRedirect{Path: "/new", PathSet: true, ReplacePrefix: true, StatusCode: 308}, HTTPRouteMatch{Type: match.Prefix, Path: "/old/"}),
		mk("full", &RequestRedirect{Path: "/f", PathSet: true, Hostname: "f.test", Port: 8443, Scheme: "https"}, HTTPRouteMatch{Type: match.Exact, Path: "/full"}),
		mk("port", &RequestRedirect{Port: 80}, HTTPRouteMatch{Type: match.Prefix, Path: "/port"}),
		bad, both)
	tab, ws := compileOK(t, s, Options{})
	require.Equal(t, []short{
		{RuleRejected, "HTTPRoute prod/bad", "spec.rules[0].filters[0].requestRedirect"},
		{RuleRejected, "HTTPRoute prod/both", "spec.rules[0].filters[0].requestRedirect"},
	}, shorten(ws))
	for _, tt := range []struct {
		path, args string
		code       int
		location   string
		scheme     string
	}{
		{"/old/a/b", "q=1", 308, "http://h.test/new/a/b?q=1", "http"},
		{"/old", "", 308, "http://h.test/new", "http"},
		{"/full", "x", 302, "https://f.test:8443/f?x", "http"},
		// Without a scheme, port 80 is left out for an http request only.
		{"/port", "", 302, "http://h.test/port", "http"},
		{"/port", "", 302, "https://h.test:80/port", "https"},
	} {
		res := tab.Lookup("h.test", tt.path)
		require.NotNil(t, res.Route, tt.path)
		require.Nil(t, res.Backend)
		out := res.Route.Snippet.Run(&match.SnippetRequest{Host: "h.test", URI: tt.path, RequestURI: tt.path, Args: tt.args, Scheme: tt.scheme})
		require.Equal(t, tt.code, out.Status, tt.path)
		require.Equal(t, tt.location, out.Location, tt.path)
	}
}

// TestHTTPRouteMirrorsAndTimeouts: mirrors become the route's Response
// (the first its Mirror, the others Mirrors, each to its Service's
// backend); a mirror to a missing Service is dropped, the rule serving
// without it (Gateway API: the primary is served); the shorter timeout
// bounds reading the answer, while connecting keeps the router's bound, so
// that a dial to a dead endpoint fails over as fast under a long route
// timeout as without one (the route's timeouts bound the dial themselves).
func TestHTTPRouteMirrorsAndTimeouts(t *testing.T) {
	r := mkHTTPRoute("prod", "a", 1, "h.test", HTTPRouteMatch{Field: "spec.rules[0].matches[0]", Type: match.Prefix, Path: "/m"})
	r.Rules[0].Mirrors = []RequestMirror{
		{Field: "spec.rules[0].filters[0]", Service: ServiceRef{Namespace: "prod", Name: "b", Port: "80"}},
		{Field: "spec.rules[0].filters[1]", Service: ServiceRef{Namespace: "prod", Name: "c", Port: "80"}, Numerator: 1, Denominator: 4},
	}
	r.Rules[0].RequestTimeout, r.Rules[0].BackendRequestTimeout = 2*time.Second, time.Second
	bad := mkHTTPRoute("prod", "bad", 1, "h.test", HTTPRouteMatch{Field: "spec.rules[0].matches[0]", Type: match.Prefix, Path: "/bad"})
	bad.Rules[0].Mirrors = []RequestMirror{{Field: "spec.rules[0].filters[0]", Service: ServiceRef{Namespace: "prod", Name: "nope", Port: "80"}}}
	tab, ws := compileOK(t, routeSnapshot(t, nil, r, bad, mkHTTPRoute("prod", "b", 1, "b.test"), mkHTTPRoute("prod", "c", 1, "c.test")), Options{})
	require.Equal(t, []short{{ServiceNotFound, "HTTPRoute prod/bad", "spec.rules[0].filters[0].requestMirror.backendRef"}}, shorten(ws))
	require.Equal(t, "prod/bad:80", served(tab, "h.test", "/bad"))
	require.Nil(t, tab.Lookup("h.test", "/bad").Route.Response)
	rt := tab.Lookup("h.test", "/m").Route
	require.Equal(t, "prod/b:80", rt.Response.Mirror.Backend.ID)
	require.Len(t, rt.Response.Mirrors, 1)
	require.Equal(t, "prod/c:80", rt.Response.Mirrors[0].Backend.ID)
	require.Equal(t, [2]int{1, 4}, [2]int{rt.Response.Mirrors[0].Numerator, rt.Response.Mirrors[0].Denominator})
	require.Equal(t, time.Second, rt.Policy.ReadTimeout)
	require.Zero(t, rt.Policy.ConnectTimeout)
	require.Contains(t, tab.String(), "to prod/c:80")

	long := mkHTTPRoute("prod", "long", 1, "l.test", HTTPRouteMatch{Field: "spec.rules[0].matches[0]", Type: match.Prefix, Path: "/"})
	long.Rules[0].RequestTimeout = 5 * time.Minute
	tab, _ = compileOK(t, routeSnapshot(t, nil, long), Options{})
	p := tab.Lookup("l.test", "/report").Route.Policy
	require.Equal(t, 5*time.Minute, p.ReadTimeout)
	require.Zero(t, p.ConnectTimeout, "a 5m request timeout must not make a dead endpoint's dial wait 5m before the next try")
	require.Equal(t, 5*time.Minute, p.Proxy.RequestTimeout)
}
