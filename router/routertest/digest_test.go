package routertest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMaskNonce(t *testing.T) {
	for in, want := range map[string]string{
		`Digest algorithm="MD5", qop="auth", realm="r", nonce="abc", stale="true"`: `Digest algorithm="MD5", qop="auth", realm="r", nonce="<nonce>", stale="true"`,
		`qop="auth", rspauth="0123", cnonce="c", nc=00000001`:                      `qop="auth", rspauth="<rspauth>", cnonce="c", nc=00000001`,
		`Basic realm="nonce="`:        `Basic realm="nonce="`,
		`qop="auth", xrspauth="0123"`: `qop="auth", xrspauth="0123"`,
	} {
		require.Equal(t, want, maskNonce(in), in)
	}
}

// TestDigestHandshake: a request with digest: answers the challenge; the
// wrong password, or a route with no digest challenge, reports what came.
func TestDigestHandshake(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "digest.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`
- name: digest
  objects:
    - {apiVersion: networking.k8s.io/v1, kind: IngressClass, metadata: {name: ramjet}, spec: {controller: ramjet.dev/ingress}}
    - {apiVersion: v1, kind: Service, metadata: {name: web, namespace: demo}, spec: {ports: [{port: 80, targetPort: 8080}]}}
    - {apiVersion: discovery.k8s.io/v1, kind: EndpointSlice, metadata: {name: web-1, namespace: demo, labels: {kubernetes.io/service-name: web}}, addressType: IPv4, ports: [{name: "", port: 8080}], endpoints: [{addresses: [10.0.1.1]}]}
    - {apiVersion: v1, kind: Secret, metadata: {name: d, namespace: demo}, type: Opaque, stringData: {auth: "alice:private:d26b55c491fd648f2db95a6b937f019e\n"}}
    - apiVersion: networking.k8s.io/v1
      kind: Ingress
      metadata: {name: d, namespace: demo, annotations: {nginx.ingress.kubernetes.io/auth-type: digest, nginx.ingress.kubernetes.io/auth-secret: d, nginx.ingress.kubernetes.io/auth-realm: private}}
      spec: {ingressClassName: ramjet, rules: [{host: d.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]}
  warnings: []
  requests:
    - {host: d.example.com, path: /x, digest: {username: alice, password: wonderland}, repeat: 2, expect: {status: 200}}
    - {host: d.example.com, path: /x, digest: {again: true}, expect: {status: 401}}
    - {host: d.example.com, path: /x, digest: {username: alice, password: wrong}, expect: {status: 200}}
`), 0o644))
	cases, err := LoadCases(file)
	require.NoError(t, err)
	res := Run(cases[0])
	require.True(t, res.Requests[0].Pass, res.Report())
	require.True(t, res.Requests[1].Pass, "the previous Authorization again is a replay: %s", res.Report())
	require.False(t, res.Requests[2].Pass)
	require.Equal(t, []Mismatch{{Field: "status", Want: "200", Got: "401 (unauthorized)"}}, res.Requests[2].Mismatches)
	require.Contains(t, res.Report(), `requests[2]: GET /x host="d.example.com" digest="alice"`)

	require.NoError(t, os.WriteFile(file, []byte(`
- name: no user
  objects: []
  warnings: []
  requests:
    - {host: d.example.com, path: /x, digest: {password: wonderland}, expect: {status: 200}}
`), 0o644))
	_, err = LoadCases(file)
	require.ErrorContains(t, err, "digest.username: required")

	require.NoError(t, os.WriteFile(file, []byte(`
- name: again with a user
  objects: []
  warnings: []
  requests:
    - {host: d.example.com, path: /x, digest: {again: true, username: alice}, expect: {status: 200}}
`), 0o644))
	_, err = LoadCases(file)
	require.ErrorContains(t, err, "digest.again")
}
