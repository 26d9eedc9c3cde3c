package match

import (
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
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
	// External is nil without auth-url.
	External *ExternalAuth
}

// BasicAuth is HTTP basic authentication against a password file.
type BasicAuth struct {
	// Realm is the WWW-Authenticate realm (auth-realm).
	Realm string
	// Secret is the Secret's "namespace/name"; SecretType "auth-file" (an
	// htpasswd file under key auth) or "auth-map" (user to hash keys).
	Secret, SecretType string
	// Users are the credentials that can log in.
	Users *Passwords
	// challenge is the WWW-Authenticate value, prepared once.
	challenge []string
}

// NewBasicAuth returns a with its challenge prepared.
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
	URL    AuthURL
	Method string
	// Signin, when set (auth-signin), is where a 401 from the service
	// redirects the client (302), with the original URL already in its
	// redirect parameter (auth-signin-redirect-param, "rd" by default).
	Signin *AuthURL
	// ResponseHeaders are copied from the service's 2xx answer to the
	// request proxied to the backend (auth-response-headers), in canonical
	// form; a header the service does not send is removed from the
	// request, so a client cannot supply it.
	ResponseHeaders []string
	// RequestRedirect is the X-Auth-Request-Redirect sent to the service
	// (auth-request-redirect); "" sends the request URI.
	RequestRedirect string
	// AlwaysSetCookie passes the service's Set-Cookie to the client
	// whatever the final status (auth-always-set-cookie); otherwise only
	// with the statuses nginx's add_header uses.
	AlwaysSetCookie bool
}

// AuthURL is an auth-url or auth-signin value: a URL that may use the
// request variables ingress-nginx users put there, as in
// "https://$host/oauth2/start?rd=$escaped_request_uri".
type AuthURL struct {
	// Raw is the value as written (with the redirect parameter added, for
	// a sign-in URL).
	Raw   string
	parts []urlPart
}

type urlPart struct {
	lit string
	v   authVar
}

type authVar uint8

const (
	varNone authVar = iota
	varHost
	varHTTPHost
	varScheme
	varRequestURI
	varEscapedRequestURI
	varRemoteAddr
)

var authVars = map[string]authVar{
	"host":                varHost,
	"http_host":           varHTTPHost,
	"best_http_host":      varHTTPHost,
	"scheme":              varScheme,
	"pass_access_scheme":  varScheme,
	"request_uri":         varRequestURI,
	"escaped_request_uri": varEscapedRequestURI,
	"remote_addr":         varRemoteAddr,
}

// AuthURLVariables lists the variables an auth URL may use.
const AuthURLVariables = "$host, $http_host, $best_http_host, $scheme, $pass_access_scheme, $request_uri, $escaped_request_uri, $remote_addr"

// ParseAuthURL parses an auth URL. It must be absolute http or https with
// a host, unless relative is allowed (a sign-in page on the same host,
// "/start"); variables are $name or ${name} from AuthURLVariables.
func ParseAuthURL(s string, relative bool) (AuthURL, error) {
	u := AuthURL{Raw: s}
	var probe strings.Builder
	rest := s
	for rest != "" {
		i := strings.IndexByte(rest, '$')
		if i < 0 {
			u.parts = append(u.parts, urlPart{lit: rest})
			probe.WriteString(rest)
			break
		}
		if i > 0 {
			u.parts = append(u.parts, urlPart{lit: rest[:i]})
			probe.WriteString(rest[:i])
		}
		rest = rest[i+1:]
		var name string
		if strings.HasPrefix(rest, "{") {
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				return AuthURL{}, errors.New("has an unterminated ${")
			}
			name, rest = rest[1:end], rest[end+1:]
		} else {
			n := 0
			for n < len(rest) && (rest[n] == '_' || rest[n] >= 'a' && rest[n] <= 'z' || rest[n] >= 'A' && rest[n] <= 'Z' || rest[n] >= '0' && rest[n] <= '9') {
				n++
			}
			name, rest = rest[:n], rest[n:]
		}
		v, ok := authVars[name]
		if !ok {
			return AuthURL{}, errors.New("uses $" + name + ", which ramjet does not provide (it provides " + AuthURLVariables + ")")
		}
		u.parts = append(u.parts, urlPart{v: v})
		switch v {
		case varHost, varHTTPHost:
			probe.WriteString("host.invalid")
		case varScheme:
			probe.WriteString("http")
		case varRemoteAddr:
			probe.WriteString("192.0.2.1")
		default:
			probe.WriteString("/")
		}
	}
	for _, ch := range []byte(s) {
		if ch <= ' ' || ch == 0x7f {
			return AuthURL{}, errors.New("holds a space or control character")
		}
	}
	p, err := url.Parse(probe.String())
	switch {
	case err != nil:
		return AuthURL{}, errors.New("is not a URL")
	case relative && p.Scheme == "" && p.Host == "" && strings.HasPrefix(p.Path, "/"):
		return u, nil
	case p.Scheme != "http" && p.Scheme != "https":
		return AuthURL{}, errors.New("is not an http or https URL")
	case p.Host == "":
		return AuthURL{}, errors.New("has no host")
	case strings.Contains(p.Host, ".."):
		return AuthURL{}, errors.New("has an invalid host")
	}
	return u, nil
}

// SigninURL builds the sign-in redirect as ingress-nginx does: the
// redirect parameter (param, "rd" when empty) is added with the original
// URL, $pass_access_scheme://$http_host$escaped_request_uri, unless the
// URL's query already sets it.
func SigninURL(signin, param string) (AuthURL, error) {
	if param == "" {
		param = "rd"
	}
	if _, err := ParseAuthURL(signin, true); err != nil {
		return AuthURL{}, err
	}
	raw := signin
	_, query, hasQuery := strings.Cut(signin, "?")
	q, _ := url.ParseQuery(query)
	switch {
	case !hasQuery || len(q) == 0:
		raw += "?" + param + "=$pass_access_scheme://$http_host$escaped_request_uri"
	case q.Get(param) != "":
	default:
		raw += "&" + param + "=$pass_access_scheme://$http_host$escaped_request_uri"
	}
	return ParseAuthURL(raw, true)
}

// RequestVars are the values of the variables an AuthURL may use.
type RequestVars struct {
	// Host is the normalized host ($host); HTTPHost the Host header as
	// sent ($http_host); Scheme "http" or "https"; RequestURI the
	// request-target as received; RemoteAddr the client's IP.
	Host, HTTPHost, Scheme, RequestURI, RemoteAddr string
}

// Expand returns the URL with the variables replaced.
func (u *AuthURL) Expand(v *RequestVars) string {
	if len(u.parts) == 1 && u.parts[0].v == varNone {
		return u.parts[0].lit
	}
	var b strings.Builder
	for _, p := range u.parts {
		switch p.v {
		case varNone:
			b.WriteString(p.lit)
		case varHost:
			b.WriteString(v.Host)
		case varHTTPHost:
			b.WriteString(v.HTTPHost)
		case varScheme:
			b.WriteString(v.Scheme)
		case varRequestURI:
			b.WriteString(v.RequestURI)
		case varEscapedRequestURI:
			b.WriteString(EscapeURIComponent(v.RequestURI))
		case varRemoteAddr:
			b.WriteString(v.RemoteAddr)
		}
	}
	return b.String()
}

// EscapeURIComponent percent-encodes every byte but letters, digits and
// "-._~", as nginx's set_escape_uri does for $escaped_request_uri.
func EscapeURIComponent(s string) string {
	const hex = "0123456789ABCDEF"
	n := 0
	for i := 0; i < len(s); i++ {
		if !unreserved(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		if c := s[i]; unreserved(c) {
			b = append(b, c)
		} else {
			b = append(b, '%', hex[c>>4], hex[c&15])
		}
	}
	return string(b)
}

func unreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
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
	if x := a.External; x != nil {
		s := "auth external " + quoteText(x.URL.Raw, false)
		if x.Method != "" {
			s += " method " + x.Method
		}
		if x.Signin != nil {
			s += " signin " + quoteText(x.Signin.Raw, false)
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
		var sum []byte
		if b.Users != nil {
			sum = b.Users.sum[:]
		}
		e.bytes(sum)
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
		e.flag(x.AlwaysSetCookie)
	} else {
		e.flag(false)
	}
}

// authSection is who may pass a route or fallback: basic and external
// authentication, or a denial when what the route asks for cannot be
// served. Its digest entries follow CORS's in their shared "access" part.
var authSection = section{
	name:  "auth",
	route: []string{"Auth"},
	host:  []string{"FallbackAuth"},
	digest: []digestPart{{
		tag: "access",
		hostHas: func(vh *VirtualHost) bool {
			return vh.FallbackAuth != nil || slices.ContainsFunc(vh.Routes, func(r *Route) bool { return r.Auth != nil })
		},
		host:  func(e *encoder, vh *VirtualHost) { e.auth(vh.FallbackAuth) },
		route: func(e *encoder, r *Route) { e.auth(r.Auth) },
	}},
	text: textParts{
		at:            80,
		fallbackLines: func(b *strings.Builder, vh *VirtualHost) { authLines(b, vh.FallbackAuth) },
		routeLines:    func(b *strings.Builder, _ *VirtualHost, r *Route) { authLines(b, r.Auth) },
	},
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
