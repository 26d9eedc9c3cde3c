package main

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
)

// upstreamNameObjects has Service web with endpoints, Service gone
// without, and Service fallback with endpoints; the Ingresses answer
// from their locations without the Service being asked.
const upstreamNameObjects = `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ramjet}
spec: {controller: ramjet.dev/ingress}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: prod}
spec: {ports: [{port: 80, targetPort: %[2]s}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-1, namespace: prod, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: "", port: %[2]s}]
endpoints: [{addresses: [%[1]s]}]
---
apiVersion: v1
kind: Service
metadata: {name: fallback, namespace: prod}
spec: {ports: [{port: 80, targetPort: %[2]s}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: fallback-1, namespace: prod, labels: {kubernetes.io/service-name: fallback}}
addressType: IPv4
ports: [{name: "", port: %[2]s}]
endpoints: [{addresses: [%[1]s]}]
---
apiVersion: v1
kind: Service
metadata: {name: gone, namespace: prod}
spec: {ports: [{port: 80}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: moved
  namespace: prod
  annotations: {nginx.ingress.kubernetes.io/permanent-redirect: "https://elsewhere.example/"}
spec:
  ingressClassName: ramjet
  rules: [{host: moved.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: secure
  namespace: prod
  annotations: {nginx.ingress.kubernetes.io/force-ssl-redirect: "true"}
spec:
  ingressClassName: ramjet
  rules: [{host: secure.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: standin
  namespace: prod
  annotations: {nginx.ingress.kubernetes.io/default-backend: fallback}
spec:
  ingressClassName: ramjet
  rules: [{host: standin.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: gone, port: {number: 80}}}}]}}]
`

// TestLogUpstreamNameOfLocation: ingress-nginx sets $proxy_upstream_name
// at the top of every location (nginx.tmpl: set $proxy_upstream_name
// {{ buildUpstreamName $location }}), before the location's return, its
// HTTPS redirect (rewrite_by_lua, after the rewrite module's set) and
// its access checks, so an answer the location makes itself is logged
// with the location's upstream; a location whose Service has no
// endpoints and whose Ingress names a default-backend has the upstream
// custom-default-backend-<namespace>-<service> (controller.go
// createUpstreams).
func TestLogUpstreamNameOfLocation(t *testing.T) {
	res := compileBesideBackend(t, upstreamNameObjects)

	var out bytes.Buffer
	log, unknown := newNginxAccessLog(&out, `$status [$proxy_upstream_name] $service_name`, escapeDefault, false)
	require.Empty(t, unknown)
	r := router.New(router.Options{Logger: slog.New(slog.DiscardHandler), Observer: log})
	defer r.CloseIdleConnections()
	r.Publish(res.Table)

	for host, want := range map[string]string{
		"moved.example.com":   "301 [prod-web-80] web",
		"secure.example.com":  "308 [prod-web-80] web",
		"standin.example.com": "200 [custom-default-backend-prod-fallback] gone",
	} {
		out.Reset()
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Host = host
		r.ServeHTTP(httptest.NewRecorder(), req)
		assert.Equal(t, want, strings.TrimSuffix(out.String(), "\n"), host)
	}
}

// compileBesideBackend compiles objects, a manifest whose endpoints are
// %[1]s (address) and %[2]s (port), with those of a backend on loopback
// that answers 200 until the test ends.
func compileBesideBackend(t *testing.T, objects string) compile.Result {
	t.Helper()
	return compileBeside(t, objects, func(http.ResponseWriter, *http.Request) {}, compile.Options{})
}

// compileBeside is compileBesideBackend with the backend's handler and the
// compile options given (loopback endpoints always allowed).
func compileBeside(t *testing.T, objects string, handler http.HandlerFunc, opts compile.Options) compile.Result {
	t.Helper()
	backend := httptest.NewServer(handler)
	t.Cleanup(backend.Close)
	ip, port, err := net.SplitHostPort(backend.Listener.Addr().String())
	require.NoError(t, err)
	snap, _, err := manifest.Decode("objects.yaml", fmt.Appendf(nil, objects, ip, port))
	require.NoError(t, err)
	opts.AllowLoopbackEndpoints = true
	return compile.Compile(*snap, opts)
}
