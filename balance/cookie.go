package balance

import (
	"net/http"
	"strings"
)

// Cookie returns the value of the named cookie in the request's Cookie
// headers, as nginx's $cookie_<name> (see CookieValue). It never
// allocates.
func Cookie(r *http.Request, name string) (string, bool) {
	return CookieValue(r.Header["Cookie"], name)
}

// CookieValue is $cookie_<name> over Cookie field lines as the nginx of
// ingress-nginx v1.15 (1.27) reads it, ngx_http_parse_multi_header_lines:
// the first pair, in line order, that starts with name in any ASCII case,
// then spaces, '=' and spaces; its value runs to the next ';' (a ',' stays
// in it) and keeps trailing spaces. A pair that does not match ends at ';'
// or ','; only spaces, not tabs, are skipped before the next one. Every
// caller that nginx's configuration reads it for (canary-by-cookie,
// upstream-hash-by, snippets, the auth cache key, the access log) reads
// this one variable, so they never disagree about one request. Session
// affinity's cookie is read as ingress-nginx's Lua reads it: StickyCookie.
func CookieValue(lines []string, name string) (string, bool) {
	for _, s := range lines {
		for i := 0; i < len(s); {
			if len(s)-i >= len(name) && equalFoldASCII(s[i:i+len(name)], name) {
				i += len(name)
				for i < len(s) && s[i] == ' ' {
					i++
				}
				if i < len(s) && s[i] == '=' {
					i++
					for i < len(s) && s[i] == ' ' {
						i++
					}
					end := i
					for end < len(s) && s[end] != ';' {
						end++
					}
					return s[i:end], true
				}
				if i < len(s) {
					// nginx has consumed the byte in place of '=', even a ';'.
					i++
				}
			}
			for i < len(s) {
				c := s[i]
				i++
				if c == ';' || c == ',' {
					break
				}
			}
			for i < len(s) && s[i] == ' ' {
				i++
			}
		}
	}
	return "", false
}

// equalFoldASCII compares case-insensitively in ASCII only, as nginx does.
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// StickyCookie is a session-affinity cookie's value as ingress-nginx's
// sticky balancers read it (sticky.lua), with lua-resty-cookie over
// $http_cookie, the Cookie lines joined with "; ", rather than through
// $cookie_<name>: the name matches exactly, the last pair of that name
// wins (a browser sends a cookie set on a shorter path after one set on a
// longer path), and a value runs to the next ';' or tab. A pair starts
// after spaces and tabs, and its name runs to the next '=' whatever comes
// before it. It allocates only to join several lines.
func StickyCookie(lines []string, name string) (string, bool) {
	var s string
	switch len(lines) {
	case 0:
		return "", false
	case 1:
		s = lines[0]
	default:
		s = strings.Join(lines, "; ")
	}
	const (
		expectSpace = iota
		expectKey
		expectValue
	)
	state, start := expectSpace, 0
	var key, value string
	found := false
	for j := 0; j < len(s); j++ {
		c := s[j]
		switch state {
		case expectSpace:
			if c != ' ' && c != '\t' {
				state, start = expectKey, j
				j-- // the byte starts the name
			}
		case expectKey:
			if c == '=' {
				key, state, start = s[start:j], expectValue, j+1
			}
		case expectValue:
			// A space ends a value only after a ';', which has ended it
			// already: spaces stay in it.
			if c == ';' || c == '\t' {
				if key == name {
					value, found = s[start:j], true
				}
				state = expectSpace
			}
		}
	}
	if state == expectValue && key == name {
		value, found = s[start:], true
	}
	return value, found
}
