package compile

import (
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match/vars"
	"ramjet.dev/ramjet/router/configmap"
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
//   - a router key is the router's own parser's (package
//     router/configmap): ParseConfigMap calls it for the warnings and
//     hands its settings on in ConfigMap.Router, for the embedder to give
//     router.Options.ApplyConfigMap (HSTS, the client address, limit
//     answer codes).
//
// Every other key, and every value that does not parse, is one warning
// naming it (Result.Warnings when Options.ConfigMap is set).

// ConfigMap is an ingress-nginx ConfigMap as ParseConfigMap read it. Set
// it as Options.ConfigMap for the compile, and apply Router to the
// router's options (router.Options.ApplyConfigMap). The zero value is a
// ConfigMap without keys.
type ConfigMap struct {
	// Ref names the ConfigMap in warnings.
	Ref Ref
	// Router holds the keys the router serves (SPEC §1), as its parser
	// read them.
	Router configmap.Settings
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
	// src is what ParseConfigMapFor read, for Compiler to tell two
	// parses of one ConfigMap alike (compiler.go).
	src *configMapSource
}

// DefaultLogFormat is ingress-nginx's log-format-upstream default.
const DefaultLogFormat = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_length $request_time [$proxy_upstream_name] [$proxy_alternative_upstream_name] $upstream_addr $upstream_response_length $upstream_response_time $upstream_status $req_id`

// ConfigMapKey describes one ConfigMap key the compile implements. Exactly
// one of Location and Option is set; the router's keys are
// configmap.Keys.
type ConfigMapKey struct {
	// Location: the key is the global default of the annotation of the
	// same name, parsed as that annotation (with ingress-nginx's prefix).
	Location bool
	// Option applies the value to the compile's options.
	Option func(o *Options, value string) error
}

// ConfigMapKeys is the registry of the compile's keys: a running
// controller follows their changes, as it recompiles. Implementing a key is
// adding one entry (from an init function of the file that serves it).
var ConfigMapKeys = map[string]ConfigMapKey{
	"ssl-redirect": {Option: func(o *Options, v string) error {
		on, err := configmap.ParseBool(v)
		o.DisableSSLRedirect = !on
		return err
	}},
	"relative-redirects": {Option: func(o *Options, v string) (err error) {
		o.RelativeRedirects, err = configmap.ParseBool(v)
		return err
	}},
	"proxy-ssl-location-only": {Option: func(o *Options, v string) (err error) {
		o.ProxySSLLocationOnly, err = configmap.ParseBool(v)
		return err
	}},
	"force-ssl-redirect":        {Location: true},
	"preserve-trailing-slash":   {Location: true},
	"use-port-in-redirects":     {Location: true},
	"proxy-body-size":           {Location: true},
	"client-body-buffer-size":   {Location: true},
	"proxy-connect-timeout":     {Location: true},
	"proxy-read-timeout":        {Location: true},
	"proxy-send-timeout":        {Location: true},
	"proxy-next-upstream-tries": {Location: true},
	"load-balance":              {Location: true},
	// serviceupstream's default (defBackend.ServiceUpstream).
	"service-upstream":       {Location: true},
	"upstream-hash-by":       {Location: true},
	"whitelist-source-range": {Location: true},
	"denylist-source-range":  {Location: true},
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
	"proxy-redirect-from":            {Location: true},
	"proxy-redirect-to":              {Location: true},
	"proxy-cookie-domain":            {Location: true},
	"proxy-cookie-path":              {Location: true},
	"custom-http-errors": {Option: func(o *Options, v string) error {
		var dropped []string
		o.CustomHTTPErrors, dropped = ConfigMapHTTPErrors(v)
		if len(dropped) == 0 {
			return nil
		}
		kept := "none is intercepted"
		if len(o.CustomHTTPErrors) > 0 {
			kept = "intercepted: " + strings.ReplaceAll(strings.Trim(fmt.Sprint(o.CustomHTTPErrors), "[]"), " ", ",")
		}
		return partialValue{fmt.Errorf("%s left out, not status codes from 300 to 599, as ingress-nginx leaves them out; %s",
			strings.Join(dropped, ", "), kept)}
	}},
	"allow-snippet-annotations": {Option: func(o *Options, v string) (err error) {
		o.AllowSnippetAnnotations, err = configmap.ParseBool(v)
		return err
	}},
	"allow-cross-namespace-resources": {Option: func(o *Options, v string) (err error) {
		o.AllowCrossNamespaceResources, err = configmap.ParseBool(v)
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
	// custom-headers reads it (customheaders.go): ingress-nginx keeps
	// the names its header pattern takes and logs the others.
	"global-allowed-response-headers": {Option: func(_ *Options, v string) error {
		var dropped []string
		for h := range strings.SplitSeq(v, ",") {
			if h = strings.TrimSpace(h); h != "" && !authHeaderRE.MatchString(h) {
				dropped = append(dropped, strconv.Quote(h))
			}
		}
		if len(dropped) == 0 {
			return nil
		}
		return partialValue{fmt.Errorf("%s left out, not header names, as ingress-nginx leaves them out", strings.Join(dropped, ", "))}
	}},
	"global-auth-url":                   globalAuthKey(func(g *GlobalAuth, v string) { g.URL = v }),
	"global-auth-method":                globalAuthKey(func(g *GlobalAuth, v string) { g.Method = v }),
	"global-auth-signin":                globalAuthKey(func(g *GlobalAuth, v string) { g.Signin = v }),
	"global-auth-signin-redirect-param": globalAuthKey(func(g *GlobalAuth, v string) { g.SigninRedirectParam = v }),
	"global-auth-response-headers":      {Option: globalAuthResponseHeaders},
	"global-auth-request-redirect":      globalAuthKey(func(g *GlobalAuth, v string) { g.RequestRedirect = v }),
	"global-auth-cache-key":             globalAuthKey(func(g *GlobalAuth, v string) { g.CacheKey = v }),
	"global-auth-cache-duration":        {Option: globalAuthCacheDuration},
	"global-auth-always-set-cookie": {Option: func(o *Options, v string) error {
		on, err := configmap.ParseBool(v)
		if err == nil {
			o.GlobalAuth = globalAuthOf(o)
			o.GlobalAuth.AlwaysSetCookie = on
		}
		return err
	}},
}

// ConfigMapUnsupported are keys ingress-nginx reads that ramjet does not
// implement and that change answers, each with what to do instead: they
// warn ConfigMapKeyUnsupported as traffic-moves. Other helpers' keys
// (custom-http-errors, the global auth and ModSecurity keys, snippets) are
// listed here until they are implemented.
var ConfigMapUnsupported = map[string]string{
	"global-auth-snippet":          "nginx configuration ramjet cannot run",
	"enable-modsecurity":           "no ModSecurity (the example controller serves it)",
	"enable-owasp-modsecurity-crs": "no OWASP core rules (the example controller serves them)",
	"modsecurity-snippet":          "no ModSecurity (the example controller serves it)",
	"default-type":                 "a response without Content-Type gets none",
	"location-snippet":             "snippets are not read",
	"server-snippet":               "snippets are not read",
	"no-auth-locations":            "authentication applies to every location",
}

// configMapMoves are the unsupported keys whose absence answers a request
// otherwise (refused, redirected, served where nginx refuses); the others
// of ConfigMapUnsupported leave answers as they are, without a feature.
var configMapMoves = setOf(
	"proxy-real-ip-cidr", "global-auth-snippet", "enable-modsecurity", "enable-owasp-modsecurity-crs", "modsecurity-snippet",
	"no-auth-locations", "location-snippet",
	"server-snippet",
)

// configMapByValue are unimplemented keys whose value decides what is lost:
// each gives the warning's reason, severity and message.
var configMapByValue = map[string]func(v string) (Reason, Severity, string){
	"use-geoip2": offByDefault("GeoIP2 is not supported by ramjet: the $geoip2_* variables are empty in logs and headers"),
	// Global rate limiting (memcached) left ingress-nginx in v1.12
	// (#11851): v1.15 reads none of its keys.
	"global-rate-limit-memcached-host":             removedKey,
	"global-rate-limit-memcached-port":             removedKey,
	"global-rate-limit-memcached-connect-timeout":  removedKey,
	"global-rate-limit-memcached-max-idle-timeout": removedKey,
	"global-rate-limit-memcached-pool-size":        removedKey,
	"global-rate-limit-status-code":                removedKey,
	"retry-non-idempotent":                         offByDefault("POST, LOCK and PATCH are retried on another endpoint only where proxy-next-upstream names non_idempotent"),
	// Directives nginx 1.19.7 made obsolete: it warns and ignores them.
	"http2-max-field-size":  obsoleteIn("http2_max_field_size", "large-client-header-buffers"),
	"http2-max-header-size": obsoleteIn("http2_max_header_size", "large-client-header-buffers"),
	"http2-max-requests":    obsoleteIn("http2_max_requests", "keep-alive-requests"),
	// The key of the limit-rps, limit-rpm and limit-connections zones:
	// another than the client address counts other groups of requests.
	"limit-conn-zone-variable": func(v string) (Reason, Severity, string) {
		if v == "$binary_remote_addr" || v == "$remote_addr" {
			return ConfigMapKeyIgnored, Cosmetic, "the client address, ingress-nginx's default and what ramjet's rate limits count by; ignored"
		}
		return ConfigMapKeyUnsupported, TrafficMoves, "not implemented: limit-rps, limit-rpm and limit-connections count each client address, not each " + strconv.Quote(v)
	},
	"http-snippet": func(v string) (Reason, Severity, string) {
		if v == "" {
			return ConfigMapKeyIgnored, Cosmetic, "empty; ignored"
		}
		if serverBlock.MatchString(v) {
			return ConfigMapKeyUnsupported, TrafficMoves, "not implemented: the server blocks it declares are not served (nginx configuration ramjet cannot run)"
		}
		return ConfigMapKeyUnsupported, FeatureMissing, "not implemented: nginx configuration ramjet cannot run (maps, zones, headers it declares are lost)"
	},
	// nginx.tmpl's "access_log off": the access log is the embedder's
	// (the example controller reads both keys), not nginx tuning.
	"disable-access-log":      embedderAccessLog,
	"disable-http-access-log": embedderAccessLog,
	"access-log-params":       accessLogParams,
	// The allow lines of nginx.tmpl's /nginx_status location: a page the
	// embedder serves (the example controller reads both keys).
	"nginx-status-ipv4-whitelist": embedderStatusPage,
	"nginx-status-ipv6-whitelist": embedderStatusPage,
	// nginx.tmpl's ssl_dhparam: DH parameters let OpenSSL serve the DHE
	// suites of ssl-ciphers; Go's TLS has no DHE key exchange, so only a
	// client that offers no ECDHE suite (none current does) is refused.
	"ssl-dh-param": func(v string) (Reason, Severity, string) {
		if v == "" {
			return ConfigMapKeyIgnored, Cosmetic, "empty, ingress-nginx's default: no DH parameters, no DHE suites, as ramjet; ignored"
		}
		return ConfigMapKeyUnsupported, FeatureMissing, "not implemented: Go's TLS serves no DHE cipher suites, so a client offering only DHE suites is refused; ECDHE clients are served as before"
	},
	// Fields of ingress-nginx's defaults.Backend that no annotation
	// parser defaults to: rewrite reads app-root, upstreamhashby its
	// subset keys, from the Ingress alone.
	"app-root":                     annotationOnly,
	"upstream-hash-by-subset":      annotationOnly,
	"upstream-hash-by-subset-size": annotationOnly,
	"stream-snippet": func(v string) (Reason, Severity, string) {
		if v == "" {
			return ConfigMapKeyIgnored, Cosmetic, "empty; ignored"
		}
		return ConfigMapKeyUnsupported, TrafficMoves, "not implemented: the TCP/UDP servers it declares are not served"
	},
}

// annotationOnly rates a key ingress-nginx v1.15 reads only as the
// annotation of the same name.
func annotationOnly(string) (Reason, Severity, string) {
	return ConfigMapKeyIgnored, Cosmetic, "ingress-nginx reads it only as the annotation of the same name and not from its ConfigMap; set the annotation on the Ingresses instead; ignored"
}

// configMapByKeys are unimplemented keys whose effect under ingress-nginx
// other keys of data decide.
var configMapByKeys = map[string]func(v string, data map[string]string) (Reason, Severity, string){
	// nginx.tmpl sets it (more_set_input_headers) on every request, which
	// the backend receives, only with both keys on.
	"forwarded-for-proxy-protocol-header": func(v string, data map[string]string) (Reason, Severity, string) {
		pp, _ := configmap.ParseBool(strings.TrimSpace(data["use-proxy-protocol"]))
		fwd, _ := configmap.ParseBool(strings.TrimSpace(data["use-forwarded-headers"]))
		if !pp || !fwd {
			return ConfigMapKeyIgnored, Cosmetic, "ingress-nginx uses it only with use-proxy-protocol and use-forwarded-headers both \"true\"; ignored"
		}
		return ConfigMapKeyUnsupported, FeatureMissing, "not implemented: the client address is found as ingress-nginx finds it, but backends get no " + strconv.Quote(v) + " header (ingress-nginx's intermediate header, which it also sends on)"
	},
}

// embedderAccessLog rates disable-access-log and disable-http-access-log
// for an embedder that does not read them itself
// (ConfigMapOptions.ExtensionKeys): ramjet's packages write no access log.
func embedderAccessLog(string) (Reason, Severity, string) {
	return ConfigMapKeyIgnored, Cosmetic, "ramjet writes no access log of its own; turning off the embedder's access log is the embedder's to do; ignored"
}

// accessLogParams rates access-log-params, the parameters nginx.tmpl
// writes into its access_log lines before its own if=$loggable: buffer=
// and flush= say when nginx writes the lines, and a second if= loses to
// the template's, so none changes a line; gzip writes the log compressed.
func accessLogParams(v string) (Reason, Severity, string) {
	for p := range strings.FieldsFuncSeq(v, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' }) {
		if p == "gzip" || strings.HasPrefix(p, "gzip=") {
			return ConfigMapKeyUnsupported, FeatureMissing, "not implemented: the access log is written uncompressed, not gzip's"
		}
	}
	return ConfigMapKeyIgnored, Cosmetic, "buffer= and flush= say when nginx writes its lines and an if= loses to ingress-nginx's own if=$loggable: no line changes; ignored"
}

// embedderStatusPage rates nginx-status-ipv4-whitelist and
// nginx-status-ipv6-whitelist for an embedder that does not read them
// itself (ConfigMapOptions.ExtensionKeys).
func embedderStatusPage(string) (Reason, Severity, string) {
	return ConfigMapKeyIgnored, Cosmetic, "ramjet serves no /nginx_status page of its own; who may read the embedder's is the embedder's to decide; ignored"
}

// serverBlock finds an nginx server block in a snippet.
var serverBlock = regexp.MustCompile(`(^|[\s;{}])server\s*\{`)

// removedKey rates a key ingress-nginx v1.15 no longer reads.
func removedKey(string) (Reason, Severity, string) {
	return ConfigMapKeyIgnored, Cosmetic, "ingress-nginx removed global rate limiting in v1.12 and v1.15 does not read this key; ramjet has none either (limit-rps, limit-rpm and limit-connections count per replica); ignored"
}

// offByDefault rates a boolean key whose default (false) is what ramjet does.
func offByDefault(lost string) func(v string) (Reason, Severity, string) {
	return func(v string) (Reason, Severity, string) {
		if on, err := configmap.ParseBool(v); err == nil && !on {
			return ConfigMapKeyIgnored, Cosmetic, "false, ingress-nginx's default and what ramjet does; ignored"
		}
		return ConfigMapKeyUnsupported, FeatureMissing, "not implemented: " + lost
	}
}

// obsoleteIn rates a key whose directive nginx has made obsolete: its
// nginx ignores it, and by says what bounds HTTP/2 in its place.
func obsoleteIn(directive, by string) func(v string) (Reason, Severity, string) {
	return func(string) (Reason, Severity, string) {
		return ConfigMapKeyIgnored, Cosmetic, "nginx's " + directive + " is obsolete and ignored (nginx 1.19.7 on); " + by + " bounds HTTP/2 in its place; ignored"
	}
}

// configMapTuning are keys that tune nginx itself (workers, buffers,
// caches, logs, hash tables) and change no answer: ramjet has no such
// knob, and their warning is cosmetic.
var configMapTuning = setOf(
	"worker-processes", "max-worker-connections", "max-worker-open-files", "worker-cpu-affinity",
	"worker-rlimit-nofile", "reuse-port",
	"server-name-hash-bucket-size", "server-name-hash-max-size",
	"map-hash-bucket-size", "proxy-headers-hash-bucket-size", "proxy-headers-hash-max-size",
	"variables-hash-bucket-size", "variables-hash-max-size",
	"ssl-buffer-size", "error-log-level", "error-log-path",
	"access-log-path", "http-access-log-path",
	"lua-shared-dicts", "plugins",
	"enable-multi-accept", "use-geoip", "main-snippet",
	"bind-address", "enable-ipv6", "disable-ipv6-dns", "resolver", "log-format-stream",
	"debug-connections",
	"syslog-host", "syslog-port", "enable-syslog", "gzip-disable",
	"proxy-protocol-header-timeout",
	"stream-access-log-path", "disable-stream-access-log",
	// Reloads one worker set at a time, aio writes to temporary files, the
	// gRPC response buffer (grpc_buffer_size: the response is passed on
	// as it arrives) and the GeoIP2 databases' reload interval.
	"enable-serial-reloads", "enable-aio-write", "grpc-buffer-size-kb", "geoip2-autoreload-in-minutes",
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
	c := &ConfigMap{src: newConfigMapSource(cm, o)}
	if cm == nil {
		c.Router, _ = configmap.Parse("", "", nil)
		return c
	}
	c.Ref = Ref{Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name}
	data := cm.Data
	for _, key := range slices.Sorted(maps.Keys(data)) {
		if _, router := configmap.Keys[key]; router {
			continue // the router's parser reads it, below
		}
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
				// nginx refuses the configuration over a bad "deny" line,
				// so the good entries stay blocked.
				c.warn(ConfigMapKeyRejected, key, fmt.Sprintf("value %q: %v; nginx would refuse the configuration: left out, the other entries are denied", v, err))
			}
			if len(ranges) == 0 {
				continue
			}
			c.blockCIDRs = ranges
		case !ok && configMapByKeys[key] != nil:
			reason, sev, msg := configMapByKeys[key](v, data)
			c.warnings = append(c.warnings, Warning{Reason: reason, Object: c.Ref, Field: configMapField(key), Message: msg, Rated: sev})
			continue
		case !ok && configMapByValue[key] != nil:
			reason, sev, msg := configMapByValue[key](v)
			c.warnings = append(c.warnings, Warning{Reason: reason, Object: c.Ref, Field: configMapField(key), Message: msg, Rated: sev})
			continue
		case !ok && configMapTuning[key]:
			c.warn(ConfigMapKeyIgnored, key, "tunes nginx itself, no answer changes; ignored")
			continue
		case !ok:
			c.warn(ConfigMapKeyUnsupported, key, "not implemented; ignored (it may change answers)")
			continue
		case key == "whitelist-source-range" || key == "denylist-source-range":
			if !c.sourceRangeDefault(key, v) {
				continue
			}
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
			if bv := (&annotationValues{}); key == "load-balance" && applyLoadBalance(bv, key, v) == nil && bv.balancingR().nginxOnly != "" &&
				applyUpstreamHashBy(bv, "upstream-hash-by", strings.TrimSpace(data["upstream-hash-by"])) != nil { // a valid key decides instead
				_, _, why := nginxBalancer(bv.balancingR(), defaultHashSubset)
				c.warn(ConfigMapKeyUnsupported, key, why+" (where an Ingress sets none)")
				c.warnings[len(c.warnings)-1].Rated = Cosmetic
			}
		case k.Option != nil:
			var scratch Options
			if err := k.Option(&scratch, v); err != nil {
				if _, partial := err.(partialValue); !partial {
					c.reject(key, v, err)
					continue
				}
				c.warn(ConfigMapKeyRejected, key, fmt.Sprintf("value %q: %v", v, err))
			}
			c.options = append(c.options, func(o *Options) { _ = k.Option(o, v) })
		}
		c.Keys = append(c.Keys, key)
	}
	var warns []configmap.Warning
	c.Router, warns = configmap.Parse(cm.Namespace, cm.Name, data, keep...)
	c.Keys = slices.Sorted(slices.Values(append(c.Keys, c.Router.Keys...)))
	if slices.Contains(c.Router.Keys, "log-format-upstream") {
		// The variables are the example controller's access log's, which
		// compile lists (LogVariables).
		for _, name := range UnknownLogVariables(c.Router.LogFormat) {
			warns = append(warns, configmap.Warning{Key: "log-format-upstream", Reason: configmap.Unsupported, Message: (&vars.Error{Place: &LogFormat, Name: name}).Error() + "; it is logged as \"-\""})
		}
	}
	c.addRouterWarnings(warns)
	return c
}

// addRouterWarnings adds the router's parser's warnings to c's, which stay
// in key order (a key's warnings all come from one parser).
func (c *ConfigMap) addRouterWarnings(warns []configmap.Warning) {
	for _, w := range warns {
		c.warn(Reason(w.Reason), w.Key, w.Message)
		if w.Key == "ssl-session-ticket-key" {
			// A rejected key leaves each router keys of its own: a
			// ticket resumes only where it was issued, and every answer
			// is the same.
			c.warnings[len(c.warnings)-1].Rated = Cosmetic
		}
	}
	slices.SortStableFunc(c.warnings, func(a, b Warning) int { return strings.Compare(a.Field, b.Field) })
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

// partialValue is an option key's error for a value of which only some
// is applied, as ingress-nginx applies it.
type partialValue struct{ error }

func (c *ConfigMap) reject(key, value string, err error) {
	c.warn(ConfigMapKeyRejected, key, fmt.Sprintf("value %q: %v; ingress-nginx's default is kept", value, err))
}

// globalAuthKey is a global-auth-* key: a field of Options.GlobalAuth,
// checked whole by Options.Validate. A value that would not parse is an
// error, so the key is rejected (warned, its default kept) rather than
// making the compile drop the global authentication as a whole: each key
// is checked beside a URL, sign-in page and cache key that parse, which
// the keys read together with.
func globalAuthKey(set func(g *GlobalAuth, v string)) ConfigMapKey {
	return ConfigMapKey{Option: func(o *Options, v string) error {
		check := GlobalAuth{URL: "http://auth.invalid/", Signin: "http://signin.invalid/", CacheKey: "$remote_user"}
		set(&check, v)
		if _, err := check.external(); err != nil {
			return err
		}
		o.GlobalAuth = globalAuthOf(o)
		set(o.GlobalAuth, v)
		return nil
	}}
}

// globalAuthResponseHeaders keeps the names that are header names and
// warns of the others, as ingress-nginx skips only those
// (template/configmap.go ReadConfig, authreq.ValidHeader).
func globalAuthResponseHeaders(o *Options, v string) error {
	var good, bad []string
	for name := range strings.SplitSeq(v, ",") {
		switch name = strings.TrimSpace(name); {
		case name == "":
		case authHeaderRE.MatchString(name):
			good = append(good, name)
		default:
			bad = append(bad, strconv.Quote(name))
		}
	}
	o.GlobalAuth = globalAuthOf(o)
	o.GlobalAuth.ResponseHeaders = strings.Join(good, ",")
	if len(bad) > 0 {
		return partialValue{fmt.Errorf("%s: not a header name, dropped as ingress-nginx drops it; the other names apply", strings.Join(bad, ", "))}
	}
	return nil
}

// globalAuthCacheDuration reads global-auth-cache-duration as
// ingress-nginx's ReadConfig does (authreq.ParseStringToCacheDurations):
// a value without a duration in it is DefaultAuthCacheDuration, and so,
// with a warning, is one that does not parse.
func globalAuthCacheDuration(o *Options, v string) error {
	o.GlobalAuth = globalAuthOf(o)
	o.GlobalAuth.CacheDuration = DefaultAuthCacheDuration
	if strings.Trim(v, ", \t") == "" {
		return nil
	}
	if _, err := parseCacheDurations(v); err != nil {
		return partialValue{fmt.Errorf("%v; %q applies, as in ingress-nginx", err, DefaultAuthCacheDuration)}
	}
	o.GlobalAuth.CacheDuration = v
	return nil
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

// allowedResponseHeaders are the names global-allowed-response-headers
// lists, the response headers custom-headers may set: ingress-nginx
// drops a name its header pattern refuses (template/configmap.go).
func (c *ConfigMap) allowedResponseHeaders() []string {
	if c == nil || c.src == nil {
		return nil
	}
	var out []string
	for h := range strings.SplitSeq(c.src.data["global-allowed-response-headers"], ",") {
		if h = strings.TrimSpace(h); authHeaderRE.MatchString(h) {
			out = append(out, h)
		}
	}
	return out
}

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
	case "force-ssl-redirect", "preserve-trailing-slash", "use-port-in-redirects", "service-upstream":
		if _, err := configmap.ParseBool(v); err != nil {
			return err
		}
		return nil
	}
	var scratch annotationValues
	name := NginxPrefix + key
	if unvalidatedDefaults[key] {
		name = configMapKeyName + key
	}
	if err := knownAnnotations[key].apply(&scratch, name, v); err != nil {
		_, why, _ := strings.Cut(err.Error(), ": ")
		return fmt.Errorf("%s", cutSemicolon(why, err.Error()))
	}
	if key == "load-balance" && scratch.balancingR().loadBalance.String() == "hash" {
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
	case "force-ssl-redirect", "preserve-trailing-slash", "use-port-in-redirects", "service-upstream":
		on, _ := configmap.ParseBool(v)
		return strconv.FormatBool(on)
	}
	return v
}

// parseBlockCIDRs reads block-cidrs: comma-separated addresses and ranges,
// spaces trimmed, empty entries skipped. The entries that parse are
// returned beside an error naming those that do not.
func parseBlockCIDRs(v string) ([]netip.Prefix, error) {
	var good, bad []string
	for e := range strings.SplitSeq(joinRanges(v), ",") {
		if _, err := ParseSourceRanges(e); err != nil {
			if e != "" {
				bad = append(bad, strconv.Quote(e))
			}
			continue
		}
		good = append(good, e)
	}
	var err error
	if len(bad) > 0 {
		err = fmt.Errorf("%s: not an address or range", strings.Join(bad, ", "))
	}
	if len(good) == 0 {
		return nil, err
	}
	ranges, _ := ParseSourceRanges(strings.Join(good, ","))
	return ranges, err
}

// joinRanges is a comma-separated list without its spaces and empty
// entries, as ingress-nginx splits its ConfigMap's lists
// (splitAndTrimSpace).
func joinRanges(v string) string {
	var parts []string
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ",")
}

// sourceRangeDefault records whitelist-source-range or
// denylist-source-range as the default of the annotation of the same name,
// and reports whether it did. ingress-nginx writes each entry as an allow
// or deny line of every location without the annotation (nginx.tmpl,
// ipallowlist's default); an entry nginx cannot read makes it refuse the
// whole configuration, so the list is kept broken, denying those
// locations, rather than dropped, which would open them.
func (c *ConfigMap) sourceRangeDefault(key, v string) bool {
	if v = joinRanges(v); v == "" {
		c.warn(ConfigMapKeyIgnored, key, "no address or range: no location is restricted by it; ignored")
		c.warnings[len(c.warnings)-1].Rated = Cosmetic
		return false
	}
	if _, err := ParseSourceRanges(v); err != nil {
		c.warn(ConfigMapKeyRejected, key, fmt.Sprintf("value %q: %v; nginx would refuse the configuration, so every location that takes this default is denied, 503 to every request, until it is fixed", v, err))
	}
	if c.locations == nil {
		c.locations = make(map[string]string)
	}
	c.locations[key] = v
	return true
}

// LogFormat is where log-format-upstream reads its variables: those the
// example controller's access log fills. One it cannot fill is logged as
// "-", as nginx logs a value it has not.
var LogFormat = vars.Place{Name: "the access log", Syntax: vars.Log, Lenient: true, Vars: vars.Of(
	vars.Args, vars.BodyBytesSent, vars.BytesSent, vars.Host, vars.IngressName, vars.LocationPath, vars.Msec, vars.Namespace,
	vars.ProxyAlternativeUpstreamName, vars.ProxyUpstreamName, vars.QueryString, vars.RemoteAddr,
	vars.RemoteUser, vars.ReqID, vars.RequestID, vars.Request, vars.RequestLength, vars.RequestMethod, vars.RequestTime,
	vars.RequestURI, vars.Scheme, vars.ServerName, vars.ServerProtocol, vars.ServiceName, vars.ServicePort,
	vars.Status, vars.TimeISO8601, vars.TimeLocal, vars.UpstreamAddr, vars.UpstreamConnectTime, vars.UpstreamHeaderTime,
	vars.UpstreamResponseLength, vars.UpstreamResponseTime, vars.UpstreamStatus, vars.URI,
	vars.HTTP, vars.Cookie)}

// UnknownLogVariables are the variables format names ($name or ${name})
// that LogFormat does not fill, each once, in order.
func UnknownLogVariables(format string) []string {
	t, _ := LogFormat.Parse(format)
	return t.Unknown()
}

// ReadHeaders fills Router.AddHeaders and Router.ProxySetHeaders from the
// ConfigMaps add-headers and proxy-set-headers name, found among cms (a
// Snapshot's ConfigMaps, say), with the router's parser
// (configmap.Settings.ReadHeaders), whose warnings join the ConfigMap's.
// Call it before the ConfigMap is compiled with, so its warnings join.
func (c *ConfigMap) ReadHeaders(cms []*corev1.ConfigMap) {
	if c == nil {
		return
	}
	c.addRouterWarnings(c.Router.ReadHeaders(func(ref string) (map[string]string, bool) {
		ns, name, _ := strings.Cut(ref, "/")
		found := findConfigMap(cms, ns, name)
		if found == nil {
			return nil, false
		}
		return found.Data, true
	}))
}

// findConfigMap is the ConfigMap ns/name among cms, nil entries skipped;
// of two copies (a snapshot merged from two reads) the one keepOne keeps,
// so the choice does not depend on their order. Nil when there is none.
func findConfigMap(cms []*corev1.ConfigMap, ns, name string) *corev1.ConfigMap {
	var found *corev1.ConfigMap
	for _, cm := range cms {
		if cm != nil && cm.Namespace == ns && cm.Name == name && (found == nil || precedes(cm, found)) {
			found = cm
		}
	}
	return found
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
	if d.ann.rewrite != nil {
		r := *d.ann.rewrite
		ing.ann.rewrite = &r
	}
	if d.ann.balancing != nil {
		bv := *d.ann.balancing
		ing.ann.balancing = &bv
	}
	if d.ann.redirect != nil {
		// service-upstream's default; resolving writes into it.
		r := *d.ann.redirect
		ing.ann.redirect = &r
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
	switch v := d.ann.balancingR(); {
	case v.hashByKey != "":
		v.algorithm, v.hashKey, v.algorithmKey = balance.Hash, v.hashBy, v.hashByKey
	case v.nginxOnly != "":
		var subset int
		v.hashKey, subset, _ = nginxBalancer(v, d.ann.subsetSizeOr(defaultHashSubset))
		v.algorithm, v.algorithmKey = nginxAlgorithm(v.hashKey), v.loadBalanceKey
		if subset > 0 {
			d.ann.subsetW().size = subset
		}
	case v.loadBalanceKey != "":
		v.algorithm, v.algorithmKey = v.loadBalance, v.loadBalanceKey
	}
	b.defaults = d
}

// fallbackDefaults is the pseudo-Ingress whose settings serve the hosts no
// Ingress supplies settings for (the catch-all without a default backend
// Ingress): the location defaults and block-cidrs; nil without them. The
// source ranges are not among them: ingress-nginx's default server
// location is built without annotations (controller.go createServers),
// which is where whitelist- and denylist-source-range reach a location,
// so only the http level's block-cidrs deny applies there.
func (b *builder) fallbackDefaults() *ingress {
	if b.defaults == nil {
		return nil
	}
	if b.fallback == nil {
		f := &ingress{key: b.defaults.key}
		b.readLocationDefaults(f)
		if pv := f.ann.request; pv != nil {
			pv.whitelist, pv.allowlist, pv.denylist = sourceRange{}, sourceRange{}, sourceRange{}
		}
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
