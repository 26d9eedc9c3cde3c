package compile

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ramjet.dev/ramjet/match"
)

// auth-proxy-set-headers reads its ConfigMap from the snapshot: the
// headers sorted and canonical, their values templates; a key that is
// not a header name or a value with another variable denies the location.
func TestAuthProxySetHeaders(t *testing.T) {
	cm := func(name string, data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: name}, Data: data}
	}
	ing := func(name, path, ref string) *networkingv1.Ingress {
		return mkIngress("prod", name, 1, withAnnotations(NginxPrefix+"auth-url", "http://auth.example/ok", NginxPrefix+"auth-proxy-set-headers", ref),
			withRules(mkRule("a.example.com", prefix(path, "web", 80))))
	}
	s := mkSnapshot(
		mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
		ing("good", "/good", "prod/auth-headers"), ing("bad-name", "/bad-name", "prod/bad-name"), ing("bad-value", "/bad-value", "prod/bad-value"),
	)
	s.ConfigMaps = []*corev1.ConfigMap{
		cm("auth-headers", map[string]string{"x-tenant": "blue", "X-Client": "$remote_addr"}),
		cm("bad-name", map[string]string{"X Tenant": "blue"}),
		cm("bad-value", map[string]string{"X-Body": "$request_body"}),
	}
	tab, ws := compileOK(t, s, Options{})
	auth := func(path string) *match.Auth { return tab.Lookup("a.example.com", path).Route.Auth }
	o := auth("/good").External.Options
	require.NotNil(t, o)
	assert.Equal(t, "prod/auth-headers", o.ProxySetHeadersFrom)
	require.Len(t, o.ProxySetHeaders, 2)
	assert.Equal(t, "X-Client", o.ProxySetHeaders[0].Name)
	assert.Equal(t, "$remote_addr", o.ProxySetHeaders[0].Value.Raw)
	assert.Equal(t, "X-Tenant", o.ProxySetHeaders[1].Name)
	assert.Contains(t, auth("/bad-name").Denied, "is not a header name")
	assert.Contains(t, auth("/bad-value").Denied, "$request_body")
	assert.Len(t, ws, 2)
}

// A GlobalAuth that does not parse is refused by Validate, naming its key.
func TestGlobalAuthValidate(t *testing.T) {
	for _, tt := range []struct {
		g    GlobalAuth
		want string
	}{
		{GlobalAuth{URL: "ftp://auth"}, "global-auth-url"},
		{GlobalAuth{URL: "http://auth/", Method: "FETCH"}, "global-auth-method"},
		{GlobalAuth{URL: "http://auth/", ResponseHeaders: "X User"}, "global-auth-response-headers"},
		{GlobalAuth{URL: "http://auth/", CacheKey: "$http_x", CacheDuration: "200 soon"}, "global-auth-cache-duration"},
		{GlobalAuth{URL: "http://auth/", CacheKey: "a b"}, "global-auth-cache-key"},
	} {
		err := Options{GlobalAuth: &tt.g}.Validate()
		require.Error(t, err, "%+v", tt.g)
		assert.Contains(t, err.Error(), tt.want)
	}
	assert.NoError(t, Options{GlobalAuth: &GlobalAuth{}}.Validate(), "no URL, no global authentication")
	assert.NoError(t, Options{GlobalAuth: &GlobalAuth{URL: "http://auth/", CacheKey: "$http_authorization"}}.Validate())
}

// auth-cache-duration reads as nginx's proxy_cache_valid: codes then one
// time; "any"; the default when empty.
func TestParseCacheDurations(t *testing.T) {
	got, err := parseCacheDurations("200 202 5m, any 30s,404 1h")
	require.NoError(t, err)
	assert.Equal(t, []match.AuthCacheValid{
		{Codes: []int{200, 202}, TTL: 5 * 60e9}, {Any: true, TTL: 30e9}, {Codes: []int{404}, TTL: 3600e9},
	}, got)
	def, err := parseCacheDurations("")
	require.NoError(t, err)
	assert.Equal(t, []match.AuthCacheValid{{Codes: []int{200, 202, 401}, TTL: 5 * 60e9}}, def)
	for _, bad := range []string{"200", "200 1h 30m", "99 5m", "200 5x"} {
		_, err := parseCacheDurations(bad)
		assert.Error(t, err, bad)
	}
}

// The value parsers of the proxying and auth-option keys take any string
// without panicking, and what they accept is in range.
func FuzzProxyingValues(f *testing.F) {
	for _, s := range []string{"", "200 202 401 5m", "any 1y, 404 30s", "error timeout http_502", "8k", "1g", "$remote_user$http_authorization", "${cookie_a}", "off"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if vs, err := parseCacheDurations(s); err == nil {
			require.NotEmpty(t, vs)
			for _, v := range vs {
				require.GreaterOrEqual(t, v.TTL, time.Duration(0))
				for _, c := range v.Codes {
					require.True(t, c >= 100 && c <= 599, c)
				}
			}
		}
		if k, err := parseCacheKey(s); err == nil {
			require.Equal(t, s, k.Raw)
		}
		if n, err := parseBufferSize(s); err == nil {
			require.GreaterOrEqual(t, n, int64(0))
		}
		var p proxyValues
		if applyNextUpstream(&p, "k", s) == nil {
			require.NotZero(t, p.next)
		}
		_ = applyNextUpstreamTimeout(&p, NginxPrefix+"k", s)
		require.GreaterOrEqual(t, p.nextTO, time.Duration(0))
	})
}

// enable-global-auth is a boolean as written, as ingress-nginx's
// GetBoolAnnotation reads it: " false" is refused there, and the global
// authentication then applies; so it does here.
func TestEnableGlobalAuthAsWritten(t *testing.T) {
	o := Options{GlobalAuth: &GlobalAuth{URL: "http://auth.example.com/check"}}
	for _, tc := range []struct {
		value    string
		global   bool
		rejected bool
	}{
		{"false", false, false},
		{"true", true, false},
		{" false", true, true},
		{"no", true, true},
	} {
		t.Run(tc.value, func(t *testing.T) {
			tab, ws := compileOK(t, protocolSnapshot(NginxPrefix+"enable-global-auth", tc.value), o)
			auth := tab.Lookup("shop.example.com", "/").Route.Auth
			require.Equal(t, tc.global, auth != nil && auth.External != nil, warningText(ws))
			require.Equal(t, tc.rejected, len(ws) == 1 && ws[0].Reason == AnnotationRejected, warningText(ws))
		})
	}
}

// Boolean annotations are read as written, as ingress-nginx's
// GetBoolAnnotation reads them: " true" is refused there, the annotation
// then absent, and so here.
func TestBooleanAnnotationsAsWritten(t *testing.T) {
	for _, key := range []string{"ssl-passthrough", "ssl-prefer-server-ciphers", "enable-opentelemetry"} {
		t.Run(key, func(t *testing.T) {
			_, ws := compileOK(t, protocolSnapshot(NginxPrefix+key, " true"), Options{})
			rejected := false
			for _, w := range ws {
				rejected = rejected || w.Reason == AnnotationRejected && strings.Contains(w.Field, key)
			}
			require.True(t, rejected, warningText(ws))
		})
	}
}

// A nil ConfigMap in the snapshot is skipped, never dereferenced, and two
// ConfigMaps of one namespace/name (a snapshot merged from two reads) give
// the same headers in either order: the one add-headers, proxy-set-headers
// and auth-proxy-set-headers all take is chosen as duplicates of other
// kinds are (keepOne).
func TestConfigMapReferencesNilAndDuplicates(t *testing.T) {
	cm := func(data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "hdrs"}, Data: data}
	}
	blue, green := cm(map[string]string{"X-Tenant": "blue"}), cm(map[string]string{"X-Tenant": "green"})
	compileWith := func(cms ...*corev1.ConfigMap) (*match.Auth, []string, []string) {
		s := mkSnapshot(
			mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
			mkIngress("prod", "app", 1, withAnnotations(NginxPrefix+"auth-url", "http://auth.example/ok", NginxPrefix+"auth-proxy-set-headers", "prod/hdrs"),
				withRules(mkRule("a.example.com", prefix("/", "web", 80)))),
		)
		s.ConfigMaps = cms
		c := ParseConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "ingress-nginx"},
			Data: map[string]string{"add-headers": "hdrs", "proxy-set-headers": "prod/hdrs"}})
		c.ReadHeaders(cms)
		tab, _ := compileOK(t, s, Options{ConfigMap: c})
		return tab.Lookup("a.example.com", "/").Route.Auth, c.Router.AddHeaders.Values("X-Tenant"), c.Router.ProxySetHeaders.Values("X-Tenant")
	}
	auth, add, set := compileWith(nil, blue, nil)
	require.NotNil(t, auth.External)
	require.NotNil(t, auth.External.Options)
	assert.Equal(t, "blue", auth.External.Options.ProxySetHeaders[0].Value.Raw)
	assert.Equal(t, []string{"blue"}, add)
	assert.Equal(t, []string{"blue"}, set)

	a1, add1, set1 := compileWith(blue, green)
	a2, add2, set2 := compileWith(green, blue)
	assert.Equal(t, a1.External.Options.ProxySetHeaders[0].Value.Raw, a2.External.Options.ProxySetHeaders[0].Value.Raw)
	assert.Equal(t, add1, add2)
	assert.Equal(t, set1, set2)
	assert.Equal(t, add1, []string{a1.External.Options.ProxySetHeaders[0].Value.Raw}, "every reference takes the same copy")
}

// A global-auth-* ConfigMap key whose value cannot be served is rejected
// alone, with a warning naming it, and the global authentication keeps
// the rest: a value that does not parse no longer drops it silently. An
// inner space in global-auth-request-redirect, which ingress-nginx writes
// unquoted and nginx then refuses, keeps the default ($request_uri).
func TestGlobalAuthConfigMapBadKey(t *testing.T) {
	for _, tt := range []struct {
		key, value string
		global     bool
	}{
		{"global-auth-request-redirect", "/after login", true},
		{"global-auth-request-redirect", "/after\tlogin", true},
		{"global-auth-method", "FETCH", true},
		{"global-auth-response-headers", "X User", true},
		{"global-auth-cache-duration", "200 soon", true},
		{"global-auth-signin-redirect-param", "r d", true},
		{"global-auth-url", "ftp://auth.example/ok", false},
	} {
		t.Run(tt.key+"="+tt.value, func(t *testing.T) {
			data := map[string]string{"global-auth-url": "http://auth.example/ok", "global-auth-signin": "https://login.example/", "global-auth-cache-key": "$remote_user", tt.key: tt.value}
			c := ParseConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "ingress-nginx"}, Data: data})
			require.Len(t, c.Warnings(), 1)
			w := c.Warnings()[0]
			assert.Equal(t, ConfigMapKeyRejected, w.Reason)
			assert.Equal(t, "data["+tt.key+"]", w.Field)
			s := mkSnapshot(mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
				mkIngress("prod", "app", 1, withRules(mkRule("a.example.com", prefix("/", "web", 80)))))
			tab, _ := compileOK(t, s, Options{ConfigMap: c})
			a := tab.Lookup("a.example.com", "/").Route.Auth
			require.Equal(t, tt.global, a != nil && a.External != nil)
			if tt.global {
				assert.Empty(t, a.External.RequestRedirect)
				assert.Empty(t, a.External.Method)
			}
		})
	}
	err := Options{GlobalAuth: &GlobalAuth{URL: "http://auth/", RequestRedirect: "/after login"}}.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "global-auth-request-redirect")
	require.NoError(t, Options{GlobalAuth: &GlobalAuth{URL: "http://auth/", RequestRedirect: " /after-login "}}.Validate())
}

// A response header listed twice, in any case, stays listed twice, as
// ingress-nginx writes a proxy_set_header line for each listing.
func TestAuthResponseHeadersListedTwice(t *testing.T) {
	s := mkSnapshot(mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
		mkIngress("prod", "app", 1, withAnnotations(NginxPrefix+"auth-url", "http://auth.example/ok", NginxPrefix+"auth-response-headers", "X-User, x-user,X-Email"),
			withRules(mkRule("a.example.com", prefix("/", "web", 80)))),
		mkIngress("prod", "global", 1, withRules(mkRule("b.example.com", prefix("/", "web", 80)))))
	tab, _ := compileOK(t, s, Options{GlobalAuth: &GlobalAuth{URL: "http://auth.example/ok", ResponseHeaders: "x-user,X-User"}})
	assert.Equal(t, []string{"X-User", "X-User", "X-Email"}, tab.Lookup("a.example.com", "/").Route.Auth.External.ResponseHeaders)
	assert.Equal(t, []string{"X-User", "X-User"}, tab.Lookup("b.example.com", "/").Route.Auth.External.ResponseHeaders)
}

// global-auth-response-headers with a bad name keeps the good ones, as
// ingress-nginx skips only the names authreq.ValidHeader refuses
// (template/configmap.go ReadConfig), and the warning names the bad one.
func TestGlobalAuthResponseHeadersPartlyBad(t *testing.T) {
	data := map[string]string{"global-auth-url": "http://auth.example/ok", "global-auth-response-headers": "X-User, Bad Name,X-Email"}
	c := ParseConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "ingress-nginx"}, Data: data})
	require.Len(t, c.Warnings(), 1)
	w := c.Warnings()[0]
	assert.Equal(t, ConfigMapKeyRejected, w.Reason)
	assert.Equal(t, "data[global-auth-response-headers]", w.Field)
	assert.Contains(t, w.Message, `"Bad Name"`)
	assert.NotContains(t, w.Message, "default is kept")
	s := mkSnapshot(mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
		mkIngress("prod", "app", 1, withRules(mkRule("a.example.com", prefix("/", "web", 80)))))
	tab, _ := compileOK(t, s, Options{ConfigMap: c})
	a := tab.Lookup("a.example.com", "/").Route.Auth
	require.True(t, a != nil && a.External != nil)
	assert.Equal(t, []string{"X-User", "X-Email"}, a.External.ResponseHeaders)
}

// global-auth-cache-duration as ingress-nginx's ReadConfig reads it:
// without the key the global auth location gets no proxy_cache_valid
// (GlobalExternalAuth.AuthCacheDuration defaults to none), so only answers
// that say how long they may be kept are cached; an empty or bad value is
// authreq.DefaultCacheDuration, a bad one with a warning.
func TestGlobalAuthCacheDuration(t *testing.T) {
	unset := "(unset)"
	for _, tt := range []struct {
		value        string
		warns        bool
		ok200, ok401 time.Duration
	}{
		{unset, false, 0, 0},
		{"", false, 5 * time.Minute, 5 * time.Minute},
		{" , ", false, 5 * time.Minute, 5 * time.Minute},
		{"200 soon", true, 5 * time.Minute, 5 * time.Minute},
		{"200 30m", false, 30 * time.Minute, 0},
	} {
		t.Run(tt.value, func(t *testing.T) {
			data := map[string]string{"global-auth-url": "http://auth.example/ok", "global-auth-cache-key": "$remote_user"}
			if tt.value != unset {
				data["global-auth-cache-duration"] = tt.value
			}
			c := ParseConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "ingress-nginx"}, Data: data})
			assert.Equal(t, tt.warns, len(c.Warnings()) > 0, "warnings: %v", c.Warnings())
			s := mkSnapshot(mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
				mkIngress("prod", "app", 1, withRules(mkRule("a.example.com", prefix("/", "web", 80)))))
			tab, _ := compileOK(t, s, Options{ConfigMap: c})
			a := tab.Lookup("a.example.com", "/").Route.Auth
			require.True(t, a != nil && a.External != nil && a.External.Options != nil)
			o := a.External.Options
			require.NotNil(t, o.CacheKey)
			assert.Equal(t, tt.ok200, o.TTLFor(200), "200")
			assert.Equal(t, tt.ok401, o.TTLFor(401), "401")
		})
	}
}

// relative-redirects, the ConfigMap key, is nginx's absolute_redirect off
// at the http level, which the server-level sign-in location inherits:
// a sign-in URL starting with "/" stays relative, the Ingress's own and
// the global one. The annotation sets it per location, where the sign-in
// location is not.
func TestSigninRelativeRedirects(t *testing.T) {
	for _, tt := range []struct {
		name     string
		o        Options
		ann      []string
		relative bool
	}{
		{"configmap", Options{RelativeRedirects: true}, nil, true},
		{"annotation", Options{}, []string{NginxPrefix + "relative-redirects", "true"}, false},
		{"default", Options{}, nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ann := append([]string{NginxPrefix + "auth-url", "http://auth.example/ok", NginxPrefix + "auth-signin", "/start"}, tt.ann...)
			s := mkSnapshot(mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
				mkIngress("prod", "own", 1, withAnnotations(ann...), withRules(mkRule("a.example.com", prefix("/", "web", 80)))),
				mkIngress("prod", "global", 1, withRules(mkRule("b.example.com", prefix("/", "web", 80)))))
			o := tt.o
			o.GlobalAuth = &GlobalAuth{URL: "http://auth.example/ok", Signin: "/global-start"}
			tab, _ := compileOK(t, s, o)
			for _, h := range []string{"a.example.com", "b.example.com"} {
				x := tab.Lookup(h, "/").Route.Auth.External
				require.NotNil(t, x.Signin, h)
				want := tt.relative && !(h == "a.example.com" && tt.name == "annotation")
				assert.Equal(t, want, x.SigninRelative, h)
			}
		})
	}
}
