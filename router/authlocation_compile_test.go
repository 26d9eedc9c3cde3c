package router_test

import (
	"encoding/base64"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
)

// authLocationObjects: shop.example.com is in ingress-nginx's regex mode
// (use-regex on Ingress a); both Ingresses ask auth-url %[3]s; every path
// is Service web at %[1]s:%[2]s.
const authLocationObjects = `apiVersion: networking.k8s.io/v1
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
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: a
  namespace: prod
  annotations: {nginx.ingress.kubernetes.io/use-regex: "true", nginx.ingress.kubernetes.io/auth-url: "%[3]s"}
spec:
  ingressClassName: ramjet
  rules:
  - host: shop.example.com
    http:
      paths:
      - {path: "/x/.*", pathType: ImplementationSpecific, backend: {service: {name: web, port: {number: 80}}}}
      - {path: "/api/v[0-9]+", pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: b
  namespace: prod
  annotations: {nginx.ingress.kubernetes.io/auth-url: "%[3]s"}
spec:
  ingressClassName: ramjet
  rules:
  - host: shop.example.com
    http:
      paths:
      - {path: /foo, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
      - {path: /ex, pathType: Exact, backend: {service: {name: web, port: {number: 80}}}}
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
`

// TestAuthLocationInRegexMode: the external auth location's URI (the
// auth subrequest's $uri, Record.Subrequest) is nginx.tmpl's
// buildAuthLocation of the location ingress-nginx writes: its path in
// base64url and its pathType. A host in regex mode matches every path as
// a regular expression, but the locations keep their types: a use-regex
// Prefix path is a Prefix location, an Exact path an Exact one, a Prefix
// path of another Ingress there its "p/" Prefix location and its "p"
// Exact twin (updateServerLocations), "/" a Prefix location; only an
// ImplementationSpecific path is named so.
func TestAuthLocationInRegexMode(t *testing.T) {
	web := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer web.Close()
	auth := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer auth.Close()
	ip, port, err := net.SplitHostPort(web.Listener.Addr().String())
	require.NoError(t, err)
	snap, _, err := manifest.Decode("objects.yaml", fmt.Appendf(nil, authLocationObjects, ip, port, auth.URL+"/check"))
	require.NoError(t, err)
	res := compile.Compile(*snap, compile.Options{AllowLoopbackEndpoints: true})

	subrequests := make(chan string, 1)
	r := router.New(router.Options{Logger: slog.New(slog.DiscardHandler),
		AuthObserver: func(rec router.Record) { subrequests <- rec.Subrequest }})
	defer r.CloseIdleConnections()
	r.Publish(res.Table)
	loc := func(path, typ string) string {
		return "/_external-auth-" + base64.RawURLEncoding.EncodeToString([]byte(path)) + "-" + typ
	}
	for target, want := range map[string]string{
		"/x/y":     loc("/x/.*", "ImplementationSpecific"),
		"/api/v2":  loc("/api/v[0-9]+", "Prefix"),
		"/foo/bar": loc("/foo/", "Prefix"),
		"/foo":     loc("/foo", "Exact"),
		"/ex":      loc("/ex", "Exact"),
		"/other":   loc("/", "Prefix"),
	} {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.Host = "shop.example.com"
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code, target)
		assert.Equal(t, want, <-subrequests, target)
	}
}
