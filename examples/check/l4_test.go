package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// -translate shows the TCP and UDP services: the chart's ConfigMap names
// are read by default, a flag names others, and -json lists them.
func TestTranslateL4Services(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "l4.yaml"), []byte(`apiVersion: v1
kind: ConfigMap
metadata: {name: ingress-nginx-tcp, namespace: ingress-nginx}
data: {"5432": "db/postgres:5432:PROXY", "bad": "x"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: dns, namespace: ingress-nginx}
data: {"53": "db/postgres:dns"}
---
apiVersion: v1
kind: Service
metadata: {name: postgres, namespace: db}
spec: {ports: [{port: 5432}, {name: dns, port: 53, protocol: UDP}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: pg, namespace: db, labels: {kubernetes.io/service-name: postgres}}
addressType: IPv4
ports: [{port: 5432}, {name: dns, port: 53, protocol: UDP}]
endpoints: [{addresses: [10.1.2.3]}]
`), 0o644))
	code, stdout, stderr := checkRun("-translate", "-udp-services-configmap", "ingress-nginx/dns", dir)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "l4 tcp 5432 -> db/postgres:5432 Serving proxy-protocol-in from ConfigMap ingress-nginx/ingress-nginx-tcp data[5432]\n  endpoint 10.1.2.3:5432\n")
	assert.Contains(t, stdout, "l4 udp 53 -> db/postgres:dns Serving from ConfigMap ingress-nginx/dns data[53]\n  endpoint 10.1.2.3:53\n")
	assert.Contains(t, stdout, "warning L4ServiceRejected ConfigMap ingress-nginx/ingress-nginx-tcp data[bad]")
	assert.Contains(t, stderr, "ConfigMap ingress-nginx/ingress-nginx-tcp read as ingress-nginx's tcp services ConfigMap")

	code, stdout, stderr = checkRun("-translate", "-json", dir)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, `"l4Services"`)
	assert.Contains(t, stdout, `"configMap": "ingress-nginx/ingress-nginx-tcp"`)
	assert.NotContains(t, stdout, `"udp"`, "no UDP ConfigMap by default here")
}

// -translate -to gateway says what becomes of the TCP and UDP services:
// no Gateway API object carries them (ramjet serves no TCPRoute or
// UDPRoute), and the same ConfigMaps keep serving them; they are not
// left out without a word.
func TestTranslateToGatewayNamesL4Services(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "l4.yaml"), []byte(`apiVersion: v1
kind: ConfigMap
metadata: {name: ingress-nginx-tcp, namespace: ingress-nginx}
data: {"5432": "db/postgres:5432:PROXY"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ingress-nginx-udp, namespace: ingress-nginx}
data: {"53": "db/postgres:dns"}
---
apiVersion: v1
kind: Service
metadata: {name: postgres, namespace: db}
spec: {ports: [{port: 5432}, {name: dns, port: 53, protocol: UDP}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: db}
spec:
  ingressClassName: nginx
  rules: [{host: a.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: postgres, port: {number: 5432}}}}]}}]
`), 0o644))
	code, stdout, stderr := checkRun("-translate", "-to", "gateway", dir)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "kind: HTTPRoute")
	assert.Contains(t, stdout, "\n# kept: ConfigMap ingress-nginx/ingress-nginx-tcp data[5432]: tcp 5432 -> db/postgres:5432")
	assert.Contains(t, stdout, "\n# kept: ConfigMap ingress-nginx/ingress-nginx-udp data[53]: udp 53 -> db/postgres:dns")

	code, stdout, stderr = checkRun("-translate", "-to", "gateway", "-json", dir)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, `"l4Services"`)
	assert.Contains(t, stdout, `"configMap": "ingress-nginx/ingress-nginx-tcp"`)
}

// An entry on a port the controller listens on itself, as ingress-nginx's
// chart and ramjet's deploy it (80, 443, and 10254 for metrics and
// health), or on one of nginx's internal ports (442 passthrough, 8181
// catch-all, 10245 profiler, 10246 status, 10247 stream), is refused by
// ingress-nginx (getStreamServices: "It is reserved for the Ingress
// controller"); -translate says so rather than list as served a port
// that never was.
func TestTranslateL4ReservedPorts(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "l4.yaml"), []byte(`apiVersion: v1
kind: ConfigMap
metadata: {name: ingress-nginx-tcp, namespace: ingress-nginx}
data: {"80": "db/postgres:5432", "443": "db/postgres:5432", "10254": "db/postgres:5432", "5432": "db/postgres:5432",
  "442": "db/postgres:5432", "8181": "db/postgres:5432", "10245": "db/postgres:5432", "10246": "db/postgres:5432", "10247": "db/postgres:5432"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ingress-nginx-udp, namespace: ingress-nginx}
data: {"443": "db/postgres:dns"}
---
apiVersion: v1
kind: Service
metadata: {name: postgres, namespace: db}
spec: {ports: [{port: 5432}, {name: dns, port: 53, protocol: UDP}]}
`), 0o644))
	code, stdout, stderr := checkRun("-translate", dir)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "l4 tcp 5432 -> db/postgres:5432")
	for _, port := range []string{"80", "443", "10254", "442", "8181", "10245", "10246", "10247"} {
		assert.NotContains(t, stdout, "l4 tcp "+port+" ")
		assert.Contains(t, stdout, "warning L4ServiceRejected ConfigMap ingress-nginx/ingress-nginx-tcp data["+port+"]")
	}
	assert.NotContains(t, stdout, "l4 udp 443 ")
	assert.Contains(t, stdout, "warning L4ServiceRejected ConfigMap ingress-nginx/ingress-nginx-udp data[443]")
}
