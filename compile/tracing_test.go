package compile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The ConfigMap's tracing keys (ingress-nginx config.go:592-641, with its
// defaults at 895-904): the three the table reads are options; the
// exporter's are the embedder's, and warn feature-missing without one.
func TestTracingConfigMapKeys(t *testing.T) {
	c := ParseConfigMap(mkConfigMap("ingress", "nginx", map[string]string{
		"enable-opentelemetry": "true", "opentelemetry-trust-incoming-span": "false",
		"opentelemetry-operation-name": "HTTP $request_method $uri", "otlp-collector-host": "otel.example",
	}))
	assert.Equal(t, []string{"enable-opentelemetry", "opentelemetry-operation-name", "opentelemetry-trust-incoming-span"}, c.Keys)
	var o Options
	for _, f := range c.options {
		f(&o)
	}
	assert.Equal(t, TracingOptions{Enabled: true, DistrustIncomingSpan: true, OperationName: "HTTP $request_method $uri"}, o.Tracing)
	require.Len(t, c.Warnings(), 1)
	w := c.Warnings()[0]
	assert.Equal(t, "data[otlp-collector-host]", w.Field)
	assert.Equal(t, FeatureMissing, w.Severity())

	bad := ParseConfigMap(mkConfigMap("ingress", "nginx", map[string]string{
		"enable-opentelemetry": "maybe", "opentelemetry-operation-name": "$request_time",
	}))
	assert.Empty(t, bad.Keys)
	var got []string
	for _, w := range bad.Warnings() {
		got = append(got, string(w.Reason)+" "+w.Field)
	}
	assert.Equal(t, []string{"ConfigMapKeyRejected data[enable-opentelemetry]", "ConfigMapKeyRejected data[opentelemetry-operation-name]"}, got)

	require.Error(t, Options{Tracing: TracingOptions{OperationName: "$status"}}.Validate(), "an operation name set directly is checked too")
}

// An Ingress's annotations over the ConfigMap, as template.go
// buildOpentelemetryForLocation combines them.
func TestTracingAnnotations(t *testing.T) {
	snap := func(ann ...string) Snapshot {
		return mkSnapshot(mkService("prod", "web", ":80:"), mkSlice("prod", "web", "web-1", "", 80, "10.0.0.1"),
			mkIngress("prod", "a", 1, withAnnotations(ann...), withRules(mkRule("a.example.com", prefix("/", "web", 80)))))
	}
	route := func(s Snapshot, o Options) string {
		tab, _ := compileOK(t, s, o)
		for vh := range tab.VirtualHosts() {
			if vh.Name == "a.example.com" {
				if tr := vh.Routes[0].Tracing; tr != nil {
					return map[bool]string{true: "trusted", false: "untrusted"}[tr.TrustIncomingSpan] + " " + tr.OperationName.String()
				}
				return "off"
			}
		}
		return "no host"
	}
	on := Options{Tracing: TracingOptions{Enabled: true}}
	distrust := Options{Tracing: TracingOptions{Enabled: true, DistrustIncomingSpan: true, OperationName: "edge"}}
	for _, c := range []struct {
		name string
		snap Snapshot
		o    Options
		want string
	}{
		{"off by default", snap(), Options{}, "off"},
		{"the ConfigMap's", snap(), on, "trusted "},
		{"the ConfigMap's trust and name", snap(), distrust, "untrusted edge"},
		{"the annotation turns it off", snap(NginxPrefix+"enable-opentelemetry", "false"), on, "off"},
		{"the annotation turns it on", snap(NginxPrefix+"enable-opentelemetry", "true"), Options{}, "trusted "},
		{"the annotation's trust and name win", snap(NginxPrefix+"enable-opentelemetry", "true",
			NginxPrefix+"opentelemetry-trust-incoming-span", "true", NginxPrefix+"opentelemetry-operation-name", "api"), distrust, "trusted api"},
		{"without its own trust, the ConfigMap's", snap(NginxPrefix+"enable-opentelemetry", "true"), distrust, "untrusted edge"},
		{"trust alone is not read", snap(NginxPrefix+"opentelemetry-trust-incoming-span", "false"), on, "trusted "},
	} {
		assert.Equal(t, c.want, route(c.snap, c.o), c.name)
	}
}
