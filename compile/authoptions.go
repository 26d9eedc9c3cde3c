package compile

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/match/urltemplate"
)

// External-auth options (SPEC §11 "Also served"): auth-cache-key,
// auth-cache-duration, auth-keepalive, auth-keepalive-requests,
// auth-keepalive-timeout, auth-keepalive-share-vars,
// auth-proxy-set-headers, and enable-global-auth with the global-auth-*
// ConfigMap keys (Options.GlobalAuth). Values read as ingress-nginx v1.15
// reads them (internal/ingress/annotations/authreq): a bad cache key or
// keep-alive value warns and takes the default; a bad cache duration or
// auth-proxy-set-headers ConfigMap (missing, in another namespace, a
// header name that is not one) denies the location, 503, as there.

func init() {
	keys := map[string]annotationSpec{}
	for _, k := range []string{"auth-cache-key", "auth-cache-duration", "auth-keepalive", "auth-keepalive-requests",
		"auth-keepalive-timeout", "auth-keepalive-share-vars", "auth-proxy-set-headers", "enable-global-auth"} {
		keys[k] = annotationSpec{apply: keepAccessAnnotation}
	}
	registerAnnotations(keys)
}

// GlobalAuth holds the global-auth-* ConfigMap keys as written (their
// names without the prefix): external authentication for every location
// without an auth-url of its own whose Ingress does not set
// enable-global-auth: "false". global-auth-snippet is not read.
type GlobalAuth struct {
	URL                 string `json:"url"`
	Method              string `json:"method"`
	Signin              string `json:"signin"`
	SigninRedirectParam string `json:"signinRedirectParam"`
	ResponseHeaders     string `json:"responseHeaders"`
	RequestRedirect     string `json:"requestRedirect"`
	CacheKey            string `json:"cacheKey"`
	// CacheDuration "" is the key unset: no duration, as ingress-nginx
	// writes no proxy_cache_valid then, so only answers that say how long
	// they may be kept are cached (an auth-cache-duration left out is
	// DefaultAuthCacheDuration instead).
	CacheDuration   string `json:"cacheDuration"`
	AlwaysSetCookie bool   `json:"alwaysSetCookie"`
}

// DefaultAuthCacheDuration is ingress-nginx's auth-cache-duration default.
const DefaultAuthCacheDuration = "200 202 401 5m"

// external parses the global authentication; nil (no error) without a
// URL, as ingress-nginx applies none then.
func (g *GlobalAuth) external() (*match.ExternalAuth, error) {
	if g == nil || strings.TrimSpace(g.URL) == "" {
		return nil, nil
	}
	u, err := urltemplate.ParseAuthURL(strings.TrimSpace(g.URL), false)
	if err != nil {
		return nil, errors.New("global-auth-url " + valueError(g.URL, err))
	}
	x := &match.ExternalAuth{URL: u, AlwaysSetCookie: g.AlwaysSetCookie, Options: &match.ExternalAuthOptions{Global: true}}
	if m := strings.TrimSpace(g.Method); m != "" {
		if !authMethodRE.MatchString(m) {
			return nil, fmt.Errorf("global-auth-method %q is not an HTTP method", g.Method)
		}
		x.Method = m
	}
	if s := strings.TrimSpace(g.Signin); s != "" {
		signin, err := urltemplate.SigninURL(s, strings.TrimSpace(g.SigninRedirectParam))
		if err != nil {
			return nil, errors.New("global-auth-signin " + valueError(g.Signin, err))
		}
		x.Signin = &signin
	}
	for name := range strings.SplitSeq(g.ResponseHeaders, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		if !authHeaderRE.MatchString(name) {
			return nil, fmt.Errorf("global-auth-response-headers: %q is not a header name", name)
		}
		x.ResponseHeaders = append(x.ResponseHeaders, http.CanonicalHeaderKey(name)) // twice if listed twice, as auth-response-headers
	}
	// ingress-nginx writes the value unquoted (nginx.tmpl: proxy_set_header
	// X-Auth-Request-Redirect), where outer spaces are lost and an inner
	// one is an argument too many, which nginx refuses.
	if r := strings.TrimSpace(g.RequestRedirect); r != "" {
		if strings.ContainsAny(r, " \t") {
			return nil, fmt.Errorf("global-auth-request-redirect %q holds a space, which nginx refuses in the header it sets", g.RequestRedirect)
		}
		if !redirParamRE.MatchString(r) {
			return nil, fmt.Errorf("global-auth-request-redirect %q holds characters a URL does not", g.RequestRedirect)
		}
		x.RequestRedirect = r
	}
	if k := strings.TrimSpace(g.CacheKey); k != "" {
		key, err := parseCacheKey(k)
		if err != nil {
			return nil, errors.New("global-auth-cache-key " + valueError(g.CacheKey, err))
		}
		x.Options.CacheKey = key
		if g.CacheDuration != "" {
			if x.Options.CacheValid, err = parseCacheDurations(g.CacheDuration); err != nil {
				return nil, fmt.Errorf("global-auth-cache-duration %q: %v", g.CacheDuration, err)
			}
		}
	}
	return x, nil
}

var cacheKeyRE = regexp.MustCompile(`^[A-Za-z0-9\-_$\{\}]*$`)

func parseCacheKey(s string) (*match.VarTemplate, error) {
	if !cacheKeyRE.MatchString(s) {
		return nil, errors.New("holds characters other than letters, digits, -, _ and nginx variables")
	}
	t, err := match.ParseVarTemplate(s)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

var (
	cacheCodeRE = regexp.MustCompile(`^\d{3}$`)
	cacheTimeRE = regexp.MustCompile(`^(\d+)(ms|s|m|h|d|w|M|y)$`)
)

// parseCacheDurations reads auth-cache-duration: comma-separated
// proxy_cache_valid values, each "[code ...] time" (codes of three
// digits or "any"); "" is DefaultAuthCacheDuration.
func parseCacheDurations(s string) ([]match.AuthCacheValid, error) {
	var out []match.AuthCacheValid
	for entry := range strings.SplitSeq(s, ",") {
		fields := strings.Fields(entry)
		if len(fields) == 0 {
			continue
		}
		m := cacheTimeRE.FindStringSubmatch(fields[len(fields)-1])
		if m == nil {
			return nil, fmt.Errorf("%q does not end in a time (5m, 30s, 1h)", strings.TrimSpace(entry))
		}
		if m[2] == "ms" {
			// proxy_cache_valid counts seconds: nginx refuses to load it.
			return nil, fmt.Errorf("%q: nginx's proxy_cache_valid takes no ms (5m, 30s, 1h)", fields[len(fields)-1])
		}
		n, _ := strconv.ParseInt(m[1], 10, 64)
		unit := map[string]time.Duration{"ms": time.Millisecond, "s": time.Second, "m": time.Minute, "h": time.Hour,
			"d": 24 * time.Hour, "w": 7 * 24 * time.Hour, "M": 30 * 24 * time.Hour, "y": 365 * 24 * time.Hour}[m[2]]
		if n > int64(maxTimeoutSeconds*time.Second/unit) {
			return nil, fmt.Errorf("%q is too long a time", fields[len(fields)-1])
		}
		v := match.AuthCacheValid{TTL: time.Duration(n) * unit}
		for _, c := range fields[:len(fields)-1] {
			switch {
			case c == "any":
				v.Any = true
			case cacheCodeRE.MatchString(c) && c >= "100" && c <= "599":
				code, _ := strconv.Atoi(c)
				v.Codes = append(v.Codes, code)
			default:
				return nil, fmt.Errorf("%q is not a status code (or any) before the time", c)
			}
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return parseCacheDurations(DefaultAuthCacheDuration)
	}
	return out, nil
}

// authOptionKeys are the annotations that need an auth-url.
var authOptionKeys = []string{"auth-cache-key", "auth-cache-duration", "auth-keepalive", "auth-keepalive-requests",
	"auth-keepalive-timeout", "auth-keepalive-share-vars", "auth-proxy-set-headers"}

// ingress-nginx's auth-keepalive defaults.
const (
	defaultAuthKeepaliveRequests = 1000
	defaultAuthKeepaliveTimeout  = 60 * time.Second
)

// resolveAuthOptions reads the options of an Ingress's external
// authentication into x; denied is set when the location must be denied.
// Without auth-url (x nil) each set option warns that it does nothing.
func (b *builder) resolveAuthOptions(ing *ingress, x *match.ExternalAuth) (denied string) {
	raw := &ing.ann.access
	if x == nil {
		for _, k := range authOptionKeys {
			if a, ok := raw.get(k); ok {
				b.rejectAccess(ing, a.key, "has no effect without auth-url")
			}
		}
		return ""
	}
	o := &match.ExternalAuthOptions{KeepaliveRequests: defaultAuthKeepaliveRequests, KeepaliveTimeout: defaultAuthKeepaliveTimeout}
	if k, ok := raw.get("auth-cache-key"); ok && k.value != "" {
		if key, err := parseCacheKey(k.value); err != nil {
			b.rejectAccess(ing, k.key, valueError(k.value, err)+"; the service's answers are not cached")
		} else {
			o.CacheKey = key
		}
	}
	d, _ := raw.get("auth-cache-duration")
	valid, err := parseCacheDurations(d.value)
	if err != nil {
		b.rejectAccess(ing, d.key, err.Error()+"; every request to this Ingress's paths answers 503")
		return d.key + ": " + err.Error()
	}
	if o.CacheKey != nil {
		o.CacheValid = valid
	} else if d.key != "" {
		b.rejectAccess(ing, d.key, "has no effect without auth-cache-key")
	}
	b.authKeepalive(ing, x, o)
	if denied := b.authProxySetHeaders(ing, o); denied != "" {
		return denied
	}
	if o.CacheKey != nil || o.Keepalive > 0 || o.KeepaliveShareVars || o.ProxySetHeadersFrom != "" {
		x.Options = o
	}
	return ""
}

// authKeepalive reads the auth-keepalive set as ingress-nginx does: a
// value that is not a whole number takes the default; a negative count,
// a host with a variable, or requests or a timeout of 0 or less turn
// keep-alive off.
func (b *builder) authKeepalive(ing *ingress, x *match.ExternalAuth, o *match.ExternalAuthOptions) {
	raw := &ing.ann.access
	intOf := func(name string, def int) (int, accessValue, bool) {
		a, ok := raw.get(name)
		if !ok {
			return def, a, false
		}
		n, err := strconv.Atoi(strings.TrimSpace(a.value))
		if err != nil {
			b.rejectAccess(ing, a.key, strconv.Quote(a.value)+" is not a whole number; the default, "+strconv.Itoa(def)+", applies")
			return def, a, false
		}
		return n, a, true
	}
	conns, ka, _ := intOf("auth-keepalive", 0)
	reqs, kr, setR := intOf("auth-keepalive-requests", defaultAuthKeepaliveRequests)
	secs, kt, setT := intOf("auth-keepalive-timeout", int(defaultAuthKeepaliveTimeout/time.Second))
	switch {
	case conns < 0:
		b.rejectAccess(ing, ka.key, "is negative; keep-alive to the auth service is off, as ingress-nginx sets it to 0")
		conns = 0
	case conns > 0 && strings.Contains(hostPart(x.URL.Raw), "$"):
		b.rejectAccess(ing, ka.key, "auth-url has a variable in its host; keep-alive to the auth service is off, as in ingress-nginx")
		conns = 0
	}
	if setR && reqs <= 0 {
		b.rejectAccess(ing, kr.key, "must be more than 0; keep-alive to the auth service is off, as in ingress-nginx")
		conns = 0
	}
	if setT && secs <= 0 {
		b.rejectAccess(ing, kt.key, "must be more than 0; keep-alive to the auth service is off, as in ingress-nginx")
		conns = 0
	}
	if conns > 0 {
		o.Keepalive, o.KeepaliveRequests, o.KeepaliveTimeout = conns, reqs, time.Duration(min(secs, maxTimeoutSeconds))*time.Second
	}
	if s, ok := raw.get("auth-keepalive-share-vars"); ok {
		v, err := strconv.ParseBool(s.value)
		if err != nil {
			b.rejectAccess(ing, s.key, strconv.Quote(s.value)+" is not a boolean; false applies")
		}
		o.KeepaliveShareVars = v
	}
}

// hostPart is the authority of a URL as written.
func hostPart(u string) string {
	_, rest, _ := strings.Cut(u, "://")
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// authProxySetHeaders reads auth-proxy-set-headers: the ConfigMap
// "namespace/name" whose data are headers sent to the service. authreq
// reads a bare name's namespace as the Ingress's for its namespace check
// only, then looks the value up as written (GetConfigMap, keyed
// namespace/name), so a bare name finds nothing and denies the location.
func (b *builder) authProxySetHeaders(ing *ingress, o *match.ExternalAuthOptions) (denied string) {
	a, ok := ing.ann.access.get("auth-proxy-set-headers")
	if !ok || strings.TrimSpace(a.value) == "" {
		return ""
	}
	deny := func(why string) string {
		b.rejectAccess(ing, a.key, why+"; every request to this Ingress's paths answers 503")
		return a.key + ": " + why
	}
	v := strings.TrimSpace(a.value)
	ns, name, found := strings.Cut(v, "/")
	switch {
	case !found:
		return deny(strconv.Quote(a.value) + " names no namespace: ingress-nginx looks the ConfigMap up by namespace/name and finds none (write " + ing.obj.Namespace + "/" + v + ")")
	case name == "" || ns == "" || strings.Contains(name, "/"):
		return deny(strconv.Quote(a.value) + " is not a ConfigMap namespace/name")
	case ns != ing.obj.Namespace && !b.opts.AllowCrossNamespaceResources:
		return deny("ConfigMap " + ns + "/" + name + " is in another namespace, which ingress-nginx allows only with the ConfigMap key allow-cross-namespace-resources")
	}
	cm := findConfigMap(b.snap.ConfigMaps, ns, name)
	if cm == nil {
		return deny("ConfigMap " + ns + "/" + name + " not found")
	}
	data := cm.Data
	headers := make([]match.AuthHeader, 0, len(data))
	for k, val := range data {
		if !authHeaderRE.MatchString(k) {
			return deny("ConfigMap " + ns + "/" + name + ": " + strconv.Quote(k) + " is not a header name")
		}
		if strings.ContainsAny(val, "\r\n\x00") {
			return deny("ConfigMap " + ns + "/" + name + ": the value of " + k + " holds a line break")
		}
		t, err := match.ParseVarTemplate(val)
		if err != nil {
			return deny("ConfigMap " + ns + "/" + name + ": the value of " + k + " " + valueError(val, err))
		}
		headers = append(headers, match.AuthHeader{Name: http.CanonicalHeaderKey(k), Value: t})
	}
	slices.SortFunc(headers, func(x, y match.AuthHeader) int { return strings.Compare(x.Name, y.Name) })
	o.ProxySetHeaders, o.ProxySetHeadersFrom = headers, ns+"/"+name
	return ""
}

// applyGlobalAuth gives the Ingress the global authentication
// (Options.GlobalAuth) when it has no auth-url of its own and does not
// set enable-global-auth: "false", as ingress-nginx's
// shouldApplyGlobalAuth decides.
func (b *builder) applyGlobalAuth(ing *ingress) {
	a := &ing.ann.access
	enabled := true
	if e, ok := a.get("enable-global-auth"); ok {
		// As written: ingress-nginx refuses " false" and applies it.
		v, err := strconv.ParseBool(e.value)
		if err != nil {
			b.rejectAccess(ing, e.key, strconv.Quote(e.value)+" is not a boolean; the global authentication applies")
		} else {
			enabled = v
		}
	}
	global := b.globalAuth()
	if !enabled || global == nil {
		return
	}
	if u, own := a.get("auth-url"); own && strings.TrimSpace(u.value) != "" {
		return
	}
	if a.auth == nil {
		a.auth = &match.Auth{}
	}
	if a.auth.Denied == "" {
		a.auth.External = global
	}
}

// globalAuth is Options.GlobalAuth parsed, once per compile; nil when
// there is none (Validate refuses one that does not parse).
func (b *builder) globalAuth() *match.ExternalAuth {
	if !b.globalAuthDone {
		b.globalAuthDone = true
		b.globalAuthX, _ = b.opts.GlobalAuth.external()
		if x := b.globalAuthX; x != nil && x.Signin != nil {
			x.SigninRelative = b.opts.RelativeRedirects
		}
		if x := b.globalAuthX; x != nil {
			// ingress-nginx's auth location propagates a trace context
			// wherever the ConfigMap traces (match.ExternalAuth).
			x.NoTraceContext = b.opts.Tracing.Enabled
		}
	}
	return b.globalAuthX
}
