// Package configmap reads the router's keys of an ingress-nginx ConfigMap
// (SPEC §1): those router.Options take (router.Options.ApplyConfigMap) and
// those the listeners and access log in front of the router take. It is
// the router's, below it so that compile, which cannot import router, reads
// the same keys with the same parser: compile.ParseConfigMap calls Parse,
// joins its warnings to the compile's and hands the Settings on
// (compile.ConfigMap.Router).
//
// Values are read as ingress-nginx v1.15 reads them (mapstructure's weak
// typing: booleans as strconv.ParseBool reads them, "" false, numbers as
// strconv.ParseInt with base 0), its default kept when a value does not
// parse.
package configmap

import (
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"ramjet.dev/ramjet/match"
)

// Reasons of a Warning: compile's of the same names.
const (
	// Rejected: the value does not parse; the default stays.
	Rejected = "ConfigMapKeyRejected"
	// Unsupported: ramjet does not do what the key (or its absence) asks.
	Unsupported = "ConfigMapKeyUnsupported"
	// Ignored: the key changes nothing here (a flag won).
	Ignored = "ConfigMapKeyIgnored"
)

// Warning is one problem with a key of the ConfigMap.
type Warning struct {
	// ConfigMap is "namespace/name" of the ConfigMap read.
	ConfigMap string
	Key       string
	// Reason is Rejected, Unsupported or Ignored.
	Reason  string
	Message string
}

// Settings are what the router's keys of one ConfigMap say. Each field is
// the router.Options field of the same name unless it says otherwise, and
// holds ingress-nginx's default when its key is absent; ApplyConfigMap
// sets only the fields of the keys in Keys.
type Settings struct {
	// Namespace and Name are the ConfigMap's: a bare name in add-headers
	// and proxy-set-headers is in its namespace.
	Namespace, Name string
	// Keys are the keys read and applied, sorted; a key whose value did
	// not parse, or that Parse's keep named, is not among them.
	Keys []string
	// HSTS and DisableHSTS: hsts, hsts-max-age, hsts-include-subdomains,
	// hsts-preload.
	HSTS        string
	DisableHSTS bool
	// TrustForwardedProto: use-forwarded-headers.
	TrustForwardedProto bool
	// TrustForwardedFor: use-forwarded-headers or enable-real-ip (nginx's
	// realip module reads forwarded-for-header from proxy-real-ip-cidr peers).
	TrustForwardedFor bool
	// EnableRealIP: enable-real-ip, which alone lets ingress-nginx's
	// stream services take the client address from a PROXY header.
	EnableRealIP bool
	// ComputeFullForwardedFor: compute-full-forwarded-for, which acts only
	// with use-forwarded-headers (a flag or the key).
	ComputeFullForwardedFor bool
	// ForwardedForHeader: forwarded-for-header ("X-Forwarded-For").
	ForwardedForHeader string
	// ForwardedHostHeader: forwarded-host-header ("X-Forwarded-Host").
	ForwardedHostHeader string
	// ProxyRealIPCIDR: proxy-real-ip-cidr. Nil when the key is absent:
	// ingress-nginx then trusts 0.0.0.0/0, ramjet no peer (a warning says so).
	ProxyRealIPCIDR []netip.Prefix
	// LimitReqStatusCode and LimitConnStatusCode: limit-req-status-code
	// and limit-conn-status-code (503).
	LimitReqStatusCode, LimitConnStatusCode int
	// HTTPRedirectCode: http-redirect-code (308), the status of the HTTPS
	// redirect and of a from-to-www-redirect twin's.
	HTTPRedirectCode int
	// NoTLSRedirectLocations: no-tls-redirect-locations, the paths the
	// HTTPS redirect leaves alone (router.DefaultNoTLSRedirectLocations);
	// empty, not nil, for a list with none.
	NoTLSRedirectLocations []string
	// AddHeadersFrom and ProxySetHeadersFrom are add-headers and
	// proxy-set-headers: "namespace/name" (or "name") of the ConfigMap
	// whose data are AddHeaders and ProxySetHeaders, which ReadHeaders
	// fills (canonical names; nil without).
	AddHeadersFrom, ProxySetHeadersFrom string
	AddHeaders, ProxySetHeaders         http.Header
	// Gzip: use-gzip with gzip-level (1), gzip-min-length (256) and
	// gzip-types; nil when use-gzip is not "true".
	Gzip *Compression
	// Brotli: enable-brotli with brotli-level (4), brotli-min-length (20)
	// and brotli-types; nil when enable-brotli is not "true".
	Brotli *Compression
	// ServerTokens: server-tokens ("ramjet" for "true", "" for "false").
	ServerTokens string
	// BackendServerHeader: allow-backend-server-header.
	BackendServerHeader bool
	// BlockUserAgents and BlockReferers: block-user-agents and
	// block-referers (blocklists.go); nil without.
	BlockUserAgents, BlockReferers *match.BlockList

	// UseProxyProtocol is use-proxy-protocol, for the listeners (not a
	// router option; read when they are made).
	UseProxyProtocol bool
	// DisableIPv6 is disable-ipv6, for the listeners (not a router
	// option; read when they are made): ingress-nginx's template then
	// writes no "listen [::]:port" line, so a listener for every address
	// takes IPv4 clients only.
	DisableIPv6 bool
	// LogFormat and LogFormatEscapeJSON are log-format-upstream and
	// log-format-escape-json, for the embedder's access log (not router
	// options; LogFormat "" is ingress-nginx's default format).
	LogFormat           string
	LogFormatEscapeJSON bool
	// LogFormatEscapeNone is log-format-escape-none: no escaping, over
	// LogFormatEscapeJSON. AccessLogDefaultBackend is
	// enable-access-log-for-default-backend: log the default server's own
	// location (hosts no rule names), off as in ingress-nginx.
	// SkipAccessLogURLs is skip-access-log-urls: the request URIs not
	// logged. For the embedder's access log too.
	LogFormatEscapeNone     bool
	AccessLogDefaultBackend bool
	SkipAccessLogURLs       []string
	// AuthAccessLog is enable-auth-access-log: log each auth-url
	// subrequest too (router.Options.AuthObserver), off as in
	// ingress-nginx. For the embedder's access log.
	AuthAccessLog bool

	// TLS: the ssl-* keys and enable-ocsp (tls.go).
	TLS TLS
	// Headers: the request and response header keys (headers.go).
	Headers Headers
	// Connections: the client connection keys (connections.go).
	Connections Connections
	// UpstreamKeepalive: the backend connection pool's keys
	// (connections.go).
	UpstreamKeepalive UpstreamKeepalive
}

// Compression is use-gzip's or enable-brotli's settings (router.Gzip,
// router.Brotli).
type Compression struct {
	Level     int
	MinLength int64
	Types     []string
}

// DefaultGzipTypes are ingress-nginx's gzip-types.
var DefaultGzipTypes = strings.Fields("application/atom+xml application/javascript application/x-javascript application/json application/rss+xml application/vnd.ms-fontobject application/x-font-ttf application/x-web-app-manifest+json application/xhtml+xml application/xml font/opentype image/svg+xml image/x-icon text/css text/javascript text/plain text/x-component")

// DefaultBrotliTypes are ingress-nginx's brotli-types.
var DefaultBrotliTypes = strings.Fields("application/xml+rss application/atom+xml application/javascript application/x-javascript application/json application/rss+xml application/vnd.ms-fontobject application/x-font-ttf application/x-web-app-manifest+json application/xhtml+xml application/xml font/opentype image/svg+xml image/x-icon text/css text/javascript text/plain text/x-component")

// Key is one key Parse reads.
type Key struct {
	// Live: a running router follows a change of the key
	// (router.Router.SetConfigMapOptions, the access log's format); the
	// others are read when the listeners are made, and a change waits for
	// a restart.
	Live bool
	read func(p *parse, v string) error
	// secret: the value is a key, never shown in a warning.
	secret bool
}

// parse is Parse's state: the settings, and what the keys that combine
// (hsts*, gzip*, brotli*) said, combined once all are read.
type parse struct {
	s                          *Settings
	hsts                       hstsSettings
	realIP, useGzip, useBrotli bool
	gzip, brotli               Compression
	// secLevel0: ssl-ciphers sets OpenSSL's security level 0, under
	// which ssl-protocols' TLSv1 and TLSv1.1 are served.
	secLevel0 bool
	// key is the key being read; notes its warnings (Unsupported) about
	// what is served in place of what it asks.
	key   string
	notes []Warning
}

// note records that the key being read is served otherwise than asked.
func (p *parse) note(message string) {
	p.notes = append(p.notes, Warning{ConfigMap: p.s.Namespace + "/" + p.s.Name, Key: p.key, Reason: Unsupported, Message: message})
}

// ignore records that part of the key being read changes nothing, under
// ingress-nginx either.
func (p *parse) ignore(message string) {
	p.notes = append(p.notes, Warning{ConfigMap: p.s.Namespace + "/" + p.s.Name, Key: p.key, Reason: Ignored, Message: message})
}

func (p *parse) addNotes(messages []string) {
	for _, m := range messages {
		p.note(m)
	}
}

// Keys are the keys Parse reads.
var Keys = map[string]Key{
	"hsts":                    {Live: true, read: func(p *parse, v string) (err error) { p.hsts.on, err = ParseBool(v); return err }},
	"hsts-max-age":            {Live: true, read: hstsMaxAge},
	"hsts-include-subdomains": {Live: true, read: func(p *parse, v string) (err error) { p.hsts.includeSubDomains, err = ParseBool(v); return err }},
	"hsts-preload":            {Live: true, read: func(p *parse, v string) (err error) { p.hsts.preload, err = ParseBool(v); return err }},
	"use-forwarded-headers": {Live: true, read: func(p *parse, v string) (err error) {
		p.s.TrustForwardedProto, err = ParseBool(v)
		return err
	}},
	"enable-real-ip": {Live: true, read: func(p *parse, v string) (err error) { p.realIP, err = ParseBool(v); return err }},
	"compute-full-forwarded-for": {Live: true, read: func(p *parse, v string) (err error) {
		p.s.ComputeFullForwardedFor, err = ParseBool(v)
		return err
	}},
	"forwarded-for-header": {Live: true, read: func(p *parse, v string) error {
		if !headerName(v) {
			return fmt.Errorf("want a header name")
		}
		p.s.ForwardedForHeader = v
		return nil
	}},
	"forwarded-host-header": {Live: true, read: func(p *parse, v string) error {
		if !headerName(v) {
			return fmt.Errorf("want a header name")
		}
		p.s.ForwardedHostHeader = v
		return nil
	}},
	"proxy-real-ip-cidr": {read: func(p *parse, v string) (err error) {
		// Split as ingress-nginx splits it (splitAndTrimSpace): an empty
		// entry makes no set_real_ip_from line, and none trusts no peer.
		var parts []string
		for e := range strings.SplitSeq(v, ",") {
			if e = strings.TrimSpace(e); e != "" {
				parts = append(parts, e)
			}
		}
		if len(parts) == 0 {
			p.s.ProxyRealIPCIDR = []netip.Prefix{}
			return nil
		}
		p.s.ProxyRealIPCIDR, err = ParseSourceRanges(strings.Join(parts, ","))
		return err
	}},
	"use-proxy-protocol": {read: func(p *parse, v string) (err error) {
		p.s.UseProxyProtocol, err = ParseBool(v)
		return err
	}},
	"disable-ipv6": {read: func(p *parse, v string) (err error) {
		p.s.DisableIPv6, err = ParseBool(v)
		return err
	}},
	"limit-req-status-code":  {Live: true, read: statusKey(func(s *Settings) *int { return &s.LimitReqStatusCode })},
	"limit-conn-status-code": {Live: true, read: statusKey(func(s *Settings) *int { return &s.LimitConnStatusCode })},
	"http-redirect-code":     {Live: true, read: httpRedirectCode},
	"no-tls-redirect-locations": {Live: true, read: func(p *parse, v string) error {
		// Split as template.go's isLocationInLocationList splits it:
		// on commas, each trimmed, empty ones skipped.
		p.s.NoTLSRedirectLocations = []string{}
		for item := range strings.SplitSeq(v, ",") {
			if item = strings.TrimSpace(item); item != "" {
				if !strings.HasPrefix(item, "/") {
					// No Ingress path starts without "/": ingress-nginx
					// never matches it.
					p.ignore(fmt.Sprintf("%q is not a path (no location starts with it under ingress-nginx either); left out, the other paths apply", item))
					continue
				}
				p.s.NoTLSRedirectLocations = append(p.s.NoTLSRedirectLocations, item)
			}
		}
		return nil
	}},
	"add-headers":       {Live: true, read: headersKey(func(s *Settings) *string { return &s.AddHeadersFrom })},
	"proxy-set-headers": {Live: true, read: headersKey(func(s *Settings) *string { return &s.ProxySetHeadersFrom })},
	"use-gzip":          {Live: true, read: func(p *parse, v string) (err error) { p.useGzip, err = ParseBool(v); return err }},
	"gzip-level":        {Live: true, read: levelKey(func(p *parse) *int { return &p.gzip.Level }, 1, 9)},
	"gzip-min-length":   {Live: true, read: lengthKey(func(p *parse) *int64 { return &p.gzip.MinLength })},
	"gzip-types":        {Live: true, read: typesKey(func(p *parse) *[]string { return &p.gzip.Types })},
	"enable-brotli":     {Live: true, read: func(p *parse, v string) (err error) { p.useBrotli, err = ParseBool(v); return err }},
	"brotli-level":      {Live: true, read: levelKey(func(p *parse) *int { return &p.brotli.Level }, 0, 11)},
	"brotli-min-length": {Live: true, read: lengthKey(func(p *parse) *int64 { return &p.brotli.MinLength })},
	"brotli-types":      {Live: true, read: typesKey(func(p *parse) *[]string { return &p.brotli.Types })},
	"log-format-upstream": {Live: true, read: func(p *parse, v string) error {
		if v == "" {
			return fmt.Errorf("want a log format")
		}
		p.s.LogFormat = v
		return nil
	}},
	"log-format-escape-json": {Live: true, read: func(p *parse, v string) (err error) {
		p.s.LogFormatEscapeJSON, err = ParseBool(v)
		return err
	}},
	"log-format-escape-none": {Live: true, read: func(p *parse, v string) (err error) {
		p.s.LogFormatEscapeNone, err = ParseBool(v)
		return err
	}},
	"enable-access-log-for-default-backend": {Live: true, read: func(p *parse, v string) (err error) {
		p.s.AccessLogDefaultBackend, err = ParseBool(v)
		return err
	}},
	"enable-auth-access-log": {Live: true, read: func(p *parse, v string) (err error) {
		p.s.AuthAccessLog, err = ParseBool(v)
		return err
	}},
	"skip-access-log-urls": {Live: true, read: func(p *parse, v string) error {
		// ingress-nginx splits on commas and trims each (splitAndTrimSpace).
		p.s.SkipAccessLogURLs = nil
		for u := range strings.SplitSeq(v, ",") {
			if u = strings.TrimSpace(u); u != "" {
				p.s.SkipAccessLogURLs = append(p.s.SkipAccessLogURLs, u)
			}
		}
		return nil
	}},
	"allow-backend-server-header": {Live: true, read: func(p *parse, v string) error {
		var err error
		p.s.BackendServerHeader, err = ParseBool(v)
		return err
	}},
	"server-tokens": {Live: true, read: func(p *parse, v string) error {
		on, err := ParseBool(v)
		p.s.ServerTokens = ""
		if on {
			p.s.ServerTokens = "ramjet"
		}
		return err
	}},
}

// Parse reads the Keys of data, the ConfigMap namespace/name's, over
// ingress-nginx's defaults; the other keys are the caller's (compile's)
// and are not looked at. keep names keys whose setting the caller has
// already decided (a command-line flag for the same setting, which wins):
// each is left out with a warning. The warnings are in key order.
func Parse(namespace, name string, data map[string]string, keep ...string) (Settings, []Warning) {
	s := Settings{ForwardedForHeader: "X-Forwarded-For", ForwardedHostHeader: "X-Forwarded-Host", LimitReqStatusCode: 503, LimitConnStatusCode: 503,
		HTTPRedirectCode: 308, NoTLSRedirectLocations: []string{"/.well-known/acme-challenge"}, Namespace: namespace, Name: name}
	p := &parse{
		s:      &s,
		hsts:   hstsSettings{on: true, maxAge: 31536000, includeSubDomains: true},
		gzip:   Compression{Level: 1, MinLength: 256, Types: DefaultGzipTypes},
		brotli: Compression{Level: 4, MinLength: 20, Types: DefaultBrotliTypes},
	}
	s.TLS, s.Headers, s.Connections = DefaultTLS(), DefaultHeaders(), DefaultConnections()
	s.UpstreamKeepalive = DefaultUpstreamKeepalive()
	var warns []Warning
	warn := s.warner(&warns)
	hstsSet := false
	for _, key := range slices.Sorted(maps.Keys(data)) {
		k, ok := Keys[key]
		if !ok {
			continue
		}
		v := strings.TrimSpace(data[key])
		shown := strconv.Quote(v)
		if k.secret {
			shown = "(not shown)"
		}
		if slices.Contains(keep, key) {
			warn(Ignored, key, shown+": the command line's setting wins")
			continue
		}
		// A rejected value leaves every setting as it was.
		before, beforeSettings := *p, s
		p.key = key
		if err := k.read(p, v); err != nil {
			*p, s = before, beforeSettings
			if _, same := err.(defaultToo); same {
				warn(Ignored, key, fmt.Sprintf("value %s: %v", shown, err))
				continue
			}
			warn(Rejected, key, fmt.Sprintf("value %s: %v; ingress-nginx's default is kept", shown, err))
			continue
		}
		hstsSet = hstsSet || strings.HasPrefix(key, "hsts")
		s.Keys = append(s.Keys, key)
	}
	if hstsSet {
		s.DisableHSTS = !p.hsts.on
		if p.hsts.on {
			s.HSTS = HSTSHeader(p.hsts.maxAge, p.hsts.includeSubDomains, p.hsts.preload)
		}
	}
	if p.useGzip {
		s.Gzip = &Compression{Level: p.gzip.Level, MinLength: p.gzip.MinLength, Types: p.gzip.Types}
	}
	if p.useBrotli {
		s.Brotli = &Compression{Level: p.brotli.Level, MinLength: p.brotli.MinLength, Types: p.brotli.Types}
	}
	// nginx's realip module runs with either key; X-Forwarded-Proto and the
	// full X-Forwarded-For only with use-forwarded-headers.
	s.TrustForwardedFor = s.TrustForwardedProto || p.realIP
	s.EnableRealIP = p.realIP
	if _, ok := data["proxy-real-ip-cidr"]; !ok && s.TrustForwardedFor && !slices.Contains(keep, "proxy-real-ip-cidr") {
		// ingress-nginx's default is 0.0.0.0/0; ramjet trusts no peer
		// unless told, so a client cannot forge its address.
		warn(Unsupported, "proxy-real-ip-cidr", "absent: ingress-nginx's default 0.0.0.0/0 believes "+s.ForwardedForHeader+" from every peer, ramjet from none until the load balancers are listed")
	}
	warns = append(warns, p.notes...)
	slices.SortStableFunc(warns, func(a, b Warning) int { return strings.Compare(a.Key, b.Key) })
	return s, warns
}

// ReadHeaders fills AddHeaders and ProxySetHeaders from the ConfigMaps
// add-headers and proxy-set-headers name, whose data find returns by
// "namespace/name". A ConfigMap that is absent, or a header name or value
// nginx would refuse, warns naming it and is left out. The values keep
// their nginx variables, which the router expands per request
// (match.ParseHeaderValue); a value with one it cannot expand warns
// Unsupported and is left out rather than sent as written. The warnings
// are in key order.
func (s *Settings) ReadHeaders(find func(ref string) (data map[string]string, ok bool)) []Warning {
	var warns []Warning
	warn := s.warner(&warns)
	read := func(key, ref string) http.Header {
		if ref == "" {
			return nil
		}
		if !strings.Contains(ref, "/") {
			ref = s.Namespace + "/" + ref
		}
		data, ok := find(ref)
		if !ok {
			warn(Rejected, key, "the ConfigMap "+ref+" is not found: no headers are set")
			return nil
		}
		out := make(http.Header, len(data))
		for _, name := range slices.Sorted(maps.Keys(data)) {
			v := strings.TrimSpace(data[name])
			if !headerName(name) || !match.ValidHeaderValue(v) {
				warn(Rejected, key, fmt.Sprintf("ConfigMap %s: header %q: %q is not a header nginx sends; left out", ref, name, v))
				continue
			}
			if _, err := match.ParseHeaderValue(v); err != nil {
				warn(Unsupported, key, fmt.Sprintf("ConfigMap %s: header %q: %v; left out", ref, name, err))
				continue
			}
			out[http.CanonicalHeaderKey(name)] = []string{v}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
	s.AddHeaders = read("add-headers", s.AddHeadersFrom)
	s.ProxySetHeaders = read("proxy-set-headers", s.ProxySetHeadersFrom)
	return warns
}

// warner appends to warns a warning on s's ConfigMap.
func (s *Settings) warner(warns *[]Warning) func(reason, key, message string) {
	return func(reason, key, message string) {
		*warns = append(*warns, Warning{ConfigMap: s.Namespace + "/" + s.Name, Key: key, Reason: reason, Message: message})
	}
}

// HSTSHeader is the Strict-Transport-Security value ingress-nginx builds
// from its hsts-max-age, hsts-include-subdomains and hsts-preload
// settings (rootfs/etc/nginx/lua/lua_ingress.lua, _M.header).
func HSTSHeader(maxAge int64, includeSubDomains, preload bool) string {
	v := "max-age=" + strconv.FormatInt(maxAge, 10)
	if includeSubDomains {
		v += "; includeSubDomains"
	}
	if preload {
		v += "; preload"
	}
	return v
}

// hstsSettings are the hsts* keys, with ingress-nginx's defaults.
type hstsSettings struct {
	on                bool
	maxAge            int64
	includeSubDomains bool
	preload           bool
}

func hstsMaxAge(p *parse, v string) error {
	// ingress-nginx writes the string into the header as given; a value
	// that is not a number of seconds makes a header browsers ignore, so
	// it is refused here.
	n, err := strconv.ParseUint(v, 10, 63)
	if err != nil {
		return fmt.Errorf("want a number of seconds")
	}
	p.hsts.maxAge = int64(n)
	return nil
}

// statusKey reads an answer code as ingress-nginx's limit_req_status and
// limit_conn_status take it: 400 to 599.
func statusKey(field func(*Settings) *int) func(*parse, string) error {
	return func(p *parse, v string) error {
		n, err := strconv.ParseInt(v, 0, 32)
		if err != nil || n < 400 || n > 599 {
			return fmt.Errorf("want a status code from 400 to 599")
		}
		*field(p.s) = int(n)
		return nil
	}
}

// defaultToo is a value ingress-nginx also replaces with its default, so
// that nothing changes against it: the key warns Ignored, not Rejected.
type defaultToo struct{ error }

// httpRedirectCode reads http-redirect-code as template/configmap.go
// does: strconv.Atoi, and only 301, 302, 307 or 308; any other value
// keeps 308 there as here.
func httpRedirectCode(p *parse, v string) error {
	switch n, err := strconv.Atoi(v); {
	case err == nil && (n == 301 || n == 302 || n == 307 || n == 308):
		p.s.HTTPRedirectCode = n
		return nil
	}
	return defaultToo{fmt.Errorf("not a redirect code ingress-nginx takes (301, 302, 307, 308): it answers its default 308, as ramjet does; ignored")}
}

// headersKey reads add-headers or proxy-set-headers: "namespace/name" of
// a ConfigMap ("name" alone is in the ConfigMap's own namespace, resolved
// by ReadHeaders).
func headersKey(field func(*Settings) *string) func(*parse, string) error {
	return func(p *parse, v string) error {
		if strings.Count(v, "/") > 1 || v == "" || strings.HasPrefix(v, "/") || strings.HasSuffix(v, "/") {
			return fmt.Errorf("want namespace/name of a ConfigMap")
		}
		*field(p.s) = v
		return nil
	}
}

func levelKey(field func(*parse) *int, lo, hi int64) func(*parse, string) error {
	return func(p *parse, v string) error {
		n, err := strconv.ParseInt(v, 0, 32)
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("want a level from %d to %d", lo, hi)
		}
		*field(p) = int(n)
		return nil
	}
}

func lengthKey(field func(*parse) *int64) func(*parse, string) error {
	return func(p *parse, v string) error {
		n, err := strconv.ParseInt(v, 0, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("want a number of bytes")
		}
		*field(p) = n
		return nil
	}
}

func typesKey(field func(*parse) *[]string) func(*parse, string) error {
	return func(p *parse, v string) error {
		types := strings.Fields(v)
		if len(types) == 0 {
			return fmt.Errorf("want media types")
		}
		*field(p) = types
		return nil
	}
}

// ParseBool reads a boolean as ingress-nginx's ConfigMap decoder
// (mapstructure, weakly typed) does: strconv.ParseBool, and "" is false.
func ParseBool(v string) (bool, error) {
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("want true or false")
	}
	return b, nil
}

// headerName reports a header name nginx's default ignore_invalid_headers
// accepts: letters, digits, '-' and '_'.
func headerName(s string) bool {
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
