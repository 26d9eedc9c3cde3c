package match

import (
	"slices"
	"strconv"
	"strings"

	"ramjet.dev/ramjet/match/htpasswd"
	"ramjet.dev/ramjet/match/urltemplate"
)

// Auth is a route's authentication: basic (auth-type, auth-secret,
// auth-secret-type, auth-realm) and external (auth-url and its
// companions). When both are set a request must pass both, basic first.
type Auth struct {
	// Denied says why the authentication the Ingress asks for cannot be
	// served (a missing Secret, a value that does not parse): every
	// request to the route then answers 503, as ingress-nginx answers a
	// location it denied. "" when the route is served.
	Denied string
	Basic  *BasicAuth
	// Digest is auth-type digest's in place of Basic; nil otherwise.
	Digest *DigestAuth
	// External is nil without auth-url.
	External *ExternalAuth
}

// DigestAuth is HTTP digest authentication (RFC 2617, MD5 with qop auth)
// against an htdigest file, as ingress-nginx serves auth-type digest with
// nginx's auth_digest module.
type DigestAuth struct {
	// Realm is the challenge's realm (auth-realm), never empty.
	Realm string
	// Secret and SecretType are as BasicAuth's.
	Secret, SecretType string
	// Users are the (user, realm) entries that can log in.
	Users *htpasswd.Digests
}

// BasicAuth is HTTP basic authentication against a password file.
type BasicAuth struct {
	// Realm is the WWW-Authenticate realm (auth-realm).
	Realm string
	// Secret is the Secret's "namespace/name"; SecretType "auth-file" (an
	// htpasswd file under key auth) or "auth-map" (user to hash keys).
	Secret, SecretType string
	// Users are the credentials that can log in.
	Users *htpasswd.Passwords
	// challenge is the WWW-Authenticate value, prepared once.
	challenge []string
}

// NewBasicAuth returns a with its challenge prepared; New prepares a
// BasicAuth written as a literal the same way.
func NewBasicAuth(a BasicAuth) *BasicAuth {
	a.challenge = one(`Basic realm="` + a.Realm + `"`)
	return &a
}

// Challenge is the WWW-Authenticate header value of a 401, shared: never
// modify it.
func (a *BasicAuth) Challenge() []string {
	if a.challenge == nil {
		return []string{`Basic realm="` + a.Realm + `"`}
	}
	return a.challenge
}

// ExternalAuth sends a subrequest to an authentication service before a
// request is proxied, as ingress-nginx's auth_request does.
type ExternalAuth struct {
	// URL is the service (auth-url); Method the subrequest's method
	// (auth-method), "" for GET as nginx's subrequests use.
	URL    urltemplate.AuthURL
	Method string
	// Signin, when set (auth-signin), is where a 401 from the service
	// redirects the client (302), with the original URL already in its
	// redirect parameter (auth-signin-redirect-param, "rd" by default).
	Signin *urltemplate.AuthURL
	// SigninRelative keeps a sign-in URL starting with "/" relative in the
	// redirect (the relative-redirects ConfigMap key: nginx's
	// absolute_redirect off at the http level, which the server-level
	// sign-in location inherits); otherwise it is made absolute.
	SigninRelative bool
	// ResponseHeaders are copied from the service's 2xx answer to the
	// request proxied to the backend (auth-response-headers), in canonical
	// form, a name listed twice sent twice; a header the service does not
	// send is removed from the request, so a client cannot supply it.
	ResponseHeaders []string
	// RequestRedirect is the X-Auth-Request-Redirect sent to the service
	// (auth-request-redirect); "" sends the request URI.
	RequestRedirect string
	// AlwaysSetCookie passes the service's Set-Cookie to the client
	// whatever the final status (auth-always-set-cookie); otherwise only
	// with the statuses nginx's add_header uses.
	AlwaysSetCookie bool
	// NoTraceContext sends the service no traceparent or tracestate, not
	// even the client's, where the route is not traced (a traced one's
	// subrequest never has them): ingress-nginx's auth location
	// propagates a trace context whenever the ConfigMap's
	// enable-opentelemetry is on, and its OpenTelemetry module makes none
	// for the subrequest. Without a router Tracer it has no effect.
	NoTraceContext bool
	// Options are the cache, keep-alive and header settings (authoptions.go).
	Options *ExternalAuthOptions
}

// authText renders a route's authentication for the table's text, one
// line each, never a hash: the Secret's name and how many users it holds.
func authText(a *Auth) []string {
	var lines []string
	if a.Denied != "" {
		lines = append(lines, "auth denied (503): "+a.Denied)
	}
	if b := a.Basic; b != nil {
		lines = append(lines, "auth basic realm "+strconv.Quote(b.Realm)+" secret "+b.Secret+" "+b.SecretType+" "+strconv.Itoa(b.Users.Len())+" users")
	}
	if d := a.Digest; d != nil {
		lines = append(lines, "auth digest realm "+strconv.Quote(d.Realm)+" secret "+d.Secret+" "+d.SecretType+" "+strconv.Itoa(d.Users.Len())+" users")
	}
	if x := a.External; x != nil {
		s := "auth external " + quoteText(x.URL.Raw, false)
		if x.Method != "" {
			s += " method " + x.Method
		}
		if x.Signin != nil {
			s += " signin " + quoteText(x.Signin.Raw, false)
			if x.SigninRelative {
				s += " relative"
			}
		}
		if len(x.ResponseHeaders) > 0 {
			s += " response-headers " + strings.Join(x.ResponseHeaders, ",")
		}
		if x.RequestRedirect != "" {
			s += " request-redirect " + quoteText(x.RequestRedirect, false)
		}
		if x.AlwaysSetCookie {
			s += " always-set-cookie"
		}
		if x.NoTraceContext {
			s += " no-trace-context"
		}
		lines = append(lines, s)
	}
	return lines
}

func (e *encoder) auth(a *Auth) {
	if a == nil {
		e.flag(false)
		return
	}
	e.flag(true)
	e.str(a.Denied)
	if b := a.Basic; b != nil {
		e.flag(true)
		e.str(b.Realm)
		e.str(b.Secret)
		e.str(b.SecretType)
		e.bytes(b.Users.Digest())
	} else {
		e.flag(false)
	}
	if x := a.External; x != nil {
		e.flag(true)
		e.str(x.URL.Raw)
		e.str(x.Method)
		if x.Signin != nil {
			e.flag(true)
			e.str(x.Signin.Raw)
		} else {
			e.flag(false)
		}
		e.strs(x.ResponseHeaders)
		e.str(x.RequestRedirect)
		// NoTraceContext is bit 1 of AlwaysSetCookie's byte, so that a
		// table without it keeps its digest.
		v := byte(0)
		if x.AlwaysSetCookie {
			v = 1
		}
		if x.NoTraceContext {
			v |= 2
		}
		e.buf = append(e.buf, v)
		e.flushIfFull()
	} else {
		e.flag(false)
	}
}

// authSection is who may pass a route or fallback: basic and external
// authentication, or a denial when what the route asks for cannot be
// served. Its digest entries follow CORS's in their shared "access" part.
var authSection = section{
	name:     "auth",
	location: []string{"Auth"},
	digest: []digestPart{{
		tag: "access",
		hostHas: func(vh *VirtualHost) bool {
			return vh.FallbackLocation.Auth != nil || slices.ContainsFunc(vh.Routes, func(r *Route) bool { return r.Auth != nil })
		},
		host:  func(e *encoder, vh *VirtualHost) { e.auth(vh.FallbackLocation.Auth) },
		route: func(e *encoder, r *Route) { e.auth(r.Auth) },
	}, {
		// Digest authentication joined later, under a tag of its own, so
		// tables without it keep their digest.
		tag: "auth-digest",
		hostHas: func(vh *VirtualHost) bool {
			return hasDigest(vh.FallbackLocation.Auth) || slices.ContainsFunc(vh.Routes, func(r *Route) bool { return hasDigest(r.Auth) })
		},
		host:  func(e *encoder, vh *VirtualHost) { e.digestAuth(vh.FallbackLocation.Auth) },
		route: func(e *encoder, r *Route) { e.digestAuth(r.Auth) },
	}, {
		// The relative sign-in redirect joined later too.
		tag: "auth-signin-relative",
		hostHas: func(vh *VirtualHost) bool {
			return signinRelative(vh.FallbackLocation.Auth) || slices.ContainsFunc(vh.Routes, func(r *Route) bool { return signinRelative(r.Auth) })
		},
		host:  func(e *encoder, vh *VirtualHost) { e.flag(signinRelative(vh.FallbackLocation.Auth)) },
		route: func(e *encoder, r *Route) { e.flag(signinRelative(r.Auth)) },
	}},
	text: textParts{
		at:            80,
		fallbackLines: func(b *strings.Builder, vh *VirtualHost) { authLines(b, vh.FallbackLocation.Auth) },
		routeLines:    func(b *strings.Builder, _ *VirtualHost, r *Route) { authLines(b, r.Auth) },
	},
}

func hasDigest(a *Auth) bool { return a != nil && a.Digest != nil }

func signinRelative(a *Auth) bool {
	return a != nil && a.External != nil && a.External.Signin != nil && a.External.SigninRelative
}

func (e *encoder) digestAuth(a *Auth) {
	if !hasDigest(a) {
		e.flag(false)
		return
	}
	d := a.Digest
	e.flag(true)
	e.str(d.Realm)
	e.str(d.Secret)
	e.str(d.SecretType)
	e.bytes(d.Users.Digest())
}

// authLines writes a route's authentication under its line.
func authLines(b *strings.Builder, a *Auth) {
	if a == nil {
		return
	}
	for _, l := range authText(a) {
		b.WriteString("    " + l + "\n")
	}
}
