package compile

import "strings"

// Severity is what a warning means for traffic moving from ingress-nginx
// to ramjet: the migration report (examples/check -report) sorts by it.
type Severity string

const (
	// TrafficMoves: some request goes elsewhere or is answered otherwise
	// than under ingress-nginx (another backend, another path, a 404
	// where ingress-nginx served, a check ingress-nginx made skipped).
	TrafficMoves Severity = "traffic-moves"
	// FeatureMissing: requests reach the same backend, without something
	// ingress-nginx added (a header, a timeout, a limit, a log setting).
	FeatureMissing Severity = "feature-missing"
	// Cosmetic: nothing a client sees changes; ingress-nginx answers the
	// same, or the object is broken under both.
	Cosmetic Severity = "cosmetic"
)

// reasonSeverity is each reason's severity. AnnotationUnsupported is
// decided per key and value (see Warning.SeverityFor); a reason missing
// here counts as FeatureMissing, and TestEveryReasonHasSeverity names it.
var reasonSeverity = map[Reason]Severity{
	ClassNotFound:             Cosmetic,     // neither controller serves it
	ClassConflict:             TrafficMoves, // claimed where ingress-nginx would not (§19)
	RuleRejected:              TrafficMoves, // the rule is not served
	PathRejected:              TrafficMoves, // the path is not served
	PathTypeUnknown:           TrafficMoves, // matched as a regex
	PathCaseInsensitive:       TrafficMoves, // matched as a regex, where ingress-nginx matches a prefix (§19)
	BackendUnsupported:        FeatureMissing,
	RouteConflict:             TrafficMoves, // which one serves may differ (§19)
	DefaultBackendConflict:    TrafficMoves,
	DefaultBackendUnavailable: Cosmetic, // 503 or 404 under both
	ServiceNotFound:           Cosmetic, // 503 under both
	ServicePortNotFound:       Cosmetic,
	ServicePortConflict:       TrafficMoves,
	PortMatchedTargetPort:     Cosmetic, // served, with a hint to fix the manifest
	ExternalNameUnsupported:   FeatureMissing,
	EndpointRejected:          TrafficMoves, // an endpoint ingress-nginx dials is dropped (§19)
	AnnotationRejected:        FeatureMissing,
	AnnotationConflict:        TrafficMoves, // another Ingress's setting applies to the shared backend
	AnnotationSubstituted:     FeatureMissing,
	// The regex mode is ingress-nginx's own behaviour, which ramjet
	// follows (§11.1): the warning explains, nothing moves.
	RegexModeHost:           Cosmetic,
	SecretNotFound:          Cosmetic, // the default certificate under both
	SecretInvalid:           Cosmetic,
	CertificateHostMismatch: Cosmetic,
	CanaryWithoutPrimary:    Cosmetic,     // ingress-nginx skips such a canary too
	CanaryConflict:          Cosmetic,     // one canary per backend under both, the oldest
	ConfigMapKeyRejected:    TrafficMoves, // ramjet keeps the default where nginx would not
	ConfigMapKeyIgnored:     Cosmetic,
	ConfigMapKeyUnsupported: FeatureMissing, // by key: configMapSeverity
	AnnotationUnanchored:    Cosmetic,       // served as ingress-nginx matches it
	L4ServiceRejected:       Cosmetic,       // ingress-nginx serves no such entry either
	L4ServicePartIgnored:    Cosmetic,       // ignored as ingress-nginx ignores it
	L4ServicesNotFound:      Cosmetic,       // no TCP/UDP port under either
	L4ServiceDiffers:        TrafficMoves,   // the backend is told another client address
}

// asRamjetDoes are unsupported nginx annotations whose value asks for what
// ramjet does anyway (§13): the warning changes nothing a client sees.
var asRamjetDoes = map[string]func(value string) bool{
	// OpenTracing is gone from ingress-nginx v1.15; off is its default.
	"enable-opentracing": isFalse,
	// Every access check must pass, as in ramjet (ingress-nginx reads a
	// value other than "any" as "all").
	"satisfy": func(v string) bool { return strings.TrimSpace(v) != "any" },
}

func isFalse(v string) bool { return strings.TrimSpace(v) == "false" }

// satisfySeverity rates satisfy: any, which ramjet does not implement: a
// client the allowlist admits without credentials gets 401 here and 200
// under ingress-nginx, where the Ingress has both an allowlist and
// authentication; with only one of them "any" changes nothing.
func satisfySeverity(annotations map[string]string) Severity {
	if strings.TrimSpace(annotations[NginxPrefix+"satisfy"]) != "any" {
		return Cosmetic // ingress-nginx reads any other value as "all"
	}
	has := func(keys ...string) bool {
		for _, k := range keys {
			if strings.TrimSpace(annotations[NginxPrefix+k]) != "" || strings.TrimSpace(annotations[NativePrefix+k]) != "" {
				return true
			}
		}
		return false
	}
	if has("whitelist-source-range", "allowlist-source-range") && has("auth-type", "auth-url") {
		return TrafficMoves
	}
	return Cosmetic
}

// AsRamjetDoes reports whether the nginx annotation key (without prefix)
// with this value asks for what ramjet does anyway.
func AsRamjetDoes(key, value string) bool {
	same, ok := asRamjetDoes[key]
	return ok && same(value)
}

// nginxAnnotations are the annotation keys ingress-nginx v1.15 reads
// (docs/user-guide/nginx-configuration/annotations.md and the parsers of
// internal/ingress/annotations), kept to tell a key ingress-nginx ignores
// too (a ConfigMap key written as an annotation, a removed or misspelled
// name, such as the global-rate-limit* set, removed in v1.12) from a
// feature ramjet lacks.
var nginxAnnotations = setOf(
	"affinity", "affinity-canary-behavior", "affinity-mode", "allowlist-source-range", "app-root",
	"auth-always-set-cookie", "auth-cache-duration", "auth-cache-key", "auth-keepalive",
	"auth-keepalive-requests", "auth-keepalive-share-vars", "auth-keepalive-timeout", "auth-method",
	"auth-proxy-set-headers", "auth-realm", "auth-request-redirect", "auth-response-headers",
	"auth-secret", "auth-secret-type", "auth-signin", "auth-signin-redirect-param", "auth-snippet",
	"auth-tls-error-page", "auth-tls-match-cn", "auth-tls-pass-certificate-to-upstream",
	"auth-tls-secret", "auth-tls-verify-client", "auth-tls-verify-depth", "auth-type", "auth-url",
	"backend-protocol", "canary", "canary-by-cookie", "canary-by-header", "canary-by-header-pattern",
	"canary-by-header-value", "canary-weight", "canary-weight-total", "client-body-buffer-size",
	"configuration-snippet", "connection-proxy-header", "cors-allow-credentials", "cors-allow-headers",
	"cors-allow-methods", "cors-allow-origin", "cors-expose-headers", "cors-max-age", "custom-headers",
	"custom-http-errors", "default-backend", "denylist-source-range", "disable-proxy-intercept-errors",
	"enable-access-log", "enable-cors", "enable-global-auth", "enable-modsecurity",
	"enable-opentelemetry", "enable-opentracing", "enable-owasp-core-rules", "enable-rewrite-log",
	"force-ssl-redirect", "from-to-www-redirect", "http2-push-preload", "limit-allowlist",
	"limit-burst-multiplier", "limit-connections", "limit-rate", "limit-rate-after", "limit-rpm",
	"limit-rps", "limit-whitelist", "load-balance", "mirror-host", "mirror-request-body",
	"mirror-target", "modsecurity-snippet", "modsecurity-transaction-id", "opentelemetry-operation-name",
	"opentelemetry-trust-incoming-span", "opentracing-trust-incoming-span", "permanent-redirect",
	"permanent-redirect-code", "preserve-trailing-slash", "proxy-body-size", "proxy-buffer-size",
	"proxy-buffering", "proxy-buffers-number", "proxy-connect-timeout", "proxy-cookie-domain",
	"proxy-cookie-path", "proxy-http-version", "proxy-max-temp-file-size", "proxy-next-upstream",
	"proxy-next-upstream-timeout", "proxy-next-upstream-tries", "proxy-read-timeout",
	"proxy-redirect-from", "proxy-redirect-to", "proxy-request-buffering", "proxy-send-timeout",
	"proxy-ssl-ciphers", "proxy-ssl-name", "proxy-ssl-protocols", "proxy-ssl-secret",
	"proxy-ssl-server-name", "proxy-ssl-verify", "proxy-ssl-verify-depth", "rewrite-target", "satisfy",
	"server-alias", "server-snippet", "service-upstream", "session-cookie-change-on-failure",
	"session-cookie-conditional-samesite-none", "session-cookie-domain", "session-cookie-expires",
	"session-cookie-max-age", "session-cookie-name", "session-cookie-path", "session-cookie-samesite",
	"session-cookie-secure", "ssl-ciphers", "ssl-passthrough", "ssl-prefer-server-ciphers",
	"ssl-redirect", "stream-snippet", "temporal-redirect", "temporal-redirect-code", "upstream-hash-by",
	"upstream-hash-by-subset", "upstream-hash-by-subset-size", "upstream-vhost", "use-port-in-redirects",
	"use-regex", "whitelist-source-range", "x-forwarded-prefix",
)

func setOf(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// NginxReads reports whether ingress-nginx reads the annotation key
// (without prefix) at all.
func NginxReads(key string) bool { return nginxAnnotations[key] }

// Severity is the warning's severity for a migration from ingress-nginx,
// without the object's annotation values: SeverityFor(nil).
func (w Warning) Severity() Severity { return w.SeverityFor(nil) }

// SeverityFor is the warning's severity for a migration from
// ingress-nginx, reading the annotations of the object it is about where
// the value decides. A warning Compile made carries its verdict (Rated),
// which wins: the controller, the migration report and the admission
// webhook then say the same. An unsupported nginx annotation:
//   - ingress-nginx does not read it either, or its value asks for what
//     ramjet does anyway: cosmetic;
//   - auth-snippet without auth-url, which ingress-nginx does not use
//     then: cosmetic;
//   - ModSecurity, when its snippet turns the engine on with rules that
//     refuse requests: traffic moves (ramjet serves what nginx refused),
//     a missing feature otherwise;
//   - a key the annotation registry knows, one ingress-nginx routes,
//     rewrites or refuses requests by: traffic moves;
//   - any other: a missing feature.
func (w Warning) SeverityFor(annotations map[string]string) Severity {
	if w.Rated != "" {
		return w.Rated
	}
	if w.Reason == ConfigMapKeyUnsupported {
		return configMapSeverity(w.Field)
	}
	if w.Reason != AnnotationUnsupported {
		if s, ok := reasonSeverity[w.Reason]; ok {
			return s
		}
		return FeatureMissing
	}
	key, ok := strings.CutPrefix(w.Field, "metadata.annotations["+NginxPrefix)
	if !ok {
		return FeatureMissing
	}
	key = strings.TrimSuffix(key, "]")
	value, set := annotations[NginxPrefix+key]
	switch {
	case !nginxAnnotations[key], set && AsRamjetDoes(key, value):
		return Cosmetic
	case key == "satisfy":
		return satisfySeverity(annotations)
	case key == "auth-snippet" && strings.TrimSpace(annotations[NginxPrefix+"auth-url"]) == "":
		// It goes into the auth-url's location only: ingress-nginx's
		// authreq parser stops at a missing or empty URL, and the
		// global authentication's location takes global-auth-snippet.
		return Cosmetic
	case key == "stream-snippet":
		// It declares TCP/UDP servers of its own, which ramjet does not
		// listen for (served only with snippets on: criticalOff rates
		// the rest).
		return TrafficMoves
	case key == "enable-modsecurity" || key == "enable-owasp-core-rules" || key == "modsecurity-snippet":
		owasp := strings.TrimSpace(annotations[NginxPrefix+"enable-owasp-core-rules"]) == "true"
		if modSecurityRefuses(annotations[NginxPrefix+"modsecurity-snippet"], owasp) {
			return TrafficMoves
		}
		return FeatureMissing
	}
	if _, known := knownAnnotations[key]; known {
		return TrafficMoves
	}
	return FeatureMissing
}

// modSecurityRefuses reports whether a modsecurity-snippet makes nginx
// refuse requests: the engine on ("SecRuleEngine On"; ingress-nginx's own
// modsecurity.conf only detects) and a rule or the OWASP core rule set
// whose action denies, drops, blocks or redirects (owasp: the
// enable-owasp-core-rules annotation is "true").
func modSecurityRefuses(snippet string, owasp bool) bool {
	on := false
	refuses := owasp
	for line := range strings.Lines(strings.ToLower(snippet)) {
		f := strings.Fields(line)
		switch {
		case len(f) >= 2 && f[0] == "secruleengine":
			on = f[1] == "on"
		case len(f) > 0 && (f[0] == "secrule" || f[0] == "secaction" || f[0] == "secdefaultaction"):
			for _, action := range []string{"deny", "drop", "block", "redirect:"} {
				refuses = refuses || strings.Contains(line, action)
			}
		case len(f) >= 2 && f[0] == "include" && strings.Contains(f[1], "owasp"):
			refuses = true
		}
	}
	return on && refuses
}
