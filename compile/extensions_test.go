package compile

import (
	"maps"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExtensions: annotations under a registered prefix reach every route
// of their Ingress, no other, without a warning, and enter the digest.
func TestExtensions(t *testing.T) {
	snap := func(annotations ...string) Snapshot {
		return mkSnapshot(
			mkService("prod", "api", ":80:"), mkSlice("prod", "api", "a", "", 80, "10.0.0.1"),
			mkIngress("prod", "shop", 1, withAnnotations(annotations...),
				withRules(mkRule("shop.example.com", prefix("/", "api", 80), exact("/login", "api", 80)))),
			mkIngress("prod", "other", 2, withRules(mkRule("shop.example.com", prefix("/other", "api", 80)))),
		)
	}
	o := Options{ExtensionPrefixes: []string{"example.com", "auth.example.org/"}}
	require.NoError(t, o.Validate())
	tab, ws := compileOK(t, snap(
		"example.com/require-header", "X-Api-Key",
		"auth.example.org/realm", "shop",
		"example.net/other", "ignored",
		"example.com.evil/x", "not under example.com/",
	), o)
	require.Empty(t, ws)
	want := map[string]string{"example.com/require-header": "X-Api-Key", "auth.example.org/realm": "shop"}
	for _, path := range []string{"/x", "/login"} {
		rt := tab.Lookup("shop.example.com", path).Route
		require.NotNil(t, rt)
		assert.Equal(t, want, maps.Collect(rt.Extensions.All()), path)
		v, ok := rt.Extensions.Get("example.com/require-header")
		assert.True(t, ok)
		assert.Equal(t, "X-Api-Key", v)
	}
	other := tab.Lookup("shop.example.com", "/other").Route
	assert.Zero(t, other.Extensions.Len(), "another Ingress's route has none")
	_, ok := other.Extensions.Get("example.com/require-header")
	assert.False(t, ok)
	assert.Contains(t, tab.String(), `ext(auth.example.org/realm="shop" example.com/require-header="X-Api-Key")`)

	// Not registered: carried nowhere, still no warning (another
	// controller's annotation), and the digest is the plain one.
	plain, ws := compileOK(t, snap("example.com/require-header", "X-Api-Key"), Options{})
	require.Empty(t, ws)
	assert.Nil(t, plain.Lookup("shop.example.com", "/x").Route.Extensions)
	none, _ := compileOK(t, snap(), o)
	assert.Equal(t, plain.Digest(), none.Digest())
	other2, _ := compileOK(t, snap("example.com/require-header", "X-Other"), o)
	assert.NotEqual(t, tab.Digest(), other2.Digest())
	assert.NotEqual(t, none.Digest(), other2.Digest())
}

func TestExtensionPrefixValidation(t *testing.T) {
	for _, tt := range []struct {
		prefix string
		ok     bool
	}{
		{"example.com", true},
		{"example.com/", true},
		{"auth.ramjet.dev/", true},
		{"ramjet.dev/", false},
		{"nginx.ingress.kubernetes.io", false},
		{"", false},
		{"Example.com/", false},
		{"example.com/x/", false},
	} {
		err := Options{ExtensionPrefixes: []string{tt.prefix}}.Validate()
		assert.Equal(t, tt.ok, err == nil, "%q: %v", tt.prefix, err)
	}
}

// TestExtensionKeys: an ingress-nginx annotation the embedder serves
// reaches the routes of its Ingress under its name alone, from either
// prefix with ramjet.dev/ winning, instead of warning; without the option
// it warns as before, and ramjet's own annotations cannot be taken over.
func TestExtensionKeys(t *testing.T) {
	snap := func(annotations ...string) Snapshot {
		return mkSnapshot(
			mkService("prod", "api", ":80:"), mkSlice("prod", "api", "a", "", 80, "10.0.0.1"),
			mkIngress("prod", "shop", 1, withAnnotations(annotations...),
				withRules(mkRule("shop.example.com", prefix("/", "api", 80)))),
		)
	}
	o := Options{ExtensionKeys: []string{"enable-modsecurity", "modsecurity-snippet"}, AllowSnippetAnnotations: true, AnnotationsRiskLevel: "Critical"}
	require.NoError(t, o.Validate())
	tab, ws := compileOK(t, snap(
		NginxPrefix+"enable-modsecurity", "true",
		NginxPrefix+"modsecurity-snippet", "SecRuleEngine On",
		NativePrefix+"modsecurity-snippet", "SecRuleEngine DetectionOnly",
	), o)
	require.Empty(t, ws)
	rt := tab.Lookup("shop.example.com", "/").Route
	assert.Equal(t, map[string]string{"enable-modsecurity": "true", "modsecurity-snippet": "SecRuleEngine DetectionOnly"},
		maps.Collect(rt.Extensions.All()))
	other, _ := compileOK(t, snap(NginxPrefix+"enable-modsecurity", "false"), o)
	assert.NotEqual(t, tab.Digest(), other.Digest())

	// modsecurity-snippet is Critical-risk: the embedder never sees it
	// unless snippets are on. With ingress-nginx's defaults (risk level
	// High) ingress-nginx refuses the whole Ingress, which is served here:
	// traffic moves. With the risk level Critical but
	// allow-snippet-annotations false, it is dropped under both.
	off := Options{ExtensionKeys: o.ExtensionKeys}
	tab, ws = compileOK(t, snap(NginxPrefix+"enable-modsecurity", "true", NginxPrefix+"modsecurity-snippet", "SecRuleEngine On"), off)
	require.Len(t, ws, 1)
	assert.Equal(t, SnippetAnswerIgnored, ws[0].Reason)
	assert.Equal(t, TrafficMoves, ws[0].Severity())
	assert.Equal(t, map[string]string{"enable-modsecurity": "true"},
		maps.Collect(tab.Lookup("shop.example.com", "/").Route.Extensions.All()))
	off.AnnotationsRiskLevel = "Critical"
	_, ws = compileOK(t, snap(NginxPrefix+"enable-modsecurity", "true", NginxPrefix+"modsecurity-snippet", "SecRuleEngine On"), off)
	require.Len(t, ws, 1)
	assert.Equal(t, SnippetNoEffect, ws[0].Reason)
	assert.Equal(t, Cosmetic, ws[0].Severity())

	_, ws = compileOK(t, snap(NginxPrefix+"enable-modsecurity", "true"), Options{})
	require.Len(t, ws, 1)
	assert.Equal(t, AnnotationUnsupported, ws[0].Reason)

	for _, bad := range []string{"proxy-body-size", "no-such-annotation", "hsts"} {
		assert.Error(t, Options{ExtensionKeys: []string{bad}}.Validate(), bad)
	}
	// Compile without Validate never lets an option take over one of
	// ramjet's own annotations.
	tab, ws = compileOK(t, snap(NginxPrefix+"proxy-body-size", "8m"), Options{ExtensionKeys: []string{"proxy-body-size"}})
	require.Empty(t, ws)
	rt = tab.Lookup("shop.example.com", "/").Route
	assert.Zero(t, rt.Extensions.Len())
	require.NotNil(t, rt.Policy)
	assert.Equal(t, int64(8<<20), rt.Policy.MaxBodySize)
}
