package compile

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryReasonHasSeverity reads the Reason constants from warnings.go,
// so a reason added without a severity fails here rather than being
// reported as a missing feature by default.
func TestEveryReasonHasSeverity(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "warnings.go", nil, 0)
	require.NoError(t, err)
	var reasons []Reason
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if ok {
			if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "Reason" {
				for _, name := range vs.Names {
					reasons = append(reasons, Reason(name.Name))
				}
			}
		}
		return true
	})
	require.NotEmpty(t, reasons)
	for _, r := range reasons {
		if r == AnnotationUnsupported {
			continue
		}
		_, ok := reasonSeverity[r]
		assert.True(t, ok, "reason %s has no severity in reasonSeverity", r)
	}
}

func TestWarningSeverity(t *testing.T) {
	field := func(key string) string { return annotationField(key) }
	for _, tt := range []struct {
		w    Warning
		want Severity
	}{
		{Warning{Reason: AnnotationUnsupported, Field: field(NginxPrefix + "rewrite-target")}, TrafficMoves},
		{Warning{Reason: AnnotationUnsupported, Field: field(NginxPrefix + "auth-url")}, TrafficMoves},
		{Warning{Reason: AnnotationUnsupported, Field: field(NginxPrefix + "http2-push-preload")}, FeatureMissing},
		{Warning{Reason: AnnotationSubstituted}, FeatureMissing},
		{Warning{Reason: RouteConflict}, TrafficMoves},
		{Warning{Reason: SecretNotFound}, Cosmetic},
		// What ingress-nginx does itself (§11.1): nothing moves.
		{Warning{Reason: RegexModeHost}, Cosmetic},
		{Warning{Reason: PathCaseInsensitive}, TrafficMoves},
		// Keys ingress-nginx does not read as annotations: no effect there either.
		{Warning{Reason: AnnotationUnsupported, Field: field(NginxPrefix + "use-forwarded-headers")}, Cosmetic},
		{Warning{Reason: AnnotationUnsupported, Field: field(NginxPrefix + "session-cookie-hash")}, Cosmetic},
		{Warning{Reason: AnnotationUnsupported, Field: field(NginxPrefix + "websocket-services")}, Cosmetic},
	} {
		assert.Equal(t, tt.want, tt.w.Severity(), "%s %s", tt.w.Reason, tt.w.Field)
	}
}

// SeverityFor reads the value: a value that asks for what ramjet does
// anyway changes nothing, and ModSecurity moves traffic only when its
// snippet makes nginx refuse requests.
func TestWarningSeverityReadsValue(t *testing.T) {
	unsupported := func(key string) Warning {
		return Warning{Reason: AnnotationUnsupported, Field: annotationField(NginxPrefix + key)}
	}
	const on = "SecRuleEngine On\nSecRule REQUEST_URI \"@beginsWith /admin\" \"id:1,phase:1,deny,status:403\"\n"
	for _, tt := range []struct {
		key  string
		ann  map[string]string
		want Severity
	}{
		{"enable-opentracing", map[string]string{"enable-opentracing": "false"}, Cosmetic},
		{"enable-opentracing", map[string]string{"enable-opentracing": "true"}, FeatureMissing},
		{"satisfy", map[string]string{"satisfy": "all"}, Cosmetic},
		{"enable-modsecurity", map[string]string{"enable-modsecurity": "true"}, FeatureMissing},
		{"enable-modsecurity", map[string]string{"enable-modsecurity": "true", "enable-owasp-core-rules": "true"}, FeatureMissing},
		{"modsecurity-snippet", map[string]string{"enable-modsecurity": "true", "modsecurity-snippet": "SecRuleEngine DetectionOnly\n"}, FeatureMissing},
		{"modsecurity-snippet", map[string]string{"enable-modsecurity": "true", "modsecurity-snippet": on}, TrafficMoves},
		{"enable-modsecurity", map[string]string{"enable-modsecurity": "true", "modsecurity-snippet": on}, TrafficMoves},
		{"enable-owasp-core-rules", map[string]string{"enable-owasp-core-rules": "true", "modsecurity-snippet": "SecRuleEngine On\n"}, TrafficMoves},
		{"modsecurity-snippet", map[string]string{"modsecurity-snippet": "SecRuleEngine Off\nSecRule ARGS \"x\" \"id:2,deny\"\n"}, FeatureMissing},
	} {
		ann := map[string]string{}
		for k, v := range tt.ann {
			ann[NginxPrefix+k] = v
		}
		assert.Equal(t, tt.want, unsupported(tt.key).SeverityFor(ann), "%s %v", tt.key, tt.ann)
	}
}

// The warning's text says the same as its severity.
func TestUnsupportedAnnotationText(t *testing.T) {
	s := mkSnapshot(
		mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
		mkIngress("prod", "web", 1, withAnnotations(
			NginxPrefix+"enable-opentracing", "false", NginxPrefix+"use-forwarded-headers", "true", NginxPrefix+"http2-push-preload", "true"),
			withRules(mkRule("a.example.com", prefix("/", "web", 80)))),
	)
	_, ws := compileOK(t, s, Options{})
	require.Len(t, ws, 3, warningText(ws))
	msgs := map[string]string{}
	for _, w := range ws {
		msgs[w.Field] = w.Message
	}
	assert.Contains(t, msgs[annotationField(NginxPrefix+"enable-opentracing")], `"false" asks for what ramjet does anyway`)
	assert.Contains(t, msgs[annotationField(NginxPrefix+"use-forwarded-headers")], "no effect under ingress-nginx either")
	assert.Contains(t, msgs[annotationField(NginxPrefix+"http2-push-preload")], "is not supported by ramjet and has no effect")
}
