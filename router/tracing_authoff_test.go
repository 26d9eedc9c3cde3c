package router

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// A location the ConfigMap's enable-opentelemetry would trace but its
// Ingress turns off still has ingress-nginx's auth location propagate a
// context (nginx.tmpl writes opentelemetry_propagate there for the
// ConfigMap's key alone), which the module never makes: the auth service
// gets no trace headers, not the client's (ExternalAuth.NoTraceContext).
// Without a Tracer the router leaves trace headers alone.
func TestTracingAuthUntracedLocation(t *testing.T) {
	client := http.Header{"Traceparent": {clientParent}, "Tracestate": {"a=1"}}
	for _, c := range []struct {
		name   string
		tracer Tracer
		want   []string
	}{{"with a Tracer", &testTracer{}, nil}, {"without", nil, []string{clientParent}}} {
		t.Run(c.name, func(t *testing.T) {
			svc := newAuthService(t)
			_, addr := echoBackend(t, "web")
			rt := route(match.Prefix, "/app", httpBackend("prod/web:80", addr))
			rt.Auth = externalAuth(t, svc.srv.URL+"/ok", nil)
			rt.Auth.External.NoTraceContext = true
			r := newTestRouter(Options{Tracer: c.tracer})
			r.Publish(table("auth", vhost("shop.example.com", nil, rt)))
			res := traced(r, "/app/x", client)
			require.Equal(t, http.StatusOK, res.StatusCode)
			got, _ := svc.request()
			assert.Equal(t, c.want, got.Header["Traceparent"], "what the auth service got")
			assert.Equal(t, []string{clientParent}, res.Header["Seen-Traceparent"], "the backend gets the client's")
		})
	}
}
