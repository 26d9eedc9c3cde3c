package router

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"sync"
	"time"

	"ramjet.dev/ramjet/match"
)

// GetCertificate chooses the certificate for a TLS handshake (SPEC §12):
// the serving table's certificate for the SNI name (exact, then wildcard,
// then one chosen for every name, which also serves a ClientHello without
// a name), else the default certificate. A certificate rotates when a table with a
// new one is published; the listener never restarts. With enable-ocsp the
// certificate carries its OCSP response once one is in (StapleOCSP).
// With ssl-reject-handshake it is nil for a name that neither a host nor
// a certificate of the table is for, and for no name: crypto/tls then
// refuses the handshake with the unrecognized_name alert, as nginx's
// default server does.
func (r *Router) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	cert := r.defaultCert.Load()
	st := r.state.Load()
	named := st != nil && hello != nil && hello.ServerName != ""
	var c *match.Certificate
	if st != nil && hello != nil {
		c = st.table.Certificate(hello.ServerName)
	}
	if r.tls.RejectHandshake && c == nil && (!named || !servesName(st.table, hello.ServerName)) {
		return nil, nil
	}
	if c != nil && c.Cert != nil {
		cert = c.Cert
	} else if r.selfSignedDefault && cert == r.baseCert && hello != nil {
		// ingress-nginx's fake certificate is RSA: a client (or an
		// ssl-ciphers list) without ECDSA gets an RSA one. Judged
		// without the name, which neither certificate is for.
		h := *hello
		h.ServerName = ""
		if h.SupportsCertificate(cert) != nil {
			if rc, err := selfSignedRSA(); err == nil && h.SupportsCertificate(rc) == nil {
				cert = rc
			}
		}
	}
	if r.ocsp != nil {
		cert = r.ocsp.staple(cert, time.Now())
	}
	return cert, nil
}

// TLSConfig returns a new server configuration that selects certificates
// with GetCertificate, offers HTTP/2 and HTTP/1.1 by ALPN, serves the TLS
// policy of Options.TLS (versions, cipher suites, curves, sessions:
// tlspolicy.go), and asks for a client certificate, or uses other cipher
// suites, on the hosts that want them (GetConfigForClient, made on this
// configuration: a changed copy needs its own). net/http's HTTP/2 server
// refuses a configuration whose CipherSuites (ssl-ciphers) lack
// AES-128-GCM: a server that serves HTTP/2 from it does the handshakes
// with this configuration and gives http.Server one without CipherSuites
// (and http.HTTP2Config.PermitProhibitedCipherSuites, as nginx checks no
// suite), as the example controller does.
func (r *Router) TLSConfig() *tls.Config {
	cfg := &tls.Config{
		GetCertificate: r.GetCertificate,
		NextProtos:     []string{"h2", "http/1.1"},
	}
	applyTLSPolicy(cfg, r.tls)
	cfg.GetConfigForClient = r.GetConfigForClient(cfg)
	return cfg
}

// servesName reports whether a host of t, not the catch-all, serves the
// SNI name: nginx's server block other than the default server "_".
func servesName(t *match.Table, name string) bool {
	vh := t.ServerFor(name)
	return vh != nil && vh.Name != ""
}

// DefaultCertificate is the certificate GetCertificate serves to a name
// no table certificate is for (the one SetDefaultCertificate gave, else
// Options.DefaultCertificate, else the self-signed ECDSA one New made,
// beside which a client without ECDSA gets a self-signed RSA one), before
// OCSP stapling.
func (r *Router) DefaultCertificate() *tls.Certificate { return r.defaultCert.Load() }

// SetDefaultCertificate replaces the default certificate from the next
// handshake on, every client getting it (ingress-nginx's
// --default-ssl-certificate, whose Secret can rotate); nil goes back to
// Options.DefaultCertificate, else New's self-signed one.
func (r *Router) SetDefaultCertificate(c *tls.Certificate) {
	if c == nil {
		c = r.baseCert
	}
	r.defaultCert.Store(c)
}

// selfSigned makes the default certificate served to names no table
// certificate covers, like ingress-nginx's fake certificate.
func selfSigned() (*tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return selfSignedWith(key, &key.PublicKey)
}

// selfSignedRSA is the RSA 2048 default certificate, as ingress-nginx's
// fake one, for clients that cannot take the ECDSA one. Its key takes
// long to make: once per process, at the first handshake that needs it.
var selfSignedRSA = sync.OnceValues(func() (*tls.Certificate, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	return selfSignedWith(key, &key.PublicKey)
})

func selfSignedWith(key crypto.Signer, pub crypto.PublicKey) (*tls.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"ramjet"}, CommonName: "ramjet default certificate"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              keyUsage(pub),
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, key)
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// keyUsage: an RSA key also enciphers the key exchange of TLS 1.2's RSA
// suites (AES128-GCM-SHA256, ...).
func keyUsage(pub crypto.PublicKey) x509.KeyUsage {
	if _, ok := pub.(*rsa.PublicKey); ok {
		return x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	}
	return x509.KeyUsageDigitalSignature
}
