package router_test

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
)

// nameTracer keeps the name of each span that ended.
type nameTracer struct{ names chan string }

func (tr nameTracer) StartSpan(router.TraceContext, string, time.Time) router.Span {
	return nameSpan(tr)
}

type nameSpan nameTracer

func (s nameSpan) Context() router.TraceContext {
	return router.TraceContext{TraceID: [16]byte{15: 1}, SpanID: [8]byte{7: 1}, Flags: 1}
}
func (s nameSpan) End(e *router.SpanEnd) { s.names <- e.Name }

// A location's $service_port is its Service port as the Ingress wrote it,
// the name for a port given by name (template.go getIngressInformation):
// in a span name made of the ConfigMap's opentelemetry-operation-name
// and in the
// X-Service-Port an error backend is sent (nginx.tmpl's custom error
// location: proxy_set_header X-Service-Port $service_port), as in the
// record (Record.Service.PortName).
func TestServicePortAsWritten(t *testing.T) {
	ports := make(chan string, 1)
	errors := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ports <- r.Header.Get("X-Service-Name") + ":" + r.Header.Get("X-Service-Port")
	}))
	defer errors.Close()
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer web.Close()
	objects := `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ramjet}
spec: {controller: ramjet.dev/ingress}
`
	for _, svc := range []struct {
		name string
		addr string
	}{{"web", web.Listener.Addr().String()}, {"errors", errors.Listener.Addr().String()}} {
		ip, port, err := net.SplitHostPort(svc.addr)
		require.NoError(t, err)
		objects += fmt.Sprintf(`---
apiVersion: v1
kind: Service
metadata: {name: %[1]s, namespace: prod}
spec: {ports: [{name: http, port: 80, targetPort: %[3]s}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: %[1]s-1, namespace: prod, labels: {kubernetes.io/service-name: %[1]s}}
addressType: IPv4
ports: [{name: http, port: %[3]s}]
endpoints: [{addresses: [%[2]s]}]
`, svc.name, ip, port)
	}
	objects += `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: shop
  namespace: prod
  annotations:
    nginx.ingress.kubernetes.io/custom-http-errors: "503"
spec:
  ingressClassName: ramjet
  rules: [{host: shop.example.com, http: {paths: [
    {path: /named, pathType: Prefix, backend: {service: {name: web, port: {name: http}}}},
    {path: /numbered, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
`
	snap, _, err := manifest.Decode("objects.yaml", []byte(objects))
	require.NoError(t, err)
	res := compile.Compile(*snap, compile.Options{AllowLoopbackEndpoints: true,
		DefaultBackend: &compile.ServiceRef{Namespace: "prod", Name: "errors", Port: "80"},
		Tracing:        compile.TracingOptions{Enabled: true, OperationName: "$service_name:$service_port"}})
	require.Empty(t, res.Warnings)
	names := make(chan string, 1)
	r := router.New(router.Options{Logger: slog.New(slog.DiscardHandler), Tracer: nameTracer{names}})
	defer r.CloseIdleConnections()
	r.Publish(res.Table)

	for path, want := range map[string]string{"/named": "web:http", "/numbered": "web:80"} {
		serveThrough(t, r, "shop.example.com", path)
		assert.Equal(t, want, <-names, "span name of %s", path)
		assert.Equal(t, want, <-ports, "the error backend's X-Service-Name and X-Service-Port for %s", path)
	}
}
