package compile

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// An error page's span is named by the ConfigMap's operation name alone:
// ingress-nginx writes it in the http block, which its @custom_ location
// inherits, and an Ingress's annotation in the Ingress's own location.
func TestTracingErrorPageName(t *testing.T) {
	snap := func(ann ...string) Snapshot {
		return mkSnapshot(mkService("prod", "web", ":80:"), mkSlice("prod", "web", "web-1", "", 80, "10.0.0.1"),
			mkIngress("prod", "a", 1, withAnnotations(ann...), withRules(mkRule("a.example.com", prefix("/", "web", 80)))))
	}
	names := func(s Snapshot, o Options) [2]string {
		tab, _ := compileOK(t, s, o)
		for vh := range tab.VirtualHosts() {
			if vh.Name == "a.example.com" {
				tr := vh.Routes[0].Tracing
				return [2]string{tr.OperationName.String(), tr.ErrorPageName.String()}
			}
		}
		return [2]string{"no host", ""}
	}
	named := Options{Tracing: TracingOptions{Enabled: true, OperationName: "HTTP $uri"}}
	annotated := snap(NginxPrefix+"enable-opentelemetry", "true", NginxPrefix+"opentelemetry-operation-name", "api")
	assert.Equal(t, [2]string{"HTTP $uri", "HTTP $uri"}, names(snap(), named))
	assert.Equal(t, [2]string{"api", "HTTP $uri"}, names(annotated, named))
	assert.Equal(t, [2]string{"api", ""}, names(annotated, Options{}))
	assert.Equal(t, [2]string{"", ""}, names(snap(), Options{Tracing: TracingOptions{Enabled: true}}))
}
