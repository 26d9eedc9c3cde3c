package compile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Without the ConfigMap's enable-opentelemetry, an Ingress's
// enable-opentelemetry "true" makes ingress-nginx load its OpenTelemetry
// module, which traces every location no directive turns off, and its
// template turns none off (buildOpentelemetryForLocation,
// kubernetes/ingress-nginx#10966): every other Ingress is traced too.
// ramjet traces only the Ingress that asked, and says so on it.
func TestTracingAnnotationAloneWarnsModuleWide(t *testing.T) {
	snap := func(key, value string) Snapshot {
		return mkSnapshot(mkService("prod", "web", ":80:"), mkSlice("prod", "web", "web-1", "", 80, "10.0.0.1"),
			mkIngress("prod", "traced", 1, withAnnotations(key, value), withRules(mkRule("a.example.com", prefix("/", "web", 80)))),
			mkIngress("prod", "plain", 2, withRules(mkRule("b.example.com", prefix("/", "web", 80)))))
	}
	moduleWide := func(ws []Warning) []Warning {
		var out []Warning
		for _, w := range ws {
			if w.Reason == AnnotationSubstituted && w.Field == annotationField(NginxPrefix+"enable-opentelemetry") {
				out = append(out, w)
			}
		}
		return out
	}
	tab, ws := compileOK(t, snap(NginxPrefix+"enable-opentelemetry", "true"), Options{})
	got := moduleWide(ws)
	require.Len(t, got, 1, "%v", ws)
	assert.Equal(t, ingressRef("prod", "traced"), got[0].Object)
	assert.Contains(t, got[0].Message, "10966")
	assert.Equal(t, FeatureMissing, got[0].Severity())
	assert.Nil(t, tab.VirtualHostByName("b.example.com").Routes[0].Tracing, "the other Ingress is not traced")
	assert.NotNil(t, tab.VirtualHostByName("a.example.com").Routes[0].Tracing)

	for _, c := range []struct {
		name  string
		value string
		o     Options
	}{
		{"with the ConfigMap's on, the template turns off what says false", "true", Options{Tracing: TracingOptions{Enabled: true}}},
		{"false loads no module", "false", Options{}},
	} {
		_, ws := compileOK(t, snap(NginxPrefix+"enable-opentelemetry", c.value), c.o)
		assert.Empty(t, moduleWide(ws), c.name)
	}
	_, ws = compileOK(t, snap(NativePrefix+"enable-opentelemetry", "true"), Options{})
	for _, w := range ws {
		assert.NotEqual(t, AnnotationSubstituted, w.Reason, "ramjet's own annotation: ingress-nginx reads none: %v", w)
	}
}
