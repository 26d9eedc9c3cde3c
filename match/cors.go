package match

import (
	"slices"
	"strconv"
	"strings"
)

// The CORS settings ingress-nginx uses when an annotation is not set
// (enable-cors and the cors-* annotations).
const (
	DefaultCORSMethods = "GET, PUT, POST, DELETE, PATCH, OPTIONS"
	DefaultCORSHeaders = "DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization"
	DefaultCORSMaxAge  = 1728000
)

// CORS is a route's cross-origin policy (enable-cors and the cors-*
// annotations), served as ingress-nginx serves it:
//
//   - A request whose Origin is allowed (any request at all when
//     AnyOrigin) gets the Access-Control-* headers on whatever answers it,
//     replacing any the backend sent; an OPTIONS request that qualifies is
//     a preflight and is answered 204 by the router, before any
//     authentication.
//   - A request whose Origin is not allowed is served as if CORS were off.
//
// Build it with NewCORS, which prepares the header values once so that
// setting them on a response costs no allocation; New prepares a CORS
// written as a literal the same way.
type CORS struct {
	// AnyOrigin: cors-allow-origin is "*" (the default). Every request
	// qualifies, Origin or not, and Access-Control-Allow-Origin is "*".
	AnyOrigin bool
	// Origins are the allowed origins otherwise, lower-cased, each
	// "scheme://host[:port]", "null", or with one leading wildcard label
	// ("https://*.example.com") standing for exactly one DNS label.
	// Access-Control-Allow-Origin then echoes the request's Origin.
	// Empty without AnyOrigin: no origin is allowed.
	Origins []string
	// Methods, Headers and ExposeHeaders are the header values as written
	// (cors-allow-methods, -allow-headers, -expose-headers); ExposeHeaders
	// "" sends no Access-Control-Expose-Headers.
	Methods, Headers, ExposeHeaders string
	// Credentials sends Access-Control-Allow-Credentials: true.
	Credentials bool
	// MaxAge is Access-Control-Max-Age in seconds.
	MaxAge int
	// Closed names the annotation that left no origin (a cors-allow-origin
	// whose every entry was skipped): the policy then allows no origin at
	// all (Origins empty, AnyOrigin false), as ingress-nginx sets no
	// origin check then.
	Closed string
	// Gateway serves the policy as the Gateway API's CORS filter
	// (HTTPCORSFilter, SPEC §20) rather than as ingress-nginx's
	// annotations (see gatewayCORS); Methods, Headers and ExposeHeaders
	// are then lists joined with ", ", "" for none, and Methods or
	// Headers "*" allows any.
	Gateway bool

	// The header values, each a one-element slice with no spare capacity,
	// shared by every response: appending to one copies it.
	hdr corsHeaders
}

type corsHeaders struct {
	star, credentials, methods, headers, expose, maxAge []string
	// patterns are Origins split at their wildcard.
	patterns []originPattern
	// origins are Origins parsed for the Gateway form.
	origins []gatewayOrigin
}

// originPattern is an allowed origin: literal, or prefix + one DNS label +
// suffix when wild.
type originPattern struct {
	prefix, suffix string
	wild           bool
}

// NewCORS returns c with its header values prepared; Origins are
// lower-cased (ASCII letters only, as they are compared).
func NewCORS(c CORS) *CORS {
	out := c
	out.Origins = make([]string, len(c.Origins))
	for i, o := range c.Origins {
		out.Origins[i] = lowerASCII(o)
	}
	out.hdr = corsHeaders{
		star:        one("*"),
		credentials: one("true"),
		methods:     one(c.Methods),
		headers:     one(c.Headers),
		maxAge:      one(strconv.Itoa(c.MaxAge)),
	}
	if c.ExposeHeaders != "" {
		out.hdr.expose = one(c.ExposeHeaders)
	}
	if c.Gateway {
		out.hdr.origins = parseGatewayOrigins(out.Origins)
		if c.MaxAge <= 0 {
			out.MaxAge = DefaultGatewayCORSMaxAge
			out.hdr.maxAge = one(strconv.Itoa(out.MaxAge))
		}
		if c.Methods == "" {
			out.hdr.methods = nil
		}
		if c.Headers == "" {
			out.hdr.headers = nil
		}
		return &out
	}
	for _, o := range out.Origins {
		p := originPattern{prefix: o}
		if i := strings.IndexByte(o, '*'); i >= 0 {
			p = originPattern{prefix: o[:i], suffix: o[i+1:], wild: true}
		}
		out.hdr.patterns = append(out.hdr.patterns, p)
	}
	return &out
}

func one(s string) []string { return []string{s}[:1:1] }

// Allows reports whether a request with this Origin header value (""
// when absent) qualifies for the CORS headers. Origins compare without
// regard to ASCII case, as ingress-nginx's case-insensitive match (PCRE
// without UTF mode) does: no Unicode folding, so "localhoſt" (U+017F) or
// a Kelvin sign never passes for an allowed "localhost" or "k". A wildcard
// stands for one label of letters, digits and '-'.
func (c *CORS) Allows(origin string) bool {
	if c.Gateway {
		return c.gatewayAllows(origin)
	}
	if c.AnyOrigin {
		return true
	}
	if origin == "" {
		return false
	}
	for _, p := range c.hdr.patterns {
		if p.matches(origin) {
			return true
		}
	}
	return false
}

func (p originPattern) matches(origin string) bool {
	if !p.wild {
		return EqualFoldASCII(origin, p.prefix)
	}
	n := len(origin) - len(p.prefix) - len(p.suffix)
	if n <= 0 || !EqualFoldASCII(origin[:len(p.prefix)], p.prefix) || !EqualFoldASCII(origin[len(origin)-len(p.suffix):], p.suffix) {
		return false
	}
	for _, ch := range []byte(origin[len(p.prefix) : len(p.prefix)+n]) {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-') {
			return false
		}
	}
	return true
}

// SetHeaders sets the CORS response headers on h, replacing any there:
// origin is the request's Origin values (echoed, first value only, unless
// AnyOrigin). It allocates nothing once h has room for the keys.
func (c *CORS) SetHeaders(h map[string][]string, origin []string) {
	if c.Gateway {
		c.setGatewayHeaders(h, origin)
		return
	}
	if c.AnyOrigin || len(origin) == 0 {
		h["Access-Control-Allow-Origin"] = c.hdr.star
	} else {
		h["Access-Control-Allow-Origin"] = origin[:1:1]
	}
	if c.Credentials {
		h["Access-Control-Allow-Credentials"] = c.hdr.credentials
	}
	h["Access-Control-Allow-Methods"] = c.hdr.methods
	h["Access-Control-Allow-Headers"] = c.hdr.headers
	if c.hdr.expose != nil {
		h["Access-Control-Expose-Headers"] = c.hdr.expose
	}
	h["Access-Control-Max-Age"] = c.hdr.maxAge
}

// corsSection is the cross-origin policy of a route or fallback: the
// Access-Control-* headers, and the preflights the router answers itself.
// Its digest entries share the "access" part with auth's, each location's
// CORS entry first, as the part was first written.
var corsSection = section{
	name:     "cors",
	location: []string{"CORS"},
	digest: []digestPart{{
		tag: "access",
		hostHas: func(vh *VirtualHost) bool {
			return vh.FallbackLocation.CORS != nil || slices.ContainsFunc(vh.Routes, func(r *Route) bool { return r.CORS != nil })
		},
		host:  func(e *encoder, vh *VirtualHost) { e.cors(vh.FallbackLocation.CORS) },
		route: func(e *encoder, r *Route) { e.cors(r.CORS) },
	}},
	text: textParts{
		at:            70,
		fallbackLines: func(b *strings.Builder, vh *VirtualHost) { corsLine(b, vh.FallbackLocation.CORS) },
		routeLines:    func(b *strings.Builder, _ *VirtualHost, r *Route) { corsLine(b, r.CORS) },
	},
}

// corsLine writes a route's policy under its line.
func corsLine(b *strings.Builder, c *CORS) {
	if c != nil {
		b.WriteString("    " + corsText(c) + "\n")
	}
}

// corsText renders the policy for the table's text.
func corsText(c *CORS) string {
	if c.Closed != "" {
		return "cors closed (" + c.Closed + " rejected: no origin allowed)"
	}
	s := "cors origin "
	if c.Gateway {
		s = "cors (Gateway API) origin "
	}
	if c.AnyOrigin {
		s += "*"
	} else if len(c.Origins) == 0 {
		s += "none"
	} else {
		s += strings.Join(c.Origins, ",")
	}
	s += " methods " + strconv.Quote(c.Methods) + " headers " + strconv.Quote(c.Headers)
	if c.ExposeHeaders != "" {
		s += " expose " + strconv.Quote(c.ExposeHeaders)
	}
	if c.Credentials {
		s += " credentials"
	}
	return s + " max-age " + strconv.Itoa(c.MaxAge)
}

func (e *encoder) cors(c *CORS) {
	if c == nil {
		e.flag(false)
		return
	}
	e.flag(true)
	e.flag(c.AnyOrigin)
	e.strs(c.Origins)
	e.str(c.Methods)
	e.str(c.Headers)
	e.str(c.ExposeHeaders)
	e.flag(c.Credentials)
	e.num(c.MaxAge)
	e.str(c.Closed)
}

// EqualFoldASCII is strings.EqualFold for ASCII letters only: every other
// byte must be equal. nginx compares without case this way; Unicode
// folding on client-controlled text lets a non-ASCII spelling ("localhoſt",
// U+017F, or a Kelvin sign for "k") pass for an ASCII name.
func EqualFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if x, y := a[i], b[i]; x != y && lowerByte(x) != lowerByte(y) {
			return false
		}
	}
	return true
}
