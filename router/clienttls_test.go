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

// TestClientChainVerifyDepth: auth-tls-verify-depth counts the CA
// certificates between the client's and the trust anchor, as OpenSSL
// (1.1.0 on, ingress-nginx's) counts ssl_verify_depth: depth n accepts n
// intermediates, so the default 1 accepts a certificate issued by an
// intermediate whose root is in ca.crt ("openssl verify -verify_depth 1").
func TestClientChainVerifyDepth(t *testing.T) {
	root, rootKey := clientTestCert(t, "root", true, nil, nil)
	inter1, inter1Key := clientTestCert(t, "inter1", true, root, rootKey)
	inter2, inter2Key := clientTestCert(t, "inter2", true, inter1, inter1Key)
	leaf0, _ := clientTestCert(t, "leaf0", false, root, rootKey)
	leaf1, _ := clientTestCert(t, "leaf1", false, inter1, inter1Key)
	leaf2, _ := clientTestCert(t, "leaf2", false, inter2, inter2Key)
	chains := map[string][]*x509.Certificate{
		"leaf0": {leaf0},
		"leaf1": {leaf1, inter1},
		"leaf2": {leaf2, inter2, inter1},
	}
	for _, tc := range []struct {
		depth int
		ok    []string
		fail  []string
	}{
		{0, []string{"leaf0"}, []string{"leaf1", "leaf2"}},
		{1, []string{"leaf0", "leaf1"}, []string{"leaf2"}},
		{2, []string{"leaf0", "leaf1", "leaf2"}, nil},
	} {
		c, err := match.NewClientTLS(match.ClientTLS{Secret: "prod/ca", CAs: []*x509.Certificate{root}, Verify: match.VerifyOn, VerifyDepth: tc.depth})
		require.NoError(t, err)
		for _, name := range tc.ok {
			assert.NoError(t, verifyClientChain(c, chains[name]), "depth %d %s", tc.depth, name)
		}
		for _, name := range tc.fail {
			assert.ErrorIs(t, verifyClientChain(c, chains[name]), errChainTooLong, "depth %d %s", tc.depth, name)
		}
	}
}
