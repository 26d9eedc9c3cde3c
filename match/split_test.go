package match

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSplitActionsDigest: a backend's own rewrite, redirect or mirrors
// (the Gateway API's filters on a backendRef) change what its share of
// the requests gets, so they change the digest and the text, and New
// refuses a redirect that is not one or has no snippet to answer it, and
// a mirror that is not one.
func TestSplitActionsDigest(t *testing.T) {
	redirect, err := NewSnippet(Snippet{Ops: []SnippetOp{{Kind: OpReturn, Code: 301, Value: "https://a.example/"}}})
	require.NoError(t, err)
	build := func(a Alternative) (*Table, error) {
		s := sectionSpec(t)
		a.Backend, a.Weight = specBackend(s, "prod/api:80"), 1
		specRoute(s, "/api").Split = &Split{Alternatives: []Alternative{a, {Backend: specBackend(s, "prod/api:80"), Weight: 1}}}
		return New(s)
	}
	seen := map[string]string{}
	for name, a := range map[string]Alternative{
		"plain":    {},
		"rewrite":  {Rewrite: &Rewrite{Host: "a.example"}},
		"rewrite2": {Rewrite: &Rewrite{Host: "b.example"}},
		"redirect": {Redirect: 301, Snippet: redirect},
		"snippet":  {Snippet: redirect},
		"mirror":   {Mirrors: []*Mirror{{Target: "http://m.prod.svc$request_uri", Backend: &Backend{ID: "prod/m:80"}}}},
		"share":    {Mirrors: []*Mirror{{Target: "http://m.prod.svc$request_uri", Backend: &Backend{ID: "prod/m:80"}, Numerator: 1, Denominator: 2}}},
	} {
		tab, err := build(a)
		require.NoError(t, err, name)
		require.NotContains(t, seen, tab.Digest(), "%s has the digest of %s", name, seen[tab.Digest()])
		seen[tab.Digest()] = name
		if len(a.Mirrors) > 0 {
			require.Contains(t, tab.String(), "split 0 only:\n      mirror http://m.prod.svc$request_uri to prod/m:80", name)
		}
	}
	for name, a := range map[string]Alternative{
		"not a redirect status": {Redirect: 200, Snippet: redirect},
		"no snippet":            {Redirect: 302},
		"bad rewrite":           {Rewrite: &Rewrite{Host: "a b"}},
		"nil mirror":            {Mirrors: []*Mirror{nil}},
		"bad mirror":            {Mirrors: []*Mirror{{Target: "ftp://m"}}},
	} {
		_, err := build(a)
		require.Error(t, err, name)
	}
}
