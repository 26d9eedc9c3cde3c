package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const clusterDump = "testdata/cluster-dump.yaml"

// TestReportGolden runs the migration report on a cluster dump (a v1 List
// as kubectl prints it, 56 Ingresses using the common ingress-nginx
// annotations) and compares it with its golden. The report follows the
// compiler's warnings, so it changes as annotations are implemented:
// regenerate with RAMJET_UPDATE_GOLDEN=1 go test ./examples/check -run Report
// and review the diff.
func TestReportGolden(t *testing.T) {
	code, stdout, stderr := checkRun("-report", clusterDump)
	require.Equal(t, 0, code, stderr)
	golden := strings.TrimSuffix(clusterDump, ".yaml") + ".report"
	if os.Getenv("RAMJET_UPDATE_GOLDEN") == "1" {
		require.NoError(t, os.WriteFile(golden, []byte(stdout), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run with RAMJET_UPDATE_GOLDEN=1 to create it")
	assert.Empty(t, cmp.Diff(string(want), stdout), "report differs from %s; RAMJET_UPDATE_GOLDEN=1 rewrites it", golden)

	// The dump is what the issue asks of it: at least 50 Ingresses and 30
	// distinct ingress-nginx annotations.
	dump, err := os.ReadFile(clusterDump)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, strings.Count(string(dump), "\n  kind: Ingress\n"), 50)
	keys := map[string]bool{}
	for line := range strings.Lines(string(dump)) {
		line = strings.TrimSpace(line)
		if k, _, ok := strings.Cut(line, ": "); ok && strings.HasPrefix(k, "nginx.ingress.kubernetes.io/") {
			keys[k] = true
		}
	}
	assert.GreaterOrEqual(t, len(keys), 30)
}

func TestReportStrictAndJSON(t *testing.T) {
	code, _, _ := checkRun("-report", "-strict", clusterDump)
	assert.Equal(t, 3, code, "something moves traffic")

	code, stdout, stderr := checkRun("-report", "-json", clusterDump)
	require.Equal(t, 0, code, stderr)
	var doc migration
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	assert.False(t, doc.OK)
	assert.Equal(t, 54, doc.Claimed)
	assert.Equal(t, 2, doc.Unclaimed)
	total := doc.Totals.TrafficMoves + doc.Totals.FeatureMissing + doc.Totals.Cosmetic
	n := len(doc.Other)
	for _, in := range doc.Ingress {
		n += len(in.Findings)
	}
	assert.Equal(t, total, n)
	var rewrite *finding
	for _, in := range doc.Ingress {
		for i, f := range in.Findings {
			if f.Annotation == "nginx.ingress.kubernetes.io/rewrite-target" {
				rewrite = &in.Findings[i]
			}
		}
	}
	if rewrite != nil { // until rewrite-target is implemented
		assert.Equal(t, "traffic-moves", string(rewrite.Severity))
		assert.Equal(t, "/$2", rewrite.Value)
	}

	// Nothing that moves traffic: -strict exits 0.
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ok.yaml"), []byte(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: prod
  annotations: {nginx.ingress.kubernetes.io/proxy-buffering: "on", kubernetes.io/ingress.class: nginx}
spec:
  rules:
  - host: web.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
`), 0o644))
	code, stdout, _ = checkRun("-report", "-strict", dir)
	assert.Equal(t, 0, code, stdout)
	assert.Contains(t, stdout, "feature-missing nginx.ingress.kubernetes.io/proxy-buffering")
	assert.Contains(t, stdout, "nothing moves traffic")

	// A load error still prints JSON.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("kind: [unterminated"), 0o644))
	code, stdout, _ = checkRun("-report", "-json", dir)
	assert.Equal(t, 2, code)
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	assert.NotEmpty(t, doc.Errors)
}
