package compile

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The ConfigMap's enable-opentelemetry makes ingress-nginx write
// opentelemetry_propagate in every auth location, the global auth's
// included, whatever the Ingress says of its own tracing: the external
// auth gets NoTraceContext; without the key it does not.
func TestTracingAuthNoTraceContext(t *testing.T) {
	snap := func(ann ...string) Snapshot {
		return mkSnapshot(mkService("prod", "web", ":80:"), mkSlice("prod", "web", "web-1", "", 80, "10.0.0.1"),
			mkIngress("prod", "a", 1, withAnnotations(ann...), withRules(mkRule("a.example.com", prefix("/", "web", 80)))))
	}
	noContext := func(s Snapshot, o Options) any {
		tab, _ := compileOK(t, s, o)
		for vh := range tab.VirtualHosts() {
			if vh.Name == "a.example.com" {
				if a := vh.Routes[0].Auth; a != nil && a.External != nil {
					return a.External.NoTraceContext
				}
				return "no external auth"
			}
		}
		return "no host"
	}
	on := Options{Tracing: TracingOptions{Enabled: true}}
	authURL := NginxPrefix + "auth-url"
	assert.Equal(t, true, noContext(snap(authURL, "http://auth.example/check", NginxPrefix+"enable-opentelemetry", "false"), on))
	assert.Equal(t, true, noContext(snap(authURL, "http://auth.example/check"), on))
	assert.Equal(t, false, noContext(snap(authURL, "http://auth.example/check", NginxPrefix+"enable-opentelemetry", "true"), Options{}))
	global := on
	global.GlobalAuth = &GlobalAuth{URL: "http://auth.example/global"}
	assert.Equal(t, true, noContext(snap(NginxPrefix+"enable-opentelemetry", "false"), global))
	assert.Equal(t, false, noContext(snap(), Options{GlobalAuth: &GlobalAuth{URL: "http://auth.example/global"}}))
}
