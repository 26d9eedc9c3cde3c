package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnreadableDocumentsDegradeOnlyThemselves: a document that does not
// parse, a kind that does not exist and a link to a missing file are each
// one unreadable line naming the file and document; the Ingress beside
// them in the same file is read, by every view.
func TestUnreadableDocumentsDegradeOnlyThemselves(t *testing.T) {
	dir := t.TempDir()
	writeCase(t, dir, "dump.yaml", `apiVersion: v1
kind: Service
metadata: [unterminated
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: prod}
spec:
  ingressClassName: nginx
  rules:
  - host: shop.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingres
metadata: {name: typo, namespace: prod}
`)
	require.NoError(t, os.Symlink("missing.yaml", filepath.Join(dir, "gone.yaml")))

	code, stdout, stderr := checkRun("-report", "-json", dir)
	require.Equal(t, 0, code, stderr)
	var doc migration
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	assert.Len(t, doc.Unreadable, 3, doc.Unreadable)
	code, stdout, stderr = checkRun("-report", dir)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "1 Ingress claimed", "the Ingress beside the broken documents")
	assert.Contains(t, stdout, "not read, so not covered: 3 documents")

	code, stdout, stderr = checkRun("-translate", dir)
	require.Equal(t, 2, code, "what was not read fails the run: %s", stderr)
	assert.Contains(t, stdout, "shop.example.com")
	assert.Contains(t, stderr, filepath.Join(dir, "gone.yaml"))
	assert.Contains(t, stderr, "dump.yaml document 1 (line 1)")
	assert.Contains(t, stderr, "dump.yaml document 3 (line 16, Ingres prod/typo): kind Ingres: networking.k8s.io/v1 has no such kind")
}
