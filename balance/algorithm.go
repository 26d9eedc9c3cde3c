package balance

import (
	"fmt"
	"net/http"
	"net/textproto"
	"strings"

	"ramjet.dev/ramjet/match/vars"
)

// Algorithm is how a backend chooses among its endpoints (SPEC §9).
type Algorithm uint8

const (
	// RoundRobin walks the endpoints (or the weighted rotation) with a cursor
	// shared by every table. The zero value.
	RoundRobin Algorithm = iota
	// LeastConn picks the endpoint with the fewest requests in flight
	// (relative to its weight when weighted); ties go round-robin.
	LeastConn
	// Hash picks by consistent hashing of a request key (Config.HashKey).
	// A request without a key is served round-robin.
	Hash
)

func (p Algorithm) String() string {
	switch p {
	case RoundRobin:
		return "round_robin"
	case LeastConn:
		return "least_conn"
	case Hash:
		return "hash"
	}
	return fmt.Sprintf("Policy(%d)", uint8(p))
}

// ParseAlgorithm reads a load-balance annotation value. ingress-nginx's "ewma"
// is served as LeastConn and reported with substituted set, so the caller can
// warn AnnotationSubstituted. Names are exact, as in ingress-nginx.
//
// ingress-nginx selects consistent hashing by setting upstream-hash-by rather
// than load-balance; that precedence is the caller's to apply.
func ParseAlgorithm(s string) (p Algorithm, substituted bool, err error) {
	switch s {
	case "round_robin":
		return RoundRobin, false, nil
	case "least_conn":
		return LeastConn, false, nil
	case "hash":
		return Hash, false, nil
	case "ewma":
		return LeastConn, true, nil
	}
	return RoundRobin, false, fmt.Errorf("load-balance %q: want round_robin, least_conn, hash or ewma", s)
}

type keySource uint8

const (
	noKey keySource = iota
	remoteAddrKey
	requestURIKey
	headerKey
	cookieKey
	constantKey
)

// HashKey is a parsed upstream-hash-by expression: which part of a request
// the Hash algorithm hashes. The zero value extracts nothing, so every request
// is served round-robin.
type HashKey struct {
	source keySource
	// name is the canonical header name for $http_<name>, the cookie name
	// for $cookie_<name>.
	name string
	expr string
}

// ParseHashKey reads an upstream-hash-by value. It accepts exactly one nginx
// variable:
//
//   - $remote_addr: the client IP (RemoteAddr without its port);
//   - $request_uri: the request target as received, with its query (an
//     absolute-form target from its path on, as nginx keeps it);
//   - $http_<name>: a request header; as in nginx the name is matched case-
//     insensitively with underscores standing for dashes ($http_x_user_id is
//     X-User-Id), and a header sent on several field lines is their values
//     joined with ", " ("; " for Cookie); $http_host is Request.Host;
//   - $cookie_<name>: a cookie from the Cookie headers; as in nginx the name
//     is matched case-insensitively and the first match wins.
//
// Variable names are case-insensitive, as in nginx, and may be written
// braced (${request_uri}). Combinations of variables, literal text and
// other variables are rejected.
func ParseHashKey(s string) (HashKey, error) {
	bad := func(why string) (HashKey, error) {
		return HashKey{}, fmt.Errorf("upstream-hash-by %q: %s; want one of $remote_addr, $request_uri, $http_<name>, $cookie_<name>", s, why)
	}
	if !strings.HasPrefix(s, "$") {
		return bad("not a variable")
	}
	name := s[1:]
	if len(s) > len("${}") && s[1] == '{' && s[len(s)-1] == '}' {
		name = s[2 : len(s)-1] // nginx's braced form of the same variable
	}
	if name == "" {
		return bad("empty variable name")
	}
	for i := range len(name) {
		if !isVarByte(name[i]) {
			return bad(fmt.Sprintf("%q cannot appear in a variable name (only one variable is supported)", name[i]))
		}
	}
	lower := strings.ToLower(name)
	switch {
	case lower == "remote_addr":
		return HashKey{source: remoteAddrKey, expr: s}, nil
	case lower == "request_uri":
		return HashKey{source: requestURIKey, expr: s}, nil
	case strings.HasPrefix(lower, "http_") && len(lower) > len("http_"):
		header := strings.ReplaceAll(name[len("http_"):], "_", "-")
		return HashKey{source: headerKey, name: textproto.CanonicalMIMEHeaderKey(header), expr: s}, nil
	case strings.HasPrefix(lower, "cookie_") && len(lower) > len("cookie_"):
		return HashKey{source: cookieKey, name: name[len("cookie_"):], expr: s}, nil
	}
	return bad("unsupported variable $" + name)
}

// isVarByte reports whether c can be part of an nginx variable name.
func isVarByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// ConstantKey is a key every request has: value itself, so the Hash
// algorithm sends every request to one endpoint (or subset). ingress-nginx's
// chash balancer, chosen by load-balance without upstream-hash-by, hashes
// such a constant (its Lua stringifies the missing expression to "nil").
func ConstantKey(value string) HashKey {
	return HashKey{source: constantKey, name: value, expr: value}
}

// String returns the expression as written (a ConstantKey's value, which,
// unlike a variable, has no "$"), "" for the zero value.
func (k HashKey) String() string { return k.expr }

// Same reports whether k and o hash requests alike: the same variable,
// whatever its spelling (braced, or names differing only in case, as nginx
// matches header and cookie names).
func (k HashKey) Same(o HashKey) bool {
	if k.source == constantKey {
		return o.source == constantKey && k.name == o.name
	}
	return k.source == o.source && strings.EqualFold(k.name, o.name)
}

// IsZero reports whether k is the zero value (no expression).
func (k HashKey) IsZero() bool { return k.source == noKey }

// IsRemoteAddr reports whether k is $remote_addr, whose value a caller
// that knows the client better than RemoteAddr does (a trusted
// X-Forwarded-For) passes instead of Key's.
func (k HashKey) IsRemoteAddr() bool { return k.source == remoteAddrKey }

// Header is the canonical header name of a $http_<name> key, "" for
// any other key: a caller that keeps header names nginx would drop, or
// reads spellings Key does not ('_' for '-'), passes the value instead
// of Key's.
func (k HashKey) Header() string {
	if k.source == headerKey {
		return k.name
	}
	return ""
}

// extract returns the request's key, or "" when the request lacks it (no
// such header or cookie, or an empty value). The result is a substring of
// the request's own strings: it allocates only to join a header sent on
// several field lines.
func (k HashKey) extract(r *http.Request) string {
	switch k.source {
	case remoteAddrKey:
		return hostOf(r.RemoteAddr)
	case requestURIKey:
		return vars.RequestURIOf(r.RequestURI)
	case headerKey:
		// Every line of the header: keys that differ only past the first
		// line are different keys.
		v, _ := vars.Header(r.Header, r.Host, k.name)
		return v
	case cookieKey:
		v, _ := Cookie(r, k.name)
		return v
	case constantKey:
		return k.name
	}
	return ""
}

// hostOf returns the host part of "host:port" or "[host]:port", or addr
// itself when it has no port.
func hostOf(addr string) string {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return addr
	}
	if addr[0] == '[' {
		if end := strings.IndexByte(addr, ']'); end > 0 {
			return addr[1:end]
		}
		return addr
	}
	if strings.IndexByte(addr[:i], ':') >= 0 {
		// A bare IPv6 address without a port.
		return addr
	}
	return addr[:i]
}
