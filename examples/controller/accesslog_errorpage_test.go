package main

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/router"
)

// errorPageLogObjects: Services web, web-canary, errors and global, all
// on the backend at %[1]s:%[2]s; shop.example.com intercepts 404 with its
// default-backend Service errors, plain.example.com with the global
// default backend, both with a canary by header; fb.example.com's
// spec.defaultBackend takes a canary.
const errorPageLogObjects = `apiVersion: networking.k8s.io/v1
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
metadata: {name: web-canary, namespace: prod}
spec: {ports: [{port: 80, targetPort: %[2]s}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-canary-1, namespace: prod, labels: {kubernetes.io/service-name: web-canary}}
addressType: IPv4
ports: [{name: "", port: %[2]s}]
endpoints: [{addresses: [%[1]s]}]
---
apiVersion: v1
kind: Service
metadata: {name: errors, namespace: prod}
spec: {ports: [{port: 8080, targetPort: %[2]s}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: errors-1, namespace: prod, labels: {kubernetes.io/service-name: errors}}
addressType: IPv4
ports: [{name: "", port: %[2]s}]
endpoints: [{addresses: [%[1]s]}]
---
apiVersion: v1
kind: Service
metadata: {name: global, namespace: prod}
spec: {ports: [{port: 80, targetPort: %[2]s}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: global-1, namespace: prod, labels: {kubernetes.io/service-name: global}}
addressType: IPv4
ports: [{name: "", port: %[2]s}]
endpoints: [{addresses: [%[1]s]}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: shop
  namespace: prod
  creationTimestamp: "2026-01-01T00:00:00Z"
  annotations: {nginx.ingress.kubernetes.io/custom-http-errors: "404", nginx.ingress.kubernetes.io/default-backend: errors}
spec:
  ingressClassName: ramjet
  rules: [{host: shop.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: plain
  namespace: prod
  creationTimestamp: "2026-01-01T00:00:00Z"
  annotations: {nginx.ingress.kubernetes.io/custom-http-errors: "404"}
spec:
  ingressClassName: ramjet
  rules: [{host: plain.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: fb
  namespace: prod
  creationTimestamp: "2026-01-01T00:00:00Z"
spec:
  ingressClassName: ramjet
  defaultBackend: {service: {name: web, port: {number: 80}}}
  rules: [{host: fb.example.com, http: {paths: [{path: /foo, pathType: Prefix, backend: {service: {name: global, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: canary
  namespace: prod
  creationTimestamp: "2026-01-01T00:00:01Z"
  annotations: {nginx.ingress.kubernetes.io/canary: "true", nginx.ingress.kubernetes.io/canary-by-header: X-Canary}
spec:
  ingressClassName: ramjet
  rules:
  - {host: shop.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web-canary, port: {number: 80}}}}]}}
  - {host: plain.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web-canary, port: {number: 80}}}}]}}
  - {host: fb.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web-canary, port: {number: 80}}}}]}}
`

// TestLogUpstreamNameOfErrorPage: an intercepted answer is served from
// nginx's @custom_<upstream>_<code> location (nginx.tmpl CUSTOM_ERRORS),
// which sets $proxy_upstream_name to the error backend's upstream:
// custom-default-backend-<namespace>-<service> for the Ingress's
// default-backend, upstream-default-backend for the global one. The
// location's other variables stay as the location set them, and so does
// $proxy_alternative_upstream_name, which ingress-nginx's balancer set
// when the canary took the request.
func TestLogUpstreamNameOfErrorPage(t *testing.T) {
	serveLogged(t, []loggedRequest{
		{"shop.example.com", "/ok", false, "200 [prod-web-80] [] web"},
		{"shop.example.com", "/missing", false, "200 [custom-default-backend-prod-errors] [] web"},
		{"shop.example.com", "/missing", true, "200 [custom-default-backend-prod-errors] [prod-web-canary-80] web"},
		{"plain.example.com", "/missing", false, "200 [upstream-default-backend] [] web"},
		{"plain.example.com", "/missing", true, "200 [upstream-default-backend] [prod-web-canary-80] web"},
	})
}

// TestLogCanaryOnHostFallback: a canary on a host's default backend (the
// server's "/" location ingress-nginx makes of spec.defaultBackend) is
// logged like a route's: $proxy_upstream_name the location's upstream,
// $proxy_alternative_upstream_name the canary's when it took the request.
func TestLogCanaryOnHostFallback(t *testing.T) {
	serveLogged(t, []loggedRequest{
		{"fb.example.com", "/cart", false, "200 [prod-web-80] [] web"},
		{"fb.example.com", "/cart", true, "200 [prod-web-80] [prod-web-canary-80] web"},
	})
}

type loggedRequest struct {
	host, path string
	canary     bool
	want       string
}

// serveLogged serves each request through a router with
// errorPageLogObjects, whose backend answers /missing with 404, and
// compares its access log line.
func serveLogged(t *testing.T, requests []loggedRequest) {
	t.Helper()
	res := compileBeside(t, errorPageLogObjects, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			w.WriteHeader(http.StatusNotFound)
		}
	}, compile.Options{DefaultBackend: &compile.ServiceRef{Namespace: "prod", Name: "global", Port: "80"}})

	var out bytes.Buffer
	log, unknown := newNginxAccessLog(&out, `$status [$proxy_upstream_name] [$proxy_alternative_upstream_name] $service_name`, escapeDefault, false)
	require.Empty(t, unknown)
	r := router.New(router.Options{Logger: slog.New(slog.DiscardHandler), Observer: log})
	defer r.CloseIdleConnections()
	r.Publish(res.Table)
	for _, tc := range requests {
		out.Reset()
		req := httptest.NewRequest(http.MethodGet, tc.path, nil)
		req.Host = tc.host
		if tc.canary {
			req.Header.Set("X-Canary", "always")
		}
		r.ServeHTTP(httptest.NewRecorder(), req)
		assert.Equal(t, tc.want, strings.TrimSuffix(out.String(), "\n"), "%s%s canary %v", tc.host, tc.path, tc.canary)
	}
}
