package gatewayapi

import (
	"strings"
	"testing"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
)

const guardedObjects = `
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: certs
  namespace: demo
  annotations: {nginx.ingress.kubernetes.io/auth-tls-secret: demo/ca, nginx.ingress.kubernetes.io/auth-tls-verify-client: "on"}
spec:
  ingressClassName: nginx
  tls: [{hosts: [certs.example.com], secretName: cert}]
  rules: [{host: certs.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: certs-too, namespace: demo}
spec:
  ingressClassName: nginx
  rules: [{host: certs.example.com, http: {paths: [{path: /api, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: denied
  namespace: demo
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      allow 10.0.0.0/8;
      deny all;
spec:
  ingressClassName: nginx
  rules: [{host: denied.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: checked
  namespace: demo
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      if ($http_x_token != "s3cret") { return 403; }
spec:
  ingressClassName: nginx
  rules: [{host: checked.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: guard
  namespace: demo
  annotations:
    nginx.ingress.kubernetes.io/server-snippet: |
      location /admin { deny all; }
spec:
  ingressClassName: nginx
  rules: [{host: shared.example.com, http: {paths: [{path: /a, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: admin, namespace: other}
spec:
  ingressClassName: nginx
  rules: [{host: shared.example.com, http: {paths: [{path: /admin, pathType: Prefix, backend: {service: {name: admin, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: plain, namespace: demo}
spec:
  ingressClassName: nginx
  rules: [{host: plain.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
`

// TestFromIngressNeverFailsOpenHost: checks the Gateway API objects
// cannot carry (client certificates, a snippet's allow/deny or return, a
// server-snippet location that guards another Ingress's path) keep
// their hosts' requests off every route; each Ingress there is listed.
func TestFromIngressNeverFailsOpenHost(t *testing.T) {
	snap, _, err := manifest.Decode("in.yaml", []byte(guardedObjects))
	if err != nil {
		t.Fatal(err)
	}
	m := FromIngress(*snap, FromIngressOptions{Compile: compile.Options{IngressClass: "nginx", ControllerName: "k8s.io/ingress-nginx",
		AllowSnippetAnnotations: true, AnnotationsRiskLevel: "Critical"}})
	served := map[string]bool{}
	for _, r := range m.HTTPRoutes {
		for _, h := range r.Spec.Hostnames {
			served[string(h)] = true
		}
	}
	for _, h := range []string{"certs.example.com", "denied.example.com", "checked.example.com", "shared.example.com"} {
		if served[h] {
			t.Errorf("a route serves %s without its check", h)
		}
	}
	if !served["plain.example.com"] {
		t.Error("plain.example.com is not converted")
	}
	listed := map[string]string{}
	for _, u := range m.Unconverted {
		if strings.Contains(u.Why, "not converted") {
			listed[u.Namespace+"/"+u.Name] = strings.TrimPrefix(u.Annotation, nginxPrefix)
		}
	}
	want := map[string]string{"demo/certs": "auth-tls-secret", "demo/certs-too": "auth-tls-secret", "demo/denied": "configuration-snippet",
		"demo/checked": "configuration-snippet", "demo/guard": "server-snippet", "other/admin": "server-snippet"}
	for k, key := range want {
		if listed[k] != key {
			t.Errorf("Ingress %s listed under %q, want %q (all: %v)", k, listed[k], key, m.Unconverted)
		}
	}
}
