package router

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"ramjet.dev/ramjet/match"
)

// Client certificates at the edge (auth-tls-*, SPEC §12), as nginx serves
// ssl_verify_client: the TLS handshake of a host that wants one asks for a
// certificate and never fails for its absence or its chain
// (GetConfigForClient); the request is then judged by the host the
// request names, before anything else of it, as nginx judges it on
// reading the request: 400 without a required certificate or with one
// that does not verify (or a redirect to auth-tls-error-page), 403 when
// its subject does not match auth-tls-match-cn or the host's Secret cannot
// be used. A request that passes carries ssl-client-verify,
// ssl-client-subject-dn, ssl-client-issuer-dn and, with
// auth-tls-pass-certificate-to-upstream, ssl-client-cert to the backend,
// as ingress-nginx's proxy_set_header lines send them.

const (
	ReasonClientCertMissing   = "client-cert-missing"    // 400: no certificate where one is required
	ReasonClientCertInvalid   = "client-cert-invalid"    // 400: the certificate does not verify
	ReasonClientCertForbidden = "client-cert-forbidden"  // 403: the subject does not match, or the host's CA is unusable
	ReasonClientCertErrorPage = "client-cert-error-page" // 302 to auth-tls-error-page in place of the 400
	ReasonMisdirected         = "misdirected"            // 421: the TLS connection was made for another host
)

var (
	ansClientCertMissing   = answer{http.StatusBadRequest, ReasonClientCertMissing, "400 Bad Request: No required SSL certificate was sent\n"}
	ansClientCertInvalid   = answer{http.StatusBadRequest, ReasonClientCertInvalid, "400 Bad Request: The SSL certificate error\n"}
	ansClientCertForbidden = answer{http.StatusForbidden, ReasonClientCertForbidden, "403 Forbidden: client certificate unauthorized\n"}
	ansClientCertErrorPage = answer{http.StatusFound, ReasonClientCertErrorPage, "302 Found: a valid client certificate is needed\n"}
	ansMisdirected         = answer{http.StatusMisdirectedRequest, ReasonMisdirected, "421 Misdirected Request: this connection was made for another host\n"}
)

// stepClientCert judges the client's certificate (checkClientCert): first
// of all, as nginx refuses a request for its certificate before it looks
// at anything else of it.
var stepClientCert = step{name: "client certificate", kind: kindClientCert, reasons: []string{
	ReasonClientCertMissing, ReasonClientCertInvalid, ReasonClientCertForbidden, ReasonClientCertErrorPage, ReasonMisdirected}}

// The headers ingress-nginx sets towards the backend of a host with
// client certificate authentication (nginx.tmpl, proxy_set_header).
const (
	hdrClientCert     = "Ssl-Client-Cert"
	hdrClientVerify   = "Ssl-Client-Verify"
	hdrClientSubject  = "Ssl-Client-Subject-Dn"
	hdrClientIssuerDN = "Ssl-Client-Issuer-Dn"
)

// checkClientCert answers a request whose host wants a client
// certificate it did not get, and otherwise sets the headers for the
// backend. A host without auth-tls-secret costs one nil check.
func (r *Router) checkClientCert(s *requestState) bool {
	vh := s.d.res.Host
	if vh == nil || vh.ClientTLS == nil {
		return false
	}
	c := vh.ClientTLS
	if cs := s.req.TLS; cs != nil && cs.ServerName != "" && c.Verify != match.VerifyOff && s.d.st != nil &&
		s.d.st.table.ServerFor(cs.ServerName) != vh {
		// The connection was made for another host (HTTP/2 reuses one
		// for every name its certificate covers), whose handshake may not
		// have asked for a certificate: 421, as nginx answers, and the
		// client retries on a connection of its own.
		r.refuseServer(s, ansMisdirected)
		return true
	}
	if c.Error != "" {
		r.refuseServer(s, ansClientCertForbidden)
		return true
	}
	if s.certJudged {
		// The error page's location: the certificate was judged once, as
		// nginx judges it on reading the request, and its headers stay
		// set; the server's match-cn "if" runs again.
		return r.matchCN(s, c, s.certDN)
	}
	h := s.req.Header
	// What the client sent under these names never reaches the backend:
	// proxy_set_header replaces it, and an empty value removes it.
	delete(h, hdrClientCert)
	delete(h, hdrClientVerify)
	delete(h, hdrClientSubject)
	delete(h, hdrClientIssuerDN)
	var leaf *x509.Certificate
	var failed *answer
	verify := ""
	if cs := s.req.TLS; cs != nil {
		verify = "NONE"
		if len(cs.PeerCertificates) > 0 && c.Verify != match.VerifyOff {
			leaf = cs.PeerCertificates[0]
			verify = "SUCCESS"
			if err := r.chains.verify(c, cs.PeerCertificates); err != nil {
				verify = "FAILED:" + opensslVerifyError(err, cs.PeerCertificates)
				if c.Verify != match.VerifyOptionalNoCA || !isUnknownAuthority(err) {
					failed = &ansClientCertInvalid
				}
			}
		} else if c.Verify == match.VerifyOn {
			failed = &ansClientCertMissing
		}
	}
	dn := ""
	if leaf != nil {
		dn = opensslDN(leaf.RawSubject)
	}
	if verify != "" {
		h[hdrClientVerify] = []string{verify}
		if leaf != nil {
			h[hdrClientSubject] = []string{dn}
			h[hdrClientIssuerDN] = []string{opensslDN(leaf.RawIssuer)}
			if c.PassCertificate {
				h[hdrClientCert] = []string{escapeComponent(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leaf.Raw}))}
			}
		}
	}
	if failed != nil {
		return r.clientCertRefused(s, c, *failed, dn)
	}
	return r.matchCN(s, c, dn)
}

// refuseServer answers a as nginx's server does, outside any location:
// without the location's HSTS.
func (r *Router) refuseServer(s *requestState, a answer) {
	dropHSTS(s)
	r.refuse(s, a)
}

// matchCN answers 403 when the subject DN dn does not match
// auth-tls-match-cn.
func (r *Router) matchCN(s *requestState, c *match.ClientTLS, dn string) bool {
	if c.MatchesSubject(dn) {
		return false
	}
	r.refuseServer(s, ansClientCertForbidden)
	return true
}

// clientCertRefused answers 400, or goes to the host's error page
// (nginx's "error_page 495 496 = <page>"): a URL is redirected to, and
// a path, as nginx's error_page takes one, serves the request in place,
// moved to the host's location for it as a GET (a HEAD stays one) without
// its query, with that location's answer. dn is the certificate's subject
// DN.
func (r *Router) clientCertRefused(s *requestState, c *match.ClientTLS, a answer, dn string) bool {
	switch {
	case strings.HasPrefix(c.ErrorPage, "/"):
		s.certJudged, s.certDN = true, dn
		if s.req.Method != http.MethodHead {
			s.req.Method = http.MethodGet
		}
		return r.relocate(s, c.ErrorPage, true)
	case c.ErrorPage != "":
		s.w.Header().Set("Location", c.ErrorPage)
		a = ansClientCertErrorPage
	}
	r.refuseServer(s, a)
	return true
}

// verifyClientChain verifies the client's chain against the host's CAs,
// with at most VerifyDepth intermediates (chainDepth).
func verifyClientChain(c *match.ClientTLS, certs []*x509.Certificate) error {
	opts := x509.VerifyOptions{Roots: c.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if len(certs) > 1 {
		opts.Intermediates = x509.NewCertPool()
		for _, ic := range certs[1:] {
			opts.Intermediates.AddCert(ic)
		}
	}
	chains, err := certs[0].Verify(opts)
	if err != nil {
		return err
	}
	if err := chainDepth(chains, c.VerifyDepth); err != nil || len(c.CRLs) == 0 {
		return err
	}
	for _, ch := range chains {
		if len(ch)-2 > c.VerifyDepth {
			continue
		}
		if err = chainRevocation(ch, c.CRLs, time.Now()); err == nil {
			return nil
		}
	}
	return err
}

// The revocation failures, as OpenSSL names them.
var (
	errCRLMissing  = errors.New("unable to get certificate CRL")
	errCRLExpired  = errors.New("CRL has expired")
	errCRLNotValid = errors.New("CRL is not yet valid")
	errRevoked     = errors.New("certificate revoked")
)

// chainRevocation checks every certificate of a verified chain below its
// trust anchor against the CRLs, as nginx's ssl_crl makes OpenSSL check
// them (X509_V_FLAG_CRL_CHECK_ALL): its issuer's CRL must be there, signed
// by the issuer and current, and must not list it.
func chainRevocation(chain []*x509.Certificate, crls []*x509.RevocationList, now time.Time) error {
	for i := 0; i+1 < len(chain); i++ {
		cert, issuer := chain[i], chain[i+1]
		var found *x509.RevocationList
		for _, crl := range crls {
			if bytes.Equal(crl.RawIssuer, issuer.RawSubject) && crl.CheckSignatureFrom(issuer) == nil {
				found = crl
				break
			}
		}
		switch {
		case found == nil:
			return errCRLMissing
		case now.Before(found.ThisUpdate):
			return errCRLNotValid
		case !found.NextUpdate.IsZero() && now.After(found.NextUpdate):
			return errCRLExpired
		}
		for _, e := range found.RevokedCertificateEntries {
			if e.SerialNumber != nil && e.SerialNumber.Cmp(cert.SerialNumber) == 0 {
				return errRevoked
			}
		}
	}
	return nil
}

// chainVerdicts remembers the verdict on each connection's client chain
// for a host's settings, so that a chain is verified once per connection,
// as nginx verifies it once, in the handshake. Verified on every request,
// a chain the client made up would have each request of an HTTP/2
// connection pay for up to 100 signature checks. A connection's chain is
// known by its PeerCertificates array, which every request of the
// connection shares (a certificate alone is not: resumed sessions share
// parsed certificates across connections). The set is bounded, and
// starts over when full.
type chainVerdicts struct {
	mu sync.Mutex
	m  map[chainKey]error
	// verified counts the chains verified.
	verified atomic.Uint64
}

type chainKey struct {
	chain *(*x509.Certificate) // &PeerCertificates[0]
	n     int
	c     *match.ClientTLS
}

const maxChainVerdicts = 4096

func (v *chainVerdicts) verify(c *match.ClientTLS, certs []*x509.Certificate) error {
	k := chainKey{&certs[0], len(certs), c}
	v.mu.Lock()
	err, ok := v.m[k]
	v.mu.Unlock()
	if ok {
		return err
	}
	err = verifyClientChain(c, certs)
	v.verified.Add(1)
	v.mu.Lock()
	if v.m == nil || len(v.m) >= maxChainVerdicts {
		v.m = make(map[chainKey]error)
	}
	v.m[k] = err
	v.mu.Unlock()
	return err
}

var errChainTooLong = errors.New("certificate chain too long")

// chainDepth accepts chains with at most depth CA certificates between
// the leaf and the trust anchor, as OpenSSL (1.1.0 on) counts its verify
// depth: 1, nginx's and ingress-nginx's default, accepts a certificate
// issued by an intermediate of a trusted root.
func chainDepth(chains [][]*x509.Certificate, depth int) error {
	for _, ch := range chains {
		if len(ch)-2 <= depth {
			return nil
		}
	}
	return errChainTooLong
}

func isUnknownAuthority(err error) bool {
	var ua x509.UnknownAuthorityError
	return errors.As(err, &ua)
}

// opensslVerifyError names the failure of the client's chain certs as
// $ssl_client_verify does after "FAILED:" (OpenSSL's
// X509_verify_cert_error_string).
func opensslVerifyError(err error, certs []*x509.Certificate) string {
	var inv x509.CertificateInvalidError
	switch {
	case isUnknownAuthority(err):
		return unknownIssuerError(certs)
	case errors.Is(err, errChainTooLong):
		return "certificate chain too long"
	case errors.Is(err, errCRLMissing), errors.Is(err, errCRLExpired), errors.Is(err, errCRLNotValid), errors.Is(err, errRevoked):
		return err.Error()
	case errors.As(err, &inv) && inv.Reason == x509.Expired:
		return "certificate has expired"
	case errors.As(err, &inv) && inv.Reason == x509.IncompatibleUsage:
		return "unsupported certificate purpose"
	}
	return "certificate verify failed"
}

// unknownIssuerError names a chain that reaches no trusted CA as
// OpenSSL's build_chain does: the chain is followed from the leaf through
// the certificates the client sent, each to its issuer; ending in a
// self-signed one it is "self-signed certificate" (the leaf itself) or
// "self-signed certificate in certificate chain", else it lacks an
// issuer.
func unknownIssuerError(certs []*x509.Certificate) string {
	cur, used := certs[0], make([]bool, len(certs))
	for depth := 0; ; depth++ {
		if issuedBySelf(cur) {
			if depth == 0 {
				return "self-signed certificate"
			}
			return "self-signed certificate in certificate chain"
		}
		next := -1
		for i := 1; i < len(certs) && next < 0; i++ {
			if !used[i] && bytes.Equal(certs[i].RawSubject, cur.RawIssuer) {
				next = i
			}
		}
		if next < 0 {
			return "unable to get local issuer certificate"
		}
		used[next], cur = true, certs[next]
	}
}

// issuedBySelf is OpenSSL's EXFLAG_SS: the subject is the issuer and the
// authority key ID, if any, is the certificate's own.
func issuedBySelf(c *x509.Certificate) bool {
	return bytes.Equal(c.RawSubject, c.RawIssuer) &&
		(len(c.AuthorityKeyId) == 0 || bytes.Equal(c.AuthorityKeyId, c.SubjectKeyId))
}

// escapeComponent escapes p as nginx's $ssl_client_escaped_cert does
// (ngx_escape_uri, NGX_ESCAPE_URI_COMPONENT): every byte but letters,
// digits and "-._~" as %XX.
func escapeComponent(p []byte) string {
	const hex = "0123456789ABCDEF"
	out := make([]byte, 0, len(p)*3/2)
	for _, c := range p {
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			out = append(out, c)
			continue
		}
		out = append(out, '%', hex[c>>4], hex[c&15])
	}
	return string(out)
}

// GetConfigForClient returns a tls.Config.GetConfigForClient for a server
// configured as base (TLSConfig's, or an embedder's): a handshake whose
// SNI names a host with client certificate authentication gets a copy of
// base that asks for a certificate, naming the host's CAs, and one whose
// host has its own ssl-ciphers a copy with those cipher suites; every
// other handshake uses base unchanged. The copies are made once per host
// setting and table. Set it on base itself:
//
//	cfg := r.TLSConfig()
//	cfg.GetConfigForClient = r.GetConfigForClient(cfg)
//
// The certificate is asked for, never required or verified in the
// handshake: the request is judged by its host (see stepClientCert), as
// nginx completes the handshake and answers 400.
func (r *Router) GetConfigForClient(base *tls.Config) func(*tls.ClientHelloInfo) (*tls.Config, error) {
	var cache atomic.Pointer[clientConfigs]
	return func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		st := r.state.Load()
		if st == nil || hello == nil {
			return nil, nil
		}
		vh := st.table.ServerFor(hello.ServerName)
		if vh == nil {
			return nil, nil
		}
		key := hostTLS{client: vh.ClientTLS, server: vh.ServerTLS}
		if c := key.client; c != nil && (c.Error != "" || c.Verify == match.VerifyOff) {
			key.client = nil
		}
		if key == (hostTLS{}) {
			return nil, nil
		}
		cc := cache.Load()
		if cc == nil || cc.table != st.table {
			cc = &clientConfigs{table: st.table}
			cache.Store(cc)
		}
		if cfg, ok := cc.m.Load(key); ok {
			return cfg.(*tls.Config), nil
		}
		cfg := base.Clone()
		cfg.GetConfigForClient = nil
		if c := key.client; c != nil {
			cfg.ClientAuth = tls.RequestClientCert
			cfg.ClientCAs = c.Pool()
			sessionContext(cfg, c)
		}
		if s := key.server; s != nil {
			cfg.CipherSuites = s.CipherSuites
		}
		v, _ := cc.m.LoadOrStore(key, cfg)
		return v.(*tls.Config), nil
	}
}

// sessionContext makes cfg resume only sessions made under the same
// client CAs, as nginx's session ID context does (ngx_ssl_session_id_context
// digests the client CA names, and OpenSSL resumes a session only under
// the context it was made in): a session made before the host asked for
// a certificate holds none, and resumed it would answer every request 400
// until it expires; refused, the handshake is a full one that asks.
func sessionContext(cfg *tls.Config, c *match.ClientTLS) {
	wrap, unwrap := cfg.WrapSession, cfg.UnwrapSession
	if wrap == nil || unwrap == nil {
		return // no sessions are resumed
	}
	h := sha256.New()
	for _, ca := range c.CAs {
		h.Write(ca.RawSubject)
		h.Write([]byte{0})
	}
	mark := append([]byte("rjc:"), h.Sum(nil)...)
	cfg.WrapSession = func(cs tls.ConnectionState, ss *tls.SessionState) ([]byte, error) {
		ss.Extra = append(ss.Extra, mark)
		return wrap(cs, ss)
	}
	cfg.UnwrapSession = func(identity []byte, cs tls.ConnectionState) (*tls.SessionState, error) {
		ss, err := unwrap(identity, cs)
		if err != nil || ss == nil || len(ss.Extra) == 0 || !bytes.Equal(ss.Extra[len(ss.Extra)-1], mark) {
			return nil, err
		}
		ss.Extra = ss.Extra[:len(ss.Extra)-1]
		return ss, nil
	}
}

// hostTLS are a host's handshake settings a configuration is made for.
type hostTLS struct {
	client *match.ClientTLS
	server *match.ServerTLS
}

// clientConfigs are the server configurations made for one table's
// hosts' handshake settings.
type clientConfigs struct {
	table *match.Table
	m     sync.Map // hostTLS → *tls.Config
}
