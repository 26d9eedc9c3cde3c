package match

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A case-sensitive pattern matches its letters only as written, on both
// engines; the same pattern compiled for an Ingress folds ASCII case.
func TestCompileCaseSensitiveRegex(t *testing.T) {
	tests := []struct {
		pattern string
		match   []string
		noMatch []string
	}{
		{`/api/[a-z]+`, []string{"/api/users", "/api/x/Y"}, []string{"/API/users", "/api/Users"}},
		{`/v[0-9]+$`, []string{"/v1"}, []string{"/V1"}}, // $ keeps the backtracking engine for "\n"
		{`/(?!admin)[a-zA-Z]+`, []string{"/user", "/Admin", "/User"}, []string{"/admin"}},
		{`/(a)\1`, []string{"/aa"}, []string{"/aA", "/Aa"}},
		{`/(?i)x`, []string{"/x", "/X"}, nil}, // a flag in the pattern still asks for folding
		{`/u\x{017f}ers`, []string{"/u\u017fers"}, []string{"/users"}},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			re, err := CompileCaseSensitiveRegex(tt.pattern, 0)
			require.NoError(t, err)
			assert.True(t, re.CaseSensitive())
			for _, p := range tt.match {
				assert.True(t, re.MatchString(p), "should match %q", p)
			}
			for _, p := range tt.noMatch {
				assert.False(t, re.MatchString(p), "should not match %q", p)
			}
			folding, err := CompileRegex(tt.pattern, 0)
			require.NoError(t, err)
			assert.False(t, folding.CaseSensitive())
		})
	}
}

// A table serves a case-sensitive route and an Ingress-style one side by
// side, with and without the prefix index (regexIndexMin routes).
func TestLookupCaseSensitiveRoute(t *testing.T) {
	for _, n := range []int{0, regexIndexMin} {
		t.Run(fmt.Sprint(n, " more routes"), func(t *testing.T) {
			be := &Backend{ID: "ns/web:80", Namespace: "ns", Name: "web", Port: 80}
			routes := []*Route{
				{Type: Regex, Path: "/Gw/[a-z]+", CaseSensitive: true, Backend: be, Order: 1},
				{Type: Regex, Path: "/ing/[a-z]+", Backend: be, Order: 2},
			}
			for i := range n {
				routes = append(routes, &Route{Type: Regex, Path: fmt.Sprintf("/other%d/.*", i), Backend: be, Order: 3 + int32(i)})
			}
			tab := mustNew(t, Spec{VirtualHosts: []*VirtualHost{{Name: "a.example", Routes: routes}}, Backends: []*Backend{be}})
			for path, want := range map[string]string{
				"/Gw/abc":  "/Gw/[a-z]+",
				"/gw/abc":  "",
				"/Gw/ABC":  "",
				"/ing/abc": "/ing/[a-z]+",
				"/ING/ABC": "/ing/[a-z]+",
			} {
				res := tab.Lookup("a.example", path)
				got := ""
				if res.Route != nil {
					got = res.Route.Path
				}
				assert.Equal(t, want, got, path)
			}
			assert.Contains(t, tab.String(), "/Gw/[a-z]+ -> ns/web:80 case-sensitive")
		})
	}
}

// CaseSensitive is refused where it would mean nothing or disagree with
// the Regexp given.
func TestCaseSensitiveRefused(t *testing.T) {
	be := &Backend{ID: "ns/web:80", Namespace: "ns", Name: "web", Port: 80}
	re, err := CompileRegex("/a", 0)
	require.NoError(t, err)
	for _, r := range []*Route{
		{Type: Prefix, Path: "/a", CaseSensitive: true, Backend: be},
		{Type: Regex, Path: "/a", Regexp: re, CaseSensitive: true, Backend: be},
	} {
		_, err := New(Spec{VirtualHosts: []*VirtualHost{{Name: "a.example", Routes: []*Route{r}}}, Backends: []*Backend{be}})
		assert.ErrorContains(t, err, "CaseSensitive")
	}
}
