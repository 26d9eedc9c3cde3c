package compile

import (
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
