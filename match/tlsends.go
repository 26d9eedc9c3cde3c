package match

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"ramjet.dev/ramjet/match/vars"
)

// TLS at both ends of a request (SPEC §11, §12): how a route dials its
// HTTPS or GRPCS backend (proxy-ssl-*), which client certificates a host
// asks for (auth-tls-*), and the hosts whose connections are passed
// through to a backend without terminating TLS (ssl-passthrough).

// BackendTLS is how the TLS connection to an HTTPS or GRPCS backend is
// made (proxy-ssl-secret and its companions), as nginx's proxy_ssl_*
// directives make it. A route's own applies; a route without one uses its
// host's (VirtualHost.FallbackLocation.BackendTLS), as ingress-nginx
// writes the first Ingress's at the server level. With neither, backends
// are dialled as always: no verification, no client certificate, no SNI.
type BackendTLS struct {
	// Secret is the Secret's "namespace/name".
	Secret string
	// Denied says why the setting cannot be served (the Secret is missing
	// or holds neither ca.crt nor a key pair): every request to the route
	// then answers 503, as ingress-nginx denies the location. "" when
	// served.
	Denied string
	// CAs are the Secret's ca.crt certificates. Without them only Name
	// and ServerName apply: ingress-nginx writes the rest of proxy_ssl_*
	// only for a Secret with a CA.
	CAs []*x509.Certificate
	// ClientCert is presented to the backend (tls.crt and tls.key); nil
	// when the Secret has no key pair, or no CA (ingress-nginx stores the
	// key pair for the proxy only beside a CA).
	ClientCert *tls.Certificate
	// Verify checks the backend's certificate against CAs and Name
	// (proxy-ssl-verify on); VerifyDepth bounds the intermediates between
	// the leaf and the CA, as OpenSSL counts it (proxy-ssl-verify-depth, 1
	// by default).
	Verify      bool
	VerifyDepth int
	// Protocols are the TLS versions offered, sorted ("TLSv1.2",
	// "TLSv1.3"); Ciphers the OpenSSL cipher list as written ("DEFAULT").
	Protocols []string
	Ciphers   string
	// Name is the name verified and sent as SNI (proxy-ssl-name); ""
	// means nginx's $proxy_host, which ingress-nginx's template makes
	// "upstream_balancer". It may use $host, the request's (NameFor).
	// ServerName sends SNI (proxy-ssl-server-name).
	Name       string
	ServerName bool

	key string // see Key
	// nameVar is Name parsed when it uses $host; nil otherwise.
	nameVar vars.Template
}

// ProxyHostName is the name nginx verifies a backend's certificate
// against, and sends as SNI, when proxy-ssl-name is not set: the host of
// ingress-nginx's proxy_pass (https://upstream_balancer).
const ProxyHostName = "upstream_balancer"

// backendTLSNamePlace is where proxy-ssl-name reads variables: nginx's
// proxy_ssl_name takes any, and a backend named after the client's host
// is written with $host.
var backendTLSNamePlace = vars.Place{Name: "proxy-ssl-name", Vars: vars.Of(vars.Host)}

// CheckBackendTLSName reports a proxy-ssl-name value with a variable the
// router cannot expand.
func CheckBackendTLSName(name string) error {
	_, err := backendTLSNamePlace.Parse(name)
	return err
}

// NewBackendTLS returns b with its Key computed once.
func NewBackendTLS(b BackendTLS) *BackendTLS {
	b.key = b.computeKey()
	if t, err := backendTLSNamePlace.Parse(b.Name); err == nil && !t.Literal() {
		b.nameVar = t
	}
	return &b
}

// VerifyName is the name the backend's certificate is verified against
// and sent as SNI, as written (NameFor expands it for a request).
func (b *BackendTLS) VerifyName() string {
	if b.Name != "" {
		return b.Name
	}
	return ProxyHostName
}

// HostName reports that the name depends on the request's host.
func (b *BackendTLS) HostName() bool { return b.nameVar != nil }

// NameFor is VerifyName for a request to host (normalized, as nginx's
// $host).
func (b *BackendTLS) NameFor(host string) string {
	if b.nameVar == nil {
		return b.VerifyName()
	}
	var sb strings.Builder
	b.nameVar.Expand(&sb, func(vars.Ref) string { return host })
	return sb.String()
}

// Key identifies the setting: two values with one Key dial alike, so a
// router keeps one TLS client configuration (and connection pool) per Key.
func (b *BackendTLS) Key() string {
	if b.key != "" {
		return b.key
	}
	return b.computeKey()
}

func (b *BackendTLS) computeKey() string {
	h := sha256.New()
	e := encoder{h: h}
	e.backendTLS(b)
	return e.sum()
}

func fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

func (e *encoder) backendTLS(b *BackendTLS) {
	if b == nil {
		e.flag(false)
		return
	}
	e.flag(true)
	e.str(b.Secret)
	e.str(b.Denied)
	e.num(len(b.CAs))
	for _, c := range b.CAs {
		e.str(fingerprint(c.Raw))
	}
	if c := b.ClientCert; c != nil && len(c.Certificate) > 0 {
		e.flag(true)
		e.str(fingerprint(c.Certificate[0]))
	} else {
		e.flag(false)
	}
	e.flag(b.Verify)
	e.num(b.VerifyDepth)
	e.strs(b.Protocols)
	e.str(b.Ciphers)
	e.str(b.Name)
	e.flag(b.ServerName)
}

func backendTLSLine(b *BackendTLS) string {
	if b.Denied != "" {
		return "backend-tls denied (503): " + b.Denied
	}
	s := "backend-tls secret " + b.Secret + " ca " + strconv.Itoa(len(b.CAs))
	if b.ClientCert != nil && len(b.ClientCert.Certificate) > 0 {
		s += " client-cert " + fingerprint(b.ClientCert.Certificate[0])[:16]
	}
	if b.Verify {
		s += " verify depth " + strconv.Itoa(b.VerifyDepth)
	}
	if len(b.Protocols) > 0 {
		s += " protocols " + strings.Join(b.Protocols, ",")
	}
	if b.Ciphers != "" {
		s += " ciphers " + strconv.Quote(b.Ciphers)
	}
	if b.Name != "" {
		s += " name " + strconv.Quote(b.Name)
	}
	if b.ServerName {
		s += " sni"
	}
	return s
}

// ClientVerify is auth-tls-verify-client: whether a host asks for a
// client certificate and what it does without a valid one.
type ClientVerify string

const (
	VerifyOn           ClientVerify = "on"             // required: 400 without a valid one
	VerifyOptional     ClientVerify = "optional"       // asked for: 400 for an invalid one
	VerifyOptionalNoCA ClientVerify = "optional_no_ca" // asked for, passed on unverified by the CA
	VerifyOff          ClientVerify = "off"            // not asked for
)

// ClientTLS is a host's client certificate authentication (auth-tls-*),
// as ingress-nginx writes it in the host's server block: the first
// Ingress of the host that sets it decides.
type ClientTLS struct {
	// Secret is the Secret's "namespace/name".
	Secret string
	// Error, when set, says why the authentication cannot be served (the
	// Secret is missing or holds no ca.crt): every request to the host
	// answers 403, as ingress-nginx's server block then returns 403.
	Error string
	// CAs verify client certificates (the Secret's ca.crt).
	CAs []*x509.Certificate
	// CRLs are the Secret's ca.crl: with any, every certificate of a
	// client's chain below the trust anchor must be covered by a current
	// CRL of its issuer and not be revoked, as nginx's ssl_crl checks
	// (X509_V_FLAG_CRL_CHECK_ALL); nil for no revocation check.
	CRLs []*x509.RevocationList
	// Verify is auth-tls-verify-client; VerifyDepth the most
	// intermediates between the client's certificate and the CA, as
	// OpenSSL counts it (auth-tls-verify-depth, 1).
	Verify      ClientVerify
	VerifyDepth int
	// ErrorPage is where a request without a valid certificate is
	// redirected (auth-tls-error-page) in place of the 400.
	ErrorPage string
	// PassCertificate sends the client's certificate to the backend in
	// the ssl-client-cert header (auth-tls-pass-certificate-to-upstream).
	PassCertificate bool
	// MatchCN is the "CN=<regex>" the client's subject DN must match
	// (auth-tls-match-cn), else 403; "" for any.
	MatchCN string

	pool    *x509.CertPool
	matchCN *regexp.Regexp
}

// NewClientTLS returns c with its CA pool and subject pattern prepared;
// the pattern must compile (RE2 syntax).
func NewClientTLS(c ClientTLS) (*ClientTLS, error) {
	c.pool = x509.NewCertPool()
	for _, ca := range c.CAs {
		c.pool.AddCert(ca)
	}
	if c.MatchCN != "" {
		re, err := regexp.Compile(c.MatchCN)
		if err != nil {
			return nil, err
		}
		c.matchCN = re
	}
	return &c, nil
}

// Pool is the pool of CAs; a value written as a literal builds it anew
// on every call.
func (c *ClientTLS) Pool() *x509.CertPool {
	if c.pool != nil {
		return c.pool
	}
	p := x509.NewCertPool()
	for _, ca := range c.CAs {
		p.AddCert(ca)
	}
	return p
}

// MatchesSubject reports whether a subject DN passes MatchCN, matched as
// nginx's "$ssl_client_s_dn ~ pattern" (unanchored, case-sensitive).
func (c *ClientTLS) MatchesSubject(dn string) bool {
	if c.MatchCN == "" {
		return true
	}
	re := c.matchCN
	if re == nil {
		var err error
		if re, err = regexp.Compile(c.MatchCN); err != nil {
			return false
		}
	}
	return re.MatchString(dn)
}

func (e *encoder) clientTLS(c *ClientTLS) {
	if c == nil {
		e.flag(false)
		return
	}
	e.flag(true)
	e.str(c.Secret)
	e.str(c.Error)
	e.num(len(c.CAs))
	for _, ca := range c.CAs {
		e.str(fingerprint(ca.Raw))
	}
	e.str(string(c.Verify))
	e.num(c.VerifyDepth)
	e.str(c.ErrorPage)
	e.flag(c.PassCertificate)
	e.str(c.MatchCN)
}

func clientTLSLine(c *ClientTLS) string {
	if c.Error != "" {
		return "client-cert error (403): " + c.Error
	}
	s := "client-cert secret " + c.Secret + " ca " + strconv.Itoa(len(c.CAs)) + " verify " + string(c.Verify) + " depth " + strconv.Itoa(c.VerifyDepth)
	if c.ErrorPage != "" {
		s += " error-page " + quoteText(c.ErrorPage, false)
	}
	if c.PassCertificate {
		s += " pass-certificate"
	}
	if c.MatchCN != "" {
		s += " match-cn " + strconv.Quote(c.MatchCN)
	}
	if len(c.CRLs) > 0 {
		s += " crl " + strconv.Itoa(len(c.CRLs))
	}
	return s
}

func hasClientCRLs(vh *VirtualHost) bool { return vh.ClientTLS != nil && len(vh.ClientTLS.CRLs) > 0 }

// ClientTLS returns the client certificate authentication of the host a
// TLS handshake names (SNI), chosen as a request's host is: exact, then
// wildcard, then the catch-all; nil when it asks for none.
func (t *Table) ClientTLS(serverName string) *ClientTLS {
	if vh := t.ServerFor(serverName); vh != nil {
		return vh.ClientTLS
	}
	return nil
}

// ServerFor returns the virtual host a TLS handshake naming serverName
// (SNI) is served by, chosen as a request's host is.
func (t *Table) ServerFor(serverName string) *VirtualHost {
	return t.host(trimDot(lowerASCII(serverName))).vh
}

// Passthrough returns the backend whose connections a TLS handshake
// naming serverName (SNI) is spliced to without terminating TLS
// (ssl-passthrough), or nil. Like ingress-nginx's TCP proxy it matches the
// host's name exactly: no wildcard, no alias, no catch-all.
func (t *Table) Passthrough(serverName string) *Backend {
	if len(t.passthrough) == 0 {
		return nil
	}
	return t.passthrough[trimDot(lowerASCII(serverName))]
}

// HasSSLPassthrough reports whether some host's TLS connections pass
// through (ssl-passthrough, Passthrough).
func (t *Table) HasSSLPassthrough() bool { return len(t.passthrough) > 0 }

// indexPassthrough maps each passthrough host to its backend.
func (t *Table) indexPassthrough() {
	for _, vh := range t.hosts {
		if vh.Passthrough != nil && vh.Name != "" && !strings.HasPrefix(vh.Name, "*.") {
			if t.passthrough == nil {
				t.passthrough = make(map[string]*Backend)
			}
			t.passthrough[vh.Name] = vh.Passthrough
		}
	}
}

func hasBackendTLS(vh *VirtualHost) bool {
	return vh.FallbackLocation.BackendTLS != nil || slices.ContainsFunc(vh.Routes, func(r *Route) bool { return r.BackendTLS != nil })
}

// tlsEndsSection is TLS towards backends and clients: how a route's
// backend is dialled, which client certificates a host asks for, and which
// hosts' connections pass through untouched.
var tlsEndsSection = section{
	name:     "tls-ends",
	location: []string{"BackendTLS"},
	host:     []string{"ClientTLS", "Passthrough"},
	digest: []digestPart{{
		tag:     "tls-ends",
		hostHas: func(vh *VirtualHost) bool { return hasBackendTLS(vh) || vh.ClientTLS != nil || vh.Passthrough != nil },
		host: func(e *encoder, vh *VirtualHost) {
			e.backendTLS(vh.FallbackLocation.BackendTLS)
			e.clientTLS(vh.ClientTLS)
			e.backendRef(vh.Passthrough)
		},
		route: func(e *encoder, r *Route) { e.backendTLS(r.BackendTLS) },
	}, {
		// The client CRLs joined later, under a tag of their own, so
		// tables without them keep their digest.
		tag:     "client-crl",
		hostHas: hasClientCRLs,
		host: func(e *encoder, vh *VirtualHost) {
			var crls []*x509.RevocationList
			if vh.ClientTLS != nil {
				crls = vh.ClientTLS.CRLs
			}
			e.num(len(crls))
			for _, crl := range crls {
				e.str(fingerprint(crl.Raw))
			}
		},
	}},
	text: textParts{
		at: 90,
		hostLines: func(b *strings.Builder, vh *VirtualHost) {
			if vh.Passthrough != nil {
				b.WriteString("  passthrough -> " + vh.Passthrough.ID + "\n")
			}
			if vh.ClientTLS != nil {
				b.WriteString("  " + clientTLSLine(vh.ClientTLS) + "\n")
			}
			if vh.FallbackLocation.BackendTLS != nil {
				b.WriteString("  " + backendTLSLine(vh.FallbackLocation.BackendTLS) + "\n")
			}
		},
		routeLines: func(b *strings.Builder, _ *VirtualHost, r *Route) {
			if r.BackendTLS != nil {
				b.WriteString("    " + backendTLSLine(r.BackendTLS) + "\n")
			}
		},
	},
}
