package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"ramjet.dev/ramjet/compile"
)

// TestServedByController: -report says what the controller does with
// ModSecurity, by what the annotations ask.
func TestServedByController(t *testing.T) {
	const n = compile.NginxPrefix
	for _, tt := range []struct {
		annotations map[string]string
		key         string
		want        compile.Severity
		says        string
	}{
		{map[string]string{n + "enable-modsecurity": "true", n + "enable-owasp-core-rules": "true"}, "enable-owasp-core-rules", compile.Cosmetic, "served by the controller (Coraza"},
		{map[string]string{n + "modsecurity-transaction-id": "$request_id"}, "modsecurity-transaction-id", compile.Cosmetic, "served by the controller (Coraza"},
		{map[string]string{n + "enable-modsecurity": "true", n + "modsecurity-snippet": "SecRuleEngine On\nSecRule ARGS \"x\" \"id:1,phase:1,deny\""}, "enable-modsecurity", compile.Cosmetic, "detect or refuse the same requests"},
		{map[string]string{n + "enable-modsecurity": "true", n + "enable-owasp-core-rules": "true", n + "modsecurity-snippet": "SecRuleEngine On"}, "modsecurity-snippet", compile.FeatureMissing, "response phases"},
		// ingress-nginx and the controller read the boolean with strconv.ParseBool.
		{map[string]string{n + "enable-modsecurity": "true", n + "enable-owasp-core-rules": "True", n + "modsecurity-snippet": "SecRuleEngine On"}, "modsecurity-snippet", compile.FeatureMissing, "response phases"},
		{map[string]string{n + "enable-modsecurity": "true", n + "enable-owasp-core-rules": "1", n + "modsecurity-snippet": "SecRuleEngine On"}, "modsecurity-snippet", compile.FeatureMissing, "response phases"},
		{map[string]string{n + "enable-modsecurity": "true", n + "modsecurity-snippet": "SecRuleEngine On\nInclude /etc/nginx/owasp-modsecurity-crs/nginx-modsecurity.conf"}, "modsecurity-snippet", compile.FeatureMissing, "response phases"},
		{map[string]string{n + "enable-modsecurity": "true", n + "modsecurity-snippet": "Include /etc/nginx/modsecurity/modsecurity.conf"}, "modsecurity-snippet", compile.Cosmetic, "served"},
		{map[string]string{n + "enable-modsecurity": "true", n + "modsecurity-snippet": "Include /etc/nginx/owasp-modsecurity-crs/plugins/nextcloud-before.conf"}, "modsecurity-snippet", compile.TrafficMoves, "answer 503"},
		{map[string]string{n + "enable-modsecurity": "true", n + "modsecurity-snippet": "Include /etc/modsecurity/custom.conf"}, "modsecurity-snippet", compile.TrafficMoves, "answer 503"},
	} {
		f := finding{Severity: compile.TrafficMoves, Reason: compile.AnnotationUnsupported, Annotation: n + tt.key, Instead: "not supported"}
		got := servedByController(f, tt.annotations, true)
		assert.Equal(t, tt.want, got.Severity, "%s %v", tt.key, tt.annotations)
		assert.Contains(t, got.Instead, tt.says)
	}
	// With snippets off (ingress-nginx's defaults) modsecurity-snippet is
	// dropped under both, and so is what it would have included.
	off := map[string]string{n + "enable-modsecurity": "true", n + "modsecurity-snippet": "SecRuleEngine On\nInclude /etc/modsecurity/custom.conf"}
	for key, want := range map[string]string{"modsecurity-snippet": "Critical-risk", "enable-modsecurity": "detect or refuse the same requests"} {
		f := finding{Severity: compile.TrafficMoves, Reason: compile.AnnotationUnsupported, Annotation: n + key}
		got := servedByController(f, off, false)
		assert.Equal(t, compile.Cosmetic, got.Severity, key)
		assert.Contains(t, got.Instead, want, key)
	}
	other := finding{Severity: compile.TrafficMoves, Reason: compile.AnnotationUnsupported, Annotation: n + "configuration-snippet", Instead: "not supported"}
	assert.Equal(t, other, servedByController(other, nil, true), "not the controller's")
}
