package router_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
)

// TestEndpointRejectedNotDialled: a hand-written EndpointSlice naming the
// node's loopback, the metadata address and other never-pod addresses
// compiles to a backend without endpoints, so the request answers 503 and
// nothing is dialled (SPEC §8; ingress-nginx would dial them). A live
// server on the loopback address proves it: it is reached only when the
// compile option allows loopback.
func TestEndpointRejectedNotDialled(t *testing.T) {
	var hits atomic.Int32
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	defer live.Close()
	_, port, err := net.SplitHostPort(live.Listener.Addr().String())
	require.NoError(t, err)
	doc := fmt.Sprintf(`
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ramjet}
spec: {controller: ramjet.dev/ingress}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: prod}
spec: {ports: [{port: 80, targetPort: %[1]s}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: hand, namespace: prod, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: "", port: %[1]s}]
endpoints: [{addresses: [127.0.0.1]}, {addresses: [169.254.169.254]}, {addresses: [0.0.0.0]}, {addresses: [255.255.255.255]}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: prod}
spec:
  ingressClassName: ramjet
  rules:
  - http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
`, port)
	snap, _, err := manifest.Decode("hand.yaml", []byte(doc))
	require.NoError(t, err)

	tests := []struct {
		allowLoopback bool
		wantStatus    int
		wantRejected  int
		wantHits      int32
	}{
		{false, http.StatusServiceUnavailable, 4, 0},
		{true, http.StatusOK, 3, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint("allowLoopback=", tt.allowLoopback), func(t *testing.T) {
			hits.Store(0)
			result := compile.Compile(*snap, compile.Options{AllowLoopbackEndpoints: tt.allowLoopback})
			tab, warnings := result.Table, result.Warnings
			rejected := 0
			for _, w := range warnings {
				if w.Reason == compile.EndpointRejected {
					rejected++
				}
			}
			assert.Equal(t, tt.wantRejected, rejected, "warnings: %v", warnings)
			r := router.New(router.Options{})
			r.Publish(tab)
			front := httptest.NewServer(r)
			defer front.Close()
			res, err := http.Get(front.URL + "/x")
			require.NoError(t, err)
			res.Body.Close()
			assert.Equal(t, tt.wantStatus, res.StatusCode)
			assert.Equal(t, tt.wantHits, hits.Load())
		})
	}
}
