package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
)

// flagsWith parses args as the command line of a cluster controller with
// -configmap ingress/nginx.
func flagsWith(t *testing.T, args ...string) config {
	t.Helper()
	c, err := parseFlags(append([]string{"-configmap", "ingress/nginx", "-pod-name", "p"}, args...), &bytes.Buffer{}, func(string) string { return "" })
	require.NoError(t, err)
	require.Equal(t, &types.NamespacedName{Namespace: "ingress", Name: "nginx"}, c.configMap)
	return c
}

// cmData is a ConfigMap ingress/nginx with data.
func cmData(data map[string]string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{Data: data}
	cm.Namespace, cm.Name = "ingress", "nginx"
	return cm
}

// TestConfigMapKeys: the router keys reach the router's options; the
// location keys and ssl-redirect reach the compile (compile.ParseConfigMap
// has their own tests, the case files their answers).
func TestConfigMapKeys(t *testing.T) {
	for _, tc := range []struct {
		key, value string
		check      func(t *testing.T, c config, o router.Options)
	}{
		{"ssl-redirect", "false", func(t *testing.T, c config, _ router.Options) {
			assert.Equal(t, []string{"ssl-redirect"}, c.options.ConfigMap.Keys)
		}},
		{"use-forwarded-headers", "true", func(t *testing.T, _ config, o router.Options) {
			assert.True(t, o.TrustForwardedProto)
			assert.True(t, o.TrustForwardedFor)
		}},
		{"enable-real-ip", "true", func(t *testing.T, _ config, o router.Options) {
			assert.False(t, o.TrustForwardedProto)
			assert.True(t, o.TrustForwardedFor)
		}},
		{"compute-full-forwarded-for", "True", func(t *testing.T, _ config, o router.Options) {
			assert.False(t, o.ComputeFullForwardedFor, "only with use-forwarded-headers")
		}},
		{"forwarded-for-header", "X-Client-IP", func(t *testing.T, _ config, o router.Options) { assert.Equal(t, "X-Client-IP", o.ForwardedForHeader) }},
		{"forwarded-host-header", "X-Real-Host", func(t *testing.T, _ config, o router.Options) { assert.Equal(t, "X-Real-Host", o.ForwardedHostHeader) }},
		{"limit-req-status-code", "429", func(t *testing.T, _ config, o router.Options) { assert.Equal(t, 429, o.LimitReqStatusCode) }},
		{"limit-conn-status-code", "0x1ad", func(t *testing.T, _ config, o router.Options) { assert.Equal(t, 429, o.LimitConnStatusCode) }},
		{"proxy-real-ip-cidr", "10.0.0.0/8, 192.0.2.7", func(t *testing.T, c config, _ router.Options) {
			assert.Equal(t, "[10.0.0.0/8 192.0.2.7/32]", fmtPrefixes(c))
		}},
		{"use-proxy-protocol", "true", func(t *testing.T, c config, _ router.Options) { assert.True(t, c.useProxyProtocol) }},
		{"proxy-body-size", "8m", func(t *testing.T, c config, o router.Options) {
			assert.Equal(t, int64(1<<20), o.MaxBodySize, "the flag's default: the key is a location default, in the table")
			assert.Equal(t, []string{"proxy-body-size"}, c.options.ConfigMap.Keys)
		}},
		{"hsts", "false", func(t *testing.T, _ config, o router.Options) { assert.True(t, o.DisableHSTS) }},
		{"hsts", "", func(t *testing.T, _ config, o router.Options) {
			assert.True(t, o.DisableHSTS, "mapstructure reads \"\" as false")
		}},
		{"hsts", "true", func(t *testing.T, _ config, o router.Options) {
			assert.False(t, o.DisableHSTS)
			assert.Equal(t, router.DefaultHSTS, o.HSTS)
		}},
		{"hsts-max-age", "600", func(t *testing.T, _ config, o router.Options) {
			assert.Equal(t, "max-age=600; includeSubDomains", o.HSTS)
		}},
		{"hsts-include-subdomains", "false", func(t *testing.T, _ config, o router.Options) { assert.Equal(t, "max-age=31536000", o.HSTS) }},
		{"hsts-preload", "true", func(t *testing.T, _ config, o router.Options) {
			assert.Equal(t, "max-age=31536000; includeSubDomains; preload", o.HSTS)
		}},
	} {
		t.Run(tc.key+"="+tc.value, func(t *testing.T) {
			c := flagsWith(t)
			warns := applyConfigMap(&c, cmData(map[string]string{tc.key: tc.value}), c.flagsSet)
			if tc.key == "use-forwarded-headers" || tc.key == "enable-real-ip" {
				require.Len(t, warns, 1)
				warns = nil // the proxy-real-ip-cidr note, TestConfigMapFlagWins's
			}
			assert.Empty(t, warns)
			tc.check(t, c, routerOptions(c, slog.New(slog.DiscardHandler), nil))
		})
	}
}

func fmtPrefixes(c config) string {
	var parts []string
	for _, p := range c.proxyRealIPCIDR {
		parts = append(parts, p.String())
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// TestConfigMapBadValues: a value that does not parse warns naming the
// key and the value, and leaves the setting as it was.
func TestConfigMapBadValues(t *testing.T) {
	for key, value := range map[string]string{
		"ssl-redirect": "yes", "use-forwarded-headers": "on", "proxy-body-size": "8q", "proxy-connect-timeout": "5s",
		"proxy-read-timeout": "-1", "hsts": "off", "hsts-max-age": "1y", "hsts-preload": "maybe", "client-body-buffer-size": "0",
		"proxy-real-ip-cidr": "10.0.0.0/33", "limit-req-status-code": "200",
	} {
		c := flagsWith(t)
		before := routerOptions(c, slog.New(slog.DiscardHandler), nil)
		warns := applyConfigMap(&c, cmData(map[string]string{key: value}), c.flagsSet)
		require.Len(t, warns, 1, key)
		assert.Equal(t, key, warns[0].key)
		assert.Contains(t, warns[0].String(), `"`+value+`"`)
		assert.Equal(t, compile.TrafficMoves, warns[0].severity)
		after := routerOptions(c, slog.New(slog.DiscardHandler), nil)
		assert.Equal(t, before.HSTS, after.HSTS, key)
		assert.Equal(t, before.DisableHSTS, after.DisableHSTS, key)
		assert.Equal(t, before.LimitReqStatusCode, after.LimitReqStatusCode, key)
		assert.Empty(t, c.options.ConfigMap.Keys, key)
		assert.False(t, c.useForwardedHeaders, key)
		assert.Empty(t, c.proxyRealIPCIDR, key)
	}
}

// TestConfigMapFlagWins: a flag given on the command line wins over its
// key, with a warning saying so; a flag left at its default does not.
func TestConfigMapFlagWins(t *testing.T) {
	c := flagsWith(t, "-ssl-redirect=true", "-proxy-body-size=2m")
	warns := applyConfigMap(&c, cmData(map[string]string{"ssl-redirect": "false", "proxy-body-size": "8m", "use-forwarded-headers": "true"}), c.flagsSet)
	assert.False(t, c.options.DisableSSLRedirect)
	assert.Equal(t, []string{"use-forwarded-headers"}, c.options.ConfigMap.Keys)
	assert.Equal(t, int64(2<<20), c.maxBodySize)
	assert.True(t, c.useForwardedHeaders, "not given as a flag: the key applies")
	require.Len(t, warns, 3)
	assert.Equal(t, "proxy-body-size", warns[0].key)
	assert.Contains(t, warns[0].message, "the command line's setting wins")
	assert.Equal(t, "proxy-real-ip-cidr", warns[1].key, "use-forwarded-headers without the ranges ingress-nginx would trust")
	assert.Equal(t, compile.TrafficMoves, warns[1].severity)
	assert.Equal(t, "ssl-redirect", warns[2].key)

	c = flagsWith(t, "-proxy-real-ip-cidr=10.0.0.0/8")
	assert.Empty(t, applyConfigMap(&c, cmData(map[string]string{"use-forwarded-headers": "true"}), c.flagsSet), "the ranges are given")
}

// TestConfigMapOtherKeys: one warning per key ramjet does not read, by
// what it does.
func TestConfigMapOtherKeys(t *testing.T) {
	c := flagsWith(t)
	warns := applyConfigMap(&c, cmData(map[string]string{
		"worker-processes": "4", "default-type": "text/html", "load-balance": "ewma", "no-such-key": "true", "no-auth-locations": "/public",
	}), c.flagsSet)
	got := map[string]compile.Severity{}
	for _, w := range warns {
		got[w.key] = w.severity
	}
	assert.Equal(t, map[string]compile.Severity{
		"worker-processes": compile.Cosmetic, "default-type": compile.FeatureMissing, "no-auth-locations": compile.TrafficMoves,
		"load-balance": compile.FeatureMissing, "no-such-key": compile.FeatureMissing,
	}, got)
}

func TestConfigMapInFolder(t *testing.T) {
	dir := t.TempDir()
	// A document that does not parse takes none of its neighbours with it.
	writeFile(t, filepath.Join(dir, "a.yaml"), `apiVersion: v1
kind: Service
metadata: [unterminated
---
apiVersion: v1
kind: ConfigMap
metadata: {name: nginx, namespace: other}
data: {hsts: "true"}
---
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: nginx, namespace: ingress}
    data: {hsts: "false"}
`)
	data, found, err := configMapInFolder(dir, types.NamespacedName{Namespace: "ingress", Name: "nginx"})
	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, map[string]string{"hsts": "false"}, data)
	_, found, err = configMapInFolder(dir, types.NamespacedName{Namespace: "ingress", Name: "absent"})
	require.NoError(t, err)
	assert.False(t, found)

	// The API's own list of ConfigMaps, whose items name no kind, as the
	// loader reads it.
	writeFile(t, filepath.Join(dir, "b.yaml"), `apiVersion: v1
kind: ConfigMapList
metadata: {resourceVersion: "7"}
items:
  - metadata: {name: settings, namespace: ingress}
    data: {hsts: "false"}
`)
	r := manifest.NewReader()
	require.Error(t, r.Load(dir))
	snap, _ := r.Snapshot()
	require.Len(t, snap.ConfigMaps, 3)
	data, found, err = configMapInFolder(dir, types.NamespacedName{Namespace: "ingress", Name: "settings"})
	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, map[string]string{"hsts": "false"}, data)
}

// TestOfflineConfigMap: a manifests folder holding the -configmap
// ConfigMap. hsts is read at start; ssl-redirect follows each reload; the
// keys ramjet does not read are on /debug/warnings.
func TestOfflineConfigMap(t *testing.T) {
	port := namedBackend(t, "A")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "app.yaml"), strings.Replace(appManifests(port), "  rules:\n", "  tls: [{hosts: [app.test]}]\n  rules:\n", 1))
	cmFile := filepath.Join(dir, "configmap.yaml")
	configMap := func(sslRedirect string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: headers, namespace: ingress}\ndata: {X-Frame-Options: DENY}\n---\n" +
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nginx, namespace: ingress}\ndata:\n  add-headers: ingress/headers\n  hsts-max-age: \"600\"\n  hsts-preload: \"true\"\n  worker-processes: \"4\"\n  ssl-redirect: \"" + sslRedirect + "\"\n"
	}
	writeFile(t, cmFile, configMap("false"))

	cfg, err := parseFlags([]string{"-manifests", dir, "-configmap", "ingress/nginx", "-http-addr", "127.0.0.1:0",
		"-https-addr", "127.0.0.1:0", "-debug-addr", "127.0.0.1:0", "-poll-interval", "10ms", "-enable-access-log=false"},
		&bytes.Buffer{}, func(string) string { return "" })
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inst, err := start(ctx, cfg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer func() {
		cancel()
		_ = inst.Wait()
	}()
	client := &http.Client{
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{ServerName: "app.test", InsecureSkipVerify: true}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer client.CloseIdleConnections()
	do := func(url string) *http.Response {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		require.NoError(t, err)
		req.Host = "app.test"
		res, err := client.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		return res
	}

	res := do("https://" + inst.HTTPSAddr + "/x")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "max-age=600; includeSubDomains; preload", res.Header.Get("Strict-Transport-Security"))
	assert.Equal(t, "DENY", res.Header.Get("X-Frame-Options"), "add-headers names a ConfigMap in the folder")
	res = do("http://" + inst.HTTPAddr + "/x")
	assert.Equal(t, http.StatusOK, res.StatusCode, "ssl-redirect: false")
	assert.Empty(t, res.Header.Get("Strict-Transport-Security"))

	status, body := get(t, client, "http://"+inst.DebugAddr+"/debug/warnings", "")
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, `ConfigMapKeyIgnored ConfigMap ingress/nginx data[worker-processes]: tunes nginx itself`)
	assert.Equal(t, 1, strings.Count(body, "worker-processes"), "the ConfigMap's warning is listed once:\n%s", body)

	// ssl-redirect, hsts and the router keys (server-tokens) follow the
	// ConfigMap without a restart.
	assert.Empty(t, res.Header.Values("Server"))
	writeFile(t, cmFile, configMap("true")+"  hsts: \"false\"\n  server-tokens: \"true\"\n  enable-brotli: \"true\"\n  brotli-min-length: \"0\"\n")
	require.Eventually(t, func() bool {
		return do("http://"+inst.HTTPAddr+"/x").StatusCode == http.StatusPermanentRedirect
	}, 5*time.Second, 10*time.Millisecond)
	res = do("https://" + inst.HTTPSAddr + "/x")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Empty(t, res.Header.Values("Strict-Transport-Security"))
	assert.Equal(t, "ramjet", res.Header.Get("Server"))

	// enable-brotli: br, preferred over gzip as ngx_brotli's filter runs
	// first.
	req, err := http.NewRequest(http.MethodGet, "https://"+inst.HTTPSAddr+"/x", nil)
	require.NoError(t, err)
	req.Host = "app.test"
	req.Header.Set("Accept-Encoding", "gzip, br")
	res, err = client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, "br", res.Header.Get("Content-Encoding"))
	decoded, err := io.ReadAll(brotli.NewReader(res.Body))
	require.NoError(t, err)
	assert.Contains(t, string(decoded), "A")
}

// TestLiveAccessLog: log-format-upstream changes the access log's lines
// from the next request on, and its absence brings back -access-log-format.
func TestLiveAccessLog(t *testing.T) {
	var out bytes.Buffer
	l := &liveAccessLog{out: &out, format: accessLogJSON}
	l.set(accessLogKeys{format: "$status $host"})
	rec := router.Record{Status: 200, Host: "a.test"}
	l.observe(rec)
	l.set(accessLogKeys{format: "$status $host"})
	l.observe(rec)
	l.set(accessLogKeys{format: "[$status]"})
	l.observe(rec)
	assert.Equal(t, "200 a.test\n200 a.test\n[200]\n", out.String())
	out.Reset()
	l.set(accessLogKeys{format: ""})
	l.observe(rec)
	assert.Contains(t, out.String(), `"status":200`)
}

// TestConfigMapSettingsLines: /debug/warnings names the ConfigMap, an
// absent one included, and a start-only key edited later.
func TestConfigMapSettingsLines(t *testing.T) {
	c := flagsWith(t)
	s, started := newConfigMapSettings(c, map[string]string{"limit-req-status-code": "429", "proxy-body-size": "2m"}, true, slog.New(slog.DiscardHandler))
	assert.Equal(t, 429, configMapRouterOptions(started).LimitReqStatusCode)
	assert.Empty(t, s.lines())
	cur := s.update(map[string]string{"limit-req-status-code": "503", "proxy-body-size": "4m", "hsts": "false", "use-proxy-protocol": "true"}, true)
	assert.Equal(t, 503, configMapRouterOptions(cur).LimitReqStatusCode)
	assert.True(t, cur.useProxyProtocol, "the caller decides what it can apply")
	assert.Equal(t, []string{`ConfigMap ingress/nginx: key "use-proxy-protocol": changed since start; it takes effect when the controller restarts (traffic-moves)`}, s.lines(),
		"limit-req-status-code is live and proxy-body-size a location default: they follow the rebuild")
	s.update(nil, false)
	assert.Equal(t, []string{
		`ConfigMap ingress/nginx: not found; the flags' settings apply (cosmetic)`,
	}, s.lines(), "back to the start's use-proxy-protocol (absent)")
}

// enable-real-ip with -use-proxy-protocol (a flag, not the key) reads the
// PROXY header alone, as ingress-nginx's real_ip_header proxy_protocol:
// X-Forwarded-For is believed only with use-forwarded-headers too.
func TestRealIPBehindProxyProtocolFlag(t *testing.T) {
	for _, tt := range []struct {
		args []string
		data map[string]string
		want bool
	}{
		{nil, map[string]string{"enable-real-ip": "true"}, true},
		{[]string{"-use-proxy-protocol"}, map[string]string{"enable-real-ip": "true"}, false},
		{[]string{"-use-proxy-protocol"}, map[string]string{"enable-real-ip": "true", "use-forwarded-headers": "true"}, true},
		{[]string{"-use-proxy-protocol", "-use-forwarded-headers"}, map[string]string{"enable-real-ip": "true"}, true},
	} {
		_, cfg := newConfigMapSettings(flagsWith(t, tt.args...), tt.data, true, slog.New(slog.DiscardHandler))
		assert.Equal(t, tt.want, configMapRouterOptions(cfg).TrustForwardedFor, "%v %v", tt.args, tt.data)
	}
}
