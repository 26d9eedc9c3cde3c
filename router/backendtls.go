package router

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"sync"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/configmap"
)

// Backend TLS (proxy-ssl-*, SPEC §11): a location with a match.BackendTLS
// dials its HTTPS and GRPCS backends with a TLS client configuration made
// from it (verification against the Secret's CA, a client certificate,
// SNI, versions and ciphers), as nginx's proxy_ssl_* directives do. Each
// distinct setting (BackendTLS.Key) with each set of timeouts gets its own
// transports, made on first use and kept with their idle connections, as
// the timeout variants are (policytransport.go); a location without one
// costs RoundTrip a nil check.

// ReasonBackendTLSDenied is the 503 of a location whose proxy-ssl-secret
// cannot be served (match.BackendTLS.Denied).
const ReasonBackendTLSDenied = "backend-tls-denied"

var ansBackendTLSDenied = answer{http.StatusServiceUnavailable, ReasonBackendTLSDenied, "503 Service Unavailable: this location's backend TLS is misconfigured\n"}

// maxTLSVariants bounds the transport sets kept for backend TLS settings;
// past it the kept ones are dropped (their idle connections closed), so
// settings of tables no longer served do not pile up.
const maxTLSVariants = 64

type tlsVariantKey struct {
	key string
	// name is the name verified and sent as SNI when it depends on the
	// request's host (BackendTLS.HostName); "" otherwise.
	name string
	t    timeouts
}

type tlsVariants struct {
	pooling
	mu   sync.RWMutex
	sets map[tlsVariantKey]*transportSet
}

// backendTLSOf is the exchange's backend TLS setting: the route's, else
// its host's; nil for none or for a plain-HTTP backend.
func backendTLSOf(x *exchange) *match.BackendTLS {
	if p := x.protocol(); p != match.HTTPS && p != match.GRPCS {
		return nil
	}
	if x.route != nil && x.route.BackendTLS != nil {
		return x.route.BackendTLS
	}
	if x.vhost != nil {
		return x.vhost.FallbackLocation.BackendTLS
	}
	return nil
}

// tlsName is the name a request to host verifies bt's backend against
// and sends as SNI when bt's name uses $host; "" when it does not.
func tlsName(bt *match.BackendTLS, host string) string {
	if !bt.HostName() {
		return ""
	}
	return bt.NameFor(host)
}

// forTLS returns the transports for bt with timeouts t; name is tlsName's.
func (v *tlsVariants) forTLS(bt *match.BackendTLS, name string, t timeouts) *transportSet {
	k := tlsVariantKey{bt.Key(), name, t}
	v.mu.RLock()
	s := v.sets[k]
	v.mu.RUnlock()
	if s != nil {
		return s
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if s = v.sets[k]; s != nil {
		return s
	}
	if len(v.sets) >= maxTLSVariants {
		for _, old := range v.sets {
			old.closeIdle()
		}
		clear(v.sets)
	}
	if v.sets == nil {
		v.sets = make(map[tlsVariantKey]*transportSet)
	}
	s = newTransportSet(t, v.pooling)
	cfg := backendTLSConfig(bt, name)
	s.h1.TLSClientConfig = cfg
	setTLSConfig(s.h2, cfg.Clone())
	s.verbatim.tlsConfig = cfg
	v.sets[k] = s
	return s
}

func (v *tlsVariants) closeIdle() {
	v.mu.RLock()
	defer v.mu.RUnlock()
	for _, s := range v.sets {
		s.closeIdle()
	}
}

// backendTLSConfig is the TLS client configuration nginx's proxy_ssl_*
// directives make of bt, with name verified and sent as SNI ("": bt's own).
func backendTLSConfig(bt *match.BackendTLS, name string) *tls.Config {
	if name == "" {
		name = bt.VerifyName()
	}
	// Verification, when asked for, is done by VerifyConnection against
	// the configured name, whatever address was dialled.
	cfg := &tls.Config{InsecureSkipVerify: true}
	if bt.ServerName {
		cfg.ServerName = name
	}
	if len(bt.CAs) == 0 {
		return cfg
	}
	cfg.MinVersion, cfg.MaxVersion = tlsVersions(bt.Protocols)
	cfg.CipherSuites = cipherSuites(bt.Ciphers)
	if bt.ClientCert != nil {
		cfg.Certificates = []tls.Certificate{*bt.ClientCert}
	}
	if bt.Verify {
		roots := x509.NewCertPool()
		for _, ca := range bt.CAs {
			roots.AddCert(ca)
		}
		depth := bt.VerifyDepth
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			return verifyBackendChain(cs.PeerCertificates, roots, name, depth)
		}
	}
	return cfg
}

var errNoBackendCert = errors.New("the backend sent no certificate")

func verifyBackendChain(certs []*x509.Certificate, roots *x509.CertPool, name string, depth int) error {
	if len(certs) == 0 {
		return errNoBackendCert
	}
	opts := x509.VerifyOptions{Roots: roots, DNSName: name}
	if len(certs) > 1 {
		opts.Intermediates = x509.NewCertPool()
		for _, c := range certs[1:] {
			opts.Intermediates.AddCert(c)
		}
	}
	chains, err := certs[0].Verify(opts)
	if err != nil {
		return &tls.CertificateVerificationError{UnverifiedCertificates: certs, Err: err}
	}
	if err := chainDepth(chains, depth); err != nil {
		return &tls.CertificateVerificationError{UnverifiedCertificates: certs, Err: err}
	}
	return nil
}

// tlsVersions are the lowest and highest of proxy-ssl-protocols' versions.
func tlsVersions(protocols []string) (lo, hi uint16) {
	for _, p := range protocols {
		v := uint16(0)
		switch p {
		case "TLSv1.2":
			v = tls.VersionTLS12
		case "TLSv1.3":
			v = tls.VersionTLS13
		}
		if v == 0 {
			continue
		}
		if lo == 0 || v < lo {
			lo = v
		}
		hi = max(hi, v)
	}
	return lo, hi
}

// cipherSuites reads proxy-ssl-ciphers as OpenSSL reads proxy_ssl_ciphers,
// with ssl-ciphers' parser: the TLS 1.2 suites Go has that the list
// selects. A list compile refused ("no cipher match") leaves Go's default
// choice (nil). TLS 1.3's suites are not configurable in Go, as nginx's
// proxy_ssl_ciphers does not configure them either.
func cipherSuites(list string) []uint16 {
	suites, _, err := configmap.ParseCiphers(list)
	if err != nil {
		return nil
	}
	return suites
}
