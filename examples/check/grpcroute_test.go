package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

const grpcRouteManifest = `apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: api, namespace: prod}
spec:
  parentRefs: [{name: gw}]
  hostnames: [api.example.com]
  rules:
  - matches: [{method: {service: shop.Cart, method: Get}}]
    backendRefs: [{name: web, port: 80}]
  - matches: [{headers: [{name: version, type: Prefix, value: v}]}]
    backendRefs: [{name: web, port: 80}]
`

// TestGRPCRoute: GRPCRoutes are read in every mode beside HTTPRoutes: a
// method match is the route of path /service/method, its backend is
// dialled as gRPC, and a match it cannot read warns on its field.
func TestGRPCRoute(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "gateway.yaml"), []byte(gatewayManifests), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "grpc.yaml"), []byte(grpcRouteManifest), 0o644))

	code, stdout, stderr := checkRun("-translate", dir)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "route Exact /shop.Cart/Get -> prod/web:80 from GRPCRoute prod/api spec.rules[0].matches[0]\n")
	require.Contains(t, stdout, "backend prod/web:80 GRPC")
	require.Contains(t, stdout, `warning GatewayFeatureUnsupported GRPCRoute prod/api spec.rules[1].matches[0].headers[0].type: header match type "Prefix" is unknown`)

	code, stdout, stderr = checkRun("-explain", "-host", "api.example.com", "-path", "/shop.Cart/Get", dir)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "winner   Exact /shop.Cart/Get (GRPCRoute prod/api spec.rules[0].matches[0])")
}
