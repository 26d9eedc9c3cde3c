package routertest_test

import (
	"strings"
	"testing"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/routertest"
)

// FuzzSnippetRelocation serves any path through the snippets of
// testdata/cases/snippet-relocate.yaml, whose rewrites move requests into
// and out of a location with basic auth: a request without credentials
// never reaches the backend under /admin, whatever the rewrites make of
// it, and what the backend receives is a request-target with nothing a
// request line cannot carry.
func FuzzSnippetRelocation(f *testing.F) {
	cases, err := routertest.LoadFile("../../testdata/cases/snippet-relocate.yaml")
	if err != nil {
		f.Fatal(err)
	}
	c := cases[0]
	for _, p := range []string{"/old-admin/users", "/legacy/x?y=1", "/hop/a", "/s/a%3fb", "/loop/x", "/old-api/v1",
		"/kept/x", "/old-admin/..%2fx", "/legacy/%2e%2e/admin", "/s/%0d%0aX:%20y", "/hop/%3f/..", "/old-api//admin"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, path string) {
		if !strings.HasPrefix(path, "/") || len(path) > 256 || strings.ContainsAny(path, " \t\r\n#") {
			return
		}
		c.Requests = []routertest.Request{{Host: "shop.example.com", Path: path}}
		got := routertest.Run(c).Requests[0].Got
		if !got.Forwarded {
			return
		}
		fp := got.ForwardedPath
		for i := 0; i < len(fp); i++ {
			if fp[i] <= ' ' || fp[i] == 0x7f {
				t.Fatalf("%q reached the backend as %q, with byte %#x", path, fp, fp[i])
			}
		}
		p, _, _ := strings.Cut(fp, "?")
		if clean, err := match.NormalizePath(p); err == nil && (clean == "/admin" || strings.HasPrefix(clean, "/admin/")) {
			t.Fatalf("%q reached the backend as %q without /admin's credentials: %s", path, fp, got)
		}
	})
}
