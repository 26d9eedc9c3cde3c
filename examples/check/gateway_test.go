package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/gatewayapi"
	"ramjet.dev/ramjet/compile/manifest"
)

// TestTranslateToGateway: -translate -to gateway prints FromIngress's
// YAML, under the same class options as -translate, then the annotations
// left out as comments; -json gives the same as one document.
func TestTranslateToGateway(t *testing.T) {
	const dump = "testdata/cluster-dump.yaml"
	snap, _, err := manifest.Load(dump)
	require.NoError(t, err)
	m := gatewayapi.FromIngress(*snap, gatewayapi.FromIngressOptions{Compile: compile.Options{IngressClass: nginxClass, ControllerName: nginxController}})
	require.NotEmpty(t, m.HTTPRoutes)
	require.NotEmpty(t, m.Unconverted)
	var want bytes.Buffer
	require.NoError(t, m.WriteYAML(&want))

	code, stdout, stderr := checkRun("-translate", "-to", "gateway", dump)
	require.Equal(t, 0, code, stderr)
	require.True(t, strings.HasPrefix(stdout, want.String()), "stdout begins with the objects")
	rest := strings.Split(strings.TrimSuffix(strings.TrimPrefix(stdout, want.String()), "\n"), "\n")
	require.Len(t, rest, len(m.Unconverted))
	u := m.Unconverted[0]
	require.Equal(t, "# not converted: Ingress "+u.Namespace+"/"+u.Name+" "+u.Annotation+": "+u.Why, rest[0])

	code, stdout, stderr = checkRun("-translate", "-to", "gateway", "-json", dump)
	require.Equal(t, 0, code, stderr)
	var doc struct {
		Gateways    []json.RawMessage        `json:"gateways"`
		HTTPRoutes  []json.RawMessage        `json:"httpRoutes"`
		Unconverted []gatewayapi.Unconverted `json:"unconverted"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	require.Len(t, doc.Gateways, len(m.Gateways))
	require.Len(t, doc.HTTPRoutes, len(m.HTTPRoutes))
	require.Equal(t, m.Unconverted, doc.Unconverted)

	// One Gateway per class in one namespace: the routes name it, and
	// the Secrets of other namespaces are granted to it.
	code, stdout, stderr = checkRun("-translate", "-to", "gateway", "-gateway-namespace", "gateways", "-json", dump)
	require.Equal(t, 0, code, stderr)
	var one struct {
		Gateways        []gwv1.Gateway        `json:"gateways"`
		ReferenceGrants []gwv1.ReferenceGrant `json:"referenceGrants"`
		HTTPRoutes      []gwv1.HTTPRoute      `json:"httpRoutes"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &one))
	var names []string
	for _, g := range one.Gateways {
		names = append(names, g.Namespace+"/"+g.Name)
	}
	// The dump's hosts need more than a Gateway's 64 listeners.
	require.Equal(t, []string{"gateways/nginx", "gateways/nginx-2"}, names)
	for _, r := range one.HTTPRoutes {
		require.Equal(t, "gateways", string(*r.Spec.ParentRefs[0].Namespace), r.Name)
	}
	require.NotEmpty(t, one.ReferenceGrants)

	for _, args := range [][]string{{"-to", "gateway", dump}, {"-translate", "-to", "yaml", dump}, {"-translate", "-gateway-namespace", "x", dump}} {
		code, _, stderr = checkRun(args...)
		require.Equal(t, 2, code, args)
		require.Contains(t, stderr, "-to takes table or gateway, with -translate")
	}
}

// TestReportGatewayGaps: the report's last section groups the
// annotations FromIngress leaves out, with their Ingresses.
func TestReportGatewayGaps(t *testing.T) {
	code, stdout, stderr := checkRun("-report", "-json", "testdata/cluster-dump.yaml")
	require.Equal(t, 0, code, stderr)
	var doc migration
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	var limit *gatewayGap
	for i := range doc.GatewayAPI {
		if doc.GatewayAPI[i].Annotation == "nginx.ingress.kubernetes.io/limit-rps" {
			limit = &doc.GatewayAPI[i]
		}
	}
	require.NotNil(t, limit)
	require.Equal(t, []string{"payments/ws"}, limit.Ingresses)
	require.Equal(t, []string{"rate and connection limits are not part of HTTPRoute"}, limit.Why)
	for i := 1; i < len(doc.GatewayAPI); i++ {
		require.GreaterOrEqual(t, len(doc.GatewayAPI[i-1].Ingresses), len(doc.GatewayAPI[i].Ingresses), "the most widespread first")
	}
}

// -to gateway reads past a document it cannot read, as -translate does,
// and with -json says what it could not read in the document.
func TestGatewayReadsPastABadDocument(t *testing.T) {
	dir := t.TempDir()
	writeCase(t, dir, "shop.yaml", `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: prod}
spec:
  ingressClassName: nginx
  rules: [{host: shop.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
`)
	writeCase(t, dir, "secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata: {name: tls, namespace: prod}\ndata: {tls.crt: '!!!'}\n")
	bad := filepath.Join(dir, "secret.yaml") + " document 1 (line 1, Secret prod/tls): data[tls.crt]"

	code, stdout, stderr := checkRun("-translate", "-to", "gateway", dir)
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stdout, "name: shop-shop-example-com")
	require.Contains(t, stderr, "not read: "+bad)

	code, stdout, _ = checkRun("-translate", "-to", "gateway", "-json", dir)
	require.Equal(t, 2, code)
	var doc struct {
		HTTPRoutes []any    `json:"httpRoutes"`
		Errors     []string `json:"errors"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	require.Len(t, doc.HTTPRoutes, 1)
	require.Len(t, doc.Errors, 1)
	require.Contains(t, doc.Errors[0], bad)

	// Nothing to read is an error document too.
	code, stdout, _ = checkRun("-translate", "-to", "gateway", "-json", filepath.Join(dir, "nothing"))
	require.Equal(t, 2, code)
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	require.Len(t, doc.Errors, 1)
}
