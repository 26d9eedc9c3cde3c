package urltemplate

import (
	"errors"
	"net/url"
	"strings"

	"ramjet.dev/ramjet/match/vars"
)

// AuthURL is an auth-url or auth-signin value: a URL that may use the
// request variables ingress-nginx users put there, as in
// "https://$host/oauth2/start?rd=$escaped_request_uri". Make it with
// ParseAuthURL or SigninURL; match.New parses one written as a literal
// (Raw only).
type AuthURL struct {
	// Raw is the value as written (with the redirect parameter added, for
	// a sign-in URL).
	Raw   string
	parts vars.Template
}

// authURLPlace is where an auth URL's variables are read.
var authURLPlace = vars.Place{Name: "an auth URL", Vars: vars.Of(vars.Host, vars.HTTPHost, vars.BestHTTPHost,
	vars.Scheme, vars.PassAccessScheme, vars.RequestURI, vars.EscapedRequestURI, vars.RemoteAddr)}

// AuthURLVariables lists the variables an auth URL may use.
var AuthURLVariables = authURLPlace.Expands()

// ParseAuthURL parses an auth URL. It must be absolute http or https with
// a host, unless relative is allowed (a sign-in page on the same host,
// "/start"); variables are $name or ${name} from AuthURLVariables.
func ParseAuthURL(s string, relative bool) (AuthURL, error) {
	t, err := authURLPlace.Parse(s)
	if err != nil {
		return AuthURL{}, err
	}
	if t == nil {
		t = vars.Template{{}}
	}
	u := AuthURL{Raw: s, parts: t}
	var probe strings.Builder
	t.Expand(&probe, func(r vars.Ref) string {
		switch r.Var.Canon() {
		case vars.Host, vars.HTTPHost, vars.BestHTTPHost:
			return "host.invalid"
		case vars.Scheme, vars.PassAccessScheme:
			return "http"
		case vars.RemoteAddr:
			return "192.0.2.1"
		}
		return "/"
	})
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
	// sent ($http_host); BestHTTPHost ingress-nginx's $best_http_host
	// (lua_ingress.lua): HTTPHost, or under use-forwarded-headers the
	// first name of X-Forwarded-Host; Scheme the connection's, "http" or "https"
	// ($scheme); PassAccessScheme the one the client used as a trusted
	// balancer says (ingress-nginx's $pass_access_scheme, set per
	// location by lua_ingress.lua); RequestURI the request-target as
	// received; RemoteAddr the client's IP.
	Host, HTTPHost, BestHTTPHost, Scheme, PassAccessScheme, RequestURI, RemoteAddr string
}

// Expand returns the URL with the variables replaced.
func (u *AuthURL) Expand(v *RequestVars) string {
	if len(u.parts) == 1 && u.parts[0].Ref.Var == vars.None {
		return u.parts[0].Lit
	}
	var b strings.Builder
	u.parts.Expand(&b, v.value)
	return b.String()
}

func (v *RequestVars) value(r vars.Ref) string {
	switch r.Var.Canon() {
	case vars.Host:
		return v.Host
	case vars.HTTPHost:
		return v.HTTPHost
	case vars.BestHTTPHost:
		return v.BestHTTPHost
	case vars.Scheme:
		return v.Scheme
	case vars.PassAccessScheme:
		return v.PassAccessScheme
	case vars.RequestURI:
		return v.RequestURI
	case vars.EscapedRequestURI:
		return EscapeURIComponent(v.RequestURI)
	case vars.RemoteAddr:
		return v.RemoteAddr
	}
	return ""
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

// Parsed reports whether u came from ParseAuthURL or SigninURL: an AuthURL
// written as a literal has only Raw, and expands to nothing until parsed.
func (u *AuthURL) Parsed() bool { return u.parts != nil }
