package router_test

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
)

// These tests go from manifests through compile to the router, as a
// controller does: the certificate a TLS client sees follows the Secret,
// and the listener is never restarted.

// pemPair makes a self-signed certificate for names and returns the PEM
// certificate, the PEM key and the parsed leaf.
func pemPair(t *testing.T, names ...string) (certPEM, keyPEM []byte, leaf *x509.Certificate) {
	t.Helper()
	c := router.TestCert(t, names...)
	kder, err := x509.MarshalECPrivateKey(c.PrivateKey.(*ecdsa.PrivateKey))
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), c.Leaf
}

// shopManifests is a TLS Ingress for tlsHost, served by backendAddr, with
// its kubernetes.io/tls Secret holding crt and key.
func shopManifests(t *testing.T, tlsHost, backendAddr string, crt, key []byte) compile.Snapshot {
	t.Helper()
	ip, port, err := net.SplitHostPort(backendAddr)
	require.NoError(t, err)
	b64 := base64.StdEncoding.EncodeToString
	doc := fmt.Sprintf(`
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ramjet}
spec: {controller: ramjet.dev/ingress}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: prod}
spec: {ports: [{port: 80, targetPort: %[3]s}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-1, namespace: prod, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: "", port: %[3]s}]
endpoints: [{addresses: [%[2]s]}]
---
apiVersion: v1
kind: Secret
metadata: {name: shop-tls, namespace: prod}
type: kubernetes.io/tls
data: {tls.crt: %[4]q, tls.key: %[5]q}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: prod}
spec:
  ingressClassName: ramjet
  tls: [{hosts: [%[1]q], secretName: shop-tls}]
  rules:
  - host: %[1]q
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
`, tlsHost, ip, port, b64(crt), b64(key))
	s, skipped, err := manifest.Decode("shop.yaml", []byte(doc))
	require.NoError(t, err)
	require.Empty(t, skipped)
	return *s
}

func servedCertificate(t *testing.T, addr, serverName string) *x509.Certificate {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{ServerName: serverName, InsecureSkipVerify: true})
	require.NoError(t, err)
	defer c.Close()
	certs := c.ConnectionState().PeerCertificates
	require.NotEmpty(t, certs)
	return certs[0]
}

func hasReason(ws []compile.Warning, reason compile.Reason) bool {
	for _, w := range ws {
		if w.Reason == reason {
			return true
		}
	}
	return false
}

func TestCertificateRotation(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "served "+r.Header.Get("X-Forwarded-Proto"))
	}))
	defer backend.Close()
	addr := backend.Listener.Addr().String()

	r := router.New(router.Options{Logger: slog.New(slog.DiscardHandler)})
	ln, err := tls.Listen("tcp", "127.0.0.1:0", r.TLSConfig())
	require.NoError(t, err)
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	front := ln.Addr().String()

	certA, keyA, leafA := pemPair(t, "shop.example.com")
	certB, keyB, leafB := pemPair(t, "shop.example.com")
	pool := x509.NewCertPool()
	pool.AddCert(leafA)
	pool.AddCert(leafB)
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool, ServerName: "shop.example.com"},
		ForceAttemptHTTP2: true,
	}}
	defer client.CloseIdleConnections()
	get := func() string {
		req, err := http.NewRequest(http.MethodGet, "https://"+front+"/", nil)
		require.NoError(t, err)
		req.Host = "shop.example.com"
		res, err := client.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return string(b)
	}

	publish := func(crt, key []byte) []compile.Warning {
		res := compile.Compile(shopManifests(t, "shop.example.com", addr, crt, key), compile.Options{AllowLoopbackEndpoints: true})
		_, changed := r.Publish(res.Table)
		require.True(t, changed)
		return res.Warnings
	}

	require.Empty(t, publish(certA, keyA))
	assert.Equal(t, leafA.SerialNumber, servedCertificate(t, front, "shop.example.com").SerialNumber)
	assert.Equal(t, "served https", get(), "verifies against certificate A")

	// Rotation: a new table, the same listener.
	require.Empty(t, publish(certB, keyB))
	assert.Equal(t, leafB.SerialNumber, servedCertificate(t, front, "shop.example.com").SerialNumber)
	assert.Equal(t, leafB.SerialNumber, servedCertificate(t, front, "SHOP.example.com.").SerialNumber, "SNI is case-insensitive")
	assert.Equal(t, "served https", get(), "a connection opened before the rotation keeps working")
	client.CloseIdleConnections()
	assert.Equal(t, "served https", get(), "a new connection verifies against certificate B")

	// Rotated to garbage: the host falls back to the default certificate,
	// compile says why, and plain HTTP to the host is still redirected.
	warnings := publish([]byte("-----BEGIN CERTIFICATE-----\nZ2FyYmFnZQ==\n-----END CERTIFICATE-----\n"), keyB)
	require.True(t, hasReason(warnings, compile.SecretInvalid), "warnings: %v", warnings)
	def := servedCertificate(t, front, "shop.example.com")
	assert.Equal(t, "ramjet default certificate", def.Subject.CommonName)
	assert.NotEqual(t, leafB.SerialNumber, def.SerialNumber)
	req := httptest.NewRequest(http.MethodGet, "/cart/", nil)
	req.Host = "shop.example.com"
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	assert.Equal(t, http.StatusPermanentRedirect, w.Code)
	assert.Equal(t, "https://shop.example.com/cart", w.Header().Get("Location"))

	// And back: the next valid Secret is served again.
	require.Empty(t, publish(certA, keyA))
	assert.Equal(t, leafA.SerialNumber, servedCertificate(t, front, "shop.example.com").SerialNumber)
}

func TestCertificateSelectionFromSecrets(t *testing.T) {
	certW, keyW, leafW := pemPair(t, "*.example.com")
	res := compile.Compile(shopManifests(t, "*.example.com", "127.0.0.1:8080", certW, keyW), compile.Options{AllowLoopbackEndpoints: true})
	require.Empty(t, res.Warnings)
	tab := res.Table
	defCrt, defKey, defLeaf := pemPair(t, "default.invalid")
	configured, err := tls.X509KeyPair(defCrt, defKey)
	require.NoError(t, err)
	r := router.New(router.Options{Logger: slog.New(slog.DiscardHandler), DefaultCertificate: &configured})
	r.Publish(tab)

	tests := []struct {
		sni  string
		want *x509.Certificate
	}{
		{"api.example.com", leafW},
		{"API.Example.Com.", leafW},
		{"a.b.example.com", defLeaf},
		{"example.com", defLeaf},
		{"", defLeaf},
	}
	for _, tt := range tests {
		c, err := r.GetCertificate(&tls.ClientHelloInfo{ServerName: tt.sni})
		require.NoError(t, err)
		assert.Equal(t, tt.want.Raw, c.Certificate[0], "SNI %q", tt.sni)
	}
}
