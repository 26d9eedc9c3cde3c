package router

import (
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"

	"ramjet.dev/ramjet/match"
)

// The plain-HTTP → HTTPS redirect (SPEC §12), as ingress-nginx makes it:
//
//   - A request is plain HTTP when it did not arrive over TLS (req.TLS is
//     nil). X-Forwarded-Proto from the client is not trusted unless
//     Options.TrustForwardedProto says a TLS-terminating load balancer in
//     front sets it; otherwise anyone could skip the redirect by sending it.
//     Trusted, it decides over TLS too (a balancer that re-encrypts).
//   - The matched route's settings decide, else (no route matched) the
//     virtual host's: force-ssl-redirect redirects on any host;
//     ssl-redirect only on a host listed under some spec.tls, whether or not
//     its Secret is usable, and on a server-alias name of one only when the
//     host's certificate covers it, as ingress-nginx gives an alias a
//     certificate entry only then.
//   - /.well-known/acme-challenge and everything under it is never
//     redirected, so HTTP-01 challenges reach their solver; nor, in its
//     place, is what Options.NoTLSRedirectLocations lists
//     (no-tls-redirect-locations). ingress-nginx judges the path of the
//     location that matched; ramjet the request's (SPEC §19).
//   - The answer is 308 (method and body kept; Options.HTTPRedirectCode,
//     ingress-nginx's http-redirect-code, may say 301, 302 or 307) to
//     https://<host><request-uri>:
//     the Host header as sent minus its port (the redirect goes to 443), or
//     the first X-Forwarded-Host where forwarded headers are trusted, then
//     ":" and Options.HTTPSPort where use-port-in-redirects is set, and
//     the request-target as received, from its path on for an absolute
//     form ($request_uri: "?q" for "http://h?q"). One trailing slash is dropped unless
//     preserve-trailing-slash is set, as nginx drops the last byte of
//     $request_uri: "/" becomes "https://host", "/a?next=/" "/a?next=",
//     and "/a/?x" keeps its slash.
//   - A plain-HTTP request that must be redirected but names no usable host
//     (no Host header, say, on a force-ssl-redirect catch-all) cannot be
//     sent anywhere and answers 400 rather than being served in the clear.

// DefaultNoTLSRedirectLocations is ingress-nginx's
// no-tls-redirect-locations: the HTTP-01 challenge path (RFC 8555 §8.3).
var DefaultNoTLSRedirectLocations = []string{"/.well-known/acme-challenge"}

var ansNoHostToTLS = answer{http.StatusBadRequest, ReasonBadHost, "400 Bad Request: a plain-HTTP request without a valid host name cannot be redirected to HTTPS\n"}

// sslRedirectAnswer is the HTTPS redirect's answer with status code
// (http-redirect-code).
func sslRedirectAnswer(code int) answer {
	return answer{code, ReasonSSLRedirect, strconv.Itoa(code) + " " + http.StatusText(code) + ": this host is served over HTTPS\n"}
}

// redirects reports whether a plain-HTTP request for host matched to res
// in t is redirected to HTTPS. clean is the normalized path; a path under
// one of exempt is not. Whether host
// is listed under some spec.tls matters where no virtual host of that name
// exists and the catch-all or a wildcard serves it; t is asked only then.
func redirects(res match.Result, clean string, t *match.Table, host string, exempt []string) bool {
	var ssl, force bool
	if res.Route != nil {
		ssl, force = res.Route.SSLRedirect, res.Route.ForceSSLRedirect
	} else {
		ssl, force = res.Host.SSLRedirect, res.Host.ForceSSLRedirect
	}
	if !force && !(ssl && tlsHost(res.Host, t, host)) {
		return false
	}
	for _, p := range exempt {
		if under(clean, p) {
			return false
		}
	}
	return true
}

// tlsHost reports whether a request for host served by vh is for a TLS
// host: one listed under some spec.tls, or vh's own name when vh is
// listed. A name vh answers as an alias counts only when a certificate
// covers it: an alias the host's certificate does not cover would be
// redirected to an HTTPS name served the wrong certificate.
func tlsHost(vh *match.VirtualHost, t *match.Table, host string) bool {
	switch {
	case vh.TLS && host == vh.Name, t.IsTLSHost(host):
		return true
	case !vh.TLS:
		return false
	}
	if suffix, ok := strings.CutPrefix(vh.Name, "*"); ok && strings.HasSuffix(host, suffix) {
		return true // a deep wildcard's name
	}
	return t.Certificate(host) != nil
}

// redirectForm is the preserve-trailing-slash and use-port-in-redirects
// settings that apply to a request matched to res.
func redirectForm(res match.Result) (preserveSlash, usePort bool) {
	if res.Route != nil {
		return res.Route.PreserveTrailingSlash, res.Route.UsePortInRedirects
	}
	return res.Host.PreserveTrailingSlash, res.Host.UsePortInRedirects
}

// under reports whether the normalized path clean is dir or under it.
func under(clean, dir string) bool {
	return strings.HasPrefix(clean, dir) &&
		(len(clean) == len(dir) || strings.HasSuffix(dir, "/") || clean[len(dir)] == '/')
}

// httpsLocation builds the redirect target from the Host header and the
// request-target as received, with ":"+port after the host when port is
// not "" (use-port-in-redirects; lua_ingress.lua names
// config.listen_ports.https there); ok is false when the host is empty or could
// not be a host name, or the target holds a space or control byte (which
// net/http's parser never lets through, but a handler called in process
// might be given).
func httpsLocation(rawHost, port, path, query string, hasQuery, preserveSlash bool) (string, bool) {
	host, ok := hostWithoutPort(rawHost)
	if !ok || hasCTLOrSpace(path) || hasCTLOrSpace(query) {
		return "", false
	}
	if !preserveSlash {
		// nginx drops the last byte of $request_uri when it is "/", a
		// query's included.
		switch {
		case hasQuery && strings.HasSuffix(query, "/"):
			query = query[:len(query)-1]
		case !hasQuery && strings.HasSuffix(path, "/"):
			path = path[:len(path)-1]
		}
	}
	n := len("https://") + len(host) + 1 + len(port) + len(path)
	if hasQuery {
		n += 1 + len(query)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString("https://")
	b.WriteString(host)
	if port != "" {
		b.WriteByte(':')
		b.WriteString(port)
	}
	b.WriteString(path)
	if hasQuery {
		b.WriteByte('?')
		b.WriteString(query)
	}
	return b.String(), true
}

// redirectHost is the host the HTTPS redirect names, as ingress-nginx's
// $best_http_host: where forwarded headers are trusted, the first value of
// X-Forwarded-Host the load balancer set (the name the client used), else
// the Host field as sent (bestHost), beside an absolute-form target too.
func (r *Router) redirectHost(req *http.Request) string {
	if r.live.Load().trustForwardedProto {
		if v := req.Header["X-Forwarded-Host"]; len(v) > 0 {
			if h, _, _ := strings.Cut(v[0], ","); strings.TrimSpace(h) != "" {
				return strings.TrimSpace(h)
			}
		}
	}
	return bestHost(req)
}

// hostWithoutPort returns the Host header's name as sent, without a port:
// a bracketed IPv6 literal or a run of name characters. Anything that
// could change the meaning of a URL (userinfo, a path, whitespace) is
// refused, so a redirect never points somewhere the host did not name.
func hostWithoutPort(h string) (string, bool) {
	if strings.HasPrefix(h, "[") {
		end := strings.IndexByte(h, ']')
		if end < 0 || !validPort(h[end+1:]) {
			return "", false
		}
		ip, err := netip.ParseAddr(h[1:end])
		if err != nil || !ip.Is6() || ip.Zone() != "" {
			return "", false
		}
		return h[:end+1], true
	}
	if i := strings.IndexByte(h, ':'); i >= 0 {
		if !validPort(h[i:]) {
			return "", false
		}
		h = h[:i]
	}
	if h == "" {
		return "", false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !isNameByte(c) {
			return "", false
		}
	}
	return h, true
}

func hasCTLOrSpace(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// validPort accepts "" or ":" followed by decimal digits.
func validPort(s string) bool {
	if s == "" {
		return true
	}
	if s[0] != ':' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_'
}

// clientProto is the scheme the client used: "https" through a PROXY
// protocol header naming port 443 (proxiedHTTPS); when trusted, the first
// value of X-Forwarded-Proto set by a load balancer in front, over TLS too,
// as ingress-nginx's $pass_access_scheme: a balancer that re-encrypts says
// "http" for a client that came over plain HTTP; else "https" over TLS.
func (r *Router) clientProto(req *http.Request) string {
	if proxiedHTTPS(req) {
		return "https"
	}
	return r.forwardedProto(req)
}

// forwardedProto is clientProto without the PROXY protocol header's
// destination port: the connection's scheme, or the trusted
// X-Forwarded-Proto.
func (r *Router) forwardedProto(req *http.Request) string {
	if r.live.Load().trustForwardedProto {
		if v := req.Header["X-Forwarded-Proto"]; len(v) > 0 {
			p, _, _ := strings.Cut(v[0], ",")
			if p = strings.TrimSpace(p); p != "" {
				if match.EqualFoldASCII(p, "https") {
					return "https"
				}
				return "http"
			}
		}
	}
	return connScheme(req)
}

// connScheme is nginx's $scheme: the connection's own, whatever a
// balancer in front says, as snippets, auth URLs and headers and mirror
// targets expand it and absolute_redirect completes a snippet's or
// sign-in's Location; ingress-nginx's $pass_access_scheme (clientProto)
// is the balancer's.
func connScheme(req *http.Request) string {
	if req.TLS != nil {
		return "https"
	}
	return "http"
}

// peersMarked is whether PeerIsClient ever marked a connection in this
// process, so that a router without PROXY protocol listeners skips the
// request context lookup of proxiedHTTPS on every request.
var peersMarked atomic.Bool

// proxiedHTTPS reports a request read through a PROXY protocol header
// (PeerIsClient marks the connection) that named a client and destination
// port 443: the load balancer terminated TLS there, as ingress-nginx with
// use-proxy-protocol assumes (lua_ingress.lua, proxy_protocol_server_port
// "443"); redirecting it to https would loop through the balancer. The
// connection's local address is the header's destination then.
func proxiedHTTPS(req *http.Request) bool {
	if !peersMarked.Load() {
		return false // no connection was ever marked: no context to search
	}
	ctx := req.Context()
	f, _ := ctx.Value(peerIsClientKey{}).(func() bool)
	if f == nil {
		return false
	}
	a, _ := ctx.Value(http.LocalAddrContextKey).(*net.TCPAddr)
	return a != nil && a.Port == 443 && !f()
}
