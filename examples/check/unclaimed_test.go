package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Ingresses of another controller's class are said to be unclaimed, with
// the flag that claims them, by -translate (text and JSON) and -report.
func TestUnclaimedIngressesAreReported(t *testing.T) {
	dir := t.TempDir()
	input := `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: traefik}
spec: {controller: traefik.io/ingress-controller}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: a, namespace: prod}
spec:
  ingressClassName: traefik
  rules: [{host: a.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: a, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: b, namespace: prod}
spec:
  ingressClassName: nginx
  rules: [{host: b.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: b, port: {number: 80}}}}]}}]
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "in.yaml"), []byte(input), 0o644))
	want := `1 of 2 Ingresses read are not claimed: 1 with ingressClassName "traefik" (IngressClass of controller "traefik.io/ingress-controller"), e.g. prod/a: -controller-name=traefik.io/ingress-controller claims them`

	code, stdout, stderr := checkRun("-translate", dir)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "warning: "+want+"\n")
	assert.NotContains(t, stdout, "not claimed", "stdout stays the golden format")

	code, stdout, stderr = checkRun("-translate", "-json", dir)
	require.Equal(t, 0, code, stderr)
	var doc translated
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	assert.Equal(t, want, doc.Unclaimed)

	code, stdout, stderr = checkRun("-report", dir)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "warning: "+want+"\n")
	code, stdout, stderr = checkRun("-report", "-json", dir)
	require.Equal(t, 0, code, stderr)
	var m migration
	require.NoError(t, json.Unmarshal([]byte(stdout), &m))
	assert.Equal(t, want, m.UnclaimedNote)

	// Claimed by the flag it names (the class the input lacks is adopted
	// as that controller's): no warning.
	code, _, stderr = checkRun("-translate", "-controller-name=traefik.io/ingress-controller", dir)
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, stderr, "not claimed")
}

// A case file whose Ingresses are all another class's passes on its 404s,
// and the run says why.
func TestCaseRunSaysNothingIsClaimed(t *testing.T) {
	dir := t.TempDir()
	writeCase(t, dir, "other.yaml", `name: other class
objects:
  - apiVersion: networking.k8s.io/v1
    kind: Ingress
    metadata: {name: a, namespace: demo, annotations: {kubernetes.io/ingress.class: nginx}}
    spec: {defaultBackend: {service: {name: web, port: {number: 80}}}}
requests: [{host: a, path: /, expect: {status: 404}}]
`)
	code, stdout, stderr := checkRun("-update", dir) // writes the golden table
	require.Equal(t, 0, code, stdout+stderr)
	assert.Contains(t, stdout, `warning: case "other class" (`)
	assert.Contains(t, stdout, `options.ingressClass: nginx claims them`)
}
