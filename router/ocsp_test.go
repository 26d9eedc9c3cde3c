package router

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ocsp"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/configmap"
)

// enable-ocsp (nginx.tmpl: "ssl_stapling on; ssl_stapling_verify on;"
// when $cfg.EnableOCSP), served against an OCSP responder on loopback that
// the certificate's Authority Information Access names.

// ocspCA is a CA and its OCSP responder.
type ocspCA struct {
	cert *x509.Certificate
	key  crypto.Signer
	srv  *httptest.Server
	// status is what the responder answers (ocsp.Good, ocsp.Revoked),
	// or -1: 500, as a responder that is down.
	status atomic.Int64
	// lifetime is NextUpdate's distance from ThisUpdate (0: none).
	lifetime atomic.Int64
	// signer signs the responses (nil: the CA).
	signer atomic.Pointer[ecdsa.PrivateKey]
	asked  atomic.Int64
}

func newOCSPCA(t *testing.T) *ocspCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ramjet test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	ca := &ocspCA{key: key}
	ca.cert, err = x509.ParseCertificate(der)
	require.NoError(t, err)
	ca.lifetime.Store(int64(time.Hour))
	ca.srv = httptest.NewServer(http.HandlerFunc(ca.respond))
	t.Cleanup(ca.srv.Close)
	return ca
}

func (ca *ocspCA) respond(w http.ResponseWriter, r *http.Request) {
	ca.asked.Add(1)
	body, _ := io.ReadAll(r.Body)
	req, err := ocsp.ParseRequest(body)
	status := int(ca.status.Load())
	if err != nil || r.Method != http.MethodPost || status < 0 {
		http.Error(w, "down", http.StatusInternalServerError)
		return
	}
	now := time.Now()
	tmpl := ocsp.Response{Status: status, SerialNumber: req.SerialNumber, ThisUpdate: now.Add(-time.Second)}
	if l := time.Duration(ca.lifetime.Load()); l > 0 {
		tmpl.NextUpdate = tmpl.ThisUpdate.Add(l)
	}
	if status == ocsp.Revoked {
		tmpl.RevokedAt, tmpl.RevocationReason = now.Add(-time.Hour), ocsp.KeyCompromise
	}
	var signer crypto.Signer = ca.key
	if k := ca.signer.Load(); k != nil {
		signer = k
	}
	der, err := ocsp.CreateResponse(ca.cert, ca.cert, tmpl, signer)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/ocsp-response")
	_, _ = w.Write(der)
}

// issue makes a certificate for name whose AIA names responders, with the
// CA in its chain.
func (ca *ocspCA) issue(t *testing.T, name string, responders ...string) *tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		OCSPServer: responders,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return &tls.Certificate{Certificate: [][]byte{der, ca.cert.Raw}, PrivateKey: key, Leaf: leaf}
}

// HandshakeListener serves r's TLSConfig on loopback, handshakes only
// (exported for the router_test package's TLS tests too).
func HandshakeListener(t *testing.T, r *Router) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", r.TLSConfig())
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				_ = c.(*tls.Conn).Handshake()
			}()
		}
	}()
	return ln.Addr().String()
}

// stapledResponse handshakes with a client that trusts ca and returns the
// stapled response (nil: none), failing the test if the handshake takes
// more than a second.
func stapledResponse(t *testing.T, addr string, ca *ocspCA, name string) *ocsp.Response {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	start := time.Now()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{RootCAs: pool, ServerName: name})
	require.NoError(t, err)
	defer c.Close()
	require.Less(t, time.Since(start), time.Second, "the handshake waited")
	st := c.ConnectionState()
	if st.OCSPResponse == nil {
		return nil
	}
	resp, err := ocsp.ParseResponseForCert(st.OCSPResponse, st.PeerCertificates[0], ca.cert)
	require.NoError(t, err)
	return resp
}

func ocspRouter(t *testing.T, timing ocspTiming) *Router {
	t.Helper()
	p := configmap.DefaultTLS()
	p.EnableOCSP = true
	r := newTestRouter(Options{TLS: &p})
	require.NotNil(t, r.ocsp)
	r.ocsp.timing = timing
	t.Cleanup(r.ocsp.stop)
	return r
}

var fastOCSP = ocspTiming{
	margin: time.Second, minRefresh: 100 * time.Millisecond, maxRefresh: time.Hour,
	retry: 20 * time.Millisecond, maxRetry: 100 * time.Millisecond, idle: time.Hour, timeout: 10 * time.Second,
}

func TestOCSPStapledAndRefreshed(t *testing.T) {
	ca := newOCSPCA(t)
	ca.lifetime.Store(int64(2500 * time.Millisecond)) // valid 1.5 s from the fetch, refreshed after 0.5 s
	cert := ca.issue(t, "shop.example.com", ca.srv.URL)
	r := ocspRouter(t, fastOCSP)
	r.Publish(mustTable(match.Spec{Certificates: []*match.Certificate{{Secret: "prod/shop-tls", Hosts: []string{"shop.example.com"}, Cert: cert}}}))
	addr := HandshakeListener(t, r)

	// Fetched on publishing, before any handshake asked.
	var first *ocsp.Response
	require.Eventually(t, func() bool { first = stapledResponse(t, addr, ca, "shop.example.com"); return first != nil },
		5*time.Second, 20*time.Millisecond)
	assert.Equal(t, ocsp.Good, first.Status)
	assert.Equal(t, cert.Leaf.SerialNumber, first.SerialNumber)

	// Refreshed before NextUpdate: a later response is served.
	require.Eventually(t, func() bool {
		resp := stapledResponse(t, addr, ca, "shop.example.com")
		return resp != nil && resp.ThisUpdate.After(first.ThisUpdate)
	}, 5*time.Second, 50*time.Millisecond)
	assert.GreaterOrEqual(t, ca.asked.Load(), int64(2))

	// The responder goes down: the last response is served while valid,
	// and not after its NextUpdate.
	ca.status.Store(-1)
	asked := ca.asked.Load()
	require.NotNil(t, stapledResponse(t, addr, ca, "shop.example.com"))
	require.Eventually(t, func() bool { return stapledResponse(t, addr, ca, "shop.example.com") == nil },
		5*time.Second, 50*time.Millisecond)
	assert.Greater(t, ca.asked.Load(), asked+1, "retried")

	// It comes back: stapled again.
	ca.status.Store(ocsp.Good)
	require.Eventually(t, func() bool { return stapledResponse(t, addr, ca, "shop.example.com") != nil },
		5*time.Second, 20*time.Millisecond)
}

// A responder that is down, or never answers, costs a handshake nothing:
// the certificate is served without a staple.
func TestOCSPResponderDownNeverBlocks(t *testing.T) {
	ca := newOCSPCA(t)
	hang, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer hang.Close()
	go func() {
		for {
			c, err := hang.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	hanging := ca.issue(t, "hang.example.com", "http://"+hang.Addr().String()+"/")
	ca.status.Store(-1)
	down := ca.issue(t, "down.example.com", ca.srv.URL)
	r := ocspRouter(t, fastOCSP)
	r.Publish(mustTable(match.Spec{Certificates: []*match.Certificate{
		{Secret: "prod/hang-tls", Hosts: []string{"hang.example.com"}, Cert: hanging},
		{Secret: "prod/down-tls", Hosts: []string{"down.example.com"}, Cert: down},
	}}))
	addr := HandshakeListener(t, r)
	for range 5 {
		assert.Nil(t, stapledResponse(t, addr, ca, "hang.example.com"))
		assert.Nil(t, stapledResponse(t, addr, ca, "down.example.com"))
		time.Sleep(50 * time.Millisecond)
	}
	assert.Greater(t, ca.asked.Load(), int64(2), "retried with backoff")
	ca.status.Store(ocsp.Good)
	require.Eventually(t, func() bool { return stapledResponse(t, addr, ca, "down.example.com") != nil },
		5*time.Second, 20*time.Millisecond)
}

// nginx staples only a verified "good" response for the certificate.
func TestOCSPOnlyGoodVerifiedResponsesStapled(t *testing.T) {
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	for _, tt := range []struct {
		name  string
		setup func(ca *ocspCA)
	}{
		{"revoked", func(ca *ocspCA) { ca.status.Store(ocsp.Revoked) }},
		{"unknown", func(ca *ocspCA) { ca.status.Store(ocsp.Unknown) }},
		{"signed by another key", func(ca *ocspCA) { ca.signer.Store(other) }},
		{"expired", func(ca *ocspCA) { ca.lifetime.Store(int64(time.Millisecond)) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ca := newOCSPCA(t)
			tt.setup(ca)
			cert := ca.issue(t, "shop.example.com", ca.srv.URL)
			r := ocspRouter(t, fastOCSP)
			r.Publish(mustTable(match.Spec{Certificates: []*match.Certificate{{Secret: "prod/shop-tls", Hosts: []string{"shop.example.com"}, Cert: cert}}}))
			addr := HandshakeListener(t, r)
			require.Eventually(t, func() bool { return ca.asked.Load() >= 2 }, 5*time.Second, 10*time.Millisecond)
			assert.Nil(t, stapledResponse(t, addr, ca, "shop.example.com"))
		})
	}
}

// A certificate the embedder serves itself (a default certificate it
// loads) is stapled through StapleOCSP; certificates without a responder
// or an issuer are served as they are.
func TestStapleOCSP(t *testing.T) {
	ca := newOCSPCA(t)
	own := ca.issue(t, "default.example.com", ca.srv.URL)
	r := ocspRouter(t, fastOCSP)
	// The responder is down until the first answer is checked: a loopback
	// fetch can otherwise finish before StapleOCSP returns.
	ca.status.Store(-1)
	assert.Same(t, own, r.StapleOCSP(own), "not fetched yet")
	ca.status.Store(ocsp.Good)
	require.Eventually(t, func() bool { return r.StapleOCSP(own) != own }, 5*time.Second, 10*time.Millisecond)
	got := r.StapleOCSP(own)
	assert.NotEmpty(t, got.OCSPStaple)
	assert.Empty(t, own.OCSPStaple, "the embedder's certificate is not changed")

	bare := ca.issue(t, "bare.example.com")
	assert.Same(t, bare, r.StapleOCSP(bare))
	alone := ca.issue(t, "alone.example.com", ca.srv.URL)
	alone.Certificate = alone.Certificate[:1]
	assert.Same(t, alone, r.StapleOCSP(alone))
	// With stapling off, nothing is fetched.
	off := newTestRouter(Options{})
	assert.Nil(t, off.ocsp)
	assert.Same(t, own, off.StapleOCSP(own))
}

// A certificate out of the table and unused is let go; one still in the
// table stays, across tables that hold it under new pointers.
func TestOCSPLetsGoOfRetiredCertificates(t *testing.T) {
	ca := newOCSPCA(t)
	ca.lifetime.Store(int64(3 * time.Second)) // valid 2 s from the fetch, refreshed after 1 s
	timing := fastOCSP
	timing.idle = 100 * time.Millisecond
	r := ocspRouter(t, timing)
	a := ca.issue(t, "a.example.com", ca.srv.URL)
	b := ca.issue(t, "b.example.com", ca.srv.URL)
	table := func(certs ...*tls.Certificate) *match.Table {
		var cs []*match.Certificate
		for _, c := range certs {
			cs = append(cs, &match.Certificate{Secret: "prod/" + c.Leaf.DNSNames[0], Hosts: c.Leaf.DNSNames, Cert: c})
		}
		return mustTable(match.Spec{Certificates: cs})
	}
	r.Publish(table(a, b))
	entries := func() (chains, ptrs int) {
		r.ocsp.mu.Lock()
		defer r.ocsp.mu.Unlock()
		return len(r.ocsp.byChain), len(r.ocsp.byPtr)
	}
	require.Eventually(t, func() bool { return r.StapleOCSP(a) != a && r.StapleOCSP(b) != b }, 5*time.Second, 10*time.Millisecond)
	aCopy := *a
	r.Publish(table(&aCopy))
	require.Eventually(t, func() bool { c, _ := entries(); return c == 1 }, 5*time.Second, 10*time.Millisecond)
	_, ptrs := entries()
	assert.Equal(t, 1, ptrs, "the table's pointer of a")
	got, err := r.GetCertificate(&tls.ClientHelloInfo{ServerName: "a.example.com"})
	require.NoError(t, err)
	assert.NotEmpty(t, got.OCSPStaple)
}

// When a response is fetched again: nginx's
// max(min(valid-300, now+3600), now+300).
func TestOCSPRefreshIn(t *testing.T) {
	s := &stapler{timing: nginxOCSPTiming}
	now := time.Now()
	for _, tt := range []struct {
		next time.Time
		want time.Duration
	}{
		{time.Time{}, time.Hour},
		{now.Add(7 * 24 * time.Hour), time.Hour},
		{now.Add(30 * time.Minute), 25 * time.Minute},
		{now.Add(8 * time.Minute), 5 * time.Minute},
		{now.Add(time.Minute), 5 * time.Minute},
	} {
		assert.Equal(t, tt.want, s.refreshIn(&ocsp.Response{NextUpdate: tt.next}, now), "next update %v", tt.next)
	}
}
