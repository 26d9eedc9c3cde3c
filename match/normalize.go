package match

import (
	"errors"
	"strings"
	"unsafe"
)

// Errors of NormalizePath; each answers 400 (SPEC §13).
var (
	ErrNotAbsolute = errors.New("path does not begin with /")
	ErrBadEscape   = errors.New("malformed percent-encoding in path")
	ErrPathClimbs  = errors.New("path climbs above /")
	// ErrNUL: a decoded NUL would cut the path short in any C-string
	// consumer (nginx refuses it too).
	ErrNUL = errors.New("decoded NUL in path")
)

// NormalizeHost turns a Host header or :authority into the name hosts are
// matched on (SPEC §3): the port dropped, ASCII lower-cased, one trailing
// dot dropped. Like nginx, everything from the first ':' is the port, except
// in a bracketed IPv6 literal, which is kept with its brackets ("[::1]:8080"
// gives "[::1]"). It allocates only when there is upper case to fold.
func NormalizeHost(raw string) string {
	h := raw
	if strings.HasPrefix(h, "[") {
		if i := strings.IndexByte(h, ']'); i >= 0 {
			h = h[:i+1]
		}
	} else if i := strings.IndexByte(h, ':'); i >= 0 {
		h = h[:i]
	}
	return trimDot(lowerASCII(h))
}

func trimDot(s string) string {
	if n := len(s); n > 0 && s[n-1] == '.' {
		return s[:n-1]
	}
	return s
}

// lowerASCII folds only ASCII letters, so other bytes pass through unchanged
// (strings.ToLower would rewrite invalid UTF-8).
func lowerASCII(s string) string {
	i := 0
	for i < len(s) && (s[i] < 'A' || s[i] > 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if c := b[i]; 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return unsafe.String(&b[0], len(b))
}

// NormalizePath turns a request's escaped path (without the query) into the
// path routes are matched on (SPEC §13): %XX decoded, a decoded %2F being a
// separator like '/'; repeated slashes merged; "." and ".." segments
// resolved, including decoded ones ("%2e%2e"); a trailing slash kept ("/a/."
// and "/a/b/.." both give "/a/"). An empty path is "/" (RFC 9110 §4.2.3).
//
// The result may contain '%' (from "%25"): it is decoded once and must not
// be decoded again. A path that is already clean returns unchanged without
// allocating.
func NormalizePath(escaped string) (string, error) {
	if escaped == "" {
		return "/", nil
	}
	if escaped[0] != '/' {
		return "", ErrNotAbsolute
	}
	if isClean(escaped) {
		return escaped, nil
	}
	return normalizeSlow(escaped)
}

// isClean reports that p (starting with '/') has no '%', no empty segment
// but a trailing one, and no "." or ".." segment. It uses the vectorized
// searches: most paths hold none of these, or only a dot file.
func isClean(p string) bool {
	if strings.IndexByte(p, '%') >= 0 || strings.Contains(p, "//") {
		return false
	}
	for i := strings.Index(p, "/."); i >= 0; {
		rest := p[i+2:]
		if rest == "" || rest[0] == '/' || rest[0] == '.' && (len(rest) == 1 || rest[1] == '/') {
			return false
		}
		j := strings.Index(rest, "/.")
		if j < 0 {
			break
		}
		i += 2 + j
	}
	return true
}

func normalizeSlow(p string) (string, error) {
	buf := make([]byte, 0, len(p))
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '%' {
			if i+2 >= len(p) {
				return "", ErrBadEscape
			}
			hi, ok1 := unhex(p[i+1])
			lo, ok2 := unhex(p[i+2])
			if !ok1 || !ok2 {
				return "", ErrBadEscape
			}
			c = hi<<4 | lo
			if c == 0 {
				return "", ErrNUL
			}
			i += 2
		}
		buf = append(buf, c)
	}

	// Resolve segments in place: the output never gets ahead of the input.
	// buf[:w] is "/" followed by kept segments, each followed by '/', except
	// that a kept last segment gets no '/' after it.
	w := 1
	for r := 1; r <= len(buf); {
		e := r
		for e < len(buf) && buf[e] != '/' {
			e++
		}
		switch seg := buf[r:e]; {
		case len(seg) == 0, len(seg) == 1 && seg[0] == '.':
			// Merged or resolved away; at the end they leave the trailing '/'.
		case len(seg) == 2 && seg[0] == '.' && seg[1] == '.':
			if w == 1 {
				return "", ErrPathClimbs
			}
			j := w - 2
			for buf[j] != '/' {
				j--
			}
			w = j + 1
		default:
			w += copy(buf[w:], seg)
			if e < len(buf) {
				buf[w] = '/'
				w++
			}
		}
		r = e + 1
	}
	// buf is never written again, so the string may share its memory.
	return unsafe.String(&buf[0], w), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
