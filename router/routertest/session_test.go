package routertest

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

const splitCase = `
name: split
objects:
- {apiVersion: networking.k8s.io/v1, kind: IngressClass, metadata: {name: ramjet}, spec: {controller: ramjet.dev/ingress}}
- {apiVersion: v1, kind: Service, metadata: {name: web, namespace: prod}, spec: {ports: [{port: 80}]}}
- {apiVersion: discovery.k8s.io/v1, kind: EndpointSlice, metadata: {name: web-1, namespace: prod, labels: {kubernetes.io/service-name: web}}, addressType: IPv4, ports: [{name: "", port: 80}], endpoints: [{addresses: [10.0.0.1]}, {addresses: [10.0.0.2]}]}
- {apiVersion: v1, kind: Service, metadata: {name: next, namespace: prod}, spec: {ports: [{port: 80}]}}
- {apiVersion: discovery.k8s.io/v1, kind: EndpointSlice, metadata: {name: next-1, namespace: prod, labels: {kubernetes.io/service-name: next}}, addressType: IPv4, ports: [{name: "", port: 80}], endpoints: [{addresses: [10.0.1.1]}]}
- apiVersion: networking.k8s.io/v1
  kind: Ingress
  metadata: {name: web, namespace: prod, annotations: {nginx.ingress.kubernetes.io/affinity: cookie, nginx.ingress.kubernetes.io/affinity-mode: persistent}}
  spec: {ingressClassName: ramjet, rules: [{host: a.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]}
- apiVersion: networking.k8s.io/v1
  kind: Ingress
  metadata: {name: next, namespace: prod, annotations: {nginx.ingress.kubernetes.io/canary: "true", nginx.ingress.kubernetes.io/canary-weight: "25"}}
  spec: {ingressClassName: ramjet, rules: [{host: a.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: next, port: {number: 80}}}}]}}]}
requests:
- {host: a.example.com, path: /, repeat: 8, expect: {services: {prod/web:80: 5, prod/next:80: 3}}}
- {host: a.example.com, path: /, session: true, repeat: 6, expect: {distinctEndpoints: 1}}
- {host: a.example.com, path: /, repeat: 4, expect: {services: {prod/web:80: 3, prod/next:80: 1}}}
`

// expect.services counts requests per backend over the repeats; session
// requests share the case's cookies.
func TestServicesAndSession(t *testing.T) {
	f := filepath.Join(t.TempDir(), "split.yaml")
	require.NoError(t, os.WriteFile(f, []byte(splitCase), 0o644))
	cases, err := LoadFile(f)
	require.NoError(t, err)
	res := Run(cases[0])
	var got [][]Mismatch
	for _, rr := range res.Requests {
		got = append(got, rr.Mismatches)
	}
	want := [][]Mismatch{
		{{Field: "services", Want: "{prod/next:80: 3, prod/web:80: 5}", Got: "{prod/next:80: 2, prod/web:80: 6} over 8 requests"}},
		// The session is placed on the primary, whose cookie keeps it
		// there: the canary's weight no longer applies to it.
		nil,
		nil,
	}
	require.Empty(t, cmp.Diff(want, got))
	require.Equal(t, "prod/web:80", res.Requests[1].Got.Service)
	require.True(t, cases[0].Requests[1].Session)
	require.Contains(t, cases[0].Requests[1].String(), " session")
}

func TestServicesValidated(t *testing.T) {
	for _, tt := range []struct{ expect, want string }{
		{`{services: {prod/web: 1}}`, "expect.services:"},
		{`{services: {prod/web:80: 3}}`, "expect.services.prod/web:80: 3: want 0 to repeat (2)"},
	} {
		f := filepath.Join(t.TempDir(), "bad.yaml")
		body := "name: bad\nobjects: []\nrequests:\n- {host: a, path: /, repeat: 2, expect: " + tt.expect + "}\n"
		require.NoError(t, os.WriteFile(f, []byte(body), 0o644))
		_, err := LoadFile(f)
		require.ErrorContains(t, err, tt.want)
	}
}

func TestCookieJar(t *testing.T) {
	var j cookieJar
	r := Request{Headers: map[string]string{"cookie": "own=1", "X-A": "b"}}
	require.Equal(t, r, j.with(r), "nothing kept yet")
	j.keep(http.Header{"Set-Cookie": {"a=1; Path=/; HttpOnly", "b=2", "broken"}})
	j.keep(http.Header{"Set-Cookie": {"a=3; Max-Age=10"}})
	got := j.with(r)
	require.Equal(t, map[string]string{"Cookie": "own=1; a=3; b=2", "X-A": "b"}, got.Headers)
	require.Equal(t, map[string]string{"cookie": "own=1", "X-A": "b"}, r.Headers, "the request itself is unchanged")
}
