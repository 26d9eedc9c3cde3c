package urltemplate

import (
	"errors"
	"net/url"
	"strings"
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

// Parsed reports whether u came from ParseAuthURL or SigninURL: an AuthURL
// written as a literal has only Raw, and expands to nothing until parsed.
func (u *AuthURL) Parsed() bool { return u.parts != nil }
