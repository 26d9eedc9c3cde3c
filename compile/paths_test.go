package compile

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Each case is one path declared on a host whose creator's default
// backend is prod/root:80 (so unmatched requests show as that), with
// requests the path must or must not win.
func TestPaths(t *testing.T) {
	const field = "spec.rules[0].http.paths[0]"
	tests := []struct {
		name       string
		pathType   string
		path       string
		warn       Reason // expected warning, at wantField
		wantField  string
		wins, lose []string // request paths the declared route does and does not serve
		wantKey    string
	}{
		{name: "empty means root", pathType: "Exact", path: "", wins: []string{"/"}, lose: []string{"/a"}, wantKey: "/"},
		{name: "exact", pathType: "Exact", path: "/foo", wins: []string{"/foo"}, lose: []string{"/foo/", "/FOO", "/foo/bar"}, wantKey: "/foo"},
		{name: "exact trailing slash counts", pathType: "Exact", path: "/foo/", wins: []string{"/foo/"}, lose: []string{"/foo"}, wantKey: "/foo/"},
		{name: "prefix", pathType: "Prefix", path: "/foo", wins: []string{"/foo", "/foo/", "/foo/bar"}, lose: []string{"/foobar", "/Foo"}, wantKey: "/foo"},
		{name: "prefix trailing slash stripped", pathType: "Prefix", path: "/foo/", wins: []string{"/foo", "/foo/bar"}, lose: []string{"/foobar"}, wantKey: "/foo"},
		{name: "regex case-insensitive and open-ended", pathType: "ImplementationSpecific", path: "/API/v[0-9]+",
			warn: PathCaseInsensitive, wantField: field + ".pathType",
			wins: []string{"/api/v1", "/Api/V22/x"}, lose: []string{"/x/api/v1"}, wantKey: "/API/v[0-9]+"},
		{name: "regex leading caret dropped", pathType: "ImplementationSpecific", path: "^/caret", warn: PathCaseInsensitive, wantField: field + ".pathType", wins: []string{"/caret"}, wantKey: "/caret"},
		{name: "regex alternation stays anchored", pathType: "ImplementationSpecific", path: "/a|/b", warn: PathCaseInsensitive, wantField: field + ".pathType", wins: []string{"/a", "/b/c"}, lose: []string{"/x/b"}, wantKey: "/a|/b"},
		// Neither a letter nor regex syntax: the regex matches what
		// ingress-nginx's case-sensitive prefix matches, so no warning.
		{name: "implementation-specific digits", pathType: "ImplementationSpecific", path: "/2024/", wins: []string{"/2024/x"}, lose: []string{"/2025/"}, wantKey: "/2024/"},
		// Without a closing slash the regex is open where ingress-nginx's
		// prefix ends at a segment: /20245 matches here, not there.
		{name: "implementation-specific digits open-ended", pathType: "ImplementationSpecific", path: "/2024", warn: PathCaseInsensitive, wantField: field + ".pathType",
			wins: []string{"/2024", "/2024/x", "/20245"}, wantKey: "/2024"},
		{name: "missing pathType is a regex", pathType: "", path: "/re.*x", warn: PathTypeUnknown, wantField: field + ".pathType",
			wins: []string{"/re-x"}, wantKey: "/re.*x"},
		{name: "unknown pathType is a regex", pathType: "Glob", path: "/glob", warn: PathTypeUnknown, wantField: field + ".pathType",
			wins: []string{"/GLOB"}, wantKey: "/glob"},
		{name: "no leading slash", pathType: "Prefix", path: "foo", warn: PathRejected, wantField: field + ".path", lose: []string{"/foo"}},
		{name: "regex without leading slash", pathType: "ImplementationSpecific", path: "(/a|/b)", warn: PathRejected, wantField: field + ".path", lose: []string{"/a"}},
		{name: "caret then no slash", pathType: "ImplementationSpecific", path: "^foo", warn: PathRejected, wantField: field + ".path"},
		{name: "double caret", pathType: "ImplementationSpecific", path: "^^/x", warn: PathRejected, wantField: field + ".path", lose: []string{"/x"}},
		{name: "prefix empty segment", pathType: "Prefix", path: "/a//b", warn: PathRejected, wantField: field + ".path", lose: []string{"/a/b"}},
		{name: "root double slash", pathType: "Prefix", path: "//", warn: PathRejected, wantField: field + ".path"},
		{name: "exact dot segment", pathType: "Exact", path: "/a/./b", warn: PathRejected, wantField: field + ".path", lose: []string{"/a/b"}},
		{name: "exact dot-dot segment", pathType: "Exact", path: "/a/../b", warn: PathRejected, wantField: field + ".path", lose: []string{"/b"}},
		{name: "prefix trailing dot", pathType: "Prefix", path: "/a/.", warn: PathRejected, wantField: field + ".path", lose: []string{"/a"}},
		{name: "regex may hold dots", pathType: "ImplementationSpecific", path: "/a/./b", warn: PathCaseInsensitive, wantField: field + ".pathType", wins: []string{"/a/x/b"}, wantKey: "/a/./b"},
		{name: "regex does not compile", pathType: "ImplementationSpecific", path: "/api/(", warn: PathRejected, wantField: field + ".path", lose: []string{"/api/("}},
		{name: "regex over the size limit", pathType: "ImplementationSpecific", path: "/" + strings.Repeat("[a-z]{1000}", 30),
			warn: PathRejected, wantField: field + ".path", lose: []string{"/" + strings.Repeat("a", 30000)}},
		{name: "backtracking regex over the size limit", pathType: "ImplementationSpecific", path: "/" + strings.Repeat("(?=a)", 8000),
			warn: PathRejected, wantField: field + ".path", lose: []string{"/a"}},
		{name: "backtracking regex", pathType: "ImplementationSpecific", path: "/(?!admin)[a-z]+", warn: PathCaseInsensitive, wantField: field + ".pathType", wins: []string{"/shop"}, lose: []string{"/admin"},
			wantKey: "/(?!admin)[a-z]+"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mkSnapshot(
				mkService("prod", "root", ":80:"), mkSlice("prod", "root", "r", "", 80, "10.0.0.1"),
				mkService("prod", "decl", ":80:"), mkSlice("prod", "decl", "d", "", 80, "10.0.0.2"),
				mkIngress("prod", "root", 1, withDefault("root", 80), withRules(mkRule("shop.example.com"))),
				mkIngress("prod", "decl", 2, withRules(mkRule("shop.example.com", mkPath(tt.pathType, tt.path, "decl", 80)))),
			)
			tab, ws := compileOK(t, s, Options{})
			if tt.warn == "" {
				require.Empty(t, ws, warningText(ws))
			} else {
				require.Len(t, ws, 1, warningText(ws))
				require.Equal(t, short{tt.warn, "Ingress prod/decl", tt.wantField}, shorten(ws)[0])
			}
			for _, p := range tt.wins {
				require.Equal(t, "prod/decl:80", served(tab, "shop.example.com", p), "request %s", p)
			}
			for _, p := range tt.lose {
				require.Equal(t, "prod/root:80", served(tab, "shop.example.com", p), "request %s", p)
			}
			var keys []string
			for _, r := range tab.VirtualHostByName("shop.example.com").Routes {
				if r.Source.Ingress() == "prod/decl" {
					keys = append(keys, r.Path)
				}
			}
			if tt.wantKey == "" && tt.warn != PathTypeUnknown {
				require.Empty(t, keys)
			} else {
				require.Equal(t, []string{tt.wantKey}, keys)
			}
		})
	}
}

func TestBackendUnsupported(t *testing.T) {
	s := mkSnapshot(
		mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
		mkIngress("prod", "shop", 1, withRules(mkRule("shop.example.com",
			mkPath("Prefix", "/static", "", nil), // resource backend
			prefix("/", "web", 80),
		))),
	)
	tab, ws := compileOK(t, s, Options{})
	require.Equal(t, []short{{BackendUnsupported, "Ingress prod/shop", "spec.rules[0].http.paths[0].backend.resource"}}, shorten(ws))
	require.Equal(t, "prod/web:80", served(tab, "shop.example.com", "/static/x"))
	require.Len(t, tab.VirtualHostByName("shop.example.com").Routes, 1)
}

// Route keys and conflicts (SPEC §7): the first declaration in Ingress
// order, then rule and path order, wins; every loser is told who won; the
// loser keeps its other routes.
func TestRouteConflicts(t *testing.T) {
	s := mkSnapshot(
		mkService("prod", "old", ":80:"), mkSlice("prod", "old", "o", "", 80, "10.0.0.1"),
		mkService("prod", "new", ":80:"), mkSlice("prod", "new", "n", "", 80, "10.0.0.2"),
		mkIngress("prod", "old", 1, withRules(mkRule("shop.example.com",
			prefix("/foo", "old", 80),
			regex("/re/(.*)", "old", 80),
			exact("/x", "old", 80),
			prefix("/dup", "old", 80),
			prefix("/dup/", "old", 80), // same key within one Ingress
		))),
		mkIngress("prod", "new", 2, withRules(
			mkRule("shop.example.com",
				prefix("/foo/", "new", 80),    // same Prefix key as /foo
				regex("^/re/(.*)", "new", 80), // same regex key once ^ is dropped
				prefix("/x", "new", 80),       // Exact /x and Prefix /x coexist
				prefix("/mine", "new", 80),    // no conflict: kept
				exact("/foo", "new", 80),      // Exact /foo does not collide with Prefix /foo
			),
			mkRule("other.example.com", prefix("/foo", "new", 80)), // another host: no conflict
		)),
	)
	tab, ws := compileOK(t, s, Options{})
	want := []short{
		{RouteConflict, "Ingress prod/new", "spec.rules[0].http.paths[0]"},
		{RouteConflict, "Ingress prod/new", "spec.rules[0].http.paths[1]"},
		{PathCaseInsensitive, "Ingress prod/new", "spec.rules[0].http.paths[1].pathType"},
		{PathCaseInsensitive, "Ingress prod/old", "spec.rules[0].http.paths[1].pathType"},
		{RouteConflict, "Ingress prod/old", "spec.rules[0].http.paths[4]"},
	}
	if diff := cmp.Diff(want, shorten(ws)); diff != "" {
		t.Fatalf("warnings (-want +got):\n%s\n%s", diff, warningText(ws))
	}
	require.Equal(t, "Ingress prod/old spec.rules[0].http.paths[0]", ws[0].WinnerText())
	require.Contains(t, ws[0].Message, `host "shop.example.com"`)
	require.Contains(t, ws[0].Message, `Prefix path "/foo/"`)
	require.Equal(t, "Ingress prod/old spec.rules[0].http.paths[1]", ws[1].WinnerText())
	require.Contains(t, ws[1].Message, "Regex")
	require.Equal(t, "Ingress prod/old spec.rules[0].http.paths[3]", ws[4].WinnerText())

	for path, want := range map[string]string{
		"/foo/bar": "prod/old:80",
		"/foo":     "prod/new:80", // the Exact
		"/re/1":    "prod/old:80",
		"/x":       "prod/old:80", // Exact owner
		"/x/y":     "prod/new:80", // Prefix owner
		"/mine/1":  "prod/new:80",
		"/dup/1":   "prod/old:80",
	} {
		require.Equal(t, want, served(tab, "shop.example.com", path), path)
	}
	require.Equal(t, "prod/new:80", served(tab, "other.example.com", "/foo"))
}

// Within a host: Exact > longest Prefix > first regex in controller order >
// the host's fallback (SPEC §5).
func TestPrecedence(t *testing.T) {
	svcs := []runtime.Object{}
	for _, n := range []string{"exact", "short", "long", "re1", "re2", "re3", "fb"} {
		svcs = append(svcs, mkService("prod", n, ":80:"), mkSlice("prod", n, n, "", 80, "10.0.0.1"))
	}
	s := mkSnapshot(append(svcs,
		mkIngress("prod", "a", 1, withDefault("fb", 80), withRules(mkRule("shop.example.com",
			regex("/api/.*", "re1", 80),
			prefix("/api", "short", 80),
			exact("/api/v1/users", "exact", 80),
			prefix("/api/v1", "long", 80),
			regex("/docs/[a-z]+", "re2", 80),
			regex("/docs/[a-z]+/x", "re3", 80), // longer: earlier in controller order
		))),
	)...)
	tab, ws := compileOK(t, s, Options{})
	for _, w := range ws {
		require.Equal(t, PathCaseInsensitive, w.Reason, w.String())
	}
	for path, want := range map[string]string{
		"/api/v1/users":   "prod/exact:80",
		"/api/v1/users/1": "prod/long:80",
		"/api/v2":         "prod/short:80",
		"/docs/abc/x":     "prod/re3:80",
		"/docs/abc":       "prod/re2:80",
		"/nothing":        "prod/fb:80",
	} {
		require.Equal(t, want, served(tab, "shop.example.com", path), path)
	}
	// Route.Order follows declaration order.
	orders := map[string]int32{}
	for _, r := range tab.VirtualHostByName("shop.example.com").Routes {
		orders[r.Source.Field] = r.Order
	}
	for j := 1; j < 6; j++ {
		require.Less(t, orders[pathField(0, j-1)], orders[pathField(0, j)])
	}
}

// TestUnmatchablePathsAndPortConflicts: an Exact or Prefix path with an
// encoded slash, a space or a control byte can only be reached by a request
// that encodes it twice or escapes whitespace, never what its author meant;
// the API server refuses "%2F" and ingress-nginx's path validation refuses
// all three. They are dropped with PathRejected. A backend port giving both
// a number and a name for different Service ports (refused by the API
// server, reachable from files) warns ServicePortConflict; the number wins.
func TestUnmatchablePathsAndPortConflicts(t *testing.T) {
	both := func(path string, number int32, name string) networkingv1.HTTPIngressPath {
		p := prefix(path, "api", int(number))
		p.Backend.Service.Port.Name = name
		return p
	}
	s := mkSnapshot(
		mkService("prod", "api", "http:80:8080", "admin:9000:9000"),
		mkSlice("prod", "api", "api-1", "http", 8080, "10.0.0.1"),
		mkSlice("prod", "api", "api-2", "admin", 9000, "10.0.0.2"),
		mkIngress("prod", "shop", 1, withRules(mkRule("shop.example.com",
			exact("/a%2Fb", "api", 80),
			prefix("/c%2fd", "api", 80),
			prefix("/x y", "api", 80),
			exact("/nl\n", "api", 80),
			prefix("/tab\tx", "api", 80),
			prefix("/ok%20fine", "api", 80),
			both("/agree", 80, "http"),
			both("/disagree", 80, "admin"),
			both("/missing-name", 80, "nope"),
		))),
	)
	tab, ws := compileOK(t, s, Options{})
	want := []short{
		{PathRejected, "Ingress prod/shop", "spec.rules[0].http.paths[0].path"},
		{PathRejected, "Ingress prod/shop", "spec.rules[0].http.paths[1].path"},
		{PathRejected, "Ingress prod/shop", "spec.rules[0].http.paths[2].path"},
		{PathRejected, "Ingress prod/shop", "spec.rules[0].http.paths[3].path"},
		{PathRejected, "Ingress prod/shop", "spec.rules[0].http.paths[4].path"},
		{ServicePortConflict, "Ingress prod/shop", "spec.rules[0].http.paths[7].backend.service.port"},
		{ServicePortConflict, "Ingress prod/shop", "spec.rules[0].http.paths[8].backend.service.port"},
	}
	if diff := cmp.Diff(want, shorten(ws)); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	for _, p := range []string{"/a%2Fb", "/c%2fd", "/x y", "/nl\n", "/tab\tx"} {
		require.Nil(t, tab.Lookup("shop.example.com", p).Route, "%q is not served", p)
	}
	require.NotNil(t, tab.Lookup("shop.example.com", "/ok%20fine").Route, "a literal %20 is only odd, not unmatchable")
	for _, p := range []string{"/agree", "/disagree", "/missing-name"} {
		require.Equal(t, "prod/api:80", tab.Lookup("shop.example.com", p).Backend.ID, "the number decides for %s", p)
	}
}

// An ImplementationSpecific path is a case-insensitive regex here; under
// ingress-nginx it is a case-sensitive prefix unless its host is in regex
// mode (§19). Only the first warns: the second Ingress's host is in regex
// mode through its use-regex, as it is under ingress-nginx.
func TestPathCaseInsensitive(t *testing.T) {
	s := mkSnapshot(
		mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
		mkIngress("prod", "plain", 1, withRules(mkRule("a.example.com", regex("/admin", "web", 80)))),
		mkIngress("prod", "re", 2, withAnnotations(NginxPrefix+"use-regex", "true"),
			withRules(mkRule("b.example.com", regex("/admin", "web", 80)))),
	)
	tab, ws := compileOK(t, s, Options{})
	var got []short
	for _, w := range shorten(ws) {
		if w.Reason != RegexModeHost {
			got = append(got, w)
		}
	}
	require.Equal(t, []short{{PathCaseInsensitive, "Ingress prod/plain", "spec.rules[0].http.paths[0].pathType"}}, got, warningText(ws))
	require.Contains(t, ws[0].Message, `"/admin" is the case-insensitive regular expression ^(?:/admin) here and a case-sensitive prefix under ingress-nginx`)
	// What the warning says is what is served: /Admin matches here.
	require.Equal(t, "prod/web:80", served(tab, "a.example.com", "/Admin"))
	require.Equal(t, TrafficMoves, ws[0].Severity())
}

// A conflict over the root Prefix names its key as the table text does,
// "/", not as the empty key it is stored under.
func TestRouteConflictRootKey(t *testing.T) {
	s := mkSnapshot(
		mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
		mkIngress("prod", "a", 1, withRules(mkRule("a.example.com", prefix("/", "web", 80)))),
		mkIngress("prod", "b", 2, withRules(mkRule("a.example.com", prefix("/", "web", 80)))),
	)
	_, ws := compileOK(t, s, Options{})
	require.Len(t, ws, 1, warningText(ws))
	require.Contains(t, ws[0].Message, `(key "/")`)
	require.Equal(t, "Ingress prod/a spec.rules[0].http.paths[0]", ws[0].WinnerText())
}
