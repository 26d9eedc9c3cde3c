package match

import (
	"slices"
	"strings"
)

// DefaultGatewayCORSMaxAge is the Access-Control-Max-Age the Gateway API's
// CORS filter sends when its maxAge is not set.
const DefaultGatewayCORSMaxAge = 5

// The Gateway form of a CORS policy (CORS.Gateway) follows the Gateway
// API's HTTPCORSFilter text rather than ingress-nginx's annotations:
//
//   - Only a request with an Origin qualifies. An allowed origin is
//     "scheme://host[:port]", the port defaulting to 80 for http and 443
//     for https on both sides, and its host may begin with "*." (any
//     number of labels to the left) or be "*" (any host); AnyOrigin
//     allows every Origin. Access-Control-Allow-Origin always echoes the
//     request's Origin, which the API requires with credentials and
//     allows without, and Vary gets Origin.
//   - A preflight is an OPTIONS request with an Origin and an
//     Access-Control-Request-Method; the router answers it 204 whether
//     or not the origin is allowed, with the CORS headers only when it is
//     (SetPreflightHeaders): Allow-Methods (the list, or for "*" the
//     requested method, omitted when none was), Allow-Headers (the list,
//     or for "*" the requested headers, omitted when none were),
//     Expose-Headers, Allow-Credentials when true, and Max-Age.
//   - Any other request from an allowed origin is proxied and its answer
//     gets Allow-Origin, Allow-Credentials when true and Expose-Headers
//     (SetHeaders); the backend's other headers are left as they are.

// gatewayOrigin is an allowed origin of the Gateway form, lower-cased:
// host "" with anyHost for "*", suffix (".example.com") for "*.example.com".
type gatewayOrigin struct {
	scheme, host, port string
	anyHost, wild      bool
}

func gatewayCORSOf(c *CORS) bool { return c != nil && c.Gateway }

// parseGatewayOrigins reads lower-cased origins; one that is not
// "scheme://host[:port]" matches nothing ("*" alone is AnyOrigin's).
func parseGatewayOrigins(origins []string) []gatewayOrigin {
	out := make([]gatewayOrigin, 0, len(origins))
	for _, o := range origins {
		scheme, host, port, ok := splitOrigin(o)
		if !ok {
			continue
		}
		g := gatewayOrigin{scheme: scheme, host: host, port: port}
		switch {
		case host == "*":
			g.anyHost, g.host = true, ""
		case strings.HasPrefix(host, "*."):
			g.wild, g.host = true, host[1:]
		}
		out = append(out, g)
	}
	return out
}

// splitOrigin splits "scheme://host[:port]", the port filled in with the
// scheme's default (80 for http, 443 for https).
func splitOrigin(o string) (scheme, host, port string, ok bool) {
	scheme, hp, ok := strings.Cut(o, "://")
	if !ok || scheme == "" || hp == "" || strings.ContainsAny(hp, "/?#@") {
		return "", "", "", false
	}
	host = hp
	if i := strings.LastIndexByte(hp, ':'); i >= 0 && !strings.Contains(hp[i:], "]") {
		host, port = hp[:i], hp[i+1:]
		if port == "" {
			return "", "", "", false
		}
	}
	if port == "" {
		switch {
		case EqualFoldASCII(scheme, "http"):
			port = "80"
		case EqualFoldASCII(scheme, "https"):
			port = "443"
		}
	}
	return scheme, host, port, host != ""
}

// gatewayAllows is Allows for the Gateway form.
func (c *CORS) gatewayAllows(origin string) bool {
	if origin == "" {
		return false
	}
	if c.AnyOrigin {
		return true
	}
	scheme, host, port, ok := splitOrigin(origin)
	if !ok {
		return false
	}
	for _, g := range c.hdr.origins {
		if !EqualFoldASCII(scheme, g.scheme) || port != g.port {
			continue
		}
		switch {
		case g.anyHost:
			return true
		case !g.wild:
			if EqualFoldASCII(host, g.host) {
				return true
			}
		case len(host) > len(g.host) && EqualFoldASCII(host[len(host)-len(g.host):], g.host) && wildLabels(host[:len(host)-len(g.host)]):
			return true
		}
	}
	return false
}

// wildLabels reports whether s is one or more DNS labels joined by dots,
// what a leading "*" of an allowed origin's host stands for.
func wildLabels(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for _, ch := range []byte(s) {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '.') {
			return false
		}
	}
	return true
}

// setGatewayHeaders is SetHeaders for the Gateway form: the headers of an
// answer to a request that is not a preflight.
func (c *CORS) setGatewayHeaders(h map[string][]string, origin []string) {
	if len(origin) == 0 {
		return
	}
	h["Access-Control-Allow-Origin"] = origin[:1:1]
	if c.Credentials {
		h["Access-Control-Allow-Credentials"] = c.hdr.credentials
	}
	if c.hdr.expose != nil {
		h["Access-Control-Expose-Headers"] = c.hdr.expose
	}
	varyOrigin(h)
}

// SetPreflightHeaders sets the headers of the router's answer to a
// preflight from an allowed origin in the Gateway form: origin, method and
// headers are the request's Origin, Access-Control-Request-Method and
// Access-Control-Request-Headers values.
func (c *CORS) SetPreflightHeaders(h map[string][]string, origin, method, headers []string) {
	c.setGatewayHeaders(h, origin)
	switch {
	case c.Methods != "*":
		if c.hdr.methods != nil {
			h["Access-Control-Allow-Methods"] = c.hdr.methods
		}
	case len(method) > 0:
		h["Access-Control-Allow-Methods"] = method[:1:1]
	}
	switch {
	case c.Headers != "*":
		if c.hdr.headers != nil {
			h["Access-Control-Allow-Headers"] = c.hdr.headers
		}
	case len(headers) > 0:
		h["Access-Control-Allow-Headers"] = headers[:len(headers):len(headers)]
	}
	h["Access-Control-Max-Age"] = c.hdr.maxAge
}

// varyOrigin adds Origin to Vary unless it is there: the answer depends
// on the request's Origin, which it echoes.
func varyOrigin(h map[string][]string) {
	for _, v := range h["Vary"] {
		for tok := range strings.SplitSeq(v, ",") {
			if t := strings.TrimSpace(tok); t == "*" || EqualFoldASCII(t, "Origin") {
				return
			}
		}
	}
	h["Vary"] = append(h["Vary"][:len(h["Vary"]):len(h["Vary"])], "Origin")
}

// gatewayCORSSection is whether a CORS policy is in its Gateway form: the
// CORS section's fields (corsSection) hold the rest. A table without one
// encodes as if the section did not exist.
var gatewayCORSSection = section{
	name: "cors-gateway",
	digest: []digestPart{{
		tag: "cors-gateway",
		hostHas: func(vh *VirtualHost) bool {
			return gatewayCORSOf(vh.FallbackLocation.CORS) || slices.ContainsFunc(vh.Routes, func(r *Route) bool { return gatewayCORSOf(r.CORS) })
		},
		host:  func(e *encoder, vh *VirtualHost) { e.flag(gatewayCORSOf(vh.FallbackLocation.CORS)) },
		route: func(e *encoder, r *Route) { e.flag(gatewayCORSOf(r.CORS)) },
	}},
}
