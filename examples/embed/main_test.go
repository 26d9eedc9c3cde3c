package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// backend answers with its name and the request-target it received.
func backend(t *testing.T, name string) (ip, port string) {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Seen-Checked", r.Header.Get("X-Checked-Header"))
		fmt.Fprintf(w, "%s %s", name, r.RequestURI)
	}))
	t.Cleanup(s.Close)
	ip, port, err := net.SplitHostPort(s.Listener.Addr().String())
	require.NoError(t, err)
	return ip, port
}

func writeManifests(t *testing.T, dir, ip, port string) {
	t.Helper()
	doc := fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ramjet}
spec: {controller: ramjet.dev/ingress}
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop}
spec: {ports: [{port: 80, targetPort: %[2]s}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: api-1, namespace: shop, labels: {kubernetes.io/service-name: api}}
addressType: IPv4
ports: [{name: "", port: %[2]s}]
endpoints: [{addresses: [%[1]s]}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: shop}
spec:
  ingressClassName: ramjet
  rules:
  - host: shop.example.com
    http: {paths: [{path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: admin
  namespace: shop
  annotations: {example.com/require-header: X-Api-Key}
spec:
  ingressClassName: ramjet
  rules:
  - host: shop.example.com
    http: {paths: [{path: /admin, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: vault
  namespace: shop
  annotations: {example.com/require-header: X-Vault-Key}
spec:
  ingressClassName: ramjet
  defaultBackend: {service: {name: api, port: {number: 80}}}
  rules:
  - host: vault.example.com
`, ip, port)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "shop.yaml"), []byte(doc), 0o644))
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestEmbedded(t *testing.T) {
	dir := t.TempDir()
	ip, port := backend(t, "v1")
	writeManifests(t, dir, ip, port)
	logs := &syncBuffer{}
	a, err := start(dir, "127.0.0.1:0", slog.New(slog.NewTextHandler(logs, nil)))
	require.NoError(t, err)

	get := func(client *http.Client, host, target string) (int, string, int) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, "http://"+a.addr+"/", nil)
		require.NoError(t, err)
		req.URL.Opaque = target // sent as written, not cleaned
		req.Host = host
		res, err := client.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, string(b), res.ProtoMajor
	}
	h1 := &http.Client{Transport: &http.Transport{}}
	defer h1.CloseIdleConnections()
	h2c := &http.Client{Transport: &http.Transport{Protocols: new(http.Protocols)}}
	h2c.Transport.(*http.Transport).Protocols.SetUnencryptedHTTP2(true)
	defer h2c.CloseIdleConnections()

	// The embedder's own endpoint, on any host, never routed.
	status, body, _ := get(h1, "anything.example", "/healthz")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "ok\n", body)

	// Routed, with the request-target passed through untouched: a ServeMux
	// in front would have redirected "//" and "..".
	status, body, _ = get(h1, "shop.example.com", "/api//items/../x?q=1")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "v1 /api//items/../x?q=1", body)
	status, body, proto := get(h2c, "shop.example.com", "/api/v2")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "v1 /api/v2", body)
	assert.Equal(t, 2, proto, "cleartext HTTP/2 with prior knowledge")
	status, _, _ = get(h1, "shop.example.com", "/other")
	assert.Equal(t, http.StatusNotFound, status)

	// A changed folder is picked up by reload.
	ip2, port2 := backend(t, "v2")
	writeManifests(t, dir, ip2, port2)
	require.NoError(t, a.reload())
	_, body, _ = get(h1, "shop.example.com", "/api/x")
	assert.Equal(t, "v2 /api/x", body)
	assert.Equal(t, uint64(2), a.router.Generation())

	// A folder that does not load keeps the table serving.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("kind: [unterminated"), 0o644))
	require.Error(t, a.reload())
	_, body, _ = get(h1, "shop.example.com", "/api/x")
	assert.Equal(t, "v2 /api/x", body)

	// The embedder's annotation, enforced for its Ingress only.
	do := func(target string, header http.Header) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, "http://"+a.addr+target, nil)
		require.NoError(t, err)
		req.Host = "shop.example.com"
		maps.Copy(req.Header, header)
		res, err := h1.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	res := do("/admin/users", nil)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
	assert.Len(t, res.Header.Get("X-Request-Id"), 32, "the client is given the request ID")
	res = do("/admin/users", http.Header{"X-Api-Key": {"k"}})
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "X-Api-Key", res.Header.Get("X-Seen-Checked"), "the hook's request header reached the backend")
	res = do("/api/x", http.Header{"X-Request-Id": {"client-id-1"}})
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Empty(t, res.Header.Get("X-Seen-Checked"), "another Ingress is not checked")
	assert.Equal(t, "client-id-1", res.Header.Get("X-Request-Id"))
	assert.Equal(t, int64(6), a.upstreamRequests.Load(), "every proxied request went through the wrapped default transport")

	// The host fallback an annotated Ingress's spec.defaultBackend makes is
	// that Ingress's location too: checked like its routes.
	req, err := http.NewRequest(http.MethodGet, "http://"+a.addr+"/anything", nil)
	require.NoError(t, err)
	req.Host = "vault.example.com"
	res, err = h1.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "the fallback is checked too")

	out := logs.String()
	assert.Contains(t, out, `msg=routed requestID=client-id-1 client=127.0.0.1 vhost=shop.example.com ingress=shop/shop service=shop/api:80 endpoint=`+ip2+":"+port2+" status=200")
	assert.Regexp(t, `msg=routed requestID=[0-9a-f]{32} client=127.0.0.1 vhost=shop.example.com ingress=shop/admin service=shop/api:80 endpoint="" status=401 reason=hook`, out)
	assert.Contains(t, out, `msg=request method=GET host=shop.example.com target="/api//items/../x?q=1" proto=HTTP/1.1 status=200`)
	assert.Contains(t, out, `target=/healthz`)
	assert.Contains(t, out, "proto=HTTP/2.0")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, a.shutdown(ctx))
	_, err = net.DialTimeout("tcp", a.addr, time.Second)
	assert.Error(t, err, "the listener is closed")
	assert.False(t, strings.Contains(out, "level=ERROR"), out)
}
