package compile

import (
	"fmt"
	"maps"
	"net/netip"
	"net/textproto"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/match/vars"
)

// The ingress-nginx ConfigMap (SPEC §1, doc.go §1): ParseConfigMap reads
// its data with ingress-nginx v1.15's defaults and value syntax
// (internal/ingress/controller/config, decoded by mapstructure's weak
// typing: booleans as strconv.ParseBool reads them, "" false, numbers as
// strconv.ParseInt with base 0). A key lands in one of three places:
//
//   - a location key is the global default of the annotation of the same
//     name (proxy-connect-timeout, load-balance, ...): each claimed Ingress
//     starts from it and its own annotation overrides it, as ingress-nginx's
//     annotation parsers default to the ConfigMap; the catch-all and hosts
//     without an Ingress of their own get it too. It shows in the table.
//   - an option key changes Options (ssl-redirect) for the compile;
//   - a router key fills ConfigMap.Router for the embedder to hand to
//     router.Options (HSTS, the client address, limit answer codes).
//
// Every other key, and every value that does not parse, is one warning
// naming it (Result.Warnings when Options.ConfigMap is set).

// ConfigMap is an ingress-nginx ConfigMap as ParseConfigMap read it. Set
// it as Options.ConfigMap for the compile, and copy Router into the
// router's options. The zero value is a ConfigMap without keys.
type ConfigMap struct {
	// Ref names the ConfigMap in warnings.
	Ref Ref
	// Router holds the keys the router serves (SPEC §1).
	Router RouterConfig
	// Keys are the implemented keys the ConfigMap set and that were
	// applied, sorted; a key whose value did not parse, or that keep
	// named, is not among them.
	Keys []string
	// Extensions are the values of the keys the embedder serves itself
	// (ConfigMapOptions.ExtensionKeys) that the ConfigMap set; nil for
	// none.
	Extensions map[string]string

	// locations are the location keys' values, by annotation name; the
	// Ingress annotations of the same name override them.
	locations map[string]string
	// blockCIDRs is block-cidrs: denied on every location that has no
	// source range of its own, as nginx inherits http-level deny rules.
	blockCIDRs []netip.Prefix
	// options are the option keys, applied to a copy of Options.
	options  []func(*Options)
	warnings []Warning
}

// RouterConfig are the ConfigMap keys the router (and the listeners in
// front of it) serve; each field is the router.Options field of the same
// name unless it says otherwise, and holds ingress-nginx's default when
// the key is absent.
type RouterConfig struct {
	// HSTS and DisableHSTS: hsts, hsts-max-age, hsts-include-subdomains,
	// hsts-preload. HSTS is "" when none of them is set.
	HSTS        string
	DisableHSTS bool
	// TrustForwardedProto: use-forwarded-headers.
	TrustForwardedProto bool
	// TrustForwardedFor: use-forwarded-headers or enable-real-ip (nginx's
	// realip module reads forwarded-for-header from proxy-real-ip-cidr peers).
	TrustForwardedFor bool
	// ComputeFullForwardedFor: compute-full-forwarded-for, which acts only
	// with use-forwarded-headers (a flag or the key).
	ComputeFullForwardedFor bool
	// ForwardedForHeader: forwarded-for-header, the header the client
	// address is read from ("X-Forwarded-For").
	ForwardedForHeader string
	// ProxyRealIPCIDR: proxy-real-ip-cidr. Nil when the key is absent:
	// ingress-nginx then trusts 0.0.0.0/0, ramjet no peer (a warning says so).
	ProxyRealIPCIDR []netip.Prefix
	// UseProxyProtocol: use-proxy-protocol, for the listeners (not a
	// router option).
	UseProxyProtocol bool
	// LimitReqStatusCode and LimitConnStatusCode: limit-req-status-code and
	// limit-conn-status-code, the answer of a request over limit-rps or
	// limit-rpm, and over limit-connections (503).
	LimitReqStatusCode, LimitConnStatusCode int
	// LogFormat and LogFormatEscapeJSON: log-format-upstream and
	// log-format-escape-json, for the access log (not a router option;
	// LogFormat "" is ingress-nginx's default format).
	LogFormat           string
	LogFormatEscapeJSON bool
	// AddHeadersFrom and ProxySetHeadersFrom are add-headers and
	// proxy-set-headers: "namespace/name" of the ConfigMap whose data are
	// the headers set on every answer (AddHeaders, over a backend's of the
	// same name) and on every request to a backend (ProxySetHeaders, over
	// the client's), as ingress-nginx's more_set_headers and
	// proxy_set_header do. ReadHeaders fills the maps, canonical names to
	// values, whose variables the router expands; nil without.
	AddHeadersFrom, ProxySetHeadersFrom string
	AddHeaders, ProxySetHeaders         map[string]string
	// UseGzip, GzipLevel, GzipMinLength and GzipTypes: use-gzip,
	// gzip-level (1), gzip-min-length (256) and gzip-types (space
	// separated), router.Options.Gzip.
	UseGzip       bool
	GzipLevel     int
	GzipMinLength int64
	GzipTypes     []string
	// EnableBrotli, BrotliLevel, BrotliMinLength and BrotliTypes:
	// enable-brotli, brotli-level (4), brotli-min-length (20) and
	// brotli-types, router.Options.Brotli, whose encoder the embedder
	// supplies (the example controller's).
	EnableBrotli    bool
	BrotliLevel     int
	BrotliMinLength int64
	BrotliTypes     []string
	// ServerTokens: server-tokens, the Server header sent on every answer
	// ("ramjet" for "true"; "" for "false", the default, which sends
	// none). A backend's own is never passed on, as nginx hides it.
	ServerTokens string
}

// DefaultGzipTypes are ingress-nginx's gzip-types.
var DefaultGzipTypes = strings.Fields("application/atom+xml application/javascript application/x-javascript application/json application/rss+xml application/vnd.ms-fontobject application/x-font-ttf application/x-web-app-manifest+json application/xhtml+xml application/xml font/opentype image/svg+xml image/x-icon text/css text/javascript text/plain text/x-component")

// DefaultBrotliTypes are ingress-nginx's brotli-types.
var DefaultBrotliTypes = strings.Fields("application/xml+rss application/atom+xml application/javascript application/x-javascript application/json application/rss+xml application/vnd.ms-fontobject application/x-font-ttf application/x-web-app-manifest+json application/xhtml+xml application/xml font/opentype image/svg+xml image/x-icon text/css text/javascript text/plain text/x-component")

// DefaultLogFormat is ingress-nginx's log-format-upstream default.
const DefaultLogFormat = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_length $request_time [$proxy_upstream_name] [$proxy_alternative_upstream_name] $upstream_addr $upstream_response_length $upstream_response_time $upstream_status $req_id`

// ConfigMapKey describes one ConfigMap key ramjet implements. Exactly one
// of Location, Option and Router is set.
type ConfigMapKey struct {
	// Location: the key is the global default of the annotation of the
	// same name, parsed as that annotation (with ingress-nginx's prefix).
	Location bool
	// Option applies the value to the compile's options.
	Option func(o *Options, value string) error
	// Router applies the value to the router's settings.
	Router func(r *RouterConfig, value string) error
	// Live: a running controller follows a change of the key without a
	// restart. Location and option keys always are (they recompile).
	Live bool
}

// ConfigMapKeys is the registry of implemented keys. Implementing a key is
// adding one entry (from an init function of the file that serves it).
var ConfigMapKeys = map[string]ConfigMapKey{
	"ssl-redirect": {Option: func(o *Options, v string) error {
		on, err := nginxBool(v)
		o.DisableSSLRedirect = !on
		return err
	}},
	"force-ssl-redirect":        {Location: true},
	"proxy-body-size":           {Location: true},
	"client-body-buffer-size":   {Location: true},
	"proxy-connect-timeout":     {Location: true},
	"proxy-read-timeout":        {Location: true},
	"proxy-send-timeout":        {Location: true},
	"proxy-next-upstream-tries": {Location: true},
	"load-balance":              {Location: true},
	"upstream-hash-by":          {Location: true},
	"whitelist-source-range":    {Location: true},
	"denylist-source-range":     {Location: true},
	// The response and proxying defaults of ingress-nginx's
	// defaults.Backend, served since issue 23.
	"disable-proxy-intercept-errors": {Location: true},
	"limit-rate":                     {Location: true},
	"limit-rate-after":               {Location: true},
	"proxy-buffering":                {Location: true},
	"proxy-buffer-size":              {Location: true},
	"proxy-buffers-number":           {Location: true},
	"proxy-busy-buffers-size":        {Location: true},
	"proxy-max-temp-file-size":       {Location: true},
	"proxy-request-buffering":        {Location: true},
	"proxy-http-version":             {Location: true},
	"proxy-next-upstream":            {Location: true},
	"proxy-next-upstream-timeout":    {Location: true},
	"custom-http-errors": {Option: func(o *Options, v string) (err error) {
		o.CustomHTTPErrors, err = ParseHTTPErrors(v, false)
		return err
	}},
	"allow-snippet-annotations": {Option: func(o *Options, v string) (err error) {
		o.AllowSnippetAnnotations, err = nginxBool(v)
		return err
	}},
	"annotations-risk-level": {Option: func(o *Options, v string) error {
		switch strings.ToLower(v) {
		case "critical", "high", "medium", "low":
			o.AnnotationsRiskLevel = v
			return nil
		}
		return fmt.Errorf("want Critical, High, Medium or Low")
	}},
	"global-auth-url":                   globalAuthKey(func(g *GlobalAuth, v string) { g.URL = v }),
	"global-auth-method":                globalAuthKey(func(g *GlobalAuth, v string) { g.Method = v }),
	"global-auth-signin":                globalAuthKey(func(g *GlobalAuth, v string) { g.Signin = v }),
	"global-auth-signin-redirect-param": globalAuthKey(func(g *GlobalAuth, v string) { g.SigninRedirectParam = v }),
	"global-auth-response-headers":      globalAuthKey(func(g *GlobalAuth, v string) { g.ResponseHeaders = v }),
	"global-auth-request-redirect":      globalAuthKey(func(g *GlobalAuth, v string) { g.RequestRedirect = v }),
	"global-auth-cache-key":             globalAuthKey(func(g *GlobalAuth, v string) { g.CacheKey = v }),
	"global-auth-cache-duration":        globalAuthKey(func(g *GlobalAuth, v string) { g.CacheDuration = v }),
	"global-auth-always-set-cookie": {Option: func(o *Options, v string) error {
		on, err := nginxBool(v)
		if err == nil {
			o.GlobalAuth = globalAuthOf(o)
			o.GlobalAuth.AlwaysSetCookie = on
		}
		return err
	}},
	"hsts":                    {Router: hstsKey("hsts"), Live: true},
	"hsts-max-age":            {Router: hstsKey("hsts-max-age"), Live: true},
	"hsts-include-subdomains": {Router: hstsKey("hsts-include-subdomains"), Live: true},
	"hsts-preload":            {Router: hstsKey("hsts-preload"), Live: true},
	"use-forwarded-headers": {Router: func(r *RouterConfig, v string) (err error) {
		r.TrustForwardedProto, err = nginxBool(v)
		return err
	}, Live: true},
	"enable-real-ip": {Router: func(r *RouterConfig, v string) (err error) {
		_, err = nginxBool(v)
		return err
	}, Live: true},
	"compute-full-forwarded-for": {Router: func(r *RouterConfig, v string) (err error) {
		r.ComputeFullForwardedFor, err = nginxBool(v)
		return err
	}, Live: true},
	"forwarded-for-header": {Router: func(r *RouterConfig, v string) error {
		if !nginxHeaderName(v) {
			return fmt.Errorf("want a header name")
		}
		r.ForwardedForHeader = v
		return nil
	}, Live: true},
	"proxy-real-ip-cidr": {Router: func(r *RouterConfig, v string) (err error) {
		r.ProxyRealIPCIDR, err = ParseSourceRanges(v)
		return err
	}},
	"use-proxy-protocol": {Router: func(r *RouterConfig, v string) (err error) {
		r.UseProxyProtocol, err = nginxBool(v)
		return err
	}},
	"limit-req-status-code":  {Router: statusKey(func(r *RouterConfig) *int { return &r.LimitReqStatusCode }), Live: true},
	"limit-conn-status-code": {Router: statusKey(func(r *RouterConfig) *int { return &r.LimitConnStatusCode }), Live: true},
	"add-headers":            {Router: headersKey(func(r *RouterConfig) *string { return &r.AddHeadersFrom }), Live: true},
	"proxy-set-headers":      {Router: headersKey(func(r *RouterConfig) *string { return &r.ProxySetHeadersFrom }), Live: true},
	"use-gzip": {Router: func(r *RouterConfig, v string) (err error) {
		r.UseGzip, err = nginxBool(v)
		return err
	}, Live: true},
	"gzip-level": {Router: func(r *RouterConfig, v string) error {
		n, err := strconv.ParseInt(v, 0, 32)
		if err != nil || n < 1 || n > 9 {
			return fmt.Errorf("want a level from 1 to 9")
		}
		r.GzipLevel = int(n)
		return nil
	}, Live: true},
	"gzip-min-length": {Router: func(r *RouterConfig, v string) error {
		n, err := strconv.ParseInt(v, 0, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("want a number of bytes")
		}
		r.GzipMinLength = n
		return nil
	}, Live: true},
	"gzip-types": {Router: func(r *RouterConfig, v string) error {
		if r.GzipTypes = strings.Fields(v); len(r.GzipTypes) == 0 {
			return fmt.Errorf("want media types")
		}
		return nil
	}, Live: true},
	"enable-brotli": {Router: func(r *RouterConfig, v string) (err error) {
		r.EnableBrotli, err = nginxBool(v)
		return err
	}, Live: true},
	"brotli-level": {Router: func(r *RouterConfig, v string) error {
		n, err := strconv.ParseInt(v, 0, 32)
		if err != nil || n < 0 || n > 11 {
			return fmt.Errorf("want a level from 0 to 11")
		}
		r.BrotliLevel = int(n)
		return nil
	}, Live: true},
	"brotli-min-length": {Router: func(r *RouterConfig, v string) error {
		n, err := strconv.ParseInt(v, 0, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("want a number of bytes")
		}
		r.BrotliMinLength = n
		return nil
	}, Live: true},
	"brotli-types": {Router: func(r *RouterConfig, v string) error {
		if r.BrotliTypes = strings.Fields(v); len(r.BrotliTypes) == 0 {
			return fmt.Errorf("want media types")
		}
		return nil
	}, Live: true},
	"log-format-upstream": {Router: func(r *RouterConfig, v string) error {
		if v == "" {
			return fmt.Errorf("want a log format")
		}
		r.LogFormat = v
		return nil
	}, Live: true},
	"server-tokens": {Router: func(r *RouterConfig, v string) error {
		on, err := nginxBool(v)
		r.ServerTokens = ""
		if on {
			r.ServerTokens = "ramjet"
		}
		return err
	}, Live: true},
	"log-format-escape-json": {Router: func(r *RouterConfig, v string) (err error) {
		r.LogFormatEscapeJSON, err = nginxBool(v)
		return err
	}, Live: true},
}

// ConfigMapUnsupported are keys ingress-nginx reads that ramjet does not
// implement and that change answers, each with what to do instead: they
// warn ConfigMapKeyUnsupported as traffic-moves. Other helpers' keys
// (custom-http-errors, the global auth and ModSecurity keys, snippets) are
// listed here until they are implemented.
var ConfigMapUnsupported = map[string]string{
	"global-auth-snippet":           "nginx configuration ramjet cannot run",
	"enable-modsecurity":            "no ModSecurity (the example controller serves it)",
	"enable-owasp-modsecurity-crs":  "no OWASP core rules (the example controller serves them)",
	"modsecurity-snippet":           "no ModSecurity (the example controller serves it)",
	"block-user-agents":             "user agents are not blocked",
	"block-referers":                "referers are not blocked",
	"http-redirect-code":            "the plain-HTTP redirect answers 308",
	"hide-headers":                  "backend headers are not hidden",
	"proxy-add-original-uri-header": "X-Original-URI is not sent",
	"use-http2":                     "HTTP/2 is always offered over TLS",
	"ssl-protocols":                 "TLS versions are Go's defaults",
	"ssl-ciphers":                   "TLS ciphers are Go's defaults",
	"default-type":                  "a response without Content-Type gets none",
	"location-snippet":              "snippets are not read",
	"server-snippet":                "snippets are not read",
	"no-auth-locations":             "authentication applies to every location",
	"proxy-redirect-from":           "Location headers are passed unchanged",
	"proxy-stream-responses":        "UDP only",
	"large-client-header-buffers":   "headers up to Go's limit (1 MiB) are read",
	"client-header-timeout":         "the router's header timeout applies",
	"client-body-timeout":           "the router's body timeout (60 s) applies",
}

// configMapMoves are the unsupported keys whose absence answers a request
// otherwise (refused, redirected, served where nginx refuses); the others
// of ConfigMapUnsupported leave answers as they are, without a feature.
var configMapMoves = setOf(
	"proxy-real-ip-cidr", "global-auth-snippet", "enable-modsecurity", "enable-owasp-modsecurity-crs", "modsecurity-snippet",
	"block-user-agents", "block-referers", "http-redirect-code", "no-auth-locations", "location-snippet",
	"server-snippet",
)

// configMapTuning are keys that tune nginx itself (workers, buffers,
// caches, logs, hash tables) and change no answer: ramjet has no such
// knob, and their warning is cosmetic.
var configMapTuning = setOf(
	"worker-processes", "max-worker-connections", "max-worker-open-files", "worker-cpu-affinity",
	"worker-shutdown-timeout", "worker-rlimit-nofile", "reuse-port", "keep-alive", "keep-alive-requests",
	"upstream-keepalive-connections", "upstream-keepalive-timeout", "upstream-keepalive-requests",
	"upstream-keepalive-time", "server-name-hash-bucket-size", "server-name-hash-max-size",
	"map-hash-bucket-size", "proxy-headers-hash-bucket-size", "proxy-headers-hash-max-size",
	"variables-hash-bucket-size", "variables-hash-max-size", "ssl-session-cache", "ssl-session-cache-size",
	"ssl-session-tickets", "ssl-session-timeout", "ssl-buffer-size", "error-log-level", "error-log-path",
	"access-log-path", "http-access-log-path", "disable-access-log", "enable-opentelemetry",
	"lua-shared-dicts", "plugins", "nginx-status-ipv4-whitelist", "nginx-status-ipv6-whitelist",
	"enable-multi-accept", "use-geoip", "use-geoip2", "http-snippet", "main-snippet", "stream-snippet",
	"bind-address", "enable-ipv6", "disable-ipv6-dns", "resolver", "log-format-stream",
	"debug-connections", "enable-access-log-for-default-backend", "skip-access-log-urls",
	"syslog-host", "syslog-port", "enable-syslog", "client-header-buffer-size", "gzip-disable",
	"proxy-protocol-header-timeout", "log-format-escape-none",
)

// ParseConfigMap reads an ingress-nginx ConfigMap. keep names keys whose
// setting the caller has already decided (a command-line flag for the same
// setting, which wins): each is left out with a cosmetic warning. A nil cm
// gives an empty ConfigMap with ingress-nginx's defaults.
func ParseConfigMap(cm *corev1.ConfigMap, keep ...string) *ConfigMap {
	return ParseConfigMapFor(cm, ConfigMapOptions{Keep: keep})
}

// ConfigMapOptions say what the caller of ParseConfigMapFor serves itself.
type ConfigMapOptions struct {
	// Keep names keys whose setting the caller has already decided (a
	// command-line flag for the same setting, which wins): each is left
	// out with a cosmetic warning.
	Keep []string
	// ExtensionKeys name keys ramjet does not implement and the embedder
	// serves (the ModSecurity keys in the example controller): their
	// values go to ConfigMap.Extensions, unwarned.
	ExtensionKeys []string
}

// ParseConfigMapFor is ParseConfigMap for an embedder that serves some
// keys itself.
func ParseConfigMapFor(cm *corev1.ConfigMap, o ConfigMapOptions) *ConfigMap {
	keep := o.Keep
	c := &ConfigMap{Router: RouterConfig{ForwardedForHeader: "X-Forwarded-For", LimitReqStatusCode: 503, LimitConnStatusCode: 503,
		GzipLevel: 1, GzipMinLength: 256, GzipTypes: DefaultGzipTypes, BrotliLevel: 4, BrotliMinLength: 20, BrotliTypes: DefaultBrotliTypes}}
	if cm == nil {
		return c
	}
	c.Ref = Ref{Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name}
	data := cm.Data
	hsts := hstsSettings{on: true, maxAge: 31536000, includeSubDomains: true}
	hstsSet, realIP := false, false
	for _, key := range slices.Sorted(maps.Keys(data)) {
		v := strings.TrimSpace(data[key])
		k, ok := ConfigMapKeys[key]
		switch {
		case ok && slices.Contains(keep, key):
			c.warn(ConfigMapKeyIgnored, key, fmt.Sprintf("%q: the command line's setting wins", v))
			continue
		case !ok && slices.Contains(o.ExtensionKeys, key):
			if c.Extensions == nil {
				c.Extensions = make(map[string]string)
			}
			c.Extensions[key] = data[key]
			continue
		case !ok && ConfigMapUnsupported[key] != "":
			c.warn(ConfigMapKeyUnsupported, key, "not implemented: "+ConfigMapUnsupported[key])
			continue
		case !ok && key == "block-cidrs":
			ranges, err := parseBlockCIDRs(v)
			if err != nil {
				c.reject(key, v, err)
				continue
			}
			c.blockCIDRs = ranges
		case !ok && configMapTuning[key]:
			c.warn(ConfigMapKeyIgnored, key, "tunes nginx itself, no answer changes; ignored")
			continue
		case !ok:
			c.warn(ConfigMapKeyUnsupported, key, "not implemented; ignored (it may change answers)")
			continue
		case k.Location:
			if err := checkLocationDefault(key, v); err != nil {
				c.reject(key, v, err)
				continue
			}
			if c.locations == nil {
				c.locations = make(map[string]string)
			}
			c.locations[key] = locationValue(key, v)
			if key == "load-balance" && v == "ewma" {
				c.warn(ConfigMapKeyUnsupported, key, `"ewma" is served as least_conn (fewest requests in flight, ties round-robin); ramjet does not implement ewma`)
			}
		case k.Option != nil:
			var scratch Options
			if err := k.Option(&scratch, v); err != nil {
				c.reject(key, v, err)
				continue
			}
			c.options = append(c.options, func(o *Options) { _ = k.Option(o, v) })
		case k.Router != nil:
			r := c.Router
			if err := k.Router(&r, v); err != nil {
				c.reject(key, v, err)
				continue
			}
			c.Router = r
			if key == "enable-real-ip" {
				realIP, _ = nginxBool(v)
			}
			if strings.HasPrefix(key, "hsts") {
				hstsSet = true
				_ = hstsKeys[key](&hsts, v)
			}
		}
		c.Keys = append(c.Keys, key)
		if key == "log-format-upstream" {
			for _, name := range UnknownLogVariables(v) {
				c.warn(ConfigMapKeyUnsupported, key, (&vars.Error{Place: &LogFormat, Name: name}).Error()+"; it is logged as \"-\"")
			}
		}
	}
	if hstsSet {
		c.Router.DisableHSTS = !hsts.on
		if hsts.on {
			c.Router.HSTS = hstsHeader(hsts.maxAge, hsts.includeSubDomains, hsts.preload)
		}
	}
	// nginx's realip module runs with either key; X-Forwarded-Proto and the
	// full X-Forwarded-For only with use-forwarded-headers.
	c.Router.TrustForwardedFor = c.Router.TrustForwardedProto || realIP
	if _, ok := data["proxy-real-ip-cidr"]; !ok && c.Router.TrustForwardedFor && !slices.Contains(keep, "proxy-real-ip-cidr") {
		// ingress-nginx's default is 0.0.0.0/0; ramjet trusts no peer
		// unless told, so a client cannot forge its address.
		c.warn(ConfigMapKeyUnsupported, "proxy-real-ip-cidr", "absent: ingress-nginx's default 0.0.0.0/0 believes "+c.Router.ForwardedForHeader+" from every peer, ramjet from none until the load balancers are listed")
	}
	slices.SortStableFunc(c.warnings, func(a, b Warning) int { return strings.Compare(a.Field, b.Field) })
	return c
}

// Warnings are the ConfigMap's warnings, sorted by key; Compile adds them
// to its result.
func (c *ConfigMap) Warnings() []Warning {
	if c == nil {
		return nil
	}
	return slices.Clone(c.warnings)
}

func (c *ConfigMap) warn(reason Reason, key, message string) {
	c.warnings = append(c.warnings, Warning{Reason: reason, Object: c.Ref, Field: configMapField(key), Message: message})
}

func (c *ConfigMap) reject(key, value string, err error) {
	c.warn(ConfigMapKeyRejected, key, fmt.Sprintf("value %q: %v; ingress-nginx's default is kept", value, err))
}

// globalAuthKey is a global-auth-* key: a field of Options.GlobalAuth,
// checked whole by Options.Validate.
func globalAuthKey(set func(g *GlobalAuth, v string)) ConfigMapKey {
	return ConfigMapKey{Option: func(o *Options, v string) error {
		o.GlobalAuth = globalAuthOf(o)
		set(o.GlobalAuth, v)
		return nil
	}}
}

// globalAuthOf is a copy of o's GlobalAuth to change, so that Options
// copied before keep theirs.
func globalAuthOf(o *Options) *GlobalAuth {
	var g GlobalAuth
	if o.GlobalAuth != nil {
		g = *o.GlobalAuth
	}
	return &g
}

func configMapField(key string) string { return "data[" + key + "]" }

// configMapSeverity is the severity of ConfigMapKeyUnsupported for the key
// in a warning's field: traffic-moves for the keys that change answers.
func configMapSeverity(field string) Severity {
	key := strings.TrimSuffix(strings.TrimPrefix(field, "data["), "]")
	if configMapMoves[key] {
		return TrafficMoves
	}
	return FeatureMissing
}

// checkLocationDefault parses a location key's value as ingress-nginx's
// ConfigMap types it, then as the annotation reads it.
func checkLocationDefault(key, v string) error {
	switch key {
	case "proxy-connect-timeout", "proxy-read-timeout", "proxy-send-timeout", "proxy-next-upstream-tries":
		n, err := strconv.ParseInt(v, 0, 32)
		if err != nil {
			return fmt.Errorf("want a whole number")
		}
		v = strconv.FormatInt(n, 10)
	case "force-ssl-redirect":
		if _, err := nginxBool(v); err != nil {
			return err
		}
		return nil
	}
	var scratch annotationValues
	if err := knownAnnotations[key].apply(&scratch, NginxPrefix+key, v); err != nil {
		_, why, _ := strings.Cut(err.Error(), ": ")
		return fmt.Errorf("%s", cutSemicolon(why, err.Error()))
	}
	if key == "load-balance" && scratch.loadBalance.String() == "hash" {
		return fmt.Errorf(`"hash" needs upstream-hash-by`)
	}
	return nil
}

// cutSemicolon keeps an annotation error's reason, without what the
// annotation then does.
func cutSemicolon(why, whole string) string {
	if why == "" {
		why = whole
	}
	if i := strings.Index(why, "; "); i > 0 {
		why = why[:i]
	}
	return why
}

// locationValue is the value the annotation parser gets: numbers as
// decimal, booleans as "true"/"false".
func locationValue(key, v string) string {
	switch key {
	case "proxy-connect-timeout", "proxy-read-timeout", "proxy-send-timeout", "proxy-next-upstream-tries":
		n, _ := strconv.ParseInt(v, 0, 32)
		return strconv.FormatInt(n, 10)
	case "force-ssl-redirect":
		on, _ := nginxBool(v)
		return strconv.FormatBool(on)
	}
	return v
}

// parseBlockCIDRs reads block-cidrs: comma-separated addresses and ranges,
// spaces trimmed, empty entries skipped.
func parseBlockCIDRs(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := parseRange(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return sortPrefixes(out), nil
}

// nginxBool reads a boolean as ingress-nginx's ConfigMap decoder
// (mapstructure, weakly typed) does: strconv.ParseBool, and "" is false.
func nginxBool(v string) (bool, error) {
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("want true or false")
	}
	return b, nil
}

// hstsSettings are the hsts* keys, with ingress-nginx's defaults.
type hstsSettings struct {
	on                bool
	maxAge            int64
	includeSubDomains bool
	preload           bool
}

// hstsKeys read the hsts* keys; the header is built once all are read
// (ParseConfigMap).
var hstsKeys = map[string]func(*hstsSettings, string) error{
	"hsts": func(h *hstsSettings, v string) (err error) { h.on, err = nginxBool(v); return err },
	"hsts-max-age": func(h *hstsSettings, v string) error {
		// ingress-nginx writes the string into the header as given; a
		// value that is not a number of seconds makes a header browsers
		// ignore, so it is refused here.
		n, err := strconv.ParseUint(v, 10, 63)
		if err != nil {
			return fmt.Errorf("want a number of seconds")
		}
		h.maxAge = int64(n)
		return nil
	},
	"hsts-include-subdomains": func(h *hstsSettings, v string) (err error) {
		h.includeSubDomains, err = nginxBool(v)
		return err
	},
	"hsts-preload": func(h *hstsSettings, v string) (err error) { h.preload, err = nginxBool(v); return err },
}

// hstsKey checks an hsts* key's value.
func hstsKey(key string) func(*RouterConfig, string) error {
	return func(_ *RouterConfig, v string) error {
		var h hstsSettings
		return hstsKeys[key](&h, v)
	}
}

// hstsHeader is the header ingress-nginx builds from the hsts* keys
// (router.HSTSHeader, which compile cannot import).
func hstsHeader(maxAge int64, includeSubDomains, preload bool) string {
	s := "max-age=" + strconv.FormatInt(maxAge, 10)
	if includeSubDomains {
		s += "; includeSubDomains"
	}
	if preload {
		s += "; preload"
	}
	return s
}

// statusKey reads an answer code as ingress-nginx's limit_req_status and
// limit_conn_status take it: 400 to 599.
func statusKey(field func(*RouterConfig) *int) func(*RouterConfig, string) error {
	return func(r *RouterConfig, v string) error {
		n, err := strconv.ParseInt(v, 0, 32)
		if err != nil || n < 400 || n > 599 {
			return fmt.Errorf("want a status code from 400 to 599")
		}
		*field(r) = int(n)
		return nil
	}
}

// LogFormat is where log-format-upstream reads its variables: those the
// example controller's access log fills. One it cannot fill is logged as
// "-", as nginx logs a value it has not.
var LogFormat = vars.Place{Name: "the access log", Syntax: vars.Log, Lenient: true, Vars: vars.Of(
	vars.Args, vars.BodyBytesSent, vars.BytesSent, vars.Host, vars.IngressName, vars.Msec, vars.Namespace,
	vars.ProxyAlternativeUpstreamName, vars.ProxyUpstreamName, vars.QueryString, vars.RemoteAddr,
	vars.RemoteUser, vars.ReqID, vars.Request, vars.RequestLength, vars.RequestMethod, vars.RequestTime,
	vars.RequestURI, vars.Scheme, vars.ServerName, vars.ServerProtocol, vars.ServiceName, vars.ServicePort,
	vars.Status, vars.TimeISO8601, vars.TimeLocal, vars.UpstreamAddr, vars.UpstreamHeaderTime,
	vars.UpstreamResponseLength, vars.UpstreamResponseTime, vars.UpstreamStatus, vars.URI,
	vars.HTTP, vars.Cookie)}

// UnknownLogVariables are the variables format names ($name or ${name})
// that LogFormat does not fill, each once, in order.
func UnknownLogVariables(format string) []string {
	t, _ := LogFormat.Parse(format)
	return t.Unknown()
}

// headersKey reads add-headers or proxy-set-headers: "namespace/name" of
// a ConfigMap ("name" alone is in the ConfigMap's own namespace, resolved
// by ReadHeaders).
func headersKey(field func(*RouterConfig) *string) func(*RouterConfig, string) error {
	return func(r *RouterConfig, v string) error {
		if strings.Count(v, "/") > 1 || v == "" || strings.HasPrefix(v, "/") || strings.HasSuffix(v, "/") {
			return fmt.Errorf("want namespace/name of a ConfigMap")
		}
		*field(r) = v
		return nil
	}
}

// ReadHeaders fills Router.AddHeaders and Router.ProxySetHeaders from the
// ConfigMaps add-headers and proxy-set-headers name, found among cms (a
// Snapshot's ConfigMaps, say). A ConfigMap that is absent, or a header
// name or value nginx would refuse, warns naming it and is left out. The
// values keep their nginx variables, which the router expands per request
// (match.ParseHeaderValue); a value with one it cannot expand warns
// ConfigMapKeyUnsupported and is left out rather than sent as written.
// Call it before the ConfigMap is compiled with, so its warnings join.
func (c *ConfigMap) ReadHeaders(cms []*corev1.ConfigMap) {
	if c == nil {
		return
	}
	read := func(key, ref string) map[string]string {
		if ref == "" {
			return nil
		}
		if !strings.Contains(ref, "/") {
			ref = c.Ref.Namespace + "/" + ref
		}
		var found *corev1.ConfigMap
		for _, cm := range cms {
			if cm != nil && cm.Namespace+"/"+cm.Name == ref {
				found = cm
			}
		}
		if found == nil {
			c.warn(ConfigMapKeyRejected, key, "the ConfigMap "+ref+" is not found: no headers are set")
			return nil
		}
		out := make(map[string]string, len(found.Data))
		for _, name := range slices.Sorted(maps.Keys(found.Data)) {
			v := strings.TrimSpace(found.Data[name])
			if !nginxHeaderName(name) || !match.ValidHeaderValue(v) {
				c.warn(ConfigMapKeyRejected, key, fmt.Sprintf("ConfigMap %s: header %q: %q is not a header nginx sends; left out", ref, name, v))
				continue
			}
			if _, err := match.ParseHeaderValue(v); err != nil {
				c.warn(ConfigMapKeyUnsupported, key, fmt.Sprintf("ConfigMap %s: header %q: %v; left out", ref, name, err))
				continue
			}
			out[textproto.CanonicalMIMEHeaderKey(name)] = v
		}
		return out
	}
	c.Router.AddHeaders = read("add-headers", c.Router.AddHeadersFrom)
	c.Router.ProxySetHeaders = read("proxy-set-headers", c.Router.ProxySetHeadersFrom)
	slices.SortStableFunc(c.warnings, func(a, b Warning) int { return strings.Compare(a.Field, b.Field) })
}

// nginxHeaderName reports a header name nginx's default
// ignore_invalid_headers accepts: letters, digits, '-' and '_'.
func nginxHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// WithConfigMap is o as the compile uses it: with the option keys of
// o.ConfigMap (ssl-redirect, custom-http-errors, the snippet gate, global
// authentication) folded in, so a caller can ask what they decide.
func (o Options) WithConfigMap() Options {
	if o.ConfigMap == nil {
		return o
	}
	for _, f := range o.ConfigMap.options {
		f(&o)
	}
	return o
}

// readLocationDefaults gives ing the ConfigMap's location defaults before
// its own annotations are read: the defaults are parsed once into
// b.defaults and copied (the request policy deeply, as the Ingress's own
// annotations write into it).
func (b *builder) readLocationDefaults(ing *ingress) {
	d := b.defaults
	if d == nil {
		return
	}
	ing.ann = d.ann
	if d.ann.request != nil {
		p := *d.ann.request
		if p.proxy != nil {
			px := *p.proxy
			px.keys = slices.Clone(px.keys)
			p.proxy = &px
		}
		ing.ann.request = &p
	}
	if d.ann.response != nil {
		r := *d.ann.response
		ing.ann.response = &r
	}
}

// prepareDefaults adds the ConfigMap's warnings and parses its location
// defaults once, into a pseudo-Ingress the claimed ones are copied from.
func (b *builder) prepareDefaults() {
	cm := b.opts.ConfigMap
	if cm == nil {
		return
	}
	b.warnings = append(b.warnings, cm.warnings...)
	if len(cm.locations) == 0 && len(cm.blockCIDRs) == 0 {
		return
	}
	d := &ingress{key: configMapKeyName + cm.Ref.Namespace + "/" + cm.Ref.Name}
	for _, key := range slices.Sorted(maps.Keys(cm.locations)) {
		_ = knownAnnotations[key].apply(&d.ann, configMapKeyName+key, cm.locations[key])
	}
	// As resolveBalancing decides, without its warnings, which
	// ParseConfigMap gave for the key.
	switch v := &d.ann; {
	case v.hashByKey != "":
		v.algorithm, v.hashKey, v.algorithmKey = balance.Hash, v.hashBy, v.hashByKey
	case v.loadBalanceKey != "":
		v.algorithm, v.algorithmKey = v.loadBalance, v.loadBalanceKey
	}
	b.defaults = d
}

// fallbackDefaults is the pseudo-Ingress whose settings serve the hosts no
// Ingress supplies settings for (the catch-all without a default backend
// Ingress): the location defaults and block-cidrs; nil without them.
func (b *builder) fallbackDefaults() *ingress {
	if b.defaults == nil {
		return nil
	}
	if b.fallback == nil {
		f := &ingress{key: b.defaults.key}
		b.readLocationDefaults(f)
		b.applyBlockCIDRs(f)
		b.fallback = f
	}
	return b.fallback
}

// configMapKeyName prefixes a location default's key where the annotation
// that set a value is named (conflicts, the table).
const configMapKeyName = "ConfigMap "

// applyBlockCIDRs denies block-cidrs on ing's locations unless they have a
// source range of their own: nginx's deny and allow rules at the location
// level replace the http level's (ngx_http_access_module).
func (b *builder) applyBlockCIDRs(ing *ingress) {
	cm := b.opts.ConfigMap
	if cm == nil || len(cm.blockCIDRs) == 0 {
		return
	}
	pv := ing.ann.requestW()
	if pv.whitelist.set || pv.allowlist.set || pv.denylist.set {
		return
	}
	pv.set = true
	pv.denylist = sourceRange{set: true, ranges: cm.blockCIDRs}
}
