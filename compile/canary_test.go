package compile

import (
	"errors"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match"
)

// A canary Ingress creates no routes and attaches to its primary's backend
// (SPEC §10): older than its primary, it still takes nothing but its
// share; the oldest canary of a primary wins; a canary path without a
// primary serves nothing and warns.
func TestCanaryAttaches(t *testing.T) {
	s := mkSnapshot(
		mkService("prod", "api", ":80:"), mkSlice("prod", "api", "a", "", 80, "10.0.0.1"),
		mkService("prod", "api-canary", ":80:"), mkSlice("prod", "api-canary", "a", "", 80, "10.0.0.2"),
		mkService("prod", "api-next", ":80:"), mkSlice("prod", "api-next", "a", "", 80, "10.0.0.3"),
		mkIngress("prod", "canary", 1, withAnnotations(NginxPrefix+"canary", "true", NginxPrefix+"canary-weight", "30",
			NginxPrefix+"canary-weight-total", "50", NginxPrefix+"canary-by-header", "x_canary", NginxPrefix+"canary-by-header-pattern", "^v[0-9]+$"),
			withRules(mkRule("shop.example.com", prefix("/", "api-canary", 80)), mkRule("only-canary.example.com", prefix("/", "api-canary", 80)))),
		mkIngress("prod", "native-canary", 2, withAnnotations(NativePrefix+"canary", "true", NativePrefix+"canary-by-cookie", "beta"),
			withRules(mkRule("shop.example.com", prefix("/", "api-next", 80), exact("/cart", "api-next", 80)))),
		mkIngress("prod", "primary", 3, withRules(mkRule("shop.example.com", prefix("/", "api", 80)), mkRule("other.example.com", prefix("/x", "api", 80)))),
		mkIngress("prod", "not-a-canary", 4, withAnnotations(NginxPrefix+"canary", "yes", NginxPrefix+"canary-weight", "5"),
			withRules(mkRule("plain.example.com", prefix("/", "api", 80)))),
		mkIngress("prod", "bad-pattern", 5, withAnnotations(NginxPrefix+"canary", "true", NginxPrefix+"canary-by-header-pattern", "(?<=a)b"),
			withRules(mkRule("plain.example.com", prefix("/", "api", 80)))),
	)
	tab, ws := compileOK(t, s, Options{})
	field := func(k string) string { return "metadata.annotations[" + k + "]" }
	want := []short{
		{AnnotationRejected, "Ingress prod/bad-pattern", field(NginxPrefix + "canary-by-header-pattern")},
		{CanaryWithoutPrimary, "Ingress prod/bad-pattern", "spec.rules[0].http.paths[0]"},
		{CanaryWithoutPrimary, "Ingress prod/canary", "spec.rules[1].http.paths[0]"},
		{CanaryConflict, "Ingress prod/native-canary", "spec.rules[0].http.paths[0]"},
		{CanaryWithoutPrimary, "Ingress prod/native-canary", "spec.rules[0].http.paths[1]"},
		{AnnotationRejected, "Ingress prod/not-a-canary", field(NginxPrefix + "canary-weight")},
		{AnnotationRejected, "Ingress prod/not-a-canary", field(NginxPrefix + "canary")},
	}
	if diff := cmp.Diff(want, shorten(ws)); diff != "" {
		t.Fatalf("warnings (-want +got):\n%s\n%s", diff, warningText(ws))
	}
	require.Contains(t, ws[1].Message, "names the primary's own backend")
	require.Equal(t, "Ingress prod/canary spec.rules[0].http.paths[0]", ws[3].WinnerText())
	require.Contains(t, ws[4].Message, "backend prod/api-next:80 takes no canary traffic anywhere", "a path on a served host without a primary withdraws its canary")

	require.Equal(t, "prod/api:80", served(tab, "shop.example.com", "/"), "the older canary does not take the path")
	require.Equal(t, "404", served(tab, "only-canary.example.com", "/"), "a canary creates no host")
	be := tab.Lookup("shop.example.com", "/").Backend
	require.Same(t, be, tab.Lookup("other.example.com", "/x").Backend, "the canary is on the backend, wherever it is used")
	require.NotNil(t, be.Traffic)
	c := be.Traffic.Canary
	require.NotNil(t, c)
	require.Equal(t, "prod/api-canary:80", c.Backend.ID)
	require.Equal(t, "X-Canary", c.Header, "nginx reads x_canary as the X-Canary header")
	require.Equal(t, "^v[0-9]+$", c.HeaderPattern.String())
	require.Equal(t, []int{30, 100}, []int{c.Weight, c.WeightTotal}, "a total below 100 reads as 100")
	require.Equal(t, match.Source{Namespace: "prod", Name: "canary", Field: "spec.rules[0].http.paths[0]"}, c.Source)
	require.Len(t, Compile(s, Options{}).Claimed, 5, "canaries are still claimed")

	var ids []string
	for b := range tab.Backends() {
		ids = append(ids, b.ID)
	}
	require.Equal(t, []string{"prod/api-canary:80", "prod/api:80"}, ids, "an attached canary is listed; one that attached nowhere is not")
}

// Affinity: the oldest Ingress serving a backend with affinity decides; one
// without affinity is no conflict, its routes set no cookie; a sticky
// canary shares its primary's cookie; legacy leaves the canary unpinned.
func TestAffinityDecides(t *testing.T) {
	s := mkSnapshot(
		mkService("prod", "api", ":80:"), mkSlice("prod", "api", "a", "", 80, "10.0.0.1"),
		mkService("prod", "web", ":80:"), mkSlice("prod", "web", "a", "", 80, "10.0.0.5"),
		mkService("prod", "api-canary", ":80:"), mkSlice("prod", "api-canary", "a", "", 80, "10.0.0.2"),
		mkService("prod", "web-canary", ":80:"), mkSlice("prod", "web-canary", "a", "", 80, "10.0.0.6"),
		mkIngress("prod", "old", 1, withAnnotations(NginxPrefix+"affinity", "cookie", NginxPrefix+"affinity-mode", "persistent",
			NginxPrefix+"session-cookie-name", "route", NginxPrefix+"session-cookie-max-age", "3600", NginxPrefix+"session-cookie-samesite", "None",
			NativePrefix+"session-cookie-expires", "2h"),
			withRules(mkRule("a.example.com", prefix("/", "api", 80)), mkRule("w.example.com", prefix("/", "web", 80)))),
		mkIngress("prod", "new", 2, withAnnotations(NginxPrefix+"session-cookie-name", "x"),
			withRules(mkRule("b.example.com", prefix("/", "api", 80)))),
		mkIngress("prod", "canary", 3, withAnnotations(NginxPrefix+"canary", "true", NginxPrefix+"canary-weight", "10"),
			withRules(mkRule("a.example.com", prefix("/", "api-canary", 80)))),
		mkIngress("prod", "legacy", 4, withAnnotations(NginxPrefix+"canary", "true", NginxPrefix+"affinity-canary-behavior", "legacy"),
			withRules(mkRule("w.example.com", prefix("/", "web-canary", 80)))),
	)
	tab, ws := compileOK(t, s, Options{})
	require.Equal(t, []short{
		{AnnotationRejected, "Ingress prod/new", "metadata.annotations[" + NginxPrefix + "session-cookie-name]"},
	}, shorten(ws), warningText(ws))
	require.True(t, tab.Lookup("b.example.com", "/").Route.NoAffinityCookie, "prod/new does not set affinity: cookie")
	require.False(t, tab.Lookup("a.example.com", "/").Route.NoAffinityCookie)
	api := tab.Lookup("a.example.com", "/").Backend
	want := &match.SessionAffinity{Mode: balance.Persistent, CookieName: "route", MaxAge: "3600", Expires: "7200", SameSite: "None"}
	require.Empty(t, cmp.Diff(want, api.Traffic.Affinity))
	c := api.Traffic.Canary
	require.True(t, c.Sticky)
	require.Same(t, api.Traffic.Affinity, c.Backend.Traffic.Affinity, "a sticky canary reads its primary's cookie")

	web := tab.Lookup("w.example.com", "/").Backend
	require.False(t, web.Traffic.Canary.Sticky)
	require.Nil(t, web.Traffic.Canary.Backend.Traffic, "a legacy canary has no affinity")
}

// A canary-by-header-pattern Go's regexp refuses is one PCRE refuses too
// (the balancer then sends the header's requests to the primary) only for
// the errors PCRE shares; PCRE-only syntax is not such a failure.
func TestPCRERefuses(t *testing.T) {
	for pattern, want := range map[string]bool{
		"(abc": true, "abc)": true, "[abc": true, "[][**da?$&*": true, "*abc": true, `a\`: true,
		"[z-a]": true, "[[:foo:]]": true, "a**": true, "a{2,1}": true, "a{70000}": true,
		"a*+": false, "a++": false, "a{1001}": false, "(?=x)": false, `\1`: false, `\Z`: false, "(?P=n)": false,
	} {
		_, err := regexp.Compile(pattern)
		require.Error(t, err, pattern)
		require.Equal(t, want, pcreRefuses(err), pattern)
	}
	require.False(t, pcreRefuses(errors.New("not a syntax error")))
	for pattern, want := range map[string]bool{`^v[0-9]+\.x$|beta&(a){2}=~:/`: true, "a b": false, "a,b": false, "(?<=a)": false, "#": false, "é": false} {
		require.Equal(t, want, canaryPatternRE.MatchString(pattern), pattern)
	}
}

// canaryOf compiles a primary and a canary Ingress with the annotations
// kv (without prefix) and returns the canary the primary's backend gets,
// and the warnings.
func canaryOf(t *testing.T, kv ...string) (*match.Canary, []Warning) {
	t.Helper()
	return canaryWith(t, nil, kv...)
}

// canaryWith is canaryOf with the primary's annotations (with prefix).
func canaryWith(t *testing.T, primary []string, kv ...string) (*match.Canary, []Warning) {
	t.Helper()
	anns := []string{NginxPrefix + "canary", "true"}
	for i := 0; i < len(kv); i += 2 {
		anns = append(anns, NginxPrefix+kv[i], kv[i+1])
	}
	s := mkSnapshot(
		mkService("prod", "api", ":80:"), mkSlice("prod", "api", "a", "", 80, "10.0.0.1"),
		mkService("prod", "api-canary", ":80:"), mkSlice("prod", "api-canary", "a", "", 80, "10.0.0.2"),
		mkIngress("prod", "primary", 1, withAnnotations(primary...), withRules(mkRule("shop.example.com", prefix("/", "api", 80)))),
		mkIngress("prod", "canary", 2, withAnnotations(anns...), withRules(mkRule("shop.example.com", prefix("/", "api-canary", 80)))),
	)
	tab, ws := compileOK(t, s, Options{})
	be := tab.Lookup("shop.example.com", "/").Backend
	require.NotNil(t, be.Traffic)
	return be.Traffic.Canary, ws
}

// The canary's weights are read as ingress-nginx's ValidateInt reads them
// (strconv.Atoi of the value as written): one with a space is refused, and
// ingress-nginx then weighs 0 of 100, so the canary takes no weighted share.
func TestCanaryWeightAsNginxReadsIt(t *testing.T) {
	field := func(k string) string { return "metadata.annotations[" + NginxPrefix + k + "]" }
	for _, tc := range []struct {
		name          string
		kv            []string
		weight, total int
		warnings      []short
	}{
		{"plain", []string{"canary-weight", "10", "canary-weight-total", "200"}, 10, 200, nil},
		{"weight with a space", []string{"canary-weight", " 10"}, 0, 100,
			[]short{{AnnotationRejected, "Ingress prod/canary", field("canary-weight")}}},
		{"total with a space", []string{"canary-weight", "10", "canary-weight-total", "200 "}, 10, 100,
			[]short{{AnnotationRejected, "Ingress prod/canary", field("canary-weight-total")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ws := canaryOf(t, tc.kv...)
			if diff := cmp.Diff(tc.warnings, shorten(ws), cmpEmpty); diff != "" {
				t.Fatalf("warnings (-want +got):\n%s\n%s", diff, warningText(ws))
			}
			require.NotNil(t, c)
			require.Equal(t, [2]int{tc.weight, tc.total}, [2]int{c.Weight, c.WeightTotal})
		})
	}
}

// canary-by-header-pattern as README and doc.go §10 say: a pattern only
// PCRE runs is not applied (the header decides by "always" and "never");
// one neither engine compiles sends the header's requests to the primary.
func TestCanaryHeaderPatternNotCompiled(t *testing.T) {
	field := "metadata.annotations[" + NginxPrefix + "canary-by-header-pattern]"
	for _, tc := range []struct {
		pattern  string
		failsAll bool
	}{
		{"^v(?=2)", false},
		{`^(v)\1`, false},
		{"(v2", true},
	} {
		t.Run(tc.pattern, func(t *testing.T) {
			c, ws := canaryOf(t, "canary-by-header", "X-Canary", "canary-by-header-pattern", tc.pattern)
			require.Equal(t, []short{{AnnotationRejected, "Ingress prod/canary", field}}, shorten(ws), warningText(ws))
			require.Equal(t, "X-Canary", c.Header)
			require.Nil(t, c.HeaderPattern)
			require.Equal(t, tc.failsAll, c.HeaderPatternError)
		})
	}
}

// A canary Ingress's annotations that only a location reads have no
// effect, as in ingress-nginx, whose canary makes no location: each says
// so, cosmetic, in place of what a broken or unsupported value would do
// to a location; those the canary's upstream reads keep their warnings,
// and its session affinity and backend-protocol, which follow the
// primary's under both, are cosmetic too.
func TestCanaryLocationAnnotations(t *testing.T) {
	c, ws := canaryOf(t, "canary-by-header", "X-Canary", "limit-rps", "10r/s", "limit-connections", "5",
		"rewrite-target", "/x", "custom-headers", "prod/hdrs", "proxy-body-size", "abc", "load-balance", "ewma",
		"backend-protocol", "HTTPS", "affinity", "cookie")
	require.Equal(t, "X-Canary", c.Header)
	field := func(k string) string { return "metadata.annotations[" + NginxPrefix + k + "]" }
	want := []short{
		{AnnotationRejected, "Ingress prod/canary", field("affinity")},
		{AnnotationRejected, "Ingress prod/canary", field("backend-protocol")},
		{AnnotationRejected, "Ingress prod/canary", field("custom-headers")},
		{AnnotationRejected, "Ingress prod/canary", field("limit-connections")},
		{AnnotationRejected, "Ingress prod/canary", field("limit-rps")},
		{AnnotationSubstituted, "Ingress prod/canary", field("load-balance")},
		{AnnotationRejected, "Ingress prod/canary", field("proxy-body-size")},
		{AnnotationRejected, "Ingress prod/canary", field("rewrite-target")},
	}
	if diff := cmp.Diff(want, shorten(ws)); diff != "" {
		t.Fatalf("warnings (-want +got):\n%s\n%s", diff, warningText(ws))
	}
	for _, w := range ws {
		if w.Reason == AnnotationRejected {
			require.Contains(t, w.Message, "has no effect on a canary Ingress", w.String())
			require.NotContains(t, w.Message, "refuses every request", w.String())
			require.Equal(t, Cosmetic, w.Severity(), w.String())
		}
	}
}

// Two canary Ingresses naming one canary Service serve the older one's
// rules under both controllers: the newer one's AnnotationConflict is
// cosmetic.
func TestCanaryRulesConflictCosmetic(t *testing.T) {
	s := mkSnapshot(
		mkService("prod", "one", ":80:"), mkSlice("prod", "one", "a", "", 80, "10.0.0.1"),
		mkService("prod", "two", ":80:"), mkSlice("prod", "two", "a", "", 80, "10.0.0.2"),
		mkService("prod", "next", ":80:"), mkSlice("prod", "next", "a", "", 80, "10.0.0.3"),
		mkIngress("prod", "main", 1, withRules(mkRule("one.example.com", prefix("/", "one", 80)), mkRule("two.example.com", prefix("/", "two", 80)))),
		mkIngress("prod", "one-canary", 2, withAnnotations(NginxPrefix+"canary", "true", NginxPrefix+"canary-by-header", "X-One"),
			withRules(mkRule("one.example.com", prefix("/", "next", 80)))),
		mkIngress("prod", "two-canary", 3, withAnnotations(NginxPrefix+"canary", "true", NginxPrefix+"canary-by-header", "X-Two"),
			withRules(mkRule("two.example.com", prefix("/", "next", 80)))),
	)
	_, ws := compileOK(t, s, Options{})
	require.Equal(t, []short{{AnnotationConflict, "Ingress prod/two-canary", "metadata.annotations[" + NginxPrefix + "canary]"}}, shorten(ws), warningText(ws))
	require.Equal(t, Cosmetic, ws[0].Severity())
}

// canary-by-header and canary-by-cookie under ingress-nginx's prefix pass
// its validator (letters, digits and /-._~:) or are unset there, so a
// token character outside it (X!Canary) refuses the name; ramjet.dev/
// takes any token.
func TestCanaryNamesAsNginxReadsThem(t *testing.T) {
	field := func(k string) string { return "metadata.annotations[" + NginxPrefix + k + "]" }
	c, ws := canaryOf(t, "canary-by-header", "X!Canary", "canary-by-cookie", "beta*")
	require.Equal(t, []short{
		{AnnotationRejected, "Ingress prod/canary", field("canary-by-cookie")},
		{AnnotationRejected, "Ingress prod/canary", field("canary-by-header")},
	}, shorten(ws), warningText(ws))
	require.Empty(t, c.Header)
	require.Empty(t, c.Cookie)

	c, ws = canaryOf(t, "canary-by-header", "X.Canary", "canary-by-cookie", "beta.v2")
	require.Empty(t, ws, warningText(ws))
	require.Equal(t, [2]string{"X.canary", "beta.v2"}, [2]string{c.Header, c.Cookie})

	anns := []string{NativePrefix + "canary", "true", NativePrefix + "canary-by-header", "X!Canary", NativePrefix + "canary-by-cookie", "beta*"}
	s := mkSnapshot(
		mkService("prod", "api", ":80:"), mkSlice("prod", "api", "a", "", 80, "10.0.0.1"),
		mkService("prod", "api-canary", ":80:"), mkSlice("prod", "api-canary", "a", "", 80, "10.0.0.2"),
		mkIngress("prod", "primary", 1, withRules(mkRule("shop.example.com", prefix("/", "api", 80)))),
		mkIngress("prod", "canary", 2, withAnnotations(anns...), withRules(mkRule("shop.example.com", prefix("/", "api-canary", 80)))),
	)
	tab, ws := compileOK(t, s, Options{})
	require.Empty(t, ws, warningText(ws))
	c = tab.Lookup("shop.example.com", "/").Backend.Traffic.Canary
	require.Equal(t, [2]string{"X!canary", "beta*"}, [2]string{c.Header, c.Cookie})
}

// canary-by-header-value and canary-by-header-pattern do nothing without
// canary-by-header, as in ingress-nginx, and say so.
func TestCanaryHeaderValueWithoutHeader(t *testing.T) {
	field := func(k string) string { return "metadata.annotations[" + NginxPrefix + k + "]" }
	c, ws := canaryOf(t, "canary-by-header-value", "beta", "canary-by-header-pattern", "^b", "canary-by-cookie", "c")
	require.Equal(t, []short{
		{AnnotationRejected, "Ingress prod/canary", field("canary-by-header-pattern")},
		{AnnotationRejected, "Ingress prod/canary", field("canary-by-header-value")},
	}, shorten(ws), warningText(ws))
	for _, w := range ws {
		require.Contains(t, w.Message, "has no effect without canary-by-header")
		require.Equal(t, Cosmetic, w.Severity())
	}
	require.Equal(t, "c", c.Cookie)
}

// canary-by-header-value under ingress-nginx's prefix passes its validator
// (letters, digits and /-._~: once spaces are removed) and is trimmed;
// a value it refuses is unset there, so the header decides by "always"
// and "never".
func TestCanaryHeaderValueAsNginxReadsIt(t *testing.T) {
	field := "metadata.annotations[" + NginxPrefix + "canary-by-header-value]"
	for _, tc := range []struct {
		value, want string
		warnings    []short
	}{
		{"v1.2_x-y~z:/w", "v1.2_x-y~z:/w", nil},
		{" v1 ", "v1", nil},
		{"v=1", "", []short{{AnnotationRejected, "Ingress prod/canary", field}}},
		{"a,b", "", []short{{AnnotationRejected, "Ingress prod/canary", field}}},
	} {
		t.Run(tc.value, func(t *testing.T) {
			c, ws := canaryOf(t, "canary-by-header", "X-Canary", "canary-by-header-value", tc.value)
			if diff := cmp.Diff(tc.warnings, shorten(ws), cmpEmpty); diff != "" {
				t.Fatalf("warnings (-want +got):\n%s\n%s", diff, warningText(ws))
			}
			require.Equal(t, "X-Canary", c.Header)
			require.Equal(t, tc.want, c.HeaderValue)
		})
	}
}

// affinity-canary-behavior is sticky or legacy in lower case under
// ingress-nginx's prefix, as its validator is case-sensitive: "Legacy" is
// refused there and the canary stays sticky.
func TestAffinityCanaryBehaviorCase(t *testing.T) {
	field := "metadata.annotations[" + NginxPrefix + "affinity-canary-behavior]"
	affinity := []string{NginxPrefix + "affinity", "cookie"}
	c, ws := canaryWith(t, affinity, "canary-by-header", "X-Canary", "affinity-canary-behavior", " legacy")
	require.Empty(t, ws, warningText(ws))
	require.False(t, c.Sticky)
	c, ws = canaryWith(t, affinity, "canary-by-header", "X-Canary", "affinity-canary-behavior", "Legacy")
	require.Equal(t, []short{{AnnotationRejected, "Ingress prod/canary", field}}, shorten(ws))
	require.True(t, c.Sticky)
}

// The cookie lifetimes are read as ingress-nginx reads them
// (sessionaffinity/main.go: affinityCookieExpiresRegex, `(^0|-?[1-9]\d*$)`,
// on the value as written, spaces removed for expires only, then on the
// trimmed value; sticky.lua then writes tonumber of it): a negative value
// is written as is, so the cookie expires at once, and a leading zero or
// space is read as Lua reads the number.
func TestAffinityCookieSecondsAsNginxReadsThem(t *testing.T) {
	for _, tt := range []struct {
		key, value, want string // want "" for not applied
	}{
		{"session-cookie-max-age", "-3600", "-3600"},
		{"session-cookie-max-age", "0", "0"},
		{"session-cookie-max-age", "010", "10"},
		{"session-cookie-max-age", " 60", "60"},
		{"session-cookie-max-age", "60 ", ""}, // the validator refuses it
		{"session-cookie-max-age", "-0", ""},
		{"session-cookie-max-age", "1h", ""},
		{"session-cookie-expires", "-60", "-60"},
		{"session-cookie-expires", "60 ", "60"},
		{"session-cookie-expires", "6 0", ""},
	} {
		t.Run(tt.key+"="+tt.value, func(t *testing.T) {
			s := mkSnapshot(
				mkService("prod", "api", ":80:"), mkSlice("prod", "api", "a", "", 80, "10.0.0.1"),
				mkIngress("prod", "web", 1, withAnnotations(NginxPrefix+"affinity", "cookie", NginxPrefix+tt.key, tt.value),
					withRules(mkRule("shop.example.com", prefix("/", "api", 80)))),
			)
			tab, ws := compileOK(t, s, Options{})
			a := tab.Lookup("shop.example.com", "/").Backend.Traffic.Affinity
			got := a.MaxAge
			if tt.key == "session-cookie-expires" {
				got = a.Expires
			}
			require.Equal(t, tt.want, got)
			if tt.want == "" {
				require.Equal(t, []short{{AnnotationRejected, "Ingress prod/web", "metadata.annotations[" + NginxPrefix + tt.key + "]"}}, shorten(ws))
			} else {
				require.Empty(t, ws, warningText(ws))
			}
		})
	}
}

// affinity-canary-behavior says what a canary does with its primary's
// sessions: ingress-nginx reads it off the canary Ingress alone
// (internal/ingress/controller/controller.go mergeAlternativeBackend), so
// on any other Ingress it does nothing, and says so.
func TestAffinityCanaryBehaviorOffCanary(t *testing.T) {
	key := NginxPrefix + "affinity-canary-behavior"
	s := mkSnapshot(
		mkService("prod", "api", ":80:"), mkSlice("prod", "api", "a", "", 80, "10.0.0.1"),
		mkService("prod", "api-canary", ":80:"), mkSlice("prod", "api-canary", "a", "", 80, "10.0.0.2"),
		mkIngress("prod", "primary", 1, withAnnotations(NginxPrefix+"affinity", "cookie", key, "legacy"),
			withRules(mkRule("a.example.com", prefix("/", "api", 80)))),
		mkIngress("prod", "canary", 2, withAnnotations(NginxPrefix+"canary", "true", NginxPrefix+"canary-weight", "10", key, "sticky"),
			withRules(mkRule("a.example.com", prefix("/", "api-canary", 80)))),
	)
	tab, ws := compileOK(t, s, Options{})
	require.Equal(t, []short{{AnnotationRejected, "Ingress prod/primary", "metadata.annotations[" + key + "]"}}, shorten(ws), warningText(ws))
	require.Contains(t, ws[0].Message, "not a canary")
	c := tab.Lookup("a.example.com", "/").Backend.Traffic.Canary
	require.True(t, c.Sticky, "the canary's own value decides")
}
