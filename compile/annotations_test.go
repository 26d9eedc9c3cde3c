package compile

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

const (
	nginxProtocol  = NginxPrefix + "backend-protocol"
	nativeProtocol = NativePrefix + "backend-protocol"
)

func protocolSnapshot(annotations ...string) Snapshot {
	return mkSnapshot(
		mkService("prod", "api", ":80:"), mkSlice("prod", "api", "a", "", 80, "10.0.0.1"),
		mkIngress("prod", "shop", 1, withAnnotations(annotations...),
			withRules(mkRule("shop.example.com", prefix("/", "api", 80)), mkRule("www.example.com", prefix("/", "api", 80)))),
	)
}

func TestBackendProtocol(t *testing.T) {
	tests := []struct {
		name        string
		annotations []string
		want        match.Protocol
		warnings    []short
	}{
		{name: "default HTTP", want: match.HTTP},
		{name: "nginx GRPC", annotations: []string{nginxProtocol, "GRPC"}, want: match.GRPC},
		{name: "case-insensitive", annotations: []string{nginxProtocol, "grpcs"}, want: match.GRPCS},
		{name: "native HTTPS", annotations: []string{nativeProtocol, "Https"}, want: match.HTTPS},
		{name: "native wins over nginx", annotations: []string{nativeProtocol, "GRPC", nginxProtocol, "HTTPS"}, want: match.GRPC},
		{name: "nginx AUTO_HTTP", annotations: []string{nginxProtocol, " auto_http"}, want: match.AutoHTTP},
		{name: "native AUTO_HTTP is no ramjet.dev/ value", annotations: []string{nativeProtocol, "AUTO_HTTP"}, want: match.HTTP,
			warnings: []short{{AnnotationRejected, "Ingress prod/shop", "metadata.annotations[" + nativeProtocol + "]"}}},
		{name: "nginx invalid", annotations: []string{nginxProtocol, "FCGI"}, want: match.HTTP,
			warnings: []short{{AnnotationRejected, "Ingress prod/shop", "metadata.annotations[" + nginxProtocol + "]"}}},
		{name: "native invalid shadows a valid nginx one", annotations: []string{nativeProtocol, "GRCP", nginxProtocol, "GRPC"}, want: match.HTTP,
			warnings: []short{{AnnotationRejected, "Ingress prod/shop", "metadata.annotations[" + nativeProtocol + "]"}}},
		{name: "empty value", annotations: []string{nativeProtocol, ""}, want: match.HTTP,
			warnings: []short{{AnnotationRejected, "Ingress prod/shop", "metadata.annotations[" + nativeProtocol + "]"}}},
		{name: "other prefixes are ignored", annotations: []string{"example.com/backend-protocol", "GRPC"}, want: match.HTTP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, ws := compileOK(t, protocolSnapshot(tt.annotations...), Options{})
			if diff := cmp.Diff(tt.warnings, shorten(ws), cmpEmpty); diff != "" {
				t.Errorf("warnings (-want +got):\n%s\n%s", diff, warningText(ws))
			}
			require.Equal(t, tt.want, tab.Lookup("shop.example.com", "/").Backend.Protocol)
			require.Equal(t, "prod/api:80", served(tab, "www.example.com", "/"), "the rest still serves")
		})
	}
}

// ingress-nginx serves FCGI (fastcgi_pass); dialled as HTTP here, a
// backend that expects it answers otherwise, so the migration report
// counts traffic that moves. A value ingress-nginx refuses too keeps
// AnnotationRejected's severity.
func TestBackendProtocolServedByNginxSeverity(t *testing.T) {
	for value, want := range map[string]Severity{" fcgi": TrafficMoves, "GRCP": FeatureMissing} {
		_, ws := compileOK(t, protocolSnapshot(nginxProtocol, value), Options{})
		require.Len(t, ws, 1, "%q: %s", value, warningText(ws))
		require.Equal(t, AnnotationRejected, ws[0].Reason)
		require.Equal(t, want, ws[0].Severity(), "%q: %s", value, ws[0].Message)
	}
	_, ws := compileOK(t, protocolSnapshot(nativeProtocol, "FCGI"), Options{})
	require.Len(t, ws, 1)
	require.Equal(t, FeatureMissing, ws[0].Severity(), "ingress-nginx reads no ramjet.dev/ annotation")
}

func TestAnnotationRegistry(t *testing.T) {
	s := protocolSnapshot(
		NativePrefix+"no-such-thing", "1",
		NativePrefix+"canary-weight", "10",
		NginxPrefix+"configuration-snippet", "more_set_headers x",
		NginxPrefix+"http2-push-preload", "true",
		NginxPrefix+"canary", "false", // an ordinary Ingress: no warning
		NginxPrefix+"ssl-redirect", "false", // implemented: no warning
		"kubernetes.io/ingress.class", "ramjet",
		"example.com/anything", "x",
	)
	tab, ws := compileOK(t, s, Options{})
	field := func(k string) string { return "metadata.annotations[" + k + "]" }
	want := []short{
		// Critical-risk at ingress-nginx's default risk level (High):
		// ingress-nginx refuses the Ingress.
		{SnippetAnswerIgnored, "Ingress prod/shop", field(NginxPrefix + "configuration-snippet")},
		{AnnotationUnsupported, "Ingress prod/shop", field(NginxPrefix + "http2-push-preload")},
		{AnnotationRejected, "Ingress prod/shop", field(NativePrefix + "canary-weight")},
		{AnnotationRejected, "Ingress prod/shop", field(NativePrefix + "no-such-thing")},
	}
	if diff := cmp.Diff(want, shorten(ws)); diff != "" {
		t.Fatalf("warnings (-want +got):\n%s\n%s", diff, warningText(ws))
	}
	require.Contains(t, ws[2].Message, "the Ingress is not a canary")
	require.Contains(t, ws[3].Message, "unknown annotation")
	require.Equal(t, "prod/api:80", served(tab, "shop.example.com", "/x"), "the Ingress still compiles")

	// Every known key has a registry entry; implemented ones parse.
	for _, k := range []string{"backend-protocol", "ssl-redirect", "force-ssl-redirect", "preserve-trailing-slash", "load-balance", "upstream-hash-by",
		"rewrite-target", "use-regex", "upstream-vhost", "x-forwarded-prefix"} {
		require.NotNil(t, knownAnnotations[k].apply, k)
	}
}

// When Ingresses disagree about one backend's protocol, the oldest serving
// Ingress decides and each other gets AnnotationConflict (SPEC §8, §11.1).
func TestProtocolConflict(t *testing.T) {
	tests := []struct {
		name       string
		old, new   []string
		want       match.Protocol
		loserField string
	}{
		{name: "agree", old: []string{nginxProtocol, "GRPC"}, new: []string{nativeProtocol, "grpc"}, want: match.GRPC},
		{name: "both default", want: match.HTTP},
		{name: "older GRPC, newer default", old: []string{nginxProtocol, "GRPC"}, want: match.GRPC,
			loserField: "metadata.annotations[" + nativeProtocol + "]"},
		{name: "older default, newer GRPC", new: []string{nginxProtocol, "GRPC"}, want: match.HTTP,
			loserField: "metadata.annotations[" + nginxProtocol + "]"},
		{name: "older HTTPS, newer GRPCS", old: []string{nativeProtocol, "HTTPS"}, new: []string{nativeProtocol, "GRPCS"}, want: match.HTTPS,
			loserField: "metadata.annotations[" + nativeProtocol + "]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, ws := compileOK(t, sharedBackendSnapshot(tt.old, tt.new), Options{})
			require.Equal(t, tt.want, tab.Lookup("b.example.com", "/").Backend.Protocol)
			if tt.loserField == "" {
				require.Empty(t, ws)
				return
			}
			require.Equal(t, []short{{AnnotationConflict, "Ingress prod/new", tt.loserField}}, shorten(ws))
			require.Equal(t, "Ingress prod/old", ws[0].WinnerText())
			require.Contains(t, ws[0].Message, "prod/api:80")
		})
	}
}

func TestSSLRedirectSettings(t *testing.T) {
	s := mkSnapshot(
		mkService("prod", "api", ":80:"), mkSlice("prod", "api", "a", "", 80, "10.0.0.1"),
		mkIngress("prod", "plain", 1, withTLS("", "shop.example.com"),
			withRules(mkRule("shop.example.com", prefix("/plain", "api", 80)))),
		mkIngress("prod", "off", 2, withAnnotations(NginxPrefix+"ssl-redirect", "false"),
			withRules(mkRule("shop.example.com", prefix("/off", "api", 80)))),
		mkIngress("prod", "forced", 3, withAnnotations(NativePrefix+"force-ssl-redirect", "true"),
			withRules(mkRule("open.example.com", prefix("/", "api", 80)))),
		mkIngress("prod", "bad", 4, withAnnotations(NativePrefix+"ssl-redirect", "yes please"),
			withRules(mkRule("shop.example.com", prefix("/bad", "api", 80)))),
	)
	type flags struct{ TLS, SSL, Force bool }
	check := func(t *testing.T, o Options, want map[string]flags) {
		tab, ws := compileOK(t, s, o)
		require.Equal(t, []short{{AnnotationRejected, "Ingress prod/bad", "metadata.annotations[" + NativePrefix + "ssl-redirect]"}}, shorten(ws))
		got := map[string]flags{}
		for _, probe := range []string{"shop.example.com/plain", "shop.example.com/off", "shop.example.com/bad", "shop.example.com/none", "open.example.com/", "x.test/"} {
			host, path, _ := strings.Cut(probe, "/")
			res := tab.Lookup(host, "/"+path)
			f := flags{TLS: res.Host.TLS, SSL: res.Host.SSLRedirect, Force: res.Host.ForceSSLRedirect}
			if res.Route != nil {
				f.SSL, f.Force = res.Route.SSLRedirect, res.Route.ForceSSLRedirect
			}
			got[probe] = f
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	}
	t.Run("option on", func(t *testing.T) {
		check(t, Options{}, map[string]flags{
			"shop.example.com/plain": {TLS: true, SSL: true},
			"shop.example.com/off":   {TLS: true, SSL: false},
			"shop.example.com/bad":   {TLS: true, SSL: true}, // rejected: the option decides
			"shop.example.com/none":  {TLS: true, SSL: true}, // the creator's settings
			"open.example.com/":      {SSL: true, Force: true},
			"x.test/":                {SSL: true},
		})
	})
	t.Run("option off", func(t *testing.T) {
		check(t, Options{DisableSSLRedirect: true}, map[string]flags{
			"shop.example.com/plain": {TLS: true},
			"shop.example.com/off":   {TLS: true},
			"shop.example.com/bad":   {TLS: true},
			"shop.example.com/none":  {TLS: true},
			"open.example.com/":      {Force: true},
			"x.test/":                {},
		})
	})
}

// The oldest Ingress serving a backend decides its protocol and balancing
// even when it serves it only through spec.defaultBackend, which is
// resolved after every route of the newer Ingresses.
func TestOldestDecidesThroughDefaultBackend(t *testing.T) {
	s := mkSnapshot(
		mkService("prod", "api", ":80:"), mkSlice("prod", "api", "a", "", 80, "10.0.0.1"),
		mkIngress("prod", "old", 1, withDefault("api", 80),
			withAnnotations(nginxProtocol, "GRPC", NativePrefix+"load-balance", "least_conn"),
			withRules(mkRule("a.example.com"))),
		mkIngress("prod", "new", 2, withRules(mkRule("b.example.com", prefix("/", "api", 80)))),
	)
	tab, ws := compileOK(t, s, Options{})
	be := tab.Lookup("b.example.com", "/").Backend
	require.Same(t, be, tab.Lookup("a.example.com", "/").Backend)
	require.Equal(t, match.GRPC, be.Protocol)
	require.Equal(t, "least_conn", balancing(be))
	require.Equal(t, []short{
		{AnnotationConflict, "Ingress prod/new", "metadata.annotations[" + nativeProtocol + "]"},
		{AnnotationConflict, "Ingress prod/new", "metadata.annotations[" + NativePrefix + "load-balance]"},
	}, shorten(ws))
	for _, w := range ws {
		require.Equal(t, "Ingress prod/old", w.WinnerText())
	}
}

// A string annotation ingress-nginx reads with GetStringAnnotation, whose
// validator ignores spaces and whose parser trims the value, means the
// same with spaces around it: " GRPC" is GRPC there.
func TestNginxStringAnnotationsTrimmed(t *testing.T) {
	snap := func(primary, canary []string) Snapshot {
		return mkSnapshot(
			mkService("prod", "api", ":80:"), mkSlice("prod", "api", "a", "", 80, "10.0.0.1"),
			mkService("prod", "api-canary", ":80:"), mkSlice("prod", "api-canary", "a", "", 80, "10.0.0.2"),
			mkIngress("prod", "primary", 1, withAnnotations(primary...), withRules(mkRule("shop.example.com", prefix("/", "api", 80)))),
			mkIngress("prod", "canary", 2, withAnnotations(append([]string{NginxPrefix + "canary", "true"}, canary...)...),
				withRules(mkRule("shop.example.com", prefix("/", "api-canary", 80)))),
		)
	}
	affinity := []string{NginxPrefix + "affinity", "cookie"}
	for _, tc := range []struct {
		key, value string
		with       []string // the primary's other annotations
		onCanary   bool
	}{
		{key: "backend-protocol", value: "GRPC"},
		{key: "load-balance", value: "ewma"},
		{key: "upstream-hash-by", value: "$request_uri"},
		{key: "canary-by-header", value: "X-Canary", onCanary: true},
		{key: "canary-by-cookie", value: "beta", onCanary: true},
		{key: "session-cookie-name", value: "route", with: affinity},
		{key: "session-cookie-path", value: "/app", with: affinity},
		{key: "session-cookie-domain", value: "example.com", with: affinity},
		{key: "session-cookie-expires", value: "3600", with: affinity},
		// Not session-cookie-max-age: its validator keeps the spaces, and
		// one after the number refuses it (TestAffinityCookieSecondsAsNginxReadsThem).
	} {
		t.Run(tc.key, func(t *testing.T) {
			build := func(value string) (string, []Warning) {
				kv := []string{NginxPrefix + tc.key, value}
				s := snap(append(kv, tc.with...), nil)
				if tc.onCanary {
					s = snap(tc.with, kv)
				}
				tab, ws := compileOK(t, s, Options{})
				return tab.String(), ws
			}
			want, _ := build(tc.value)
			got, ws := build(" " + tc.value + " ")
			require.Equal(t, want, got)
			for _, w := range ws {
				require.NotEqual(t, AnnotationRejected, w.Reason, w.Message)
			}
		})
	}
}
