package compile

import (
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ramjet.dev/ramjet/router/configmap"
)

func mkConfigMap(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

// TestConfigMapRegistry: each implemented key lands in exactly one place,
// and a location key is an annotation ramjet implements.
func TestConfigMapRegistry(t *testing.T) {
	for key, k := range ConfigMapKeys {
		n := 0
		_, router := configmap.Keys[key]
		for _, set := range []bool{k.Location, k.Option != nil, router} {
			if set {
				n++
			}
		}
		assert.Equal(t, 1, n, key)
		if k.Location {
			spec, ok := knownAnnotations[key]
			assert.True(t, ok && spec.apply != nil, "%s: an implemented annotation", key)
		}
		assert.Empty(t, ConfigMapUnsupported[key], "%s is implemented", key)
		assert.False(t, configMapTuning[key], "%s is implemented", key)
	}
	for key := range configmap.Keys {
		assert.Empty(t, ConfigMapUnsupported[key], "%s is implemented", key)
		assert.False(t, configMapTuning[key], "%s is implemented", key)
	}
}

func TestParseConfigMapDefaults(t *testing.T) {
	c := ParseConfigMap(nil)
	want, _ := configmap.Parse("", "", nil)
	assert.Equal(t, want, c.Router)
	assert.Empty(t, c.Warnings())
	assert.Empty(t, c.Keys)
}

// TestParseConfigMapValues: ingress-nginx's value syntax, the flag that
// wins (keep), and one warning per key in key order.
func TestParseConfigMapValues(t *testing.T) {
	c := ParseConfigMap(mkConfigMap("ingress", "nginx", map[string]string{
		"proxy-connect-timeout": " 0x0a ", "hsts": "1", "hsts-preload": "TRUE", "ssl-redirect": "false",
		"enable-real-ip": "true", "proxy-real-ip-cidr": "10.0.0.0/8", "limit-conn-status-code": "429",
		"proxy-body-size": "8m", "worker-processes": "auto", "default-type": "text/html", "proxy-read-timeout": "60s",
		"block-cidrs": "192.0.2.1, ,198.51.100.0/24",
	}), "proxy-body-size")
	assert.Equal(t, []string{"block-cidrs", "enable-real-ip", "hsts", "hsts-preload", "limit-conn-status-code", "proxy-connect-timeout", "proxy-real-ip-cidr", "ssl-redirect"}, c.Keys)
	assert.Equal(t, "max-age=31536000; includeSubDomains; preload", c.Router.HSTS)
	assert.True(t, c.Router.TrustForwardedFor)
	assert.False(t, c.Router.TrustForwardedProto, "enable-real-ip trusts the address only")
	assert.Equal(t, 429, c.Router.LimitConnStatusCode)
	assert.Equal(t, "10", c.locations["proxy-connect-timeout"], "base 0, as mapstructure reads ints")
	assert.Equal(t, "[192.0.2.1/32 198.51.100.0/24]", fmtPrefixes(c))
	var got []string
	for _, w := range c.Warnings() {
		got = append(got, string(w.Reason)+" "+w.Field+" "+string(w.Severity()))
		assert.Equal(t, "ConfigMap ingress/nginx", w.Object.String())
	}
	assert.Equal(t, []string{
		"ConfigMapKeyUnsupported data[default-type] feature-missing",
		"ConfigMapKeyIgnored data[proxy-body-size] cosmetic",
		"ConfigMapKeyRejected data[proxy-read-timeout] traffic-moves",
		"ConfigMapKeyIgnored data[worker-processes] cosmetic",
	}, got)
}

func fmtPrefixes(c *ConfigMap) string {
	var s []string
	for _, p := range c.blockCIDRs {
		s = append(s, p.String())
	}
	return "[" + strings.Join(s, " ") + "]"
}

// TestCompileConfigMap: location defaults land in the table (text and
// digest), an annotation overrides them, and the warnings join the
// result's.
func TestCompileConfigMap(t *testing.T) {
	snap := mkSnapshot(
		mkClass("ramjet", DefaultControllerName),
		mkService("prod", "web", ":80:"),
		mkSlice("prod", "web", "web-1", "", 80, "10.0.0.1"),
		mkIngress("prod", "a", 1, withClassName("ramjet"), withRules(mkRule("a.example.com", prefix("/", "web", 80)))),
		mkIngress("prod", "b", 2, withClassName("ramjet"), withAnnotations(NginxPrefix+"proxy-read-timeout", "90"),
			withRules(mkRule("b.example.com", prefix("/", "web", 80)))),
	)
	plain := Compile(snap, Options{})
	cm := ParseConfigMap(mkConfigMap("ingress", "nginx", map[string]string{"proxy-read-timeout": "30", "force-ssl-redirect": "true", "bogus": "1"}))
	res := Compile(snap, Options{ConfigMap: cm})
	assert.NotEqual(t, plain.Table.Digest(), res.Table.Digest())
	text := res.Table.String()
	assert.Contains(t, text, "from Ingress prod/a spec.rules[0].http.paths[0] force-ssl-redirect policy read=30s")
	assert.Contains(t, text, "from Ingress prod/b spec.rules[0].http.paths[0] force-ssl-redirect policy read=1m30s")
	// The catch-all's location keeps its own rewrite settings (as in
	// ingress-nginx), so force-ssl-redirect does not reach it.
	assert.Contains(t, text, "host * catch-all\n  fallback none (404) policy read=30s")
	require.Len(t, res.Warnings, 1)
	assert.Equal(t, ConfigMapKeyUnsupported, res.Warnings[0].Reason)
	assert.Equal(t, "data[bogus]", res.Warnings[0].Field)
	again := Compile(snap, Options{ConfigMap: cm})
	assert.Equal(t, res.Table.Digest(), again.Table.Digest(), "a ConfigMap is read, never changed, by Compile")
}

func TestConfigMapReadHeaders(t *testing.T) {
	c := ParseConfigMap(mkConfigMap("ingress", "nginx", map[string]string{"add-headers": "custom", "proxy-set-headers": "other/up"}))
	c.ReadHeaders([]*corev1.ConfigMap{
		mkConfigMap("ingress", "custom", map[string]string{"x-frame-options": "DENY", "bad name": "x", "X-Bad": "a\nb"}),
		mkConfigMap("other", "up", map[string]string{"X-Tenant": " edge "}),
	})
	assert.Equal(t, http.Header{"X-Frame-Options": {"DENY"}}, c.Router.AddHeaders, "a bare name is in the ConfigMap's namespace")
	assert.Equal(t, http.Header{"X-Tenant": {"edge"}}, c.Router.ProxySetHeaders)
	require.Len(t, c.Warnings(), 2)
	for _, w := range c.Warnings() {
		assert.Equal(t, ConfigMapKeyRejected, w.Reason)
		assert.Equal(t, "data[add-headers]", w.Field)
	}
}

// TestConfigMapReadHeadersVariables: add-headers and proxy-set-headers
// values go into nginx's more_set_headers and proxy_set_header, which
// expand variables: those a snippet's values take are kept for the router
// to expand; any other (a capture too: no regular expression matched)
// warns, naming the header and the variable, and is left out rather than
// sent as written.
func TestConfigMapReadHeadersVariables(t *testing.T) {
	c := ParseConfigMap(mkConfigMap("ingress", "nginx", map[string]string{"add-headers": "custom", "proxy-set-headers": "up"}))
	c.ReadHeaders([]*corev1.ConfigMap{
		mkConfigMap("ingress", "custom", map[string]string{"X-Served-Host": "$host", "X-Path": "${uri}?$args", "X-Start": "t=${msec}"}),
		mkConfigMap("ingress", "up", map[string]string{"X-Client": "$remote_addr $http_user_agent", "X-Cap": "$1", "X-Dollar": "5$", "X-Open": "${uri"}),
	})
	assert.Equal(t, http.Header{"X-Served-Host": {"$host"}, "X-Path": {"${uri}?$args"}}, c.Router.AddHeaders)
	assert.Equal(t, http.Header{"X-Client": {"$remote_addr $http_user_agent"}}, c.Router.ProxySetHeaders)
	var got []string
	for _, w := range c.Warnings() {
		assert.Equal(t, ConfigMapKeyUnsupported, w.Reason)
		assert.Equal(t, c.Ref, w.Object)
		got = append(got, w.Field+" "+w.Message)
	}
	assert.Equal(t, []string{
		`data[add-headers] ConfigMap ingress/custom: header "X-Start": $msec is not a variable ramjet expands in a header value (it expands $host, $http_host, $server_name, $scheme, $request_uri, $uri, $document_uri, $args, $query_string, $remote_addr, $request_method, $http_<name>, $cookie_<name>, $arg_<name>, $namespace, $ingress_name, $service_name, $service_port, $location_path); left out`,
		`data[proxy-set-headers] ConfigMap ingress/up: header "X-Cap": $1 is not a variable ramjet expands in a header value (it expands $host, $http_host, $server_name, $scheme, $request_uri, $uri, $document_uri, $args, $query_string, $remote_addr, $request_method, $http_<name>, $cookie_<name>, $arg_<name>, $namespace, $ingress_name, $service_name, $service_port, $location_path); left out`,
		`data[proxy-set-headers] ConfigMap ingress/up: header "X-Dollar": a "$" names no variable (a header value expands $host, $http_host, $server_name, $scheme, $request_uri, $uri, $document_uri, $args, $query_string, $remote_addr, $request_method, $http_<name>, $cookie_<name>, $arg_<name>, $namespace, $ingress_name, $service_name, $service_port, $location_path); left out`,
		`data[proxy-set-headers] ConfigMap ingress/up: header "X-Open": "${" is not closed; left out`,
	}, got)
}

// The stream keys of ingress-nginx v1.15: the proxy-stream-* keys are
// read into Options.StreamSettings; the log keys of a stream access log
// ramjet does not write, and proxy-protocol-header-timeout (ingress-nginx's
// TLS passthrough listener's), change nothing a client sees.
func TestParseConfigMapStreamKeys(t *testing.T) {
	c := ParseConfigMap(mkConfigMap("ingress", "nginx", map[string]string{
		"proxy-stream-timeout": "30", "proxy-stream-next-upstream": "false", "proxy-stream-next-upstream-timeout": "5s",
		"proxy-stream-next-upstream-tries": "0", "proxy-stream-responses": "2",
		"log-format-stream": "[$remote_addr]", "stream-access-log-path": "/dev/stdout", "disable-stream-access-log": "true",
		"proxy-protocol-header-timeout": "10s", "enable-real-ip": "true", "proxy-real-ip-cidr": "10.0.0.0/8",
	}))
	assert.Equal(t, []string{"enable-real-ip", "proxy-real-ip-cidr", "proxy-stream-next-upstream", "proxy-stream-next-upstream-timeout",
		"proxy-stream-next-upstream-tries", "proxy-stream-responses", "proxy-stream-timeout"}, c.Keys)
	assert.True(t, c.Router.EnableRealIP)
	var got []string
	for _, w := range c.Warnings() {
		got = append(got, string(w.Reason)+" "+w.Field+" "+string(w.Severity()))
	}
	assert.Equal(t, []string{
		"ConfigMapKeyIgnored data[disable-stream-access-log] cosmetic",
		"ConfigMapKeyIgnored data[log-format-stream] cosmetic",
		"ConfigMapKeyIgnored data[proxy-protocol-header-timeout] cosmetic",
		"ConfigMapKeyIgnored data[stream-access-log-path] cosmetic",
	}, got)
	o := Options{}
	for _, apply := range c.options {
		apply(&o)
	}
	require.NotNil(t, o.StreamSettings)
	assert.Equal(t, "30s false 5s 0 2", fmt.Sprint(o.StreamSettings.Timeout, o.StreamSettings.NextUpstream,
		o.StreamSettings.NextUpstreamTimeout, o.StreamSettings.NextUpstreamTries, o.StreamSettings.Responses))
}

// http-redirect-code is the status of ingress-nginx's TLS redirect and of
// its from-to-www-redirect servers (nginx.tmpl's RedirectServers return
// $all.Cfg.HTTPRedirectCode): the router's key, read as
// template/configmap.go reads it (strconv.Atoi, validRedirectCodes).
func TestHTTPRedirectCode(t *testing.T) {
	for _, v := range []string{"301", "302", "307", "308", "0308"} {
		c := ParseConfigMap(mkConfigMap("ingress", "nginx", map[string]string{"http-redirect-code": v}))
		assert.Empty(t, c.Warnings(), v)
		want, _ := strconv.Atoi(v)
		assert.Equal(t, want, c.Router.HTTPRedirectCode, v)
		assert.Contains(t, c.Keys, "http-redirect-code", v)
	}
	// A value ingress-nginx refuses keeps its 308 there as here.
	for _, v := range []string{"303", "moved", "0x134"} {
		c := ParseConfigMap(mkConfigMap("ingress", "nginx", map[string]string{"http-redirect-code": v}))
		ws := c.Warnings()
		require.Len(t, ws, 1, v)
		assert.Equal(t, ConfigMapKeyIgnored, ws[0].Reason, v)
		assert.Equal(t, Cosmetic, ws[0].Severity(), v)
		assert.Equal(t, 308, c.Router.HTTPRedirectCode, v)
	}
}

// The upstream keep-alive keys are the router's: they bound its backend
// connection pool (router.Options.UpstreamKeepalive), unwarned.
func TestParseConfigMapUpstreamKeepalive(t *testing.T) {
	c := ParseConfigMap(mkConfigMap("ingress", "nginx", map[string]string{
		"upstream-keepalive-connections": "0", "upstream-keepalive-timeout": "5",
		"upstream-keepalive-requests": "100", "upstream-keepalive-time": "10m",
	}))
	require.Empty(t, c.Warnings())
	assert.Equal(t, configmap.UpstreamKeepalive{Connections: 0, Timeout: 5 * time.Second, Requests: 100, Time: 10 * time.Minute}, c.Router.UpstreamKeepalive)
	assert.Subset(t, c.Keys, []string{"upstream-keepalive-connections", "upstream-keepalive-requests", "upstream-keepalive-time", "upstream-keepalive-timeout"})
}

// TestConfigMapAccessLogKeys: disable-access-log and
// disable-http-access-log turn off an access log, which is the
// embedder's (the example controller reads both): the library says so
// rather than calling them nginx tuning or unknown.
func TestConfigMapAccessLogKeys(t *testing.T) {
	c := ParseConfigMap(mkConfigMap("ingress", "nginx", map[string]string{"disable-access-log": "true", "disable-http-access-log": "true"}))
	require.Len(t, c.Warnings(), 2)
	for _, w := range c.Warnings() {
		assert.Equal(t, ConfigMapKeyIgnored, w.Reason, w.Field)
		assert.Equal(t, Cosmetic, w.Severity(), w.Field)
		assert.Contains(t, w.Message, "the embedder's access log", w.Field)
	}
}

// TestConfigMapNginxStatusKeys: the nginx-status-*-whitelist keys say who
// may read /nginx_status, a page the embedder serves (the example
// controller reads both), not nginx tuning.
func TestConfigMapNginxStatusKeys(t *testing.T) {
	c := ParseConfigMap(mkConfigMap("ingress", "nginx", map[string]string{"nginx-status-ipv4-whitelist": "10.0.0.0/8", "nginx-status-ipv6-whitelist": "::1"}))
	require.Len(t, c.Warnings(), 2)
	for _, w := range c.Warnings() {
		assert.Equal(t, ConfigMapKeyIgnored, w.Reason, w.Field)
		assert.Equal(t, Cosmetic, w.Severity(), w.Field)
		assert.Contains(t, w.Message, "/nginx_status", w.Field)
		assert.NotContains(t, w.Message, "tunes nginx", w.Field)
	}
}

// TestConfigMapObsoleteHTTP2Keys: http2-max-field-size, -header-size and
// -requests write directives nginx has made obsolete (1.19.7: it warns
// and ignores them, large_client_header_buffers and keepalive_requests
// bound HTTP/2 instead), so they change no answer of ingress-nginx's:
// cosmetic, not a feature that may change answers.
func TestConfigMapObsoleteHTTP2Keys(t *testing.T) {
	c := ParseConfigMap(mkConfigMap("ingress", "nginx", map[string]string{
		"http2-max-field-size": "8k", "http2-max-header-size": "32k", "http2-max-requests": "100"}))
	require.Len(t, c.Warnings(), 3)
	for _, w := range c.Warnings() {
		assert.Equal(t, ConfigMapKeyIgnored, w.Reason, w.Field)
		assert.Equal(t, Cosmetic, w.Severity(), w.Field)
		assert.Contains(t, w.Message, "obsolete", w.Field)
	}
}

// ssl-dh-param says what is lost: Go serves no DHE suite.
// ssl-session-ticket-key is served (router.Options.TLS); a value nginx
// would not load (not base64, not 48 or 80 bytes) is rejected, cosmetic
// (each router keeps its own ticket keys, no answer changes), without
// showing the key.
func TestConfigMapDHParamAndTicketKey(t *testing.T) {
	key := "ZmFrZS1rZXktZmFrZS1rZXktZmFrZS1rZXktZmFrZS1rZXktZmFrZS1rZXkx" // 45 bytes
	for _, tt := range []struct {
		data    map[string]string
		field   string
		reason  Reason
		sev     Severity
		message string
	}{
		{map[string]string{"ssl-dh-param": "ingress-nginx/dhparam"}, "ssl-dh-param", ConfigMapKeyUnsupported, FeatureMissing, "DHE"},
		{map[string]string{"ssl-dh-param": ""}, "ssl-dh-param", ConfigMapKeyIgnored, Cosmetic, "empty"},
		{map[string]string{"ssl-session-ticket-key": key, "ssl-session-tickets": "true"}, "ssl-session-ticket-key", ConfigMapKeyRejected, Cosmetic, "45 bytes, where nginx takes 48 or 80"},
		{map[string]string{"ssl-session-ticket-key": "%%%"}, "ssl-session-ticket-key", ConfigMapKeyRejected, Cosmetic, "not base64"},
	} {
		c := ParseConfigMap(mkConfigMap("ingress", "nginx", tt.data))
		var found bool
		for _, w := range c.Warnings() {
			if w.Field != configMapField(tt.field) {
				continue
			}
			found = true
			assert.Equal(t, tt.reason, w.Reason, "%v", tt.data)
			assert.Equal(t, tt.sev, w.Severity(), "%v", tt.data)
			assert.Contains(t, w.Message, tt.message, "%v", tt.data)
			if v := tt.data["ssl-session-ticket-key"]; v != "" {
				assert.NotContains(t, w.Message, v, "the key is not shown")
			}
		}
		assert.True(t, found, "%v: %v", tt.data, c.Warnings())
	}
	valid := "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWJjZGVm" // 48 bytes
	for _, tickets := range []string{"true", "false"} {
		c := ParseConfigMap(mkConfigMap("ingress", "nginx", map[string]string{"ssl-session-ticket-key": valid, "ssl-session-tickets": tickets}))
		assert.Empty(t, c.Warnings(), "tickets %s", tickets)
		assert.Len(t, c.Router.TLS.SessionTicketKey, 48, "tickets %s", tickets)
	}
}

// relative-redirects that is no boolean is rejected alone, as ingress-nginx
// keeps its default (false) for a value it cannot read: redirects stay
// absolute, and the ConfigMap's other keys still apply.
func TestConfigMapRelativeRedirectsRejected(t *testing.T) {
	cm := ParseConfigMap(mkConfigMap("ingress", "nginx", map[string]string{"relative-redirects": "maybe", "proxy-read-timeout": "30"}))
	ws := cm.Warnings()
	require.Len(t, ws, 1)
	assert.Equal(t, ConfigMapKeyRejected, ws[0].Reason)
	assert.Equal(t, "data[relative-redirects]", ws[0].Field)
	assert.Contains(t, ws[0].Message, `"maybe"`)
	tab, _ := compileOK(t, redirectSnapshot(NginxPrefix+"permanent-redirect", "/x"), Options{ConfigMap: cm})
	r := tab.Lookup("shop.example.com", "/").Route
	require.NotNil(t, r.Redirect)
	assert.False(t, r.Redirect.Relative, "the default, absolute_redirect on, is kept")
	assert.Contains(t, tab.String(), "read=30s")
}

// proxy-real-ip-cidr is split as ingress-nginx splits it (splitAndTrimSpace,
// template/configmap.go ReadConfig): empty entries make no set_real_ip_from
// line, so a trailing comma still trusts the ranges written.
func TestProxyRealIPCIDREmptyEntries(t *testing.T) {
	c := ParseConfigMap(mkConfigMap("ingress", "nginx", map[string]string{
		"use-forwarded-headers": "true", "proxy-real-ip-cidr": "10.0.0.0/8,,192.168.0.0/16,",
	}))
	assert.Empty(t, c.Warnings())
	assert.Equal(t, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.0.0/16")}, c.Router.ProxyRealIPCIDR)
	assert.Contains(t, c.Keys, "proxy-real-ip-cidr")
}

// Keys that tune nginx's own work (reloads, disk writes, gRPC response
// buffers, the GeoIP2 databases' reload) change no answer: cosmetic, not
// "may change answers".
func TestConfigMapTuningKeysCosmetic(t *testing.T) {
	for key, v := range map[string]string{
		"enable-serial-reloads": "true", "enable-aio-write": "false", "grpc-buffer-size-kb": "8",
		"geoip2-autoreload-in-minutes": "5",
	} {
		ws := ParseConfigMap(mkConfigMap("ingress", "nginx", map[string]string{key: v})).Warnings()
		require.Len(t, ws, 1, key)
		assert.Equal(t, ConfigMapKeyIgnored, ws[0].Reason, key)
		assert.Equal(t, Cosmetic, ws[0].Severity(), key)
	}
}

// app-root, upstream-hash-by-subset and upstream-hash-by-subset-size are
// fields of ingress-nginx's defaults.Backend, but no parser defaults to
// them: rewrite reads app-root and upstreamhashby its subset keys from the
// annotations alone (internal/ingress/annotations/rewrite/main.go,
// upstreamhashby/main.go), so the ConfigMap keys change nothing there
// either.
func TestConfigMapKeysNginxDoesNotRead(t *testing.T) {
	for key, value := range map[string]string{"app-root": "/app", "upstream-hash-by-subset": "true", "upstream-hash-by-subset-size": "5"} {
		c := ParseConfigMap(mkConfigMap("ingress", "nginx", map[string]string{key: value}))
		require.Len(t, c.Warnings(), 1, key)
		w := c.Warnings()[0]
		assert.Equal(t, ConfigMapKeyIgnored, w.Reason, key)
		assert.Equal(t, Cosmetic, w.Severity(), key)
		assert.Contains(t, w.Message, "only as the annotation", key)
	}
}

// The access log keys nginx.tmpl writes into its access_log lines:
// enable-auth-access-log is read for the embedder's access log (the
// auth location's access_log), unwarned; access-log-params' buffer=,
// flush= and if= (the template's own if=$loggable comes last and wins)
// change no line, gzip writes the log compressed.
func TestConfigMapAccessLogParams(t *testing.T) {
	for _, on := range []bool{false, true} {
		c := ParseConfigMap(mkConfigMap("ingress", "nginx", map[string]string{"enable-auth-access-log": strconv.FormatBool(on)}))
		assert.Empty(t, c.Warnings(), "enable-auth-access-log=%v", on)
		assert.Equal(t, on, c.Router.AuthAccessLog, "enable-auth-access-log=%v", on)
	}
	for _, tt := range []struct {
		key, value string
		reason     Reason
		want       Severity
	}{
		{"access-log-params", "buffer=16k, flush=1m", ConfigMapKeyIgnored, Cosmetic},
		{"access-log-params", "if=$loggable buffer=32k", ConfigMapKeyIgnored, Cosmetic},
		{"access-log-params", "", ConfigMapKeyIgnored, Cosmetic},
		{"access-log-params", "buffer=16k gzip flush=5m", ConfigMapKeyUnsupported, FeatureMissing},
		{"access-log-params", "gzip=9", ConfigMapKeyUnsupported, FeatureMissing},
	} {
		c := ParseConfigMap(mkConfigMap("ingress", "nginx", map[string]string{tt.key: tt.value}))
		require.Len(t, c.Warnings(), 1, "%s=%q", tt.key, tt.value)
		w := c.Warnings()[0]
		assert.Equal(t, tt.reason, w.Reason, "%s=%q: %s", tt.key, tt.value, w.Message)
		assert.Equal(t, tt.want, w.Severity(), "%s=%q: %s", tt.key, tt.value, w.Message)
	}
}

// Keys whose effect another key decides: forwarded-for-proxy-protocol-
// header names a request header nginx sets only with use-proxy-protocol
// and use-forwarded-headers both on (more_set_input_headers, which the
// backend receives).
func TestConfigMapKeysOtherKeysDecide(t *testing.T) {
	for _, tt := range []struct {
		data   map[string]string
		key    string
		reason Reason
		want   Severity
	}{
		{map[string]string{"forwarded-for-proxy-protocol-header": "X-PP"}, "forwarded-for-proxy-protocol-header", ConfigMapKeyIgnored, Cosmetic},
		{map[string]string{"forwarded-for-proxy-protocol-header": "X-PP", "use-proxy-protocol": "true"}, "forwarded-for-proxy-protocol-header", ConfigMapKeyIgnored, Cosmetic},
		{map[string]string{"forwarded-for-proxy-protocol-header": "X-PP", "use-proxy-protocol": "true", "use-forwarded-headers": "true"}, "forwarded-for-proxy-protocol-header", ConfigMapKeyUnsupported, FeatureMissing},
	} {
		c := ParseConfigMap(mkConfigMap("ingress", "nginx", tt.data))
		var found bool
		for _, w := range c.Warnings() {
			if w.Field != "data["+tt.key+"]" {
				continue
			}
			found = true
			assert.Equal(t, tt.reason, w.Reason, "%v: %s", tt.data, w.Message)
			assert.Equal(t, tt.want, w.Severity(), "%v: %s", tt.data, w.Message)
		}
		assert.True(t, found, "%v", tt.data)
	}
}
