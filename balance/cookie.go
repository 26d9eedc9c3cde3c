package balance

import "net/http"

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
// caller (session affinity, canary-by-cookie, upstream-hash-by, snippets,
// the auth cache key) reads this one variable, as nginx does, so they
// never disagree about one request.
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
