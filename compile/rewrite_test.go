package compile

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

func rewriteSnapshot(annotations ...string) Snapshot {
	return mkSnapshot(
		mkClass("ramjet", "ramjet.dev/ingress"),
		mkService("prod", "api", ":80:"), mkSlice("prod", "api", "a", "", 80, "10.0.0.1"),
		mkIngress("prod", "shop", 1, withAnnotations(annotations...),
			withRules(mkRule("shop.example.com", prefix("/api", "api", 80), exact("/exact", "api", 80)))),
		mkIngress("prod", "other", 2,
			withRules(mkRule("shop.example.com", prefix("/other", "api", 80)))),
	)
}

// Every rewrite setting is in the digest: tables that answer differently
// never share one (SPEC §15), and regex mode changes the routes themselves.
func TestRewriteDigest(t *testing.T) {
	variants := [][]string{
		nil,
		{NginxPrefix + "use-regex", "true"},
		{NginxPrefix + "rewrite-target", "/$1"},
		{NginxPrefix + "rewrite-target", "/$2"},
		{NativePrefix + "rewrite-target", "/${1}"},
		{NativePrefix + "use-regex", "true"},
		{NginxPrefix + "upstream-vhost", "a.example.com"},
		{NginxPrefix + "upstream-vhost", "b.example.com"},
		{NativePrefix + "x-forwarded-prefix", "/a"},
		{NativePrefix + "x-forwarded-prefix", "/b"},
		{NginxPrefix + "rewrite-target", "/x", NginxPrefix + "x-forwarded-prefix", "/a"},
	}
	seen := map[string]int{}
	for i, v := range variants {
		tab, _ := compileTable(rewriteSnapshot(v...), Options{})
		if j, dup := seen[tab.Digest()]; dup {
			t.Fatalf("variants %v and %v share a digest", variants[j], v)
		}
		seen[tab.Digest()] = i
	}
}

// Regex mode converts every path of the host, from every Ingress, and only
// that host's; ramjet.dev/use-regex converts only the Ingress's own paths.
func TestRegexModeRoutes(t *testing.T) {
	tests := []struct {
		name        string
		annotations []string
		want        []string // the host's routes: type and key
	}{
		{name: "none", want: []string{"Exact /exact", "Prefix /other", "Prefix /api"}},
		{name: "nginx use-regex", annotations: []string{NginxPrefix + "use-regex", "true"},
			want: []string{"Regex /other/", "Regex /other", "Regex /exact", "Regex /api"}},
		{name: "nginx rewrite-target", annotations: []string{NginxPrefix + "rewrite-target", "/"},
			want: []string{"Regex /other/", "Regex /other", "Regex /exact", "Regex /api"}},
		{name: "native use-regex", annotations: []string{NativePrefix + "use-regex", "true"},
			want: []string{"Prefix /other", "Regex /exact", "Regex /api"}},
		{name: "native rewrite-target", annotations: []string{NativePrefix + "rewrite-target", "/"},
			want: []string{"Exact /exact", "Prefix /other", "Prefix /api"}},
		{name: "use-regex false", annotations: []string{NginxPrefix + "use-regex", "false"},
			want: []string{"Exact /exact", "Prefix /other", "Prefix /api"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, _ := compileOK(t, rewriteSnapshot(tt.annotations...), Options{})
			var got []string
			for _, r := range tab.VirtualHostByName("shop.example.com").Routes {
				got = append(got, r.Type.String()+" "+r.Path)
			}
			require.Equal(t, tt.want, got)
		})
	}
}

// A rewrite applies to the declaring Ingress's routes only; routes share
// one Rewrite per Ingress, and a path equal to an nginx target gets none.
func TestRouteRewriteScope(t *testing.T) {
	tab, _ := compileOK(t, rewriteSnapshot(NginxPrefix+"rewrite-target", "/api", NginxPrefix+"upstream-vhost", "in.example.com"), Options{})
	byPath := map[string]*match.Route{}
	for _, r := range tab.VirtualHostByName("shop.example.com").Routes {
		byPath[r.Path] = r
	}
	require.Nil(t, byPath["/other"].Rewrite, "another Ingress's route")
	require.Nil(t, byPath["/other/"].Rewrite)
	api, exact := byPath["/api"].Rewrite, byPath["/exact"].Rewrite
	require.NotNil(t, api)
	require.Empty(t, api.Target, "the path equal to the target is not rewritten")
	require.Equal(t, "in.example.com", api.Host)
	require.Equal(t, "/api", exact.Target)
	require.Equal(t, "in.example.com", exact.Host)
}

// A rewrite template over match.MaxRewriteTemplate ("/$1" 20,000 times
// turned a 5 KB path into 100 MB) is rejected on its own: the warning
// names the Ingress and the annotation, and the Ingress's routes and its
// other annotations are served as before.
func TestRewriteTemplateBound(t *testing.T) {
	for _, c := range []struct{ key, value string }{
		{NginxPrefix + "rewrite-target", strings.Repeat("/$1", 20000)},
		{NativePrefix + "rewrite-target", strings.Repeat("/${1}", 1000)},
		{NativePrefix + "x-forwarded-prefix", "/" + strings.Repeat("p", match.MaxRewriteTemplate)},
	} {
		t.Run(c.key, func(t *testing.T) {
			tab, ws := compileOK(t, rewriteSnapshot(c.key, c.value, NginxPrefix+"upstream-vhost", "in.example.com"), Options{})
			w := findWarning(t, ws, AnnotationRejected, annotationField(c.key))
			require.Equal(t, "Ingress prod/shop", w.Object.String())
			require.Contains(t, w.Message, "over the 4096-byte limit")
			require.Len(t, ws, 1, warningText(ws))
			require.Equal(t, "prod/api:80", served(tab, "shop.example.com", "/api/x"))
			var api *match.Route
			for _, r := range tab.VirtualHostByName("shop.example.com").Routes {
				if r.Path == "/api" {
					api = r
				}
			}
			require.NotNil(t, api)
			require.NotNil(t, api.Rewrite, "upstream-vhost still applies")
			require.Equal(t, "in.example.com", api.Rewrite.Host)
			require.Empty(t, api.Rewrite.Target)
			require.False(t, api.Rewrite.ForwardedPrefixSet)
		})
	}
}
