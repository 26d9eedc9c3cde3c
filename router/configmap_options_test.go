package router

import (
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/router/configmap"
)

// TestApplyConfigMapEveryKey: every key the router's parser reads changes
// Options through ApplyConfigMap, but the listeners' and access log's,
// which change the Settings the embedder reads; a key added to
// configmap.Keys without a value here fails, so a key cannot be parsed
// and then dropped on the way to the router.
func TestApplyConfigMapEveryKey(t *testing.T) {
	// Each key's value, with the keys it acts only beside.
	values := map[string]struct {
		value string
		with  map[string]string
	}{
		"hsts":                        {value: "false"},
		"hsts-max-age":                {value: "600"},
		"hsts-include-subdomains":     {value: "false"},
		"hsts-preload":                {value: "true"},
		"use-forwarded-headers":       {value: "true"},
		"enable-real-ip":              {value: "true"},
		"compute-full-forwarded-for":  {value: "true", with: map[string]string{"use-forwarded-headers": "true"}},
		"forwarded-for-header":        {value: "X-Client-IP"},
		"forwarded-host-header":       {value: "X-Real-Host"},
		"proxy-real-ip-cidr":          {value: "10.0.0.0/8"},
		"limit-req-status-code":       {value: "429"},
		"limit-conn-status-code":      {value: "429"},
		"add-headers":                 {value: "custom"},
		"proxy-set-headers":           {value: "custom"},
		"use-gzip":                    {value: "true"},
		"gzip-level":                  {value: "5", with: map[string]string{"use-gzip": "true"}},
		"gzip-min-length":             {value: "1", with: map[string]string{"use-gzip": "true"}},
		"gzip-types":                  {value: "text/x-a", with: map[string]string{"use-gzip": "true"}},
		"enable-brotli":               {value: "true"},
		"brotli-level":                {value: "5", with: map[string]string{"enable-brotli": "true"}},
		"brotli-min-length":           {value: "1", with: map[string]string{"enable-brotli": "true"}},
		"brotli-types":                {value: "text/x-a", with: map[string]string{"enable-brotli": "true"}},
		"server-tokens":               {value: "true"},
		"allow-backend-server-header": {value: "true", with: map[string]string{"server-tokens": "true"}},
		"block-user-agents":           {value: "AlphaBot"},
		"block-referers":              {value: "~*example\\.com"},
		"http-redirect-code":          {value: "301"},
		"no-tls-redirect-locations":   {value: "/healthz"},
		// The TLS keys (Options.TLS), each away from ingress-nginx's default.
		"ssl-protocols":          {value: "TLSv1.3"},
		"ssl-ciphers":            {value: "ECDHE-RSA-AES128-GCM-SHA256"},
		"ssl-ecdh-curve":         {value: "X25519"},
		"ssl-session-cache":      {value: "false"},
		"ssl-session-cache-size": {value: "1m"},
		"ssl-session-timeout":    {value: "1h"},
		"ssl-session-tickets":    {value: "true"},
		"ssl-session-ticket-key": {value: "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWJjZGVm", with: map[string]string{"ssl-session-tickets": "true"}},
		"ssl-early-data":         {value: "true"},
		"enable-ocsp":            {value: "true"},
		"ssl-reject-handshake":   {value: "true"},
		// The header keys.
		"hide-headers":                  {value: "X-Powered-By"},
		"enable-underscores-in-headers": {value: "true"},
		"ignore-invalid-headers":        {value: "false"},
		"generate-request-id":           {value: "false"},
		"proxy-add-original-uri-header": {value: "true"},
		// The client connection keys the router's options take.
		"keep-alive":            {value: "30"},
		"client-header-timeout": {value: "5"},
		"client-body-timeout":   {value: "5"},
		// The backend connection pool's keys.
		"upstream-keepalive-connections": {value: "8"},
		"upstream-keepalive-timeout":     {value: "5"},
		"upstream-keepalive-requests":    {value: "100"},
		"upstream-keepalive-time":        {value: "10m"},
		// The embedder's: the listeners and the access log.
		"use-proxy-protocol":                    {value: "true"},
		"log-format-upstream":                   {value: "$status"},
		"log-format-escape-json":                {value: "true"},
		"log-format-escape-none":                {value: "true"},
		"skip-access-log-urls":                  {value: "/health"},
		"enable-access-log-for-default-backend": {value: "true"},
		"enable-auth-access-log":                {value: "true"},
		"use-http2":                             {value: "false"},
		"large-client-header-buffers":           {value: "4 16k"},
		"client-header-buffer-size":             {value: "2k"},
		"http2-max-concurrent-streams":          {value: "64"},
		"keep-alive-requests":                   {value: "100"},
		"worker-shutdown-timeout":               {value: "30s"},
		"disable-ipv6":                          {value: "true"},
	}
	embedder := []string{"use-proxy-protocol", "log-format-upstream", "log-format-escape-json", "log-format-escape-none",
		"skip-access-log-urls", "enable-access-log-for-default-backend", "enable-auth-access-log", "use-http2", "large-client-header-buffers", "client-header-buffer-size",
		"http2-max-concurrent-streams", "keep-alive-requests", "worker-shutdown-timeout", "disable-ipv6"}
	read := func(data map[string]string) (configmap.Settings, Options) {
		s, warns := configmap.Parse("ingress", "nginx", data)
		warns = append(warns, s.ReadHeaders(func(string) (map[string]string, bool) { return map[string]string{"X-A": "1"}, true })...)
		for _, w := range warns {
			// The absent ranges' note; Go takes no early data; names
			// of no token are still dropped.
			require.Contains(t, []string{"proxy-real-ip-cidr", "ssl-early-data", "ignore-invalid-headers"}, w.Key, "%v: %s", data, w.Message)
		}
		var o Options
		o.ApplyConfigMap(s)
		return s, o
	}
	for _, key := range slices.Sorted(maps.Keys(configmap.Keys)) {
		v, ok := values[key]
		if !assert.True(t, ok, "%s: a key the router's parser reads needs a value here", key) {
			continue
		}
		base := maps.Clone(v.with)
		withKey := maps.Clone(v.with)
		if withKey == nil {
			withKey = map[string]string{}
		}
		withKey[key] = v.value
		sBase, oBase := read(base)
		sKey, oKey := read(withKey)
		assert.Contains(t, sKey.Keys, key)
		if slices.Contains(embedder, key) {
			assert.True(t, reflect.DeepEqual(oBase, oKey), "%s is the embedder's, not an Options field", key)
			sBase.Keys, sKey.Keys = nil, nil
			assert.False(t, reflect.DeepEqual(sBase, sKey), "%s: parsed but changes no setting", key)
			continue
		}
		assert.False(t, reflect.DeepEqual(oBase, oKey), "%s: parsed but not applied to Options", key)
		if oKey.TLS != nil {
			assert.False(t, reflect.DeepEqual(*oKey.TLS, configmap.DefaultTLS()), "%s: parsed but the TLS policy is the default", key)
		}
	}
}

// TestApplyConfigMapKeepsOthers: a key absent from the ConfigMap leaves
// the setting the embedder made (a flag's), and Brotli keeps its encoder.
func TestApplyConfigMapKeepsOthers(t *testing.T) {
	enc := func(int) Encoder { return nil }
	o := Options{HSTS: "max-age=1", TrustForwardedProto: true, TrustForwardedFor: true, LimitReqStatusCode: 429, Brotli: &Brotli{NewEncoder: enc}}
	s, _ := configmap.Parse("ingress", "nginx", map[string]string{"enable-real-ip": "false", "enable-brotli": "true"})
	o.ApplyConfigMap(s)
	assert.Equal(t, "max-age=1", o.HSTS)
	assert.True(t, o.TrustForwardedProto)
	assert.True(t, o.TrustForwardedFor, "enable-real-ip \"false\" leaves use-forwarded-headers' trust")
	assert.Equal(t, 429, o.LimitReqStatusCode)
	require.NotNil(t, o.Brotli)
	assert.Equal(t, 4, o.Brotli.Level)
	assert.NotNil(t, o.Brotli.NewEncoder)
}

// enable-real-ip behind PROXY protocol reads the PROXY header, never
// X-Forwarded-For: ingress-nginx's real_ip_header is proxy_protocol unless
// use-forwarded-headers is on too (nginx.tmpl's realip block). Trusting
// the header there would let a client inside proxy-real-ip-cidr (all of
// them, with ingress-nginx's 0.0.0.0/0) name any address it likes.
func TestApplyConfigMapRealIPBehindProxyProtocol(t *testing.T) {
	for _, tt := range []struct {
		data map[string]string
		want bool
	}{
		{map[string]string{"enable-real-ip": "true"}, true},
		{map[string]string{"enable-real-ip": "true", "use-proxy-protocol": "true"}, false},
		{map[string]string{"enable-real-ip": "true", "use-proxy-protocol": "true", "use-forwarded-headers": "true"}, true},
		{map[string]string{"use-proxy-protocol": "true", "use-forwarded-headers": "true"}, true},
	} {
		s, _ := configmap.Parse("ingress", "nginx", tt.data)
		var o Options
		o.ApplyConfigMap(s)
		assert.Equal(t, tt.want, o.TrustForwardedFor, "%v", tt.data)
	}
}
