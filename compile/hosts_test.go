package compile

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

func TestInvalidHost(t *testing.T) {
	valid := []string{
		"", "a", "a.com", "shop.example.com", "*.example.com", "*.com", "localhost",
		"xn--bcher-kva.example", "1a.example.com", "123", "a-b.c-d.com",
		strings.Repeat("a", 63) + ".com",
	}
	invalid := map[string]string{
		"shop.example.com:80":             "port",
		"shop.example.com/x":              "path",
		"Shop.example.com":                "upper-case",
		"10.0.0.1":                        "IP address",
		"::1":                             "IP address",
		"[::1]":                           "IP address",
		"[::1]:80":                        "IP address",
		"*":                               "misplaced *",
		"*.":                              "misplaced *",
		"a.*.com":                         "misplaced *",
		"*a.com":                          "misplaced *",
		"a*.com":                          "misplaced *",
		"*.*.com":                         "misplaced *",
		"**.com":                          "misplaced *",
		"*.10.0.0.1":                      "IP address",
		"example.com.":                    "empty label",
		".example.com":                    "empty label",
		"a..com":                          "empty label",
		"-a.com":                          "starting with '-'",
		"a-.com":                          "ending in '-'",
		"a.com-":                          "ending in '-'",
		"a_b.com":                         `'_'`,
		"01.2.3.4":                        "IP address",
		"a b.com":                         `' '`,
		"bücher.example":                  "non-ASCII",
		strings.Repeat("a", 64) + ".com":  "longer than 63",
		strings.Repeat("a.", 127) + "com": "longer than 253",
	}
	for _, h := range valid {
		require.Empty(t, invalidHost(h), "host %q", h)
	}
	for h, want := range invalid {
		require.Contains(t, invalidHost(h), want, "host %q", h)
	}
}

func TestRuleRejectedKeepsTheRest(t *testing.T) {
	s := mkSnapshot(
		mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
		mkService("prod", "other", ":80:"), mkSlice("prod", "other", "o", "", 80, "10.0.0.2"),
		mkIngress("prod", "shop", 1,
			withRules(
				mkRule("Shop.example.com", prefix("/", "web", 80)),
				mkRule("shop.example.com:8080", prefix("/", "web", 80)),
				mkRule("shop.example.com", prefix("/", "web", 80)),
				mkRule("", prefix("/hostless", "web", 80)),
				mkRule("*.example.com", prefix("/", "other", 80)),
			)),
	)
	tab, ws := compileOK(t, s, Options{})
	want := []short{
		{RuleRejected, "Ingress prod/shop", "spec.rules[0].host"},
		{RuleRejected, "Ingress prod/shop", "spec.rules[1].host"},
	}
	if diff := cmp.Diff(want, shorten(ws)); diff != "" {
		t.Fatalf("warnings (-want +got):\n%s", diff)
	}
	require.Contains(t, ws[0].Message, `"Shop.example.com"`)
	require.Equal(t, "prod/web:80", served(tab, "shop.example.com", "/anything"))
	require.Equal(t, "prod/web:80", served(tab, "unknown.test", "/hostless/x"))
	require.Equal(t, "prod/other:80", served(tab, "foo.example.com", "/"))
	require.Equal(t, "404", served(tab, "foo.bar.example.com", "/"), "a wildcard covers one label")
	var names []string
	for vh := range tab.VirtualHosts() {
		names = append(names, vh.Name)
	}
	require.Equal(t, []string{"", "*.example.com", "shop.example.com"}, names)
}

// A rule host without http still creates its virtual host: a request for
// it does not fall through to the wildcard or the catch-all (SPEC §5).
func TestHostWithoutHTTPCreatesVirtualHost(t *testing.T) {
	s := mkSnapshot(
		mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
		mkService("prod", "fallback", ":80:"), mkSlice("prod", "fallback", "f", "", 80, "10.0.0.9"),
		mkIngress("prod", "wild", 1, withRules(mkRule("*.example.com", prefix("/", "web", 80)), mkRule("", prefix("/", "web", 80)))),
		mkIngress("prod", "bare", 2, withRules(mkRule("api.example.com"), mkRule("docs.example.com")), withDefault("fallback", 80)),
	)
	tab, ws := compileOK(t, s, Options{})
	require.Empty(t, ws)
	require.NotNil(t, tab.VirtualHostByName("api.example.com"))
	require.Equal(t, "prod/fallback:80", served(tab, "api.example.com", "/"))
	require.Equal(t, "prod/fallback:80", served(tab, "docs.example.com", "/x"))
	require.Equal(t, "prod/web:80", served(tab, "www.example.com", "/"))
}
