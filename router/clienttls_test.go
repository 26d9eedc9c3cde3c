package router

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// clientTestCert makes a certificate for subject, self-signed when parent is
// nil.
func clientTestCert(t *testing.T, cn string, ca bool, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: ca, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return cert, key
}

// TestClientChainVerifiedOncePerConnection: a connection's client chain
// is verified once for a host's settings, as nginx verifies it in the
// handshake, not again on each request of the connection; another
// connection, even one presenting the same certificate, is verified anew.
func TestClientChainVerifiedOncePerConnection(t *testing.T) {
	ca, caKey := clientTestCert(t, "ca", true, nil, nil)
	leaf, _ := clientTestCert(t, "alice", false, ca, caKey)
	stranger, _ := clientTestCert(t, "mallory", false, nil, nil)
	c, err := match.NewClientTLS(match.ClientTLS{Secret: "prod/ca", CAs: []*x509.Certificate{ca}, Verify: match.VerifyOn, VerifyDepth: 1})
	require.NoError(t, err)
	_, addr := echoBackend(t, "web")
	vh := vhost("secure.example.com", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))
	vh.ClientTLS = c
	r := newTestRouter(Options{})
	r.Publish(table("client-tls", vh))

	serveOn := func(cs *tls.ConnectionState) int {
		req := httptest.NewRequest(http.MethodGet, "https://secure.example.com/", nil)
		req.TLS = cs
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		return rec.Code
	}
	good := &tls.ConnectionState{ServerName: "secure.example.com", PeerCertificates: []*x509.Certificate{leaf}}
	bad := &tls.ConnectionState{ServerName: "secure.example.com", PeerCertificates: []*x509.Certificate{stranger}}
	for range 5 {
		require.Equal(t, http.StatusOK, serveOn(good))
		require.Equal(t, http.StatusBadRequest, serveOn(bad))
	}
	assert.EqualValues(t, 2, r.chains.verified.Load(), "one verification per connection")

	again := &tls.ConnectionState{ServerName: "secure.example.com", PeerCertificates: []*x509.Certificate{leaf}}
	require.Equal(t, http.StatusOK, serveOn(again))
	assert.EqualValues(t, 3, r.chains.verified.Load(), "a new connection's chain is verified")
}
