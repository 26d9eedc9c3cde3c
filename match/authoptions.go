package match

import (
	"errors"
	"strconv"
	"strings"
	"time"
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
	parts []varPart
}

type varPart struct {
	lit string
	v   Var
}

// Var is one nginx variable a VarTemplate uses. Name is the header,
// cookie or argument of the $http_, $cookie_ and $arg_ families.
type Var struct {
	Kind VarKind
	Name string
}

// VarKind is which variable.
type VarKind uint8

// The variables a VarTemplate can use.
const (
	VarNone VarKind = iota
	VarRemoteAddr
	VarRemoteUser
	VarHost
	VarRequestURI
	VarURI
	VarArgs
	VarScheme
	VarMethod
	VarHTTP   // $http_<name>
	VarCookie // $cookie_<name>
	VarArg    // $arg_<name>
)

var varKinds = map[string]VarKind{
	"remote_addr": VarRemoteAddr, "remote_user": VarRemoteUser, "host": VarHost,
	"request_uri": VarRequestURI, "uri": VarURI, "args": VarArgs, "query_string": VarArgs,
	"scheme": VarScheme, "request_method": VarMethod,
}

// TemplateVariables lists what a VarTemplate may use.
const TemplateVariables = "$remote_addr, $remote_user, $host, $request_uri, $uri, $args, $query_string, $scheme, $request_method, $http_<name>, $cookie_<name>, $arg_<name>"

// ParseVarTemplate reads s: literal text and $name or ${name} variables
// of TemplateVariables.
func ParseVarTemplate(s string) (VarTemplate, error) {
	t := VarTemplate{Raw: s}
	rest := s
	for rest != "" {
		i := strings.IndexByte(rest, '$')
		if i < 0 {
			t.parts = append(t.parts, varPart{lit: rest})
			break
		}
		if i > 0 {
			t.parts = append(t.parts, varPart{lit: rest[:i]})
		}
		rest = rest[i+1:]
		var name string
		if strings.HasPrefix(rest, "{") {
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				return VarTemplate{}, errors.New("has an unterminated ${")
			}
			name, rest = rest[1:end], rest[end+1:]
		} else {
			n := 0
			for n < len(rest) && (rest[n] == '_' || isAlnum(rest[n])) {
				n++
			}
			name, rest = rest[:n], rest[n:]
		}
		v, ok := parseVar(name)
		if !ok {
			return VarTemplate{}, errors.New("uses $" + name + ", which ramjet does not provide (it provides " + TemplateVariables + ")")
		}
		t.parts = append(t.parts, varPart{v: v})
	}
	return t, nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func parseVar(name string) (Var, bool) {
	if k, ok := varKinds[name]; ok {
		return Var{Kind: k}, true
	}
	for _, f := range []struct {
		prefix string
		kind   VarKind
	}{{"http_", VarHTTP}, {"cookie_", VarCookie}, {"arg_", VarArg}} {
		if n, ok := strings.CutPrefix(name, f.prefix); ok && n != "" {
			return Var{Kind: f.kind, Name: n}, true
		}
	}
	return Var{}, false
}

// Expand writes the template to b, each variable as value gives it.
func (t *VarTemplate) Expand(b *strings.Builder, value func(Var) string) {
	for _, p := range t.parts {
		if p.v.Kind == VarNone {
			b.WriteString(p.lit)
		} else {
			b.WriteString(value(p.v))
		}
	}
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
