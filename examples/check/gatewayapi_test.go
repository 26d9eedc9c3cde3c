package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

const gatewayManifests = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: ramjet}
spec: {controllerName: ramjet.dev/gateway}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: prod}
spec: {gatewayClassName: ramjet, listeners: [{name: http, port: 80, protocol: HTTP}]}
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
`

// The route is in a file of its own: it is attached to the Gateway of
// another file, as the loader translates all files together.
const httpRouteManifest = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: prod}
spec:
  parentRefs: [{name: gw}, {name: gw, sectionName: https}]
  hostnames: [web.example.com]
  rules: [{matches: [{path: {type: PathPrefix, value: /app}}], backendRefs: [{name: web, port: 80}]}]
`

// TestGatewayAPI: with the Gateway API extension registered (gatewayapi.go),
// every mode reads Gateway API objects, and their translation warnings
// come out with compile's.
func TestGatewayAPI(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "gateway.yaml"), []byte(gatewayManifests), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "route.yaml"), []byte(httpRouteManifest), 0o644))

	code, stdout, stderr := checkRun("-translate", dir)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "route Prefix /app -> prod/web:80 from HTTPRoute prod/web spec.rules[0].matches[0]\n")
	require.Contains(t, stdout, "warning RouteNotAttached HTTPRoute prod/web spec.parentRefs[1]: ")

	code, stdout, stderr = checkRun("-explain", "-host", "web.example.com", "-path", "/app/x", dir)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "winner   Prefix /app (HTTPRoute prod/web spec.rules[0].matches[0])")

	code, stdout, stderr = checkRun("-report", dir)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "RouteNotAttached")

	// The Gateway API case files, conformance tests included, pass here as
	// in compile/gatewayapi's go test.
	code, stdout, stderr = checkRun(filepath.Join("..", "..", "compile", "gatewayapi", "testdata", "cases"))
	require.Equal(t, 0, code, stdout+stderr)
	require.Regexp(t, `^\d+ passed, 0 failed; warnings: \d+ passed, 0 failed; goldens: \d+ passed, 0 failed$`, lastLine(stdout))
}
