package main

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// signedPair makes a CA and a server certificate for host signed by it.
func signedPair(t *testing.T, host string) (ca *x509.Certificate, pair tls.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "passthrough CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err = x509.ParseCertificate(caDER)
	require.NoError(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return ca, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

func passthroughManifests(port string) string {
	return fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: secure
  namespace: t
  annotations:
    nginx.ingress.kubernetes.io/ssl-passthrough: "true"
spec:
  ingressClassName: ramjet
  rules:
    - host: secure.test
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: secure, port: {number: 443}}}}
---
apiVersion: v1
kind: Service
metadata: {name: secure, namespace: t}
spec: {ports: [{port: 443, targetPort: %[1]s}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: secure-1, namespace: t, labels: {kubernetes.io/service-name: secure}}
addressType: IPv4
ports: [{name: "", port: %[1]s}]
endpoints: [{addresses: [127.0.0.1]}]
`, port)
}

// With --enable-ssl-passthrough, a connection whose SNI names an
// ssl-passthrough host reaches its backend with the client's own TLS: the
// client verifies the backend's certificate, which the controller never
// holds, against a CA only the client knows; another host on the same
// listener is terminated and routed as before (ingress-nginx's
// test/e2e/annotations/sslpassthrough.go, SPEC §12).
func TestSSLPassthrough(t *testing.T) {
	ca, pair := signedPair(t, "secure.test")
	secure := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "backend sni=%s path=%s", r.TLS.ServerName, r.URL.Path)
	}))
	secure.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	secure.Config.ErrorLog = log.New(io.Discard, "", 0)
	secure.StartTLS()
	t.Cleanup(secure.Close)
	u, err := url.Parse(secure.URL)
	require.NoError(t, err)

	port, _ := schemeBackend(t)
	inst, cancel := startOfflineApp(t, port, func(c *config) {
		c.options.EnableSSLPassthrough = true
		writeFile(t, filepath.Join(c.manifests, "secure.yaml"), passthroughManifests(u.Port()))
	})
	t.Cleanup(func() {
		cancel()
		_ = inst.Wait()
	})

	roots := x509.NewCertPool()
	roots.AddCert(ca)
	ask := func(c net.Conn, host, path string) string {
		t.Helper()
		require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
		_, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, host)
		require.NoError(t, err)
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return string(b)
	}

	// The table is loaded before start returns; a few tries allow for the
	// first publish all the same.
	var c *tls.Conn
	require.Eventually(t, func() bool {
		c, err = tls.Dial("tcp", inst.HTTPSAddr, &tls.Config{ServerName: "secure.test", RootCAs: roots})
		return err == nil
	}, 5*time.Second, 50*time.Millisecond, "the client verifies the backend's certificate: %v", err)
	defer c.Close()
	assert.Equal(t, pair.Leaf.SerialNumber, c.ConnectionState().PeerCertificates[0].SerialNumber, "the backend's certificate, not the controller's")
	assert.Equal(t, "backend sni=secure.test path=/through", ask(c, "secure.test", "/through"))

	// Another host on the same listener: terminated by the controller
	// (its default certificate) and routed over HTTP to its backend.
	other, err := tls.Dial("tcp", inst.HTTPSAddr, &tls.Config{ServerName: "app.test", InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
	require.NoError(t, err)
	defer other.Close()
	assert.Equal(t, "ramjet default certificate", other.ConnectionState().PeerCertificates[0].Subject.CommonName)
	assert.Equal(t, `proto=https body=""`, ask(other, "app.test", "/"))

	// Without the backend's CA the handshake fails: no certificate of the
	// controller's stands in for the backend's.
	_, err = tls.Dial("tcp", inst.HTTPSAddr, &tls.Config{ServerName: "secure.test", RootCAs: x509.NewCertPool()})
	require.Error(t, err, "a client without the CA cannot verify the backend: nothing of the controller's is in between")
}
