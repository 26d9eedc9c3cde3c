package compile

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The severity table (reasonSeverity), each row with why: what changes
// between ingress-nginx and ramjet when the warning fires. A row changed
// in the table without its rationale here fails, and so does a reason
// added to one and not the other.
func TestSeverityRationale(t *testing.T) {
	rationale := map[Reason]struct {
		sev Severity
		why string
	}{
		ClassNotFound:             {Cosmetic, "neither controller serves an Ingress of a class it does not have"},
		ClassConflict:             {TrafficMoves, "claimed here by its annotation where ingress-nginx follows ingressClassName and does not serve it"},
		RuleRejected:              {TrafficMoves, "a rule ingress-nginx serves is not served"},
		PathRejected:              {TrafficMoves, "a path ingress-nginx serves is not served"},
		PathTypeUnknown:           {TrafficMoves, "matched as a regex, where ingress-nginx matches otherwise"},
		PathCaseInsensitive:       {TrafficMoves, "matched case-insensitively as a regex, where ingress-nginx matches a byte prefix"},
		BackendUnsupported:        {FeatureMissing, "a resource backend: the path answers 503 here, a feature ingress-nginx has"},
		RouteConflict:             {TrafficMoves, "by default: the loser's declaration differs (/foo and /foo/), so ingress-nginx refuses the configuration and keeps the old one; where ingress-nginx keeps the same winner, Compile rates it cosmetic (Rated)"},
		DefaultBackendConflict:    {TrafficMoves, "another Ingress's default backend answers unmatched requests"},
		DefaultBackendUnavailable: {Cosmetic, "404 or 503 under both"},
		ServiceNotFound:           {Cosmetic, "503 under both"},
		ServicePortNotFound:       {Cosmetic, "503 under both"},
		ServicePortConflict:       {TrafficMoves, "another port of the Service serves"},
		PortMatchedTargetPort:     {Cosmetic, "served, with a hint to fix the manifest"},
		ExternalNameUnsupported:   {FeatureMissing, "503 here where ingress-nginx proxies to the external name"},
		EndpointRejected:          {TrafficMoves, "an endpoint ingress-nginx dials is dropped"},
		AnnotationRejected:        {FeatureMissing, "the annotation's setting is not applied; the request reaches the same backend"},
		AnnotationUnsupported:     {FeatureMissing, "not in the table: decided per key and value by SeverityFor"},
		AnnotationConflict:        {TrafficMoves, "another Ingress's setting applies to the shared backend"},
		AnnotationSubstituted:     {FeatureMissing, "a nearby setting stands in for the one asked"},
		RegexModeHost:             {Cosmetic, "ingress-nginx's own regex mode, which ramjet follows: the warning only explains"},
		SecretNotFound:            {Cosmetic, "the default certificate under both"},
		SecretInvalid:             {Cosmetic, "the default certificate under both"},
		CertificateHostMismatch:   {Cosmetic, "the certificate is not served for that host under either"},
		CanaryWithoutPrimary:      {Cosmetic, "ingress-nginx skips such a canary too"},
		CanaryConflict:            {Cosmetic, "one canary per backend under both, the oldest"},
		ConfigMapKeyRejected:      {TrafficMoves, "ramjet keeps the default where nginx would apply the value"},
		ConfigMapKeyIgnored:       {Cosmetic, "it tunes nginx itself, or asks for the default"},
		ConfigMapKeyUnsupported:   {FeatureMissing, "by key (configMapSeverity) or by value (configMapByValue)"},
		AnnotationUnanchored:      {Cosmetic, "served as ingress-nginx matches it"},
		SnippetIgnored:            {FeatureMissing, "a directive that adds or tunes something is not run"},
		SnippetAnswerIgnored:      {TrafficMoves, "a directive that answers or refuses is not run; or ingress-nginx refuses the whole Ingress for a Critical-risk annotation, and ramjet serves it"},
		SnippetNoEffect:           {Cosmetic, "ingress-nginx drops the snippet too (allow-snippet-annotations false)"},
		SnippetCrossesIngress:     {TrafficMoves, "a server-snippet answers paths another Ingress declares"},
		L4ServiceRejected:         {Cosmetic, "a malformed entry, or one on the controller's own port: ingress-nginx serves no such stream server either"},
		L4ServicePartIgnored:      {Cosmetic, "a part ingress-nginx ignores too (PROXY in the UDP map, parts past the fourth)"},
		L4ServiceDiffers:          {TrafficMoves, "the backend's PROXY header names the client, where ingress-nginx without enable-real-ip names the peer: a backend that checks the address answers otherwise"},
		L4ServicesNotFound:        {Cosmetic, "no TCP/UDP ports under either while the ConfigMap is missing"},
	}
	for r, want := range rationale {
		require.NotEmpty(t, want.why, r)
		if r == AnnotationUnsupported {
			_, ok := reasonSeverity[r]
			assert.False(t, ok, "AnnotationUnsupported is rated per key")
			continue
		}
		assert.Equal(t, want.sev, reasonSeverity[r], "%s: %s", r, want.why)
	}
	for _, r := range slices.Sorted(maps.Keys(reasonSeverity)) {
		_, ok := rationale[r]
		assert.True(t, ok, "%s is in the severity table without a rationale here", r)
	}
}

// A RouteConflict where ingress-nginx keeps the same winner is cosmetic:
// the same path and type declared twice (ingress-nginx skips a location
// it has), and the twin pattern ingress-nginx orders first. Two
// declarations of one key that differ (/foo and /foo/) make nginx refuse
// its configuration: traffic moves.
func TestRouteConflictSeverity(t *testing.T) {
	svc := mkService("prod", "web", ":80:")
	eps := mkSlice("prod", "web", "w", "", 80, "10.0.0.1")
	rated := func(ws []Warning) []Severity {
		var out []Severity
		for _, w := range ws {
			require.Equal(t, RouteConflict, w.Reason, warningText(ws))
			out = append(out, w.Severity())
		}
		return out
	}

	same := mkSnapshot(svc, eps,
		mkIngress("prod", "a", 1, withRules(mkRule("a.example.com", prefix("/api", "web", 80)))),
		mkIngress("prod", "b", 2, withRules(mkRule("a.example.com", prefix("/api", "web", 80)))))
	_, ws := compileOK(t, same, Options{})
	assert.Equal(t, []Severity{Cosmetic}, rated(ws), "the same declaration twice: the same winner")

	slash := mkSnapshot(svc, eps,
		mkIngress("prod", "a", 1, withRules(mkRule("a.example.com", prefix("/api", "web", 80)))),
		mkIngress("prod", "b", 2, withRules(mkRule("a.example.com", prefix("/api/", "web", 80)))))
	_, ws = compileOK(t, slash, Options{})
	assert.Equal(t, []Severity{TrafficMoves}, rated(ws), "/api and /api/: nginx refuses the configuration")

	exactVsPrefix := mkSnapshot(svc, eps,
		mkIngress("prod", "a", 1, withRules(mkRule("a.example.com", exact("/api", "web", 80)))),
		mkIngress("prod", "b", 2, withRules(mkRule("a.example.com", exact("/api", "web", 80)))))
	_, ws = compileOK(t, exactVsPrefix, Options{})
	assert.Equal(t, []Severity{Cosmetic}, rated(ws))
}

// Critical-risk annotations (the five snippets): at ingress-nginx's
// default risk level (High) it refuses the whole Ingress, which ramjet
// serves (traffic moves); at Critical with allow-snippet-annotations
// false it drops them, as ramjet does (cosmetic); with snippets on,
// stream-snippet's TCP/UDP servers are not served (traffic moves) and
// auth-snippet's additions are lost (feature missing).
func TestCriticalRiskSeverity(t *testing.T) {
	for _, tt := range []struct {
		key  string
		opts Options
		want Severity
	}{
		{"configuration-snippet", Options{}, TrafficMoves},
		{"server-snippet", Options{}, TrafficMoves},
		{"auth-snippet", Options{}, TrafficMoves},
		{"stream-snippet", Options{}, TrafficMoves},
		{"modsecurity-snippet", Options{}, TrafficMoves},
		{"configuration-snippet", Options{AllowSnippetAnnotations: true, AnnotationsRiskLevel: "High"}, TrafficMoves},
		{"auth-snippet", Options{AnnotationsRiskLevel: "Medium"}, TrafficMoves},
		{"configuration-snippet", Options{AnnotationsRiskLevel: "Critical"}, Cosmetic},
		{"auth-snippet", Options{AnnotationsRiskLevel: "critical"}, Cosmetic},
		{"stream-snippet", Options{AnnotationsRiskLevel: "Critical"}, Cosmetic},
		{"modsecurity-snippet", Options{AnnotationsRiskLevel: "Critical"}, Cosmetic},
		{"stream-snippet", Options{AllowSnippetAnnotations: true, AnnotationsRiskLevel: "Critical"}, TrafficMoves},
		// Without auth-url it does nothing there either (TestAuthSnippetSeverity).
		{"auth-snippet", Options{AllowSnippetAnnotations: true, AnnotationsRiskLevel: "Critical"}, Cosmetic},
	} {
		s := mkSnapshot(mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
			mkIngress("prod", "web", 1, withAnnotations(NginxPrefix+tt.key, "listen 5432;"),
				withRules(mkRule("a.example.com", prefix("/", "web", 80)))))
		res := Compile(s, tt.opts)
		var got []Severity
		for _, w := range res.Warnings {
			if w.Field == annotationField(NginxPrefix+tt.key) {
				got = append(got, w.Severity())
			}
		}
		assert.Equal(t, []Severity{tt.want}, got, "%s with %+v: %s", tt.key, tt.opts, warningText(res.Warnings))
	}
}

// satisfy: "any" moves traffic only where the Ingress has both an
// allowlist and authentication (testdata/cases/satisfy-any.yaml shows the
// answers); otherwise, and for "all" or a value ingress-nginx reads as
// "all", nothing changes.
func TestSatisfySeverity(t *testing.T) {
	for _, tt := range []struct {
		ann  []string
		want Severity
	}{
		{[]string{"satisfy", "any", "whitelist-source-range", "10.0.0.0/8", "auth-type", "basic", "auth-secret", "htpasswd"}, TrafficMoves},
		{[]string{"satisfy", "any", "allowlist-source-range", "10.0.0.0/8", "auth-url", "http://auth.example/check"}, TrafficMoves},
		{[]string{"satisfy", "any", "auth-type", "basic", "auth-secret", "htpasswd"}, Cosmetic},
		{[]string{"satisfy", "any", "whitelist-source-range", "10.0.0.0/8"}, Cosmetic},
		{[]string{"satisfy", "all", "whitelist-source-range", "10.0.0.0/8", "auth-type", "basic", "auth-secret", "htpasswd"}, Cosmetic},
		{[]string{"satisfy", "some", "whitelist-source-range", "10.0.0.0/8", "auth-type", "basic", "auth-secret", "htpasswd"}, Cosmetic},
	} {
		var kv []string
		for i := 0; i < len(tt.ann); i += 2 {
			kv = append(kv, NginxPrefix+tt.ann[i], tt.ann[i+1])
		}
		s := mkSnapshot(mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
			mkIngress("prod", "web", 1, withAnnotations(kv...), withRules(mkRule("a.example.com", prefix("/", "web", 80)))))
		res := Compile(s, Options{})
		found := false
		for _, w := range res.Warnings {
			if w.Field == annotationField(NginxPrefix+"satisfy") {
				found = true
				assert.Equal(t, tt.want, w.Severity(), "%v", tt.ann)
				assert.Equal(t, tt.want, Warning{Reason: w.Reason, Field: w.Field}.SeverityFor(s.Ingresses[0].Annotations), "SeverityFor agrees with Compile's verdict")
			}
		}
		assert.True(t, found, "%v: %s", tt.ann, warningText(res.Warnings))
	}
}

// The ConfigMap keys whose value decides: http-snippet (a server block
// answers requests ramjet does not; otherwise its maps and headers are
// lost), stream-snippet (its TCP/UDP servers are not served),
// use-geoip2 (false is the default and what ramjet does; true loses the
// GeoIP2 variables), limit-conn-zone-variable (the client address, its
// default, is what ramjet's rate limits count by; another key counts
// other groups of requests, so other requests are refused),
// retry-non-idempotent ("false", the default, retries no POST).
// enable-opentracing's annotation: "false" is cosmetic,
// "true" loses OpenTracing's spans (enable-opentelemetry is served, §23).
func TestConfigMapValueSeverity(t *testing.T) {
	for _, tt := range []struct {
		key, value string
		want       Severity
	}{
		{"http-snippet", "server {\n listen 8081;\n location / { return 200 ok; }\n}", TrafficMoves},
		{"http-snippet", "map $http_x $y { default 1; }", FeatureMissing},
		{"http-snippet", "", Cosmetic},
		{"stream-snippet", "server { listen 5432; proxy_pass db:5432; }", TrafficMoves},
		{"use-geoip2", "true", FeatureMissing},
		{"use-geoip2", "false", Cosmetic},
		{"limit-conn-zone-variable", "$binary_remote_addr", Cosmetic},
		{"limit-conn-zone-variable", " $remote_addr ", Cosmetic},
		{"limit-conn-zone-variable", "$http_x_api_key", TrafficMoves},
		{"limit-conn-zone-variable", "$server_name", TrafficMoves},
		// ingress-nginx's default: nothing retried that ramjet does not
		// retry.
		{"retry-non-idempotent", "false", Cosmetic},
		{"retry-non-idempotent", "true", FeatureMissing},
	} {
		cm := ParseConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ingress", Name: "nginx"}, Data: map[string]string{tt.key: tt.value}})
		ws := cm.Warnings()
		require.Len(t, ws, 1, "%s=%q", tt.key, tt.value)
		assert.Equal(t, tt.want, ws[0].Severity(), "%s=%q: %s", tt.key, tt.value, ws[0].Message)
	}

	for value, want := range map[string]Severity{"true": FeatureMissing, "false": Cosmetic} {
		s := mkSnapshot(mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
			mkIngress("prod", "web", 1, withAnnotations(NginxPrefix+"enable-opentracing", value), withRules(mkRule("a.example.com", prefix("/", "web", 80)))))
		_, ws := compileOK(t, s, Options{})
		require.Len(t, ws, 1)
		assert.Equal(t, want, ws[0].Severity(), "enable-opentracing %q: %s", value, ws[0].Message)
	}
}

// use-port-in-redirects is served (annotation and ConfigMap key): either
// value compiles without a warning.
func TestUsePortInRedirectsServed(t *testing.T) {
	for _, value := range []string{"true", "false"} {
		s := mkSnapshot(mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
			mkIngress("prod", "web", 1, withAnnotations(NginxPrefix+"use-port-in-redirects", value), withRules(mkRule("a.example.com", prefix("/", "web", 80)))))
		_, ws := compileOK(t, s, Options{})
		assert.Empty(t, ws, "use-port-in-redirects %q", value)
	}
	s := mkSnapshot(mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
		mkIngress("prod", "web", 1, withAnnotations(NginxPrefix+"use-port-in-redirects", "yes"), withRules(mkRule("a.example.com", prefix("/", "web", 80)))))
	_, ws := compileOK(t, s, Options{})
	require.Len(t, ws, 1)
	assert.Equal(t, AnnotationRejected, ws[0].Reason)
}

// ingress-nginx removed global rate limiting in v1.12 (#11851): v1.15 reads
// neither the global-rate-limit* annotations nor the memcached ConfigMap
// keys, so each has no effect under either controller.
func TestGlobalRateLimitRemoved(t *testing.T) {
	for _, key := range []string{"global-rate-limit", "global-rate-limit-window", "global-rate-limit-key", "global-rate-limit-ignored-cidrs"} {
		s := mkSnapshot(mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
			mkIngress("prod", "web", 1, withAnnotations(NginxPrefix+key, "100"), withRules(mkRule("a.example.com", prefix("/", "web", 80)))))
		_, ws := compileOK(t, s, Options{})
		require.Len(t, ws, 1, key)
		assert.Equal(t, AnnotationUnsupported, ws[0].Reason, key)
		assert.Contains(t, ws[0].Message, "no effect under ingress-nginx either", key)
		assert.Equal(t, Cosmetic, ws[0].Severity(), "%s: %s", key, ws[0].Message)
		assert.False(t, NginxReads(key), key)
	}
	for _, key := range []string{"global-rate-limit-memcached-host", "global-rate-limit-memcached-port", "global-rate-limit-memcached-connect-timeout",
		"global-rate-limit-memcached-max-idle-timeout", "global-rate-limit-memcached-pool-size", "global-rate-limit-status-code"} {
		cm := ParseConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ingress", Name: "nginx"}, Data: map[string]string{key: "10"}})
		ws := cm.Warnings()
		require.Len(t, ws, 1, key)
		assert.Equal(t, ConfigMapKeyIgnored, ws[0].Reason, "%s: %s", key, ws[0].Message)
		assert.Equal(t, Cosmetic, ws[0].Severity(), "%s: %s", key, ws[0].Message)
	}
}

// auth-snippet goes into the location's external auth location only:
// without an auth-url ingress-nginx writes none (authreq's parser stops at
// the missing URL), so losing it changes nothing there.
func TestAuthSnippetSeverity(t *testing.T) {
	for _, tt := range []struct {
		ann  []string
		want Severity
	}{
		{[]string{"auth-snippet", "proxy_set_header X-Tenant acme;", "auth-url", "http://auth.example/check"}, FeatureMissing},
		{[]string{"auth-snippet", "proxy_set_header X-Tenant acme;"}, Cosmetic},
		{[]string{"auth-snippet", "proxy_set_header X-Tenant acme;", "auth-url", " "}, Cosmetic},
		{[]string{"auth-snippet", "proxy_set_header X-Tenant acme;", "auth-type", "basic", "auth-secret", "htpasswd"}, Cosmetic},
	} {
		var kv []string
		for i := 0; i < len(tt.ann); i += 2 {
			kv = append(kv, NginxPrefix+tt.ann[i], tt.ann[i+1])
		}
		s := mkSnapshot(mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
			mkIngress("prod", "web", 1, withAnnotations(kv...), withRules(mkRule("a.example.com", prefix("/", "web", 80)))))
		res := Compile(s, Options{AllowSnippetAnnotations: true, AnnotationsRiskLevel: "Critical"})
		found := false
		for _, w := range res.Warnings {
			if w.Field == annotationField(NginxPrefix+"auth-snippet") {
				found = true
				assert.Equal(t, tt.want, w.Severity(), "%v", tt.ann)
				assert.Equal(t, tt.want, Warning{Reason: w.Reason, Field: w.Field}.SeverityFor(s.Ingresses[0].Annotations), "SeverityFor agrees with Compile's verdict")
			}
		}
		assert.True(t, found, "%v: %s", tt.ann, warningText(res.Warnings))
	}
}

// custom-headers: ingress-nginx denies the location (503) when a header of
// the named ConfigMap is not in global-allowed-response-headers, empty by
// default (annotations/customheaders, Parse: NewLocationDenied); ramjet
// denies it too, warning the annotation rejected, and sets the headers
// the key allows.
func TestCustomHeadersSeverity(t *testing.T) {
	s := mkSnapshot(mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
		mkConfigMap("prod", "headers", map[string]string{"X-Team": "edge"}),
		mkIngress("prod", "web", 1, withAnnotations(NginxPrefix+"custom-headers", "prod/headers"), withRules(mkRule("a.example.com", prefix("/", "web", 80)))))
	for allowed, rejected := range map[string]bool{"": true, " ": true, "X-Frame-Options, X-Team": false} {
		var o Options
		if allowed != "" {
			o.ConfigMap = ParseConfigMap(mkConfigMap("ingress", "nginx", map[string]string{"global-allowed-response-headers": allowed}))
		}
		tab, ws := compileOK(t, s, o)
		var got []Warning
		for _, w := range ws {
			require.NotEqual(t, AnnotationUnsupported, w.Reason, "allowed %q: %s", allowed, w.Message)
			if w.Reason == AnnotationRejected {
				got = append(got, w)
			}
		}
		r := tab.Lookup("a.example.com", "/")
		require.NotNil(t, r.Route, "allowed %q", allowed)
		if rejected {
			require.Len(t, got, 1, "allowed %q", allowed)
			require.NotNil(t, r.Route.Response, "allowed %q", allowed)
			assert.Contains(t, r.Route.Response.HeadersDenied, "X-Team", "allowed %q", allowed)
			continue
		}
		assert.Empty(t, got, "allowed %q", allowed)
		require.NotNil(t, r.Route.Snippet, "allowed %q", allowed)
		assert.Equal(t, "X-Team", r.Route.Snippet.Ops[0].Name)
	}
}
