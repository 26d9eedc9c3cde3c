package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
)

// -report lists what the validating webhook refuses, with the verdict the
// controller's webhook gives (the same compile.Reviewer) for each Ingress.
func TestReportAdmissionRefusals(t *testing.T) {
	dir := t.TempDir()
	input := `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: owner, namespace: prod, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  ingressClassName: nginx
  rules: [{host: shop.example.com, http: {paths: [{path: /api, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: dup, namespace: prod, creationTimestamp: "2024-02-01T00:00:00Z"}
spec:
  ingressClassName: nginx
  rules: [{host: shop.example.com, http: {paths: [{path: /api, pathType: Exact, backend: {service: {name: web, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: bad, namespace: prod, annotations: {nginx.ingress.kubernetes.io/upstream-hash-by: "$request_uri;"}}
spec:
  ingressClassName: nginx
  rules: [{host: other.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "in.yaml"), []byte(input), 0o644))
	code, stdout, stderr := checkRun("-report", dir)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "Refused when applied again (ingress-nginx's validating webhook, and the controller's with --validating-webhook): 3\n"+
		"  prod/bad: annotation nginx.ingress.kubernetes.io/upstream-hash-by contains invalid value\n"+
		`  prod/dup: host "shop.example.com" and path "/api" is already defined in ingress prod/owner`+"\n"+
		`  prod/owner: host "shop.example.com" and path "/api" is already defined in ingress prod/dup`+"\n")

	code, stdout, stderr = checkRun("-report", "-json", dir)
	require.Equal(t, 0, code, stderr)
	var m migration
	require.NoError(t, json.Unmarshal([]byte(stdout), &m))
	snap, _, err := manifest.Load(dir)
	require.NoError(t, err)
	r := compile.NewReviewer(*snap, compile.Options{IngressClass: "nginx", ControllerName: "k8s.io/ingress-nginx"}, compile.AdmissionSettings{})
	for _, got := range m.AdmissionRefused {
		for _, ing := range snap.Ingresses {
			if ing.Namespace+"/"+ing.Name == got.Ingress {
				assert.Equal(t, r.Review(ing).Refusal, got.Refusal)
			}
		}
	}
	assert.Len(t, m.AdmissionRefused, 3)
}

// Ingresses sharing one Service (one frontend for many customer hosts) are
// reviewed for the report without compiling them all once per Ingress,
// which made a dump of a thousand of them take minutes.
func TestReportAdmissionRefusalsSharedService(t *testing.T) {
	const n = 200
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: prod}\nspec: {ports: [{port: 80}]}\n")
	for i := range n {
		fmt.Fprintf(&b, `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: i%d, namespace: prod}
spec:
  ingressClassName: nginx
  rules: [{host: h%d.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
`, i, i)
	}
	snap, _, err := manifest.Decode("dump.yaml", []byte(b.String()))
	require.NoError(t, err)
	opts := compile.Options{IngressClass: "nginx", ControllerName: "k8s.io/ingress-nginx"}
	snap.IngressClasses = append(snap.IngressClasses, &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx"}, Spec: networkingv1.IngressClassSpec{Controller: opts.ControllerName}})
	allocs := testing.AllocsPerRun(1, func() {
		assert.Empty(t, admissionRefusals(*snap, opts, nil))
	})
	// Compiling the n Ingresses once per Ingress allocates thousands of
	// times per Ingress reviewed; checking them is a few hundred.
	assert.Less(t, allocs/n, 2000.0, "allocations per Ingress reviewed")
}
