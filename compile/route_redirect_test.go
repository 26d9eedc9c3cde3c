package compile

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

func redirectSnapshot(annotations ...string) Snapshot {
	return mkSnapshot(
		mkService("prod", "api", ":80:"), mkSlice("prod", "api", "a", "", 80, "10.0.0.1"),
		mkIngress("prod", "shop", 1, withAnnotations(annotations...),
			withRules(mkRule("shop.example.com", prefix("/", "api", 80)))),
	)
}

// TestRedirectAnnotations follows ingress-nginx's redirect parser under the
// nginx prefix and SPEC §11.1's per-annotation rejection under ramjet's.
func TestRedirectAnnotations(t *testing.T) {
	n := func(k string) string { return NginxPrefix + k }
	r := func(k string) string { return NativePrefix + k }
	f := func(k string) string { return "metadata.annotations[" + k + "]" }
	tests := []struct {
		name        string
		annotations []string
		want        *match.Redirect // nil: no redirect
		www         bool
		withheld    bool
		warnings    []short
	}{
		{name: "none"},
		{name: "permanent default code", annotations: []string{n("permanent-redirect"), "https://a.example.com"},
			want: &match.Redirect{Code: 301, URL: "https://a.example.com"}},
		{name: "permanent 308", annotations: []string{n("permanent-redirect"), "https://a.example.com", n("permanent-redirect-code"), "308"},
			want: &match.Redirect{Code: 308, URL: "https://a.example.com"}},
		{name: "permanent 309 falls back", annotations: []string{n("permanent-redirect"), "/x", n("permanent-redirect-code"), "309"},
			want:     &match.Redirect{Code: 301, URL: "/x"},
			warnings: []short{{AnnotationRejected, "Ingress prod/shop", f(n("permanent-redirect-code"))}}},
		{name: "permanent code with sign", annotations: []string{n("permanent-redirect"), "/x", n("permanent-redirect-code"), "+302"},
			want: &match.Redirect{Code: 302, URL: "/x"}},
		{name: "temporal default", annotations: []string{n("temporal-redirect"), "http://t.example.com"},
			want: &match.Redirect{Code: 302, URL: "http://t.example.com"}},
		{name: "temporal 308 falls back", annotations: []string{n("temporal-redirect"), "http://t.example.com", n("temporal-redirect-code"), "308"},
			want:     &match.Redirect{Code: 302, URL: "http://t.example.com"},
			warnings: []short{{AnnotationRejected, "Ingress prod/shop", f(n("temporal-redirect-code"))}}},
		{name: "temporal wins", annotations: []string{n("temporal-redirect"), "http://t.example.com", n("permanent-redirect"), "http://p.example.com", n("permanent-redirect-code"), "bad"},
			want:     &match.Redirect{Code: 302, URL: "http://t.example.com"},
			warnings: []short{{AnnotationConflict, "Ingress prod/shop", f(n("permanent-redirect"))}}},
		{name: "temporal path drops the group", annotations: []string{n("temporal-redirect"), "/t", n("from-to-www-redirect"), "true"},
			warnings: []short{{AnnotationRejected, "Ingress prod/shop", f(n("temporal-redirect"))}}},
		{name: "temporal code checked before its URL", annotations: []string{n("temporal-redirect"), "/t", n("temporal-redirect-code"), "x"},
			withheld: true, warnings: []short{{AnnotationRejected, "Ingress prod/shop", f(n("temporal-redirect-code"))}}},
		{name: "relative", annotations: []string{n("permanent-redirect"), "/x", n("relative-redirects"), "true"},
			want: &match.Redirect{Code: 301, URL: "/x", Relative: true}},
		{name: "www alone", annotations: []string{n("from-to-www-redirect"), "true"}, www: true},
		{name: "www typo withholds", annotations: []string{n("from-to-www-redirect"), "on"}, withheld: true,
			warnings: []short{{AnnotationRejected, "Ingress prod/shop", f(n("from-to-www-redirect"))}}},
		{name: "bad URL character withholds", annotations: []string{n("permanent-redirect"), "https://a.example.com/%20"}, withheld: true,
			warnings: []short{{AnnotationRejected, "Ingress prod/shop", f(n("permanent-redirect"))}}},
		{name: "code typo withholds without a URL", annotations: []string{n("permanent-redirect-code"), "3o1"}, withheld: true,
			warnings: []short{{AnnotationRejected, "Ingress prod/shop", f(n("permanent-redirect-code"))}}},
		{name: "empty drops", annotations: []string{n("permanent-redirect"), ""},
			warnings: []short{{AnnotationRejected, "Ingress prod/shop", f(n("permanent-redirect"))}}},
		{name: "native bad URL rejected alone", annotations: []string{r("permanent-redirect"), "javascript:alert(1)", r("from-to-www-redirect"), "true"},
			www: true, warnings: []short{{AnnotationRejected, "Ingress prod/shop", f(r("permanent-redirect"))}}},
		{name: "native header injection", annotations: []string{r("permanent-redirect"), "/x\r\nSet-Cookie: a=b"},
			warnings: []short{{AnnotationRejected, "Ingress prod/shop", f(r("permanent-redirect"))}}},
		{name: "native code out of range", annotations: []string{r("temporal-redirect"), "/t", r("temporal-redirect-code"), "308"},
			want:     &match.Redirect{Code: 302, URL: "/t"},
			warnings: []short{{AnnotationRejected, "Ingress prod/shop", f(r("temporal-redirect-code"))}}},
		{name: "native shadows nginx", annotations: []string{r("permanent-redirect"), "/native", n("permanent-redirect"), "/nginx"},
			want: &match.Redirect{Code: 301, URL: "/native"}},
		{name: "default-backend bad name withholds", annotations: []string{n("default-backend"), "-x"}, withheld: true,
			warnings: []short{{AnnotationRejected, "Ingress prod/shop", f(n("default-backend"))}}},
		{name: "alias bad character withholds", annotations: []string{n("server-alias"), "a.example.com,b@example.com"}, withheld: true,
			warnings: []short{{AnnotationRejected, "Ingress prod/shop", f(n("server-alias"))}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, ws := compileOK(t, redirectSnapshot(tt.annotations...), Options{})
			if d := cmp.Diff(tt.warnings, shorten(ws)); d != "" && (len(tt.warnings) > 0 || len(ws) > 0) {
				t.Fatalf("warnings (-want +got):\n%s\n%s", d, warningText(ws))
			}
			vh := tab.VirtualHostByName("shop.example.com")
			if tt.withheld {
				require.Nil(t, vh, "a withheld Ingress creates no host")
				return
			}
			require.NotNil(t, vh)
			require.Len(t, vh.Routes, 1)
			if d := cmp.Diff(tt.want, vh.Routes[0].Redirect); d != "" {
				t.Errorf("route redirect (-want +got):\n%s", d)
			}
			www := tab.VirtualHostByName("www.shop.example.com")
			require.Equal(t, tt.www, www != nil, "www twin")
			if www != nil {
				require.Equal(t, "shop.example.com", www.Actions.WWWTo)
			}
		})
	}
}

// TestRedirectDigest: every redirect setting changes the digest, and a
// table without any digests as it did before they existed.
func TestRedirectDigest(t *testing.T) {
	n := func(k string) string { return NginxPrefix + k }
	variants := [][]string{
		nil,
		{n("permanent-redirect"), "/a"},
		{n("permanent-redirect"), "/b"},
		{n("permanent-redirect"), "/a", n("permanent-redirect-code"), "308"},
		{n("permanent-redirect"), "/a", n("relative-redirects"), "true"},
		{n("app-root"), "/a"},
		{n("app-root"), "/b"},
		{n("server-alias"), "a.example.com"},
		{n("server-alias"), "b.example.com"},
		{n("from-to-www-redirect"), "true"},
	}
	seen := make(map[string]int)
	for i, v := range variants {
		tab, _ := compileOK(t, redirectSnapshot(v...), Options{})
		if j, dup := seen[tab.Digest()]; dup {
			t.Errorf("variants %d (%v) and %d (%v) share a digest", j, variants[j], i, v)
		}
		seen[tab.Digest()] = i
	}
	plain, _ := compileOK(t, redirectSnapshot(), Options{})
	relativeOnly, _ := compileOK(t, redirectSnapshot(n("relative-redirects"), "true"), Options{})
	require.Equal(t, plain.Digest(), relativeOnly.Digest(), "relative-redirects alone changes no answer")
	require.NotContains(t, plain.String(), "redirect ")
}
