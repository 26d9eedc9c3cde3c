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
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
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

// testCRL is a CRL of issuer revoking serials, current unless expired.
func testCRL(t *testing.T, issuer *x509.Certificate, key *ecdsa.PrivateKey, expired bool, revoked ...*x509.Certificate) *x509.RevocationList {
	t.Helper()
	tmpl := &x509.RevocationList{Number: big.NewInt(1), ThisUpdate: time.Now().Add(-time.Hour), NextUpdate: time.Now().Add(time.Hour)}
	if expired {
		tmpl.ThisUpdate, tmpl.NextUpdate = time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour)
	}
	for _, c := range revoked {
		tmpl.RevokedCertificateEntries = append(tmpl.RevokedCertificateEntries, x509.RevocationListEntry{SerialNumber: c.SerialNumber, RevocationTime: time.Now().Add(-time.Hour)})
	}
	der, err := x509.CreateRevocationList(rand.Reader, tmpl, issuer, key)
	require.NoError(t, err)
	crl, err := x509.ParseRevocationList(der)
	require.NoError(t, err)
	return crl
}

// TestClientChainCRL: with CRLs (the Secret's ca.crl), a revoked client
// certificate is refused, and every certificate of the chain below the
// trust anchor needs a current CRL of its issuer, as nginx's ssl_crl
// checks them (OpenSSL's CRL_CHECK_ALL; "openssl verify -crl_check_all"
// gives the same verdicts).
func TestClientChainCRL(t *testing.T) {
	root, rootKey := clientTestCert(t, "root", true, nil, nil)
	inter, interKey := clientTestCert(t, "inter", true, root, rootKey)
	leaf0, _ := clientTestCert(t, "leaf0", false, root, rootKey)
	leaf1, _ := clientTestCert(t, "leaf1", false, inter, interKey)
	leaf1b, _ := clientTestCert(t, "leaf1b", false, inter, interKey)
	impostor, impostorKey := clientTestCert(t, "root", true, nil, nil) // the root's name, another key
	rootCRL := testCRL(t, root, rootKey, false)
	interCRL := testCRL(t, inter, interKey, false, leaf1)
	for _, tc := range []struct {
		name  string
		crls  []*x509.RevocationList
		chain []*x509.Certificate
		want  string // opensslVerifyError's text, "" for a pass
	}{
		{"no CRLs, no check", nil, []*x509.Certificate{leaf1, inter}, ""},
		{"covered by the root's CRL", []*x509.RevocationList{rootCRL}, []*x509.Certificate{leaf0}, ""},
		{"the issuer's CRL is missing", []*x509.RevocationList{interCRL}, []*x509.Certificate{leaf0}, "unable to get certificate CRL"},
		{"revoked", []*x509.RevocationList{rootCRL, interCRL}, []*x509.Certificate{leaf1, inter}, "certificate revoked"},
		{"not revoked", []*x509.RevocationList{rootCRL, interCRL}, []*x509.Certificate{leaf1b, inter}, ""},
		{"the intermediate's issuer has no CRL", []*x509.RevocationList{interCRL}, []*x509.Certificate{leaf1b, inter}, "unable to get certificate CRL"},
		{"expired", []*x509.RevocationList{testCRL(t, root, rootKey, true)}, []*x509.Certificate{leaf0}, "CRL has expired"},
		{"signed by another key", []*x509.RevocationList{testCRL(t, impostor, impostorKey, false)}, []*x509.Certificate{leaf0}, "unable to get certificate CRL"},
	} {
		c, err := match.NewClientTLS(match.ClientTLS{Secret: "prod/ca", CAs: []*x509.Certificate{root}, CRLs: tc.crls, Verify: match.VerifyOn, VerifyDepth: 1})
		require.NoError(t, err)
		err = verifyClientChain(c, tc.chain)
		if tc.want == "" {
			assert.NoError(t, err, tc.name)
			continue
		}
		if assert.Error(t, err, tc.name) {
			assert.Equal(t, tc.want, opensslVerifyError(err, tc.chain), tc.name)
		}
	}
}
