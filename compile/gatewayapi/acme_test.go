package gatewayapi

import (
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// compareServed migrates the Ingresses of objects and sends each request
// (host and path, plain HTTP) to the table of the Ingresses and to the
// table of the Gateway API objects, which must answer alike.
func compareServed(t *testing.T, objects string, opts compile.Options, requests ...string) Migration {
	t.Helper()
	snap, _, err := manifest.Decode("in.yaml", []byte(objects))
	if err != nil {
		t.Fatal(err)
	}
	withEndpoints(snap)
	m, back, _ := migrate(t, *snap, FromIngressOptions{Compile: opts})
	gs := *snap
	gs.Ingresses, gs.HTTPRoutes = nil, back.HTTPRoutes
	ro := router.Options{Logger: slog.New(slog.DiscardHandler), Transport: recorder{}}
	if opts.ConfigMap != nil {
		ro.ApplyConfigMap(opts.ConfigMap.Router) // ramjet serving the Ingresses reads it; a Gateway does not
	}
	ra := router.New(ro)
	ra.Publish(compile.Compile(*snap, opts).Table)
	rb := router.New(router.Options{Logger: slog.New(slog.DiscardHandler), Transport: recorder{}})
	rb.Publish(compile.Compile(gs, opts).Table)
	for _, r := range requests {
		host, path, _ := strings.Cut(r, "/")
		want, got := serve(ra, "http", host, "/"+path), serve(rb, "http", host, "/"+path)
		if want != got {
			t.Errorf("http://%s/%s: Ingresses %q, Gateway API %q", host, path, want, got)
		}
	}
	return m
}

const acmeObjects = `
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: v1
kind: Service
metadata: {name: root, namespace: demo}
spec: {ports: [{port: 80, targetPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: wellknown, namespace: demo}
spec: {ports: [{port: 80, targetPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: deep, namespace: demo}
spec: {ports: [{port: 80, targetPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: open, namespace: demo}
spec: {ports: [{port: 80, targetPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: solver, namespace: demo}
spec: {ports: [{port: 8089, targetPort: 8080}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: app, namespace: demo, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  ingressClassName: nginx
  tls: [{hosts: [a.example.com, b.example.com], secretName: cert}]
  rules:
    - host: a.example.com
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: root, port: {number: 80}}}}
          - {path: /.well-known, pathType: Prefix, backend: {service: {name: wellknown, port: {number: 80}}}}
          - {path: /.well-known/acme-challenge/deep, pathType: Prefix, backend: {service: {name: deep, port: {number: 80}}}}
    - host: b.example.com
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: root, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: open
  namespace: demo
  creationTimestamp: "2024-01-02T00:00:00Z"
  annotations: {nginx.ingress.kubernetes.io/ssl-redirect: "false"}
spec:
  ingressClassName: nginx
  rules:
    - host: b.example.com
      http: {paths: [{path: /.well-known/, pathType: Prefix, backend: {service: {name: open, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: solver, namespace: demo, creationTimestamp: "2024-01-03T00:00:00Z"}
spec:
  ingressClassName: nginx
  rules:
    - host: a.example.com
      http: {paths: [{path: /.well-known/acme-challenge/t0k3n, pathType: Exact, backend: {service: {name: solver, port: {number: 8089}}}}]}
`

// TestFromIngressACMEChallenge: the HTTP listener serves
// /.well-known/acme-challenge as the route that matches it does, where
// the rest of a TLS host is redirected: through a twin of the longest
// redirected prefix that holds it, not one that a longer unredirected
// prefix outranks, and not in place of a longer path.
func TestFromIngressACMEChallenge(t *testing.T) {
	m := compareServed(t, acmeObjects, compile.Options{IngressClass: "nginx", ControllerName: "k8s.io/ingress-nginx"},
		"a.example.com/x", "a.example.com/", "a.example.com/.well-known/x",
		"a.example.com/.well-known/acme-challenge", "a.example.com/.well-known/acme-challenge/", "a.example.com/.well-known/acme-challenge/x",
		"a.example.com/.well-known/acme-challenge/deep/x", "a.example.com/.well-known/acme-challenge/t0k3n",
		"a.example.com/.well-known/acme-challengex",
		"b.example.com/x", "b.example.com/.well-known/acme-challenge/x", "b.example.com/.well-known/x")
	if len(m.Unconverted) != 0 {
		t.Errorf("unconverted: %v", m.Unconverted)
	}
}

// TestFromIngressRedirectConfigMap: the HTTP listener's redirect answers
// the ConfigMap's http-redirect-code, and no-tls-redirect-locations,
// not the ACME path alone, is what it leaves unredirected.
func TestFromIngressRedirectConfigMap(t *testing.T) {
	requests := []string{"a.example.com/x", "a.example.com/", "a.example.com/.well-known/x",
		"a.example.com/.well-known/acme-challenge", "a.example.com/.well-known/acme-challenge/x",
		"a.example.com/.well-known/acme-challenge/deep/x", "a.example.com/.well-known/acme-challenge/t0k3n",
		"a.example.com/healthz", "a.example.com/healthz/live", "a.example.com/healthzx",
		"a.example.com/.well-known/status", "a.example.com/.well-known/status/x",
		"b.example.com/x", "b.example.com/healthz", "b.example.com/.well-known/acme-challenge/x", "b.example.com/.well-known/status"}
	for _, data := range []map[string]string{
		{"http-redirect-code": "301"},
		{"no-tls-redirect-locations": "/healthz, /.well-known/status"},
		{"no-tls-redirect-locations": ""},
		{"http-redirect-code": "302", "no-tls-redirect-locations": "/.well-known/acme-challenge,/healthz"},
	} {
		cm := compile.ParseConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ingress", Name: "ingress-nginx-controller"}, Data: data})
		m := compareServed(t, acmeObjects, compile.Options{IngressClass: "nginx", ControllerName: "k8s.io/ingress-nginx", ConfigMap: cm}, requests...)
		if len(m.Unconverted) != 0 {
			t.Errorf("%v: unconverted: %v", data, m.Unconverted)
		}
		if code := data["http-redirect-code"]; code != "" {
			found := slices.ContainsFunc(m.HTTPRoutes, func(r *gwv1.HTTPRoute) bool {
				return slices.ContainsFunc(r.Spec.Rules, func(rule gwv1.HTTPRouteRule) bool {
					return slices.ContainsFunc(rule.Filters, func(f gwv1.HTTPRouteFilter) bool {
						return f.RequestRedirect != nil && f.RequestRedirect.StatusCode != nil && strconv.Itoa(*f.RequestRedirect.StatusCode) == code
					})
				})
			})
			if !found {
				t.Errorf("%v: no RequestRedirect with status %s", data, code)
			}
		}
	}
}

// TestFromIngressExemptTrailingSlash: a no-tls-redirect-locations path
// written with a trailing slash ("/healthz/") leaves that path and those
// below it unredirected, but not the path without the slash ("/healthz"),
// which the router judges as any other (router's under); a PathPrefix
// reads "/healthz/" as "/healthz", so the migration must redirect the
// bare path beside the twin that serves the rest.
func TestFromIngressExemptTrailingSlash(t *testing.T) {
	cm := compile.ParseConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ingress", Name: "ingress-nginx-controller"},
		Data: map[string]string{"no-tls-redirect-locations": "/healthz/, /.well-known/acme-challenge/deep/"}})
	m := compareServed(t, acmeObjects, compile.Options{IngressClass: "nginx", ControllerName: "k8s.io/ingress-nginx", ConfigMap: cm},
		"a.example.com/healthz", "a.example.com/healthz/", "a.example.com/healthz/live", "a.example.com/healthzx",
		"a.example.com/.well-known/acme-challenge/deep", "a.example.com/.well-known/acme-challenge/deep/", "a.example.com/.well-known/acme-challenge/deep/x",
		"a.example.com/.well-known/acme-challenge/x", "a.example.com/x",
		"b.example.com/healthz", "b.example.com/healthz/", "b.example.com/healthz/x", "b.example.com/x")
	if len(m.Unconverted) != 0 {
		t.Errorf("unconverted: %v", m.Unconverted)
	}
}
