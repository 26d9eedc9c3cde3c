package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const explainManifests = `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ramjet}
spec: {controller: ramjet.dev/ingress}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: prod}
spec: {ports: [{port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-1, namespace: prod, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: "", port: 8080}]
endpoints: [{addresses: [10.0.0.7]}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: prod, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  ingressClassName: ramjet
  tls: [{hosts: [shop.example.com]}]
  rules:
  - host: shop.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
      - {path: /api, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
      - {path: /api/login, pathType: Exact, backend: {service: {name: web, port: {number: 80}}}}
      - {path: "/v[0-9]+/items", pathType: ImplementationSpecific, backend: {service: {name: web, port: {number: 80}}}}
  - host: "*.example.com"
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
`

func TestExplain(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "m.yaml"), []byte(explainManifests), 0o644))
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"exact host, longest prefix wins", []string{"-https", "-host", "Shop.Example.com", "-path", "/api/x?q=1"}, []string{
			"request  GET https://Shop.Example.com/api/x?q=1",
			"vhost    shop.example.com: exact: a virtual host is named shop.example.com",
			"   1   no  Exact /api/login -> Ingress prod/shop spec.rules[0].http.paths[2]: the path is not exactly /api/login",
			"   2   WIN Prefix /api -> Ingress prod/shop spec.rules[0].http.paths[1]: a prefix of whole path elements (4 bytes)",
			"   3   yes Prefix / -> Ingress prod/shop spec.rules[0].http.paths[0]: / matches every path; an earlier route in precedence order wins",
			"   4   no  Regex /v[0-9]+/items -> Ingress prod/shop spec.rules[0].http.paths[3]: the pattern ^(?:/v[0-9]+/items) does not match",
			"answer   proxied to prod/web:80 (HTTP, 1 ready endpoints: 10.0.0.7:8080)",
		}},
		{"element boundary", []string{"-https", "-host", "shop.example.com", "-path", "/apix"}, []string{
			"   2   no  Prefix /api -> Ingress prod/shop spec.rules[0].http.paths[1]: a prefix of bytes, not of whole path elements",
			"winner   Prefix / (Ingress prod/shop spec.rules[0].http.paths[0])",
		}},
		{"plain HTTP is redirected", []string{"-host", "shop.example.com", "-path", "/api/login", "-method", "POST"}, []string{
			"   1   WIN Exact /api/login -> Ingress prod/shop spec.rules[0].http.paths[2]: the path equals it byte for byte",
			"answer   308 ssl-redirect, Location: https://shop.example.com/api/login",
		}},
		{"wildcard", []string{"-host", "a.example.com", "-path", "/"}, []string{
			"vhost    *.example.com: wildcard: no virtual host is named a.example.com; *.example.com matches exactly one more label",
		}},
		{"catch-all absent", []string{"-host", "a.b.example.com", "-path", "/"}, []string{
			`vhost    "": catch-all: no virtual host is named a.b.example.com and no wildcard *.b.example.com exists`,
			"winner   no route matches and the host has no fallback",
			"answer   404 no-route",
		}},
		{"gRPC header", []string{"-https", "-host", "shop.example.com", "-path", "/pkg.S/M", "-method", "POST", "-header", "Content-Type: application/grpc"}, []string{
			"answer   502 grpc-not-enabled (backend prod/web:80, Serving)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := checkRun(append(append([]string{"-explain"}, tt.args...), dir)...)
			require.Equal(t, 0, code, stderr)
			for _, line := range tt.want {
				assert.Contains(t, stdout, line+"\n")
			}
		})
	}

	code, stdout, _ := checkRun("-explain", "-json", "-host", "x.example.com", "-path", "/", dir)
	require.Equal(t, 0, code)
	var ex explanation
	require.NoError(t, json.Unmarshal([]byte(stdout), &ex))
	require.NotNil(t, ex.VHost)
	assert.Equal(t, "*.example.com", *ex.VHost)
	assert.True(t, ex.Routes[0].Winner)

	code, _, stderr := checkRun("-explain", "-host", "x", "-header", "nocolon", dir)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "NAME:VALUE")
}

// TestExplainSnippetRewrite: a snippet's rewrite that moves the request to
// another location is followed, and the routes are weighed for the new URI.
func TestExplainSnippetRewrite(t *testing.T) {
	dir := t.TempDir()
	m := explainManifests + `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: old
  namespace: prod
  creationTimestamp: "2024-02-01T00:00:00Z"
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: "rewrite ^/old/(.*)$ /api/login?from=$1 last;"
spec:
  ingressClassName: ramjet
  rules:
  - host: shop.example.com
    http: {paths: [{path: /old, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "m.yaml"), []byte(m), 0o644))
	code, stdout, stderr := checkRun("-explain", "-allow-snippet-annotations", "-annotations-risk-level", "Critical",
		"-https", "-host", "shop.example.com", "-path", "/old/x", dir)
	require.Equal(t, 0, code, stderr)
	for _, line := range []string{
		"rewrite  a snippet's rewrite moves the request to /api/login?from=x; the location is chosen for it",
		"   1   WIN Exact /api/login -> Ingress prod/shop spec.rules[0].http.paths[2]: the path equals it byte for byte",
	} {
		assert.Contains(t, stdout, line+"\n")
	}
}

// -explain without -host is refused rather than explaining a request with
// no Host header, which nobody asked about; -host "" asks for that one.
func TestExplainNeedsHost(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "m.yaml"), []byte(explainManifests), 0o644))
	code, stdout, stderr := checkRun("-explain", "-path", "/api", dir)
	assert.Equal(t, 2, code, stdout)
	assert.Contains(t, stderr, "check: -explain needs -host")

	code, stdout, stderr = checkRun("-explain", "-host", "", dir)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "host     \"\"\n")
}

// A request flag that cannot be sent is named, with what is wrong with
// it, rather than reported as the HTTP parser's complaint about the
// request line the flags were pasted into.
func TestExplainBadRequestFlags(t *testing.T) {
	for args, want := range map[string]string{
		"-method G\tT":       `check: -method "G\tT" is not an HTTP method (a token such as GET)`,
		"-path /a\tb":        `check: -path "/a\tb" holds a space or a control character: write it percent-encoded, as a client sends it`,
		"-path api":          `check: -path "api" is not a request-target: it starts with /, or is * or an absolute URL`,
		"-header X-A:b\r\nY": `check: -header "X-A:b\r\nY" holds a control character`,
		"-host a\r\nX: y":    `check: -host "a\r\nX: y" holds a control character`,
	} {
		flag, value, _ := strings.Cut(args, " ")
		code, _, stderr := checkRun("-explain", "-host", "shop.example.com", flag, value, "../../examples/manifests")
		require.Equal(t, 2, code, args)
		require.Equal(t, want+"\n", stderr, args)
	}
}
