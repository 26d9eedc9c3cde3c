package configmap

import (
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The TLS keys (SPEC §12): ssl-protocols, ssl-ciphers, ssl-ecdh-curve,
// ssl-session-cache, ssl-session-cache-size, ssl-session-timeout,
// ssl-session-tickets, ssl-session-ticket-key, ssl-early-data,
// ssl-reject-handshake and enable-ocsp, read as ingress-nginx v1.15 writes
// them into nginx.conf (nginx.tmpl, the http block: ssl_protocols,
// ssl_ciphers, ssl_ecdh_curve, ssl_session_*, ssl_early_data; the default
// server's ssl_reject_handshake) and turned into what Go's crypto/tls can do. What
// Go cannot do is said in a warning naming what is served instead.

// TLS is what the TLS keys say, for router.Options.TLS. The zero value is not the default: see
// DefaultTLS.
type TLS struct {
	// MinVersion and MaxVersion bound the protocol versions
	// (ssl-protocols, "TLSv1.2 TLSv1.3").
	MinVersion, MaxVersion uint16
	// Ciphers is ssl-ciphers as written; CipherSuites the Go suites it
	// names (TLS 1.0 to 1.2 only: nginx's ssl_ciphers and Go's
	// CipherSuites leave TLS 1.3's alone).
	Ciphers      string
	CipherSuites []uint16
	// Curves are ssl-ecdh-curve's groups; nil for "auto" (Go's own).
	Curves []tls.CurveID
	// SessionCache, SessionCacheSize (bytes) and SessionTimeout:
	// ssl-session-cache ("true"), ssl-session-cache-size ("10m", about
	// 4000 sessions a megabyte as nginx counts) and ssl-session-timeout
	// ("10m"; 0, as nginx takes it, resumes no session).
	SessionCache     bool
	SessionCacheSize int64
	SessionTimeout   time.Duration
	// SessionTickets: ssl-session-tickets ("false"). Without tickets a
	// resumed session is the server's cache's (see router.Options.TLS).
	SessionTickets bool
	// SessionTicketKey: ssl-session-ticket-key, decoded: the 48 or 80
	// bytes ingress-nginx writes to the file of nginx's
	// ssl_session_ticket_key; nil without. With SessionTickets, routers
	// given the same key resume each other's tickets (router.Options.TLS).
	SessionTicketKey []byte
	// EarlyData: ssl-early-data ("false"); Go's server never accepts
	// 0-RTT data, so "true" warns and handshakes take the full round trip.
	EarlyData bool
	// EnableOCSP: enable-ocsp ("false"): the router staples each served
	// certificate's OCSP response (router.Router.StapleOCSP).
	EnableOCSP bool
	// RejectHandshake: ssl-reject-handshake ("false"): a handshake that
	// names no host the table serves, or no name at all, is refused, as
	// nginx's default server refuses it, instead of getting the default
	// certificate.
	RejectHandshake bool
}

// DefaultCiphers is ingress-nginx's ssl-ciphers default (config.go,
// sslCiphers).
const DefaultCiphers = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-AES128-GCM-SHA256"

// NginxDefaultCiphers is nginx's own ssl_ciphers default, served when
// ssl-ciphers is "": nginx.tmpl then writes no ssl_ciphers.
const NginxDefaultCiphers = "HIGH:!aNULL:!MD5"

// sessionsPerMB is nginx's count for ssl_session_cache: "one megabyte of
// the cache contains about 4000 sessions".
const sessionsPerMB = 4000

// DefaultTLS is ingress-nginx's TLS defaults, as far as Go can serve
// them: TLS 1.2 and 1.3, the six ECDHE suites of its cipher list (Go has
// no DHE key exchange: doc.go §19), curves as Go chooses ("auto"), a
// 10m session cache for 10 minutes, no session tickets, no early data.
func DefaultTLS() TLS {
	suites, _, _ := ParseCiphers(DefaultCiphers)
	return TLS{
		MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS13,
		Ciphers: DefaultCiphers, CipherSuites: suites,
		SessionCache: true, SessionCacheSize: 10 << 20, SessionTimeout: 10 * time.Minute,
	}
}

// SessionCacheEntries is how many sessions SessionCacheSize holds.
func (t TLS) SessionCacheEntries() int {
	n := t.SessionCacheSize * sessionsPerMB / (1 << 20)
	return int(max(1, min(n, 1<<24)))
}

func init() {
	for k, read := range map[string]func(p *parse, v string) error{
		// Parse reads ssl-ciphers before ssl-protocols (keys in order),
		// so the security level it sets decides TLS 1.0 and 1.1.
		"ssl-protocols": func(p *parse, v string) error {
			lo, hi, notes, err := ParseProtocols(v, p.secLevel0)
			p.s.TLS.MinVersion, p.s.TLS.MaxVersion = lo, hi
			p.addNotes(notes)
			return err
		},
		"ssl-ciphers": func(p *parse, v string) error {
			list := v
			if list == "" {
				list = NginxDefaultCiphers
			}
			suites, notes, level, err := parseCiphers(list)
			p.s.TLS.Ciphers, p.s.TLS.CipherSuites = v, suites
			p.secLevel0 = level == 0
			p.addNotes(notes)
			return err
		},
		"ssl-ecdh-curve": func(p *parse, v string) error {
			curves, notes, err := ParseCurves(v)
			p.s.TLS.Curves = curves
			p.addNotes(notes)
			return err
		},
		"ssl-session-cache": func(p *parse, v string) (err error) { p.s.TLS.SessionCache, err = ParseBool(v); return err },
		"ssl-session-cache-size": func(p *parse, v string) (err error) {
			p.s.TLS.SessionCacheSize, err = parseNginxSize(v)
			if err == nil && p.s.TLS.SessionCacheSize == 0 {
				err = errors.New("want a size more than 0")
			}
			return err
		},
		"ssl-session-timeout": func(p *parse, v string) (err error) {
			// nginx takes 0: no session outlives its handshake. Its
			// time is in seconds: "500ms" is refused.
			p.s.TLS.SessionTimeout, err = ParseTime(v, true)
			return err
		},
		"ssl-session-tickets": func(p *parse, v string) (err error) { p.s.TLS.SessionTickets, err = ParseBool(v); return err },
		"ssl-early-data": func(p *parse, v string) (err error) {
			p.s.TLS.EarlyData, err = ParseBool(v)
			if p.s.TLS.EarlyData {
				p.note("Go's TLS server does not accept 0-RTT early data: clients send their requests after the full handshake (1-RTT)")
			}
			return err
		},
		"enable-ocsp":            func(p *parse, v string) (err error) { p.s.TLS.EnableOCSP, err = ParseBool(v); return err },
		"ssl-session-ticket-key": parseTicketKey,
		"ssl-reject-handshake": func(p *parse, v string) (err error) {
			p.s.TLS.RejectHandshake, err = ParseBool(v)
			return err
		},
	} {
		Keys[k] = Key{read: read, secret: k == "ssl-session-ticket-key"}
	}
}

// parseTicketKey reads ssl-session-ticket-key as ingress-nginx does
// (store.go, writeSSLSessionTicketKey): "" is no key; a value that is not
// base64 writes no key file, so nginx keeps its own keys; a key of another
// length than nginx's two formats (48 bytes: AES-128, 80: AES-256;
// ngx_ssl_session_ticket_keys) makes nginx refuse the configuration.
// Either is rejected here, each router keeping keys of its own.
func parseTicketKey(p *parse, v string) error {
	p.s.TLS.SessionTicketKey = nil
	if v == "" {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return errors.New("not base64; each router makes its own session ticket keys")
	}
	if len(b) != 48 && len(b) != 80 {
		return fmt.Errorf("%d bytes, where nginx takes 48 or 80 and refuses the configuration; each router makes its own session ticket keys", len(b))
	}
	p.s.TLS.SessionTicketKey = b
	return nil
}

// ParseProtocols reads ssl-protocols: nginx's ssl_protocols names
// separated by spaces. Go serves a range of versions: a list with a gap
// serves the versions between too, and SSLv2 and SSLv3 are never served;
// notes say so. TLSv1 and TLSv1.1 are served only with legacy: ingress-
// nginx's OpenSSL 3 refuses them at every security level but 0
// (ssl_security_default_callback, SSL_SECOP_VERSION), which ssl-ciphers'
// @SECLEVEL=0 sets.
func ParseProtocols(v string, legacy bool) (lo, hi uint16, notes []string, err error) {
	var gone []string
	have := map[uint16]bool{}
	for _, f := range strings.Fields(v) {
		switch f {
		case "TLSv1":
			have[tls.VersionTLS10] = true
		case "TLSv1.1":
			have[tls.VersionTLS11] = true
		case "TLSv1.2":
			have[tls.VersionTLS12] = true
		case "TLSv1.3":
			have[tls.VersionTLS13] = true
		case "SSLv2", "SSLv3":
			gone = append(gone, f)
		default:
			return 0, 0, nil, fmt.Errorf("%q is not a protocol nginx knows (TLSv1, TLSv1.1, TLSv1.2, TLSv1.3)", f)
		}
	}
	if len(gone) > 0 {
		notes = append(notes, strings.Join(gone, " ")+" not served: Go's TLS has no SSL")
	}
	if !legacy && (have[tls.VersionTLS10] || have[tls.VersionTLS11]) {
		var old []string
		for _, ver := range []uint16{tls.VersionTLS10, tls.VersionTLS11} {
			if have[ver] {
				old = append(old, protocolName(ver))
				delete(have, ver)
			}
		}
		notes = append(notes, strings.Join(old, " ")+" not served, as by ingress-nginx: its OpenSSL 3 refuses them above security level 0 (ssl-ciphers with @SECLEVEL=0 serves them)")
	}
	if len(have) == 0 {
		return 0, 0, notes, errors.New("no TLS version left to serve")
	}
	for ver := uint16(tls.VersionTLS10); ver <= tls.VersionTLS13; ver++ {
		if have[ver] {
			if lo == 0 {
				lo = ver
			}
			hi = ver
		}
	}
	var gap []string
	for ver := lo; ver <= hi; ver++ {
		if !have[ver] {
			gap = append(gap, protocolName(ver))
		}
	}
	if len(gap) > 0 {
		notes = append(notes, fmt.Sprintf("Go serves a range of versions: %s is served too, from %s to %s", strings.Join(gap, " "), protocolName(lo), protocolName(hi)))
	}
	return lo, hi, notes, nil
}

// protocolName is nginx's name of a TLS version.
func protocolName(ver uint16) string {
	switch ver {
	case tls.VersionTLS10:
		return "TLSv1"
	case tls.VersionTLS11:
		return "TLSv1.1"
	case tls.VersionTLS12:
		return "TLSv1.2"
	case tls.VersionTLS13:
		return "TLSv1.3"
	}
	return "0x" + strconv.FormatUint(uint64(ver), 16)
}

// ParseCurves reads ssl-ecdh-curve: "auto" (nil: Go's choice) or OpenSSL
// group names separated by ':'. Groups Go lacks (X448, the ffdhe groups)
// are left out with a note; a list left empty is an error.
func ParseCurves(v string) ([]tls.CurveID, []string, error) {
	if v == "auto" || v == "" {
		return nil, nil, nil
	}
	var out []tls.CurveID
	var lacking []string
	for name := range strings.SplitSeq(v, ":") {
		id, ok := curveNames[strings.ToLower(strings.TrimSpace(name))]
		switch {
		case ok && id != 0:
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		case ok:
			lacking = append(lacking, name)
		default:
			return nil, nil, fmt.Errorf("%q is not a curve OpenSSL knows", name)
		}
	}
	var notes []string
	if len(lacking) > 0 {
		notes = append(notes, strings.Join(lacking, ":")+" left out: Go's TLS has no such group")
	}
	if len(out) == 0 {
		return nil, notes, errors.New("no curve left that Go serves")
	}
	return out, notes, nil
}

// curveNames are OpenSSL's group names (lower case); 0 for the ones Go
// does not have.
var curveNames = map[string]tls.CurveID{
	"x25519": tls.X25519, "prime256v1": tls.CurveP256, "secp256r1": tls.CurveP256, "p-256": tls.CurveP256,
	"secp384r1": tls.CurveP384, "p-384": tls.CurveP384, "secp521r1": tls.CurveP521, "p-521": tls.CurveP521,
	"x25519mlkem768": tls.X25519MLKEM768, "x448": 0, "ffdhe2048": 0, "ffdhe3072": 0, "ffdhe4096": 0,
	"ffdhe6144": 0, "ffdhe8192": 0, "secp256k1": 0, "brainpoolp256r1": 0, "brainpoolp384r1": 0,
	"brainpoolp512r1": 0,
}

// parseNginxSize reads an nginx size as ngx_parse_size does: digits, then
// optionally k or m; not g, which only sizes read as offsets
// (client_max_body_size) take.
func parseNginxSize(v string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(v, "k"), strings.HasSuffix(v, "K"):
		mult, v = 1<<10, v[:len(v)-1]
	case strings.HasSuffix(v, "m"), strings.HasSuffix(v, "M"):
		mult, v = 1<<20, v[:len(v)-1]
	}
	n, err := strconv.ParseUint(v, 10, 40)
	if err != nil || n > math.MaxInt64/uint64(mult) {
		return 0, errors.New("want an nginx size in bytes, k or m (10m, 512k)")
	}
	return int64(n) * mult, nil
}
