package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An install that followed ingress-nginx's "Exposing TCP and UDP
// services" guide names its maps tcp-services and udp-services: with no
// flag and no chart-named map, those are read (and said to be), not left
// out without a word.
func TestTranslateL4ServicesGuideNames(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "l4.yaml"), []byte(`apiVersion: v1
kind: ConfigMap
metadata: {name: tcp-services, namespace: ingress-nginx}
data: {"5432": "db/postgres:5432"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: udp-services, namespace: ingress-nginx}
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
	code, stdout, stderr := checkRun("-translate", dir)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "l4 tcp 5432 -> db/postgres:5432 Serving from ConfigMap ingress-nginx/tcp-services data[5432]\n")
	assert.Contains(t, stdout, "l4 udp 53 -> db/postgres:dns Serving from ConfigMap ingress-nginx/udp-services data[53]\n")
	assert.Contains(t, stderr, "ConfigMap ingress-nginx/tcp-services read as ingress-nginx's tcp services ConfigMap")
	assert.Contains(t, stderr, "ConfigMap ingress-nginx/udp-services read as ingress-nginx's udp services ConfigMap")

	// The chart's name, when present, is the one read.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "chart.yaml"), []byte(`apiVersion: v1
kind: ConfigMap
metadata: {name: ingress-nginx-tcp, namespace: ingress-nginx}
data: {"6432": "db/postgres:5432"}
`), 0o644))
	code, stdout, stderr = checkRun("-translate", dir)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "l4 tcp 6432 -> db/postgres:5432 Serving from ConfigMap ingress-nginx/ingress-nginx-tcp data[6432]\n")
	assert.NotContains(t, stdout, "l4 tcp 5432")
}
