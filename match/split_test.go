package match

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSplitActionsDigest: a backend's own rewrite or redirect (the Gateway
// API's filters on a backendRef) changes what its share of the requests
// gets, so it changes the digest and the text, and New refuses a redirect
// that is not one or has no snippet to answer it.
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
	} {
		tab, err := build(a)
		require.NoError(t, err, name)
		require.NotContains(t, seen, tab.Digest(), "%s has the digest of %s", name, seen[tab.Digest()])
		seen[tab.Digest()] = name
	}
	for name, a := range map[string]Alternative{
		"not a redirect status": {Redirect: 200, Snippet: redirect},
		"no snippet":            {Redirect: 302},
		"bad rewrite":           {Rewrite: &Rewrite{Host: "a b"}},
	} {
		_, err := build(a)
		require.Error(t, err, name)
	}
}
