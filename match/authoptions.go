package match

import (
	"strconv"
	"strings"
	"time"

	"ramjet.dev/ramjet/match/vars"
)

// ExternalAuthOptions are the external-auth settings past where the
// service is and what it returns (SPEC §11 "Also served"): the answer
// cache (auth-cache-key, auth-cache-duration), connection reuse
// (auth-keepalive*), headers of the location's own
// (auth-proxy-set-headers), and whether the authentication is the
// ConfigMap's global one. nil: none of these.
type ExternalAuthOptions struct {
	// Global: the location has no auth-url of its own and takes the
	// global-auth-* ConfigMap keys' (enable-global-auth not false).
	Global bool
	// CacheKey, when set, caches the service's answers per expansion of
	// it (with the host and location), for the CacheValid durations.
	CacheKey   *VarTemplate
	CacheValid []AuthCacheValid
	// Keepalive is auth-keepalive, the idle connections kept to the
	// service (0: each subrequest on a new one); KeepaliveRequests and
	// KeepaliveTimeout bound one connection's use and idleness;
	// KeepaliveShareVars is auth-keepalive-share-vars.
	Keepalive          int
	KeepaliveRequests  int
	KeepaliveTimeout   time.Duration
	KeepaliveShareVars bool
	// ProxySetHeaders are sent to the service over the client's
	// (auth-proxy-set-headers), sorted by name; ProxySetHeadersFrom names
	// the ConfigMap, "namespace/name".
	ProxySetHeaders     []AuthHeader
	ProxySetHeadersFrom string
}

// AuthCacheValid is one proxy_cache_valid of auth-cache-duration: answers
// with one of Codes (nginx's 200 301 302 when none is named; any status
// with Any) are kept for TTL.
type AuthCacheValid struct {
	Codes []int
	Any   bool
	TTL   time.Duration
}

// TTLFor is how long an answer of status is kept; 0: not at all. The
// first entry naming the status decides, as nginx's proxy_cache_valid.
func (o *ExternalAuthOptions) TTLFor(status int) time.Duration {
	for _, v := range o.CacheValid {
		switch {
		case v.Any:
			return v.TTL
		case v.Codes == nil && (status == 200 || status == 301 || status == 302):
			return v.TTL
		}
		for _, c := range v.Codes {
			if c == status {
				return v.TTL
			}
		}
	}
	return 0
}

// AuthHeader is one header of auth-proxy-set-headers.
type AuthHeader struct {
	Name  string
	Value VarTemplate
}

// VarTemplate is a value with nginx variables in it ("$remote_user$http_authorization").
type VarTemplate struct {
	Raw   string
	parts vars.Template
}

// authTemplatePlace is where auth-cache-key and auth-proxy-set-headers
// values read their variables.
var authTemplatePlace = vars.Place{Name: "an auth cache key or header", Vars: vars.Of(vars.RemoteAddr, vars.RemoteUser,
	vars.Host, vars.HTTPHost, vars.RequestURI, vars.URI, vars.Args, vars.QueryString, vars.Scheme, vars.RequestMethod,
	vars.HTTP, vars.Cookie, vars.Arg)}

// TemplateVariables lists what a VarTemplate may use.
var TemplateVariables = authTemplatePlace.Expands()

// ParseVarTemplate reads s: literal text and $name or ${name} variables
// of TemplateVariables.
func ParseVarTemplate(s string) (VarTemplate, error) {
	t, err := authTemplatePlace.Parse(s)
	if err != nil {
		return VarTemplate{}, err
	}
	return VarTemplate{Raw: s, parts: t}, nil
}

// Expand writes the template to b, each variable as value gives it.
func (t *VarTemplate) Expand(b *strings.Builder, value func(vars.Ref) string) {
	t.parts.Expand(b, value)
}

func authOptionsOf(a *Auth) *ExternalAuthOptions {
	if a == nil || a.External == nil {
		return nil
	}
	return a.External.Options
}

func (e *encoder) authOptions(o *ExternalAuthOptions) {
	if o == nil {
		e.flag(false)
		return
	}
	e.flag(true)
	e.flag(o.Global)
	e.flag(o.CacheKey != nil)
	if o.CacheKey != nil {
		e.str(o.CacheKey.Raw)
	}
	e.str(cacheValidText(o.CacheValid))
	e.num(o.Keepalive)
	e.num(o.KeepaliveRequests)
	e.num(int(o.KeepaliveTimeout))
	e.flag(o.KeepaliveShareVars)
	e.str(o.ProxySetHeadersFrom)
	e.num(len(o.ProxySetHeaders))
	for _, h := range o.ProxySetHeaders {
		e.str(h.Name)
		e.str(h.Value.Raw)
	}
}

func cacheValidText(vs []AuthCacheValid) string {
	var s []string
	for _, v := range vs {
		var f []string
		if v.Any {
			f = append(f, "any")
		}
		for _, c := range v.Codes {
			f = append(f, strconv.Itoa(c))
		}
		s = append(s, strings.Join(append(f, v.TTL.String()), " "))
	}
	return strings.Join(s, ", ")
}

// authOptionsText renders the options on one line, "" for nil.
func authOptionsText(o *ExternalAuthOptions) string {
	if o == nil {
		return ""
	}
	var parts []string
	if o.Global {
		parts = append(parts, "global")
	}
	if o.CacheKey != nil {
		parts = append(parts, "cache-key="+strconv.Quote(o.CacheKey.Raw), "cache="+strconv.Quote(cacheValidText(o.CacheValid)))
	}
	if o.Keepalive > 0 {
		parts = append(parts, "keepalive="+strconv.Itoa(o.Keepalive), "keepalive-requests="+strconv.Itoa(o.KeepaliveRequests),
			"keepalive-timeout="+o.KeepaliveTimeout.String())
	}
	if o.KeepaliveShareVars {
		parts = append(parts, "keepalive-share-vars")
	}
	if o.ProxySetHeadersFrom != "" {
		names := make([]string, len(o.ProxySetHeaders))
		for i, h := range o.ProxySetHeaders {
			names[i] = h.Name
		}
		parts = append(parts, "proxy-set-headers="+o.ProxySetHeadersFrom+"("+strings.Join(names, ",")+")")
	}
	return "auth options " + strings.Join(parts, " ")
}
