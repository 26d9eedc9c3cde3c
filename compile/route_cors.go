package compile

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"ramjet.dev/ramjet/match"
)

// CORSFilter is a rule's cross-origin policy, the Gateway API's CORS
// filter (HTTPCORSFilter), served by the router as match.CORS in its
// Gateway form (SPEC §20).
type CORSFilter struct {
	// Field locates the filter ("spec.rules[0].filters[0]").
	Field string
	// AllowOrigins are "scheme://host[:port]" (http or https; the host may
	// begin with "*." or be "*"), or "*" alone for any origin.
	AllowOrigins []string
	// AllowMethods, AllowHeaders and ExposeHeaders are names, or "*"
	// alone (methods and headers: any, echoed from the preflight).
	AllowMethods, AllowHeaders, ExposeHeaders []string
	// AllowCredentials sends Access-Control-Allow-Credentials: true.
	AllowCredentials bool
	// MaxAge is Access-Control-Max-Age in seconds; 0 is the API's 5.
	MaxAge int32
}

// corsOriginGatewayRE is the Gateway API's CORSOrigin pattern.
var corsOriginGatewayRE = regexp.MustCompile(`^(\*|https?://((\*\.)?([a-zA-Z0-9\-]+\.)*[a-zA-Z0-9-]+|\*)(:[0-9]{1,5})?)$`)

// corsMethods are the methods allowMethods may name (HTTPMethodWithWildcard).
var corsMethods = []string{"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"}

// ruleCORS builds the rule's CORS policy, nil for none, or warns and
// returns false when it cannot be served as written (a value outside the
// API's, which its CRD refuses too): the rule is then not served.
func (b *builder) ruleCORS(hr *HTTPRoute, rule *HTTPRouteRule) (*match.CORS, bool) {
	f := rule.CORS
	if f == nil {
		return nil, true
	}
	refuse := func(field, why string) (*match.CORS, bool) {
		b.warn(RuleRejected, hr.ref(), f.Field+".cors."+field, why+"; the rule's requests answer 500")
		return nil, false
	}
	c := match.CORS{Gateway: true, Credentials: f.AllowCredentials, MaxAge: int(f.MaxAge)}
	for _, o := range f.AllowOrigins {
		if !corsOriginGatewayRE.MatchString(o) {
			return refuse("allowOrigins", strconv.Quote(o)+" is not an origin (http or https://host[:port], the host \"*\" or beginning with \"*.\", or \"*\")")
		}
		if port := o[strings.LastIndexByte(o, ':')+1:]; o != "*" && strings.Count(o, ":") == 2 {
			if n, _ := strconv.Atoi(port); n < 1 || n > 65535 {
				return refuse("allowOrigins", strconv.Quote(o)+" has a port outside 1-65535")
			}
		}
		c.Origins = append(c.Origins, o)
	}
	if slices.Contains(c.Origins, "*") {
		if len(c.Origins) > 1 {
			return refuse("allowOrigins", "\"*\" cannot be listed with other origins")
		}
		c.AnyOrigin, c.Origins = true, nil
	}
	var ok bool
	if c.Methods, ok = corsList(f.AllowMethods, func(m string) bool { return slices.Contains(corsMethods, m) }); !ok {
		return refuse("allowMethods", strings.Join(f.AllowMethods, ", ")+" is not a list of methods ("+strings.Join(corsMethods, ", ")+") or \"*\" alone")
	}
	if c.Headers, ok = corsList(f.AllowHeaders, validHeaderName); !ok {
		return refuse("allowHeaders", strings.Join(f.AllowHeaders, ", ")+" is not a list of header names or \"*\" alone")
	}
	if c.ExposeHeaders, ok = corsList(f.ExposeHeaders, validHeaderName); !ok {
		return refuse("exposeHeaders", strings.Join(f.ExposeHeaders, ", ")+" is not a list of header names or \"*\" alone")
	}
	if c.ExposeHeaders == "*" && c.Credentials {
		// The API forbids "*" with credentials, where browsers read it as
		// a header name.
		return refuse("exposeHeaders", "\"*\" cannot be sent with allowCredentials true")
	}
	if f.MaxAge < 0 {
		return refuse("maxAge", "a negative max-age")
	}
	return match.NewCORS(c), true
}

// corsList joins a list of names with ", " after checking each, "*" only
// alone; "" for none.
func corsList(names []string, valid func(string) bool) (string, bool) {
	if len(names) == 1 && names[0] == "*" {
		return "*", true
	}
	for _, n := range names {
		if !valid(n) {
			return "", false
		}
	}
	return strings.Join(slices.Compact(slices.Clone(names)), ", "), true
}
