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
		{Warning{Reason: AnnotationUnsupported, Field: field(NginxPrefix + "proxy-buffering")}, FeatureMissing},
		{Warning{Reason: AnnotationUnsupported, Field: field(NginxPrefix + "proxy-buffer-size")}, FeatureMissing},
		{Warning{Reason: AnnotationSubstituted}, FeatureMissing},
		{Warning{Reason: RouteConflict}, TrafficMoves},
		{Warning{Reason: SecretNotFound}, Cosmetic},
	} {
		assert.Equal(t, tt.want, tt.w.Severity(), "%s %s", tt.w.Reason, tt.w.Field)
	}
}
