package match

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// manyRegexTable is one host with n linear regex routes of the shape
// people write for versioned APIs, each with its own literal prefix.
func manyRegexTable(tb testing.TB, n int) *Table {
	tb.Helper()
	routes := make([]*Route, 0, n)
	for i := range n {
		pattern := fmt.Sprintf("/svc%d/v[0-9]+/items/([a-z0-9-]+)", i)
		re, err := CompileRegex(pattern, 0)
		require.NoError(tb, err)
		routes = append(routes, &Route{Type: Regex, Path: pattern, Regexp: re, Order: int32(i),
			Backend: &Backend{ID: fmt.Sprintf("prod/svc%d:80", i)}})
	}
	return mustNew(tb, Spec{VirtualHosts: []*VirtualHost{{Name: "api.test", Routes: routes}}})
}

// BenchmarkRegexRoutes measures a lookup on a host with many linear
// regex routes: a request that matches none (the worst case: every
// pattern is tried) and one that matches the last in controller order.
func BenchmarkRegexRoutes(b *testing.B) {
	for _, n := range []int{100, 10000} {
		t := manyRegexTable(b, n)
		for _, c := range []struct{ name, path string }{
			{"unmatched", "/nothing/here/at/all"},
			{"unmatched-near", "/svc1/vx/items/abc"},
			{"matched", "/svc0/v2/items/abc"},
		} {
			b.Run(fmt.Sprintf("routes=%d/%s", n, c.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					t.Lookup("api.test", c.path)
				}
			})
		}
	}
}

// TestRegexIndexAgrees: the prefix index only skips patterns that cannot
// match, so for every path it picks the route trying every pattern in
// controller order picks.
func TestRegexIndexAgrees(t *testing.T) {
	patterns := []string{
		"/api/v[0-9]+/users", "/API/v1/Items", "/api/(v1|v2)/orders", "/api", "/ap", "/a",
		"/(?:api|web)/x", "/[a-z]+/static", ".*\\.php", "/web/(.*)", "/WEB/admin", "/web/a(?=b)",
		"/shop/(?-i:Cart)", "/shop/cart$", "/shop/", "/s", "/(s)hop/x", "/caf\u00e9/x", "/caf", "/kube",
		"/users/[0-9]+/profile", "/users/me", "/u", "/x|/y", "/(?:)z", "", "/api/v1/users/(\\d+)$",
		"/static/.+\\.(css|js)", "/Static/", "/docs/(?i:Guide)", "/docs", "/d",
	}
	var routes []*Route
	for i, p := range patterns {
		re, err := CompileRegex(p, 0)
		require.NoError(t, err, p)
		routes = append(routes, &Route{Type: Regex, Path: p, Regexp: re, Order: int32(i)})
	}
	require.GreaterOrEqual(t, len(routes), regexIndexMin)
	idx := newRegexIndex(routes)
	paths := []string{
		"/", "/api", "/API/V1/USERS", "/api/v1/users", "/api/v2/orders/1", "/apx", "/ap", "/a",
		"/web/x", "/WEB/ADMIN", "/web/ab", "/web/ac", "/index.php", "/shop/Cart", "/shop/cart",
		"/SHOP/cart\n", "/shop/CART", "/s", "/shop/x", "/café/x", "/CAFÉ/x", "/kube", "/KUBE",
		"/\u212aube", "/u\u017fers/me", "/users/12/profile", "/users/me", "/x", "/y", "/z",
		"/static/a.css", "/Static/x", "/docs/guide", "/DOCS/GUIDE", "/d", "/nothing", "",
	}
	// A match cut short by the clock (a stall of the whole process under
	// -race on a loaded machine) says nothing about the index: try again.
	settled := func(idx *regexIndex, p string) *Route {
		var out regexOutcome
		for range 20 {
			if out = matchRegexRoutes(routes, idx, p, nil); !out.timedOut && !out.exhausted {
				break
			}
		}
		require.False(t, out.timedOut || out.exhausted, "path %q: every try ran out of time", p)
		return out.route
	}
	for _, p := range paths {
		want := settled(nil, p)
		got := settled(idx, p)
		require.Equal(t, want, got, "path %q: indexed %v, every pattern %v", p, pathOf(got), pathOf(want))
	}
}

func pathOf(r *Route) string {
	if r == nil {
		return "<none>"
	}
	return r.Path
}
