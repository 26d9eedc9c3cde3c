package routertest

import (
	"compress/gzip"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/router"
)

const brotliCase = `
name: brotli
options: {configMap: {enable-brotli: "true", brotli-level: "5", brotli-min-length: "30", brotli-types: "text/plain text/css", use-gzip: "true", gzip-min-length: "1"}}
objects:
  - {apiVersion: networking.k8s.io/v1, kind: IngressClass, metadata: {name: ramjet}, spec: {controller: ramjet.dev/ingress}}
  - {apiVersion: v1, kind: Service, metadata: {name: web, namespace: demo}, spec: {ports: [{port: 80, targetPort: 8080}]}}
  - {apiVersion: discovery.k8s.io/v1, kind: EndpointSlice, metadata: {name: web-1, namespace: demo, labels: {kubernetes.io/service-name: web}}, addressType: IPv4, ports: [{name: "", port: 8080}], endpoints: [{addresses: [10.0.1.1]}]}
  - apiVersion: networking.k8s.io/v1
    kind: Ingress
    metadata: {name: web, namespace: demo}
    spec: {ingressClassName: ramjet, rules: [{host: web.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]}
requests:
  - {host: web.example.com, path: /, headers: {Accept-Encoding: "gzip, br"}, expect: {status: 200, responseHeaders: {Content-Encoding: br, Vary: Accept-Encoding}}}
  - {host: web.example.com, path: /, headers: {Accept-Encoding: gzip}, expect: {status: 200, responseHeaders: {Content-Encoding: gzip}}}
`

// enable-brotli in a case's ConfigMap reaches the router as the example
// controller's applyConfigMap passes it: level, minimum length and types,
// with the embedder's encoder (the library brings none, so a case file
// alone answers nothing in br).
func TestConfigMapBrotli(t *testing.T) {
	cases, err := parseCases("brotli.yaml", []byte(brotliCase))
	require.NoError(t, err)
	c := cases[0]
	require.NotNil(t, c.Router.Brotli, "enable-brotli is copied")
	assert.Equal(t, router.Brotli{Level: 5, MinLength: 30, Types: []string{"text/plain", "text/css"}}, *c.Router.Brotli)

	// Any Encoder shows which answers the router encodes; the bytes are
	// not checked here.
	c.Router.Brotli.NewEncoder = func(level int) router.Encoder {
		w, _ := gzip.NewWriterLevel(io.Discard, min(level, gzip.BestCompression))
		return w
	}
	res := Run(c)
	require.True(t, res.OK(), res.Report())
}

// The forwarded-header keys of a case's ConfigMap combine with the
// options (its flags) as the example controller combines them: a flag's
// use-forwarded-headers stands whatever enable-real-ip says, and
// enable-real-ip adds TrustForwardedFor alone.
func TestConfigMapForwardedKeys(t *testing.T) {
	for _, tc := range []struct {
		options            string
		wantProto, wantFor bool
	}{
		{`{useForwardedHeaders: true, configMap: {enable-real-ip: "false"}}`, true, true},
		{`{useForwardedHeaders: true, configMap: {enable-real-ip: "true"}}`, true, true},
		{`{useForwardedHeaders: false, configMap: {enable-real-ip: "true"}}`, false, true},
		{`{configMap: {enable-real-ip: "true"}}`, false, true},
		{`{configMap: {use-forwarded-headers: "true"}}`, true, true},
		{`{configMap: {use-forwarded-headers: "true", enable-real-ip: "false"}}`, true, true},
		{`{configMap: {use-forwarded-headers: "false", enable-real-ip: "false"}}`, false, false},
		{`{useForwardedHeaders: true, configMap: {use-forwarded-headers: "false"}}`, true, true},
	} {
		cases, err := parseCases("forwarded.yaml", []byte("name: forwarded\noptions: "+tc.options+"\nobjects: []\nrequests: [{host: a, path: /, expect: {status: 404}}]\n"))
		require.NoError(t, err, tc.options)
		o := cases[0].Router
		assert.Equal(t, [2]bool{tc.wantProto, tc.wantFor}, [2]bool{o.TrustForwardedProto, o.TrustForwardedFor}, "%s: TrustForwardedProto, TrustForwardedFor", tc.options)
	}
}
