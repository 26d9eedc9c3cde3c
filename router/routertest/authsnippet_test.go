package routertest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// nginx's proxy_set_header changes only the request proxied to the backend
// (https://nginx.org/en/docs/http/ngx_http_proxy_module.html#proxy_set_header):
// authentication, which runs in the access phase on the client's request,
// never reads what a configuration-snippet's proxy_set_header sends the
// backend. The auth subrequest is proxied from a location of its own, so
// the service sees the client's headers; auth_basic reads the client's
// Authorization. more_set_input_headers, by contrast, edits the client's
// request in the rewrite phase, before authentication reads it.
const authProxySetHeaderCase = `
name: auth-ignores-proxy-set-header
options: {allowSnippetAnnotations: true, annotationsRiskLevel: Critical}
objects:
  - {apiVersion: networking.k8s.io/v1, kind: IngressClass, metadata: {name: ramjet}, spec: {controller: ramjet.dev/ingress}}
  - {apiVersion: v1, kind: Service, metadata: {name: web, namespace: demo}, spec: {ports: [{port: 80, targetPort: 8080}]}}
  - {apiVersion: discovery.k8s.io/v1, kind: EndpointSlice, metadata: {name: web-1, namespace: demo, labels: {kubernetes.io/service-name: web}}, addressType: IPv4, ports: [{name: "", port: 8080}], endpoints: [{addresses: [10.0.1.1]}]}
  - apiVersion: networking.k8s.io/v1
    kind: Ingress
    metadata:
      name: external
      namespace: demo
      annotations:
        nginx.ingress.kubernetes.io/auth-url: http://auth.example/basic-auth/user/password
        nginx.ingress.kubernetes.io/configuration-snippet: |
          proxy_set_header Authorization "Basic dXNlcjpwYXNzd29yZA==";
    spec:
      ingressClassName: ramjet
      rules:
        - host: auth.example.com
          http: {paths: [{path: /external, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
  - apiVersion: networking.k8s.io/v1
    kind: Ingress
    metadata:
      name: input
      namespace: demo
      annotations:
        nginx.ingress.kubernetes.io/auth-url: http://auth.example/basic-auth/user/password
        nginx.ingress.kubernetes.io/configuration-snippet: |
          more_set_input_headers "Authorization: Basic dXNlcjpwYXNzd29yZA==";
    spec:
      ingressClassName: ramjet
      rules:
        - host: auth.example.com
          http: {paths: [{path: /input, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
  - {apiVersion: v1, kind: Secret, metadata: {name: users, namespace: demo}, type: Opaque, stringData: {eve: "{PLAIN}pw"}}
  - apiVersion: networking.k8s.io/v1
    kind: Ingress
    metadata:
      name: basic
      namespace: demo
      annotations:
        nginx.ingress.kubernetes.io/auth-type: basic
        nginx.ingress.kubernetes.io/auth-secret: users
        nginx.ingress.kubernetes.io/auth-secret-type: auth-map
        nginx.ingress.kubernetes.io/configuration-snippet: |
          proxy_set_header Authorization "Bearer backend-token";
    spec:
      ingressClassName: ramjet
      rules:
        - host: auth.example.com
          http: {paths: [{path: /basic, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
requests:
  - notes: without credentials of its own the client is refused, whatever the backend is to be sent
    host: auth.example.com
    path: /external
    expect: {status: 401, service: null}
  - notes: the client's own credentials pass, and the backend gets the snippet's
    host: auth.example.com
    path: /external
    headers: {Authorization: "Basic dXNlcjpwYXNzd29yZA=="}
    expect: {status: 200, requestHeaders: {Authorization: "Basic dXNlcjpwYXNzd29yZA=="}}
  - notes: more_set_input_headers edits the client's request before the access phase
    host: auth.example.com
    path: /input
    expect: {status: 200}
  - notes: auth_basic checks the client's credentials; the backend gets the snippet's
    host: auth.example.com
    path: /basic
    headers: {Authorization: "Basic ZXZlOnB3"}
    expect: {status: 200, requestHeaders: {Authorization: "Bearer backend-token"}}
  - {host: auth.example.com, path: /basic, expect: {status: 401, service: null}}
`

func TestAuthIgnoresSnippetProxySetHeader(t *testing.T) {
	cases, err := parseCases("auth-proxy-set-header.yaml", []byte(authProxySetHeaderCase))
	require.NoError(t, err)
	res := Run(cases[0])
	require.True(t, res.OK(), res.Report())
}
