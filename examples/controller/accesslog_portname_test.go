package main

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/router"
)

// portNameObjects has Services web and beta with a port named http (80),
// an Ingress naming web's port by name on a path and as its
// spec.defaultBackend, one naming it by number, and a canary naming
// beta's by name.
const portNameObjects = `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ramjet}
spec: {controller: ramjet.dev/ingress}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: prod}
spec: {ports: [{name: http, port: 80, targetPort: %[2]s}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-1, namespace: prod, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http, port: %[2]s}]
endpoints: [{addresses: [%[1]s]}]
---
apiVersion: v1
kind: Service
metadata: {name: beta, namespace: prod}
spec: {ports: [{name: http, port: 80, targetPort: %[2]s}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: beta-1, namespace: prod, labels: {kubernetes.io/service-name: beta}}
addressType: IPv4
ports: [{name: http, port: %[2]s}]
endpoints: [{addresses: [%[1]s]}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: named, namespace: prod, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  ingressClassName: ramjet
  defaultBackend: {service: {name: web, port: {name: http}}}
  rules: [{host: shop.example.com, http: {paths: [{path: /named, pathType: Prefix, backend: {service: {name: web, port: {name: http}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: numbered, namespace: prod, creationTimestamp: "2024-01-02T00:00:00Z"}
spec:
  ingressClassName: ramjet
  rules: [{host: shop.example.com, http: {paths: [{path: /numbered, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: beta
  namespace: prod
  creationTimestamp: "2024-01-03T00:00:00Z"
  annotations: {nginx.ingress.kubernetes.io/canary: "true", nginx.ingress.kubernetes.io/canary-by-header: X-Beta}
spec:
  ingressClassName: ramjet
  rules: [{host: shop.example.com, http: {paths: [{path: /named, pathType: Prefix, backend: {service: {name: beta, port: {name: http}}}}]}}]
`

// TestLogPortAsWritten: ingress-nginx names an upstream and sets
// $service_port by the Service port as the Ingress writes it
// (controller/util.go upstreamName, template.go getIngressInformation):
// "prod-web-http" for a port given by name, "prod-web-80" for one given
// by number, though both reach the same Service port; the canary label
// of the request metrics is that name too.
func TestLogPortAsWritten(t *testing.T) {
	res := compileBesideBackend(t, portNameObjects)
	require.Empty(t, res.Warnings)

	var out bytes.Buffer
	log, unknown := newNginxAccessLog(&out, `[$proxy_upstream_name] [$proxy_alternative_upstream_name] $service_name:$service_port`, escapeDefault, false)
	require.Empty(t, unknown)
	m := newMetrics(metricsConfig(nil))
	r := router.New(router.Options{Logger: slog.New(slog.DiscardHandler), Observer: func(rec router.Record) { log(rec); m.observe(rec) }})
	defer r.CloseIdleConnections()
	r.Publish(res.Table)

	for _, tc := range []struct{ path, header, want string }{
		{"/named", "", "[prod-web-http] [] web:http"},
		{"/numbered", "", "[prod-web-80] [] web:80"},
		{"/other", "", "[prod-web-http] [] web:http"}, // the host's default location: spec.defaultBackend
		{"/named", "always", "[prod-web-http] [prod-beta-http] web:http"},
	} {
		out.Reset()
		req := httptest.NewRequest(http.MethodGet, tc.path, nil)
		req.Host = "shop.example.com"
		if tc.header != "" {
			req.Header.Set("X-Beta", tc.header)
		}
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		require.Equal(t, http.StatusOK, w.Code, tc.path)
		assert.Equal(t, tc.want, strings.TrimSuffix(out.String(), "\n"), "%s %s", tc.path, tc.header)
	}

	var canaries []string
	for _, l := range scrapeMetrics(t, m).labelSets("nginx_ingress_controller_requests") {
		canaries = append(canaries, l["canary"])
	}
	if diff := cmp.Diff([]string{"", "", "", "prod-beta-http"}, canaries); diff != "" {
		t.Errorf("canary labels (-want +got):\n%s", diff)
	}
}
