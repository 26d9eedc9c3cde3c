package router

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/match/htpasswd"
	"ramjet.dev/ramjet/match/urltemplate"
)

// authService is a loopback auth service: it answers per the path it is
// asked on and remembers the last request it received.
type authService struct {
	srv  *httptest.Server
	mu   sync.Mutex
	last *http.Request
	body []byte
}

func newAuthService(t testing.TB) *authService {
	a := &authService{}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		a.last, a.body = r.Clone(r.Context()), body
		a.mu.Unlock()
		h := w.Header()
		switch {
		case strings.HasPrefix(r.URL.Path, "/ok"):
			h.Set("X-User", "alice")
			h.Set("X-Email", "alice@example.com")
			h.Set("X-Not-Copied", "1")
			h.Add("Set-Cookie", "session=abc")
		case strings.HasPrefix(r.URL.Path, "/anonymous"):
		case strings.HasPrefix(r.URL.Path, "/deny"):
			h.Set("Www-Authenticate", `Bearer realm="sso"`)
			h.Add("Set-Cookie", "tried=1")
			w.WriteHeader(http.StatusUnauthorized)
		case strings.HasPrefix(r.URL.Path, "/forbid"):
			w.WriteHeader(http.StatusForbidden)
		case strings.HasPrefix(r.URL.Path, "/redirect"):
			h.Set("Location", "/elsewhere")
			w.WriteHeader(http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/slow"):
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
		default:
			w.WriteHeader(http.StatusInternalServerError)
		}
		_, _ = io.WriteString(w, "auth service body\n")
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *authService) request() (*http.Request, []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last, a.body
}

func externalAuth(t testing.TB, url string, mod func(*match.ExternalAuth)) *match.Auth {
	u, err := urltemplate.ParseAuthURL(url, false)
	require.NoError(t, err)
	x := &match.ExternalAuth{URL: u}
	if mod != nil {
		mod(x)
	}
	return &match.Auth{External: x}
}

// authRouter serves shop.example.com/app with the given authentication
// in front of an echo backend.
func authRouter(t testing.TB, o Options, a *match.Auth) (*Router, *records) {
	_, addr := echoBackend(t, "web")
	rt := route(match.Prefix, "/app", httpBackend("prod/web:80", addr))
	rt.Auth = a
	recs := newRecords()
	o.Observer = recs.observe
	r := newTestRouter(o)
	r.Publish(table("auth", vhost("shop.example.com", nil, rt)))
	return r, recs
}

// TestExternalAuthSubrequest: the subrequest carries what ingress-nginx's
// auth location sends, no body, and the backend then gets the copied
// headers, never the client's versions of them.
func TestExternalAuthSubrequest(t *testing.T) {
	svc := newAuthService(t)
	r, _ := authRouter(t, Options{}, externalAuth(t, svc.srv.URL+"/ok/$host", func(x *match.ExternalAuth) {
		x.ResponseHeaders = []string{"X-User", "X-Email", "X-Missing"}
	}))
	req := httptest.NewRequest(http.MethodPost, "/app/page?a=b", strings.NewReader("secret body"))
	req.Host = "shop.example.com"
	req.RemoteAddr = "203.0.113.7:4567"
	req.Header.Set("Cookie", "sso=token")
	req.Header.Set("X-User", "mallory")
	req.Header.Set("X-Missing", "forged")
	req.Header.Set("X-Forwarded-For", "10.1.1.1")
	req.Header.Set("X-Forwarded-Proto", "https")
	req.Header["X_Under"] = []string{"dropped"}
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	res := rec.Result()
	require.Equal(t, http.StatusOK, res.StatusCode)

	got, gotBody := svc.request()
	require.NotNil(t, got)
	assert.Equal(t, http.MethodGet, got.Method, "nginx's subrequests are GET")
	assert.Equal(t, "/ok/shop.example.com", got.URL.Path)
	assert.Equal(t, "127.0.0.1", got.Host, "the auth URL's host, without its port, as nginx sends it")
	assert.Empty(t, gotBody, "the body is not sent")
	want := map[string]string{
		"X-Original-Url":          "http://shop.example.com/app/page?a=b",
		"X-Original-Method":       "POST",
		"X-Sent-From":             "nginx-ingress-controller",
		"X-Real-Ip":               "203.0.113.7",
		"X-Forwarded-For":         "203.0.113.7",
		"X-Auth-Request-Redirect": "/app/page?a=b",
		"Cookie":                  "sso=token",
		"X-Forwarded-Proto":       "",
		"X_under":                 "",
		"X_Under":                 "",
		"Content-Length":          "",
		"X-Original-Uri":          "",
		"X-Scheme":                "",
	}
	for k, v := range want {
		assert.Equal(t, v, got.Header.Get(k), "auth service header %s", k)
	}
	assert.Equal(t, int64(0), got.ContentLength)
	require.NotEmpty(t, got.Header.Get("X-Request-Id"))
	assert.Equal(t, got.Header.Get("X-Request-Id"), res.Header.Get("Seen-X-Request-Id"), "one request ID for the service and the backend")

	assert.Equal(t, "alice", res.Header.Get("Seen-X-User"))
	assert.Equal(t, "alice@example.com", res.Header.Get("Seen-X-Email"))
	assert.Empty(t, res.Header.Values("Seen-X-Missing"), "a named header the service did not send is removed")
	assert.Empty(t, res.Header.Values("Seen-X-Not-Copied"))
	assert.Equal(t, []string{"session=abc"}, res.Header.Values("Set-Cookie"))
}

// TestExternalAuthClientAddr: the auth service's X-Real-IP, X-Forwarded-For
// and $remote_addr are the client address as the backend gets it (nginx's
// $remote_addr after the realip module, or $full_x_forwarded_for), not the
// peer's.
func TestExternalAuthClientAddr(t *testing.T) {
	svc := newAuthService(t)
	lb := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, tt := range []struct {
		name                     string
		o                        Options
		wantRealIP, wantXFF, url string
	}{
		{"peer", Options{ProxyRealIPCIDR: lb}, "10.0.0.5", "10.0.0.5", "/ok/10.0.0.5"},
		{"trusted forwarded", Options{ProxyRealIPCIDR: lb, TrustForwardedFor: true}, "203.0.113.7", "203.0.113.7", "/ok/203.0.113.7"},
		{"full", Options{ProxyRealIPCIDR: lb, TrustForwardedFor: true, ComputeFullForwardedFor: true},
			"203.0.113.7", "203.0.113.7, 10.0.0.5", "/ok/203.0.113.7"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := authRouter(t, tt.o, externalAuth(t, svc.srv.URL+"/ok/$remote_addr", nil))
			req := httptest.NewRequest(http.MethodGet, "/app", nil)
			req.Host = "shop.example.com"
			req.RemoteAddr = "10.0.0.5:4567"
			req.Header.Set("X-Forwarded-For", "203.0.113.7")
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, req)
			require.Equal(t, http.StatusOK, rec.Code)
			got, _ := svc.request()
			require.NotNil(t, got)
			assert.Equal(t, tt.url, got.URL.Path)
			assert.Equal(t, tt.wantRealIP, got.Header.Get("X-Real-Ip"))
			assert.Equal(t, []string{tt.wantXFF}, got.Header.Values("X-Forwarded-For"))
		})
	}
}

// TestConnectionKeepsRouterHeaders: the client's Connection header names
// hop-by-hop fields of the client's own hop; it removes the client's
// fields of those names, never the ones the router sets itself (forwarded
// headers, the request ID, auth-response-headers), on either upstream path.
func TestConnectionKeepsRouterHeaders(t *testing.T) {
	svc := newAuthService(t)
	listed := []string{"X-User", "X-Forwarded-For", "X-Real-Ip", "X-Request-Id", "X-Forwarded-Host",
		"X-Forwarded-Port", "X-Forwarded-Proto", "X-Scheme", "X-Forwarded-Scheme", "X-Original-Forwarded-For", "X-Hop"}
	for _, p := range upstreamPaths {
		t.Run(p.name, func(t *testing.T) {
			r, _ := authRouter(t, Options{}, externalAuth(t, svc.srv.URL+"/ok", func(x *match.ExternalAuth) {
				x.ResponseHeaders = []string{"X-User"}
			}))
			if p.netHTTP {
				r.h1 = nil
			}
			t.Cleanup(r.CloseIdleConnections)
			front := httptest.NewServer(r)
			t.Cleanup(front.Close)
			res := rawRequest(t, front.Listener.Addr().String(), "GET /app HTTP/1.1\r\nHost: shop.example.com\r\n"+
				"Connection: "+strings.Join(listed, ", ")+"\r\nConnection: close\r\n"+
				"X-User: mallory\r\nX-Forwarded-For: 192.0.2.1\r\nX-Request-Id: abc\r\nX-Hop: 1\r\n\r\n")
			require.Equal(t, http.StatusOK, res.StatusCode)
			h := res.Header
			assert.Equal(t, []string{"alice"}, h.Values("Seen-X-User"), "the auth service's header")
			assert.Equal(t, []string{"127.0.0.1"}, h.Values("Seen-X-Forwarded-For"))
			assert.Equal(t, []string{"127.0.0.1"}, h.Values("Seen-X-Real-Ip"))
			assert.Equal(t, []string{"abc"}, h.Values("Seen-X-Request-Id"))
			assert.Equal(t, []string{"192.0.2.1"}, h.Values("Seen-X-Original-Forwarded-For"))
			assert.Equal(t, []string{"shop.example.com"}, h.Values("Seen-X-Forwarded-Host"))
			assert.Equal(t, []string{"http"}, h.Values("Seen-X-Forwarded-Proto"))
			assert.Equal(t, []string{"http"}, h.Values("Seen-X-Scheme"))
			assert.Equal(t, []string{"http"}, h.Values("Seen-X-Forwarded-Scheme"))
			assert.NotEmpty(t, h.Values("Seen-X-Forwarded-Port"))
			assert.Empty(t, h.Values("Seen-X-Hop"), "the client's own hop-by-hop field is still removed")
			assert.Empty(t, h.Values("Seen-Connection"))
		})
	}
}

// TestExternalAuthAnswers maps the service's answers as nginx's
// auth_request does.
func TestExternalAuthAnswers(t *testing.T) {
	svc := newAuthService(t)
	signin, err := urltemplate.SigninURL("https://login.example.com/start", "")
	require.NoError(t, err)
	signinOwn, err := urltemplate.SigninURL("https://$host/oauth2/start?rd=$escaped_request_uri", "")
	require.NoError(t, err)
	signinRel, err := urltemplate.SigninURL("/oauth2/start", "")
	require.NoError(t, err)
	tests := []struct {
		name    string
		path    string
		mod     func(*match.ExternalAuth)
		status  int
		reason  string
		headers map[string]string
		backend bool
	}{
		{name: "2xx passes", path: "/ok", status: 200, backend: true},
		{name: "2xx without headers passes", path: "/anonymous", status: 200, backend: true},
		{name: "401 is passed on with its challenge", path: "/deny", status: 401, reason: ReasonUnauthorized,
			headers: map[string]string{"Www-Authenticate": `Bearer realm="sso"`, "Set-Cookie": ""}},
		{name: "401 with always-set-cookie", path: "/deny", mod: func(x *match.ExternalAuth) { x.AlwaysSetCookie = true },
			status: 401, headers: map[string]string{"Set-Cookie": "tried=1"}},
		{name: "401 redirects to the sign-in page", path: "/deny", mod: func(x *match.ExternalAuth) { x.Signin = &signin },
			status: 302, reason: ReasonAuthSignin, headers: map[string]string{
				"Location":   "https://login.example.com/start?rd=http://shop.example.com%2Fapp%2Fx%3Fa%3Db%26c%3Dd",
				"Set-Cookie": "tried=1"}},
		{name: "sign-in URL with variables and its own rd", path: "/deny", mod: func(x *match.ExternalAuth) { x.Signin = &signinOwn },
			status: 302, headers: map[string]string{"Location": "https://shop.example.com/oauth2/start?rd=%2Fapp%2Fx%3Fa%3Db%26c%3Dd"}},
		{name: "a relative sign-in URL is made absolute, as nginx's absolute_redirect does", path: "/deny", mod: func(x *match.ExternalAuth) { x.Signin = &signinRel },
			status: 302, headers: map[string]string{"Location": "http://shop.example.com/oauth2/start?rd=http://shop.example.com%2Fapp%2Fx%3Fa%3Db%26c%3Dd"}},
		{name: "403 is passed on", path: "/forbid", status: 403, reason: ReasonAuthForbidden},
		{name: "a redirect is an error", path: "/redirect", status: 500, reason: ReasonAuthError},
		{name: "5xx is an error", path: "/fail", status: 500, reason: ReasonAuthError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, recs := authRouter(t, Options{}, externalAuth(t, svc.srv.URL+tt.path, tt.mod))
			res := serve(r, http.MethodGet, "shop.example.com", "/app/x?a=b&c=d", nil)
			require.Equal(t, tt.status, res.StatusCode)
			for k, v := range tt.headers {
				assert.Equal(t, v, res.Header.Get(k), k)
			}
			assert.Equal(t, tt.backend, res.Header.Get("X-Backend") == "web", "reached the backend")
			if tt.reason != "" {
				assert.Equal(t, tt.reason, recs.last(t).Reason)
			}
			assert.NotContains(t, body(t, res), "auth service body")
		})
	}
}

// TestExternalAuthMethod: auth-method sets the subrequest's method and
// adds X-Original-URI and X-Scheme; auth-request-redirect replaces
// X-Auth-Request-Redirect.
func TestExternalAuthMethod(t *testing.T) {
	svc := newAuthService(t)
	r, _ := authRouter(t, Options{}, externalAuth(t, svc.srv.URL+"/ok", func(x *match.ExternalAuth) {
		x.Method, x.RequestRedirect = http.MethodPost, "https://app.example.com/home"
	}))
	res := serve(r, http.MethodGet, "shop.example.com", "/app?q=1", nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	got, _ := svc.request()
	assert.Equal(t, http.MethodPost, got.Method)
	assert.Equal(t, "/app?q=1", got.Header.Get("X-Original-Uri"))
	assert.Equal(t, "http", got.Header.Get("X-Scheme"))
	assert.Equal(t, "https://app.example.com/home", got.Header.Get("X-Auth-Request-Redirect"))
}

// TestExternalAuthBounded: a service that does not answer within
// AuthTimeout, or cannot be reached, makes a 500, never a pass.
func TestExternalAuthBounded(t *testing.T) {
	svc := newAuthService(t)
	for name, url := range map[string]string{"slow": svc.srv.URL + "/slow", "unreachable": "http://" + deadAddr(t) + "/"} {
		t.Run(name, func(t *testing.T) {
			r, recs := authRouter(t, Options{AuthTimeout: 200 * time.Millisecond}, externalAuth(t, url, nil))
			start := time.Now()
			res := serve(r, http.MethodGet, "shop.example.com", "/app", nil)
			require.Equal(t, http.StatusInternalServerError, res.StatusCode)
			assert.Less(t, time.Since(start), 3*time.Second)
			assert.Equal(t, ReasonAuthError, recs.last(t).Reason)
			assert.Empty(t, res.Header.Get("X-Backend"))
		})
	}
}

// TestExternalAuthThroughTransport: with Options.Transport the subrequest
// goes through it too.
func TestExternalAuthThroughTransport(t *testing.T) {
	svc := newAuthService(t)
	var seen []string
	var mu sync.Mutex
	tr := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		mu.Lock()
		seen = append(seen, req.URL.Path+" "+map[bool]string{true: "auth", false: "proxied"}[IsExternalAuth(req.Context())])
		mu.Unlock()
		return http.DefaultTransport.RoundTrip(req)
	})
	r, _ := authRouter(t, Options{Transport: tr}, externalAuth(t, svc.srv.URL+"/ok", nil))
	res := serve(r, http.MethodGet, "shop.example.com", "/app/y", nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	mu.Lock()
	defer mu.Unlock()
	if d := cmp.Diff([]string{"/ok auth", "/app/y proxied"}, seen); d != "" {
		t.Errorf("requests through the transport (-want +got):\n%s", d)
	}
}

// TestAuthBasicThenExternal: with both, basic comes first, the service
// still sees the client's Authorization, the backend does not.
func TestAuthBasicThenExternal(t *testing.T) {
	svc := newAuthService(t)
	users, problems := htpasswd.ParseHtpasswd([]byte("alice:{PLAIN}pw\n"))
	require.Empty(t, problems)
	a := externalAuth(t, svc.srv.URL+"/ok", nil)
	a.Basic = match.NewBasicAuth(match.BasicAuth{Realm: "r", Secret: "prod/s", SecretType: "auth-file", Users: users})
	r, _ := authRouter(t, Options{}, a)

	res := serve(r, http.MethodGet, "shop.example.com", "/app", http.Header{"Authorization": {"Basic YWxpY2U6eA=="}})
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	assert.Equal(t, `Basic realm="r"`, res.Header.Get("Www-Authenticate"))

	res = serve(r, http.MethodGet, "shop.example.com", "/app", http.Header{"Authorization": {"Basic YWxpY2U6cHc="}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	got, _ := svc.request()
	assert.Equal(t, "Basic YWxpY2U6cHc=", got.Header.Get("Authorization"))
	assert.Empty(t, res.Header.Values("Seen-Authorization"))
}

// TestCORSReplacesBackendHeaders: the CORS headers replace the backend's
// own, on both upstream paths, as more_set_headers does; other headers
// pass.
func TestCORSReplacesBackendHeaders(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "https://backend.example.com")
		w.Header().Set("Access-Control-Max-Age", "5")
		w.Header().Set("X-Own", "kept")
		_, _ = io.WriteString(w, "ok\n")
	}))
	t.Cleanup(up.Close)
	cors := match.NewCORS(match.CORS{Origins: []string{"https://app.example.com"}, Methods: "GET", Headers: "X-A", MaxAge: 60})
	for name, tr := range map[string]http.RoundTripper{"fast path": nil, "transport": http.DefaultTransport} {
		t.Run(name, func(t *testing.T) {
			rt := route(match.Prefix, "/", httpBackend("prod/web:80", up.Listener.Addr().String()))
			rt.CORS = cors
			r := newTestRouter(Options{Transport: tr})
			r.Publish(table("cors", vhost("api.example.com", nil, rt)))
			res := serve(r, http.MethodGet, "api.example.com", "/x", http.Header{"Origin": {"https://app.example.com"}})
			require.Equal(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, []string{"https://app.example.com"}, res.Header.Values("Access-Control-Allow-Origin"))
			assert.Equal(t, []string{"60"}, res.Header.Values("Access-Control-Max-Age"))
			assert.Equal(t, "kept", res.Header.Get("X-Own"))

			res = serve(r, http.MethodGet, "api.example.com", "/x", http.Header{"Origin": {"https://other.example.com"}})
			assert.Equal(t, []string{"https://backend.example.com"}, res.Header.Values("Access-Control-Allow-Origin"),
				"an origin the policy does not allow gets the backend's answer untouched")
		})
	}
}

// TestCredCacheBounded: the cache never holds more than its slots, a
// hit needs the same hash and password, a wrong password is remembered as
// wrong, and a failure never evicts a success from its slot.
func TestCredCacheBounded(t *testing.T) {
	users, problems := htpasswd.ParseHtpasswd([]byte("bob:$apr1$Qx9Zb2Lc$c3Ji.1cfduoFw.B8NRNV//\n"))
	require.Empty(t, problems)
	c, ok := users.Lookup([]byte("bob"))
	require.True(t, ok)
	var a authState
	ctx := context.Background()
	assert.Equal(t, denied, a.verifySlow(ctx, c, []byte("wrong")))
	assert.Equal(t, granted, a.verifySlow(ctx, c, []byte("builder")))
	assert.Equal(t, granted, a.verifySlow(ctx, c, []byte("builder")), "a hit")
	assert.Equal(t, denied, a.verifySlow(ctx, c, []byte("wrong")), "a remembered failure")
	other := htpasswd.Credential{Kind: c.Kind, Hash: "$apr1$Qx9Zb2Lc$AAAAAAAAAAAAAAAAAAAAAA"}
	assert.Equal(t, denied, a.verifySlow(ctx, other, []byte("builder")), "another hash never hits bob's entry")
	n := 0
	for i := range a.cache.shards {
		for _, e := range a.cache.shards[i].slots {
			if e.key != ([32]byte{}) {
				n++
			}
		}
	}
	assert.Equal(t, 3, n, "bob right, bob wrong, the other hash wrong")

	right := credKey(c, []byte("builder"))
	a.cache.put(right, false)
	ok, hit := a.cache.get(right)
	assert.True(t, hit && ok, "a failure does not replace a success")
	long := []byte(strings.Repeat("p", 600))
	assert.NotEqual(t, credKey(c, long), credKey(c, long[:599]), "passwords past the key buffer are keyed whole")
}

// TestExternalAuthResponseHeaderLines: a named header the service sends
// on several lines reaches the backend as nginx's $upstream_http_<name>
// holds it, every line joined with ", ", not only the first.
func TestExternalAuthResponseHeaderLines(t *testing.T) {
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["X-Groups"] = []string{"readers", "admins"}
	}))
	t.Cleanup(svc.Close)
	r, _ := authRouter(t, Options{}, externalAuth(t, svc.URL+"/", func(x *match.ExternalAuth) {
		x.ResponseHeaders = []string{"X-Groups"}
	}))
	req := httptest.NewRequest(http.MethodGet, "/app", nil)
	req.Host = "shop.example.com"
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	res := rec.Result()
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, []string{"readers, admins"}, res.Header.Values("Seen-X-Groups"))
}

// TestAuthAlwaysSetCookieOnRouterAnswers: with auth-always-set-cookie the
// auth service's Set-Cookie goes on every answer of the location, the
// router's own after authentication included (nginx's "add_header
// Set-Cookie $auth_cookie always"); without it, only on the statuses
// add_header uses, which a 502 is not.
func TestAuthAlwaysSetCookieOnRouterAnswers(t *testing.T) {
	svc := newAuthService(t)
	dead := deadAddr(t)
	for _, always := range []bool{true, false} {
		rt := route(match.Prefix, "/app", httpBackend("prod/web:80", dead))
		rt.Auth = externalAuth(t, svc.srv.URL+"/ok", func(x *match.ExternalAuth) { x.AlwaysSetCookie = always })
		r := newTestRouter(Options{})
		r.Publish(table("auth", vhost("shop.example.com", nil, rt)))
		req := httptest.NewRequest(http.MethodGet, "/app", nil)
		req.Host = "shop.example.com"
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		require.Equal(t, http.StatusBadGateway, rec.Code, "the backend is unreachable")
		if always {
			assert.Equal(t, []string{"session=abc"}, rec.Result().Header.Values("Set-Cookie"))
		} else {
			assert.Empty(t, rec.Result().Header.Values("Set-Cookie"))
		}
	}
}

// TestAuthCacheKeyCookie: $cookie_<name> in auth-cache-key is nginx's:
// the first cookie whose name matches in any case, its value as sent.
// A cookie Go's parser refuses (a quoted value with a backslash, as
// Python's http.cookies writes a comma) or names in another case must
// not read as no cookie, or the service's 200 for it would be kept under
// the key of requests without one, and served to them.
func TestAuthCacheKeyCookie(t *testing.T) {
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Cookie"), "=") {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	t.Cleanup(svc.Close)
	key, err := match.ParseVarTemplate("$cookie_session")
	require.NoError(t, err)
	for _, cookie := range []string{`session="a\054b"`, `Session=alice`, `other=1, session=bob`} {
		r, _ := authRouter(t, Options{}, externalAuth(t, svc.URL+"/", func(x *match.ExternalAuth) {
			x.Options = &match.ExternalAuthOptions{CacheKey: &key, CacheValid: []match.AuthCacheValid{{Codes: []int{200, 401}, TTL: time.Minute}}}
		}))
		res := serve(r, http.MethodGet, "shop.example.com", "/app", http.Header{"Cookie": {cookie}})
		body(t, res)
		require.Equal(t, http.StatusOK, res.StatusCode, cookie)
		res = serve(r, http.MethodGet, "shop.example.com", "/app", nil)
		body(t, res)
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "after %s, a request without the cookie", cookie)
	}
}

func TestAuthVarsCookie(t *testing.T) {
	for _, tc := range []struct{ header, want string }{
		{"session=abc", "abc"},
		{"a=1; SESSION=abc; session=def", "abc"},
		{`session="a\054b"`, `"a\054b"`},
		{"a=1, session=abc", "abc"},
		{"sessionid=1; session = abc", "abc"},
		{"a=session=1", ""},
		{"session", ""},
		{"session;session=abc", ""},
		{"a=1, session=abc ;b=2", "abc "},
	} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header["Cookie"] = []string{tc.header}
		v := authVars{req: req}
		ref, err := match.ParseVarTemplate("$cookie_session")
		require.NoError(t, err)
		assert.Equal(t, tc.want, v.expand(&ref), tc.header)
	}
}

// TestAuthVarsSubrequest: auth-cache-key and auth-proxy-set-headers are
// expanded in ingress-nginx's auth location, where nginx's auth_request
// subrequest has the location's URI and no arguments: $uri is
// "/_external-auth-<path in base64url>-<path type>" (nginx.tmpl's
// buildAuthLocation), the Exact twin's for a Prefix path asked as
// declared; $args, $query_string and $arg_<name> are empty, and
// $request_uri stays the client's (checked with nginx 1.22 on loopback).
func TestAuthVarsSubrequest(t *testing.T) {
	svc := newAuthService(t)
	headers := []match.AuthHeader{}
	for _, h := range []struct{ name, value string }{
		{"X-Uri", "$uri"}, {"X-Args", "[$args][$query_string][$arg_a]"}, {"X-Request-Uri", "$request_uri"},
	} {
		v, err := match.ParseVarTemplate(h.value)
		require.NoError(t, err)
		headers = append(headers, match.AuthHeader{Name: h.name, Value: v})
	}
	r, _ := authRouter(t, Options{}, externalAuth(t, svc.srv.URL+"/ok", func(x *match.ExternalAuth) {
		x.Options = &match.ExternalAuthOptions{ProxySetHeaders: headers}
	}))
	for _, tc := range []struct{ target, uri string }{
		{"/app/x?a=1", "/_external-auth-L2FwcC8-Prefix"},
		{"/app?a=1", "/_external-auth-L2FwcA-Exact"},
		{"/app//?a=1", "/_external-auth-L2FwcC8-Prefix"},
	} {
		res := serve(r, http.MethodGet, "shop.example.com", tc.target, nil)
		body(t, res)
		require.Equal(t, http.StatusOK, res.StatusCode, tc.target)
		got, _ := svc.request()
		assert.Equal(t, tc.uri, got.Header.Get("X-Uri"), tc.target)
		assert.Equal(t, "[][][]", got.Header.Get("X-Args"), tc.target)
		assert.Equal(t, tc.target, got.Header.Get("X-Request-Uri"), tc.target)
	}
}

// TestAuthCacheVary: an answer whose Vary names request headers depends on
// more than auth-cache-key; nginx's cache keeps it per value of those
// headers and serves it only to requests that send the same ones. "Vary:
// *" is never kept.
func TestAuthCacheVary(t *testing.T) {
	var calls atomic.Int32
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Vary", r.URL.Query().Get("vary"))
		if r.Header.Get("Authorization") != "Bearer good" {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	t.Cleanup(svc.Close)
	key, err := match.ParseVarTemplate("$cookie_session")
	require.NoError(t, err)
	newRouter := func(vary string) *Router {
		r, _ := authRouter(t, Options{}, externalAuth(t, svc.URL+"/?vary="+vary, func(x *match.ExternalAuth) {
			x.Options = &match.ExternalAuthOptions{CacheKey: &key, CacheValid: []match.AuthCacheValid{{Codes: []int{200, 401}, TTL: time.Minute}}}
		}))
		return r
	}
	status := func(r *Router, auth string) int {
		h := http.Header{}
		if auth != "" {
			h.Set("Authorization", auth)
		}
		res := serve(r, http.MethodGet, "shop.example.com", "/app", h)
		body(t, res)
		return res.StatusCode
	}

	r := newRouter("Accept-Encoding,%20authorization")
	require.Equal(t, http.StatusOK, status(r, "Bearer good"))
	require.Equal(t, http.StatusOK, status(r, "Bearer good"))
	assert.EqualValues(t, 1, calls.Load(), "the same variant is answered from the cache")
	assert.Equal(t, http.StatusUnauthorized, status(r, ""), "another Authorization, the same key")
	assert.EqualValues(t, 2, calls.Load())

	calls.Store(0)
	r = newRouter("*")
	status(r, "Bearer good")
	status(r, "Bearer good")
	assert.EqualValues(t, 2, calls.Load(), "Vary: * is not kept")
}

// TestAuthCacheHeaders: whether an answer is kept follows nginx's
// proxy_cache (ngx_http_upstream_process_accel_expires, _cache_control,
// _expires): X-Accel-Expires first (0: never), then Cache-Control
// (no-cache, no-store or private anywhere in it: never; s-maxage before
// max-age; 0: never), then Expires (a past or bad date: never), then
// auth-cache-duration.
func TestAuthCacheHeaders(t *testing.T) {
	var calls atomic.Int32
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		for _, kv := range r.URL.Query()["h"] {
			k, v, _ := strings.Cut(kv, ":")
			w.Header().Add(k, v)
		}
	}))
	t.Cleanup(svc.Close)
	key, err := match.ParseVarTemplate("$host")
	require.NoError(t, err)
	future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	for _, tc := range []struct {
		name    string
		headers []string
		kept    bool
	}{
		{"auth-cache-duration alone", nil, true},
		{"X-Accel-Expires 0", []string{"X-Accel-Expires:0"}, false},
		{"X-Accel-Expires over Cache-Control", []string{"Cache-Control:no-cache", "X-Accel-Expires:60"}, true},
		{"X-Accel-Expires at a time", []string{"X-Accel-Expires:@4102444800", "Cache-Control:private"}, true},
		{"s-maxage before max-age", []string{"Cache-Control:s-maxage=0, max-age=60"}, false},
		{"no-cache with a field name", []string{`Cache-Control:no-cache="Set-Cookie"`}, false},
		{"a bad max-age", []string{"Cache-Control:max-age=soon"}, false},
		{"Expires in the past", []string{"Expires:Thu, 01 Jan 1970 00:00:00 GMT"}, false},
		{"Expires not a date", []string{"Expires:0"}, false},
		{"Expires to come", []string{"Expires:" + future}, true},
		{"max-age over a past Expires", []string{"Expires:Thu, 01 Jan 1970 00:00:00 GMT", "Cache-Control:max-age=60"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := url.Values{"h": tc.headers}
			r, _ := authRouter(t, Options{}, externalAuth(t, svc.URL+"/?"+q.Encode(), func(x *match.ExternalAuth) {
				x.Options = &match.ExternalAuthOptions{CacheKey: &key, CacheValid: []match.AuthCacheValid{{Codes: []int{200}, TTL: time.Minute}}}
			}))
			calls.Store(0)
			for range 2 {
				res := serve(r, http.MethodGet, "shop.example.com", "/app", nil)
				body(t, res)
				require.Equal(t, http.StatusOK, res.StatusCode)
			}
			want := int32(2)
			if tc.kept {
				want = 1
			}
			assert.Equal(t, want, calls.Load(), "calls to the service")
		})
	}
}

// TestExternalAuthResponseHeaderNames: an auth-response-headers name
// finds the service's header as nginx's $upstream_http_<name> does, '-'
// and '_' alike and without case, and the backend gets it under the name
// written, underscore and all, as proxy_set_header sends it whatever
// underscores_in_headers says of the client's headers.
func TestExternalAuthResponseHeaderNames(t *testing.T) {
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["X-User"] = []string{"alice"}
		w.Header()["X_team"] = []string{"ops"}
	}))
	t.Cleanup(svc.Close)
	for _, transport := range []bool{false, true} {
		o := Options{}
		if transport {
			o.Transport = http.DefaultTransport
		}
		r, _ := authRouter(t, o, externalAuth(t, svc.URL+"/", func(x *match.ExternalAuth) {
			x.ResponseHeaders = []string{"X_user", "X-Team"}
		}))
		req := httptest.NewRequest(http.MethodGet, "/app", nil)
		req.Host = "shop.example.com"
		req.Header["X_user"] = []string{"mallory"}
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		res := rec.Result()
		require.Equal(t, http.StatusOK, res.StatusCode)
		assert.Equal(t, []string{"alice"}, res.Header.Values("Seen-X_user"), "transport %v", transport)
		assert.Equal(t, []string{"ops"}, res.Header.Values("Seen-X-Team"), "transport %v", transport)
	}
}

// A header listed twice in auth-response-headers ("X-User, x-user") is
// sent to the backend twice: ingress-nginx writes one proxy_set_header
// line per listed name (template.go buildAuthResponseHeaders), each with
// the service's field, and nginx sends every such line.
func TestExternalAuthResponseHeaderListedTwice(t *testing.T) {
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["X-Groups"] = []string{"readers", "admins"}
	}))
	t.Cleanup(svc.Close)
	r, _ := authRouter(t, Options{}, externalAuth(t, svc.URL+"/", func(x *match.ExternalAuth) {
		x.ResponseHeaders = []string{"X-Groups", "X-Groups"}
	}))
	req := httptest.NewRequest(http.MethodGet, "/app", nil)
	req.Host = "shop.example.com"
	req.Header.Set("X-Groups", "forged")
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	res := rec.Result()
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, []string{"readers, admins", "readers, admins"}, res.Header.Values("Seen-X-Groups"))
}

// TestExternalAuthHeaderNames: the subrequest passes the client's headers
// by the names the ConfigMap allows, as nginx drops a name it calls
// invalid once, on reading the request, for every upstream alike
// (underscores_in_headers, ignore_invalid_headers).
func TestExternalAuthHeaderNames(t *testing.T) {
	svc := newAuthService(t)
	for _, tt := range []struct {
		name       string
		o          Options
		under, dot bool
	}{
		{"defaults", Options{}, false, false},
		{"enable-underscores-in-headers", Options{UnderscoresInHeaders: true}, true, false},
		{"ignore-invalid-headers false", Options{KeepInvalidHeaders: true}, true, true},
		{"proxy-add-original-uri-header", Options{OriginalURIHeader: true}, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := authRouter(t, tt.o, externalAuth(t, svc.srv.URL+"/ok", nil))
			req := httptest.NewRequest(http.MethodGet, "/app", nil)
			req.Host = "shop.example.com"
			req.Header["X_Under"] = []string{"u"}
			req.Header["X.Dot"] = []string{"d"}
			req.Header.Set("X-Original-Uri", "/client")
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, req)
			require.Equal(t, http.StatusOK, rec.Code)
			got, _ := svc.request()
			require.NotNil(t, got)
			assert.Equal(t, tt.under, got.Header.Get("X_under") == "u", "auth service X_Under")
			assert.Equal(t, tt.under, rec.Header().Get("Seen-X_under") == "u", "backend X_Under")
			assert.Equal(t, tt.dot, got.Header.Get("X.Dot") == "d", "auth service X.Dot")
			assert.Equal(t, "/client", got.Header.Get("X-Original-Uri"), "the auth location sets no X-Original-URI without auth-method")
		})
	}
}

// TestExternalAuthRequestID: the subrequest's X-Request-ID is nginx's
// $req_id, as the backend's and the client's: the client's (an empty one
// is none), else a new one, else none with generate-request-id off.
func TestExternalAuthRequestID(t *testing.T) {
	svc := newAuthService(t)
	for _, tt := range []struct {
		name   string
		o      Options
		client []string
		want   string // "new": a generated one; "": none
	}{
		{"client's", Options{}, []string{"abc"}, "abc"},
		{"generated", Options{}, nil, "new"},
		{"empty is none", Options{}, []string{""}, "new"},
		{"returned", Options{ReturnRequestID: true}, nil, "new"},
		{"generate-request-id false", Options{NoRequestID: true}, nil, ""},
		{"generate-request-id false, empty", Options{NoRequestID: true}, []string{""}, ""},
		{"generate-request-id false, client's", Options{NoRequestID: true, ReturnRequestID: true}, []string{"abc"}, "abc"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := authRouter(t, tt.o, externalAuth(t, svc.srv.URL+"/ok", nil))
			req := httptest.NewRequest(http.MethodGet, "/app", nil)
			req.Host = "shop.example.com"
			if tt.client != nil {
				req.Header["X-Request-Id"] = tt.client
			}
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, req)
			require.Equal(t, http.StatusOK, rec.Code)
			got, _ := svc.request()
			require.NotNil(t, got)
			auth := got.Header.Values("X-Request-Id")
			backend := rec.Header().Values("Seen-X-Request-Id")
			switch tt.want {
			case "":
				assert.Empty(t, auth, "auth service")
				assert.Empty(t, backend, "backend")
				return
			case "new":
				require.Len(t, auth, 1)
				assert.NotEmpty(t, auth[0])
			default:
				assert.Equal(t, []string{tt.want}, auth)
			}
			assert.Equal(t, auth, backend, "one request ID for the service and the backend")
			if tt.o.ReturnRequestID {
				assert.Equal(t, auth, rec.Header().Values("X-Request-Id"), "the client's")
			}
		})
	}
}

// TestExternalAuthSigninRelative: a sign-in URL starting with "/" is made
// absolute, as nginx's absolute_redirect does, unless it is to stay
// relative (relative-redirects).
func TestExternalAuthSigninRelative(t *testing.T) {
	svc := newAuthService(t)
	for _, relative := range []bool{false, true} {
		signin, err := urltemplate.SigninURL("/start", "")
		require.NoError(t, err)
		r, _ := authRouter(t, Options{}, externalAuth(t, svc.srv.URL+"/deny", func(x *match.ExternalAuth) {
			x.Signin, x.SigninRelative = &signin, relative
		}))
		req := httptest.NewRequest(http.MethodGet, "/app?a=b", nil)
		req.Host = "shop.example.com"
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		require.Equal(t, http.StatusFound, rec.Code)
		want := "http://shop.example.com/start?rd=http://shop.example.com%2Fapp%3Fa%3Db"
		if relative {
			want = "/start?rd=http://shop.example.com%2Fapp%3Fa%3Db"
		}
		assert.Equal(t, want, rec.Header().Get("Location"))
	}
}

// TestExternalAuthAbsoluteFormWithoutPath: $request_uri of "GET
// http://h?q" is "?q" (nginx's parser starts the URI at the query), so
// the subrequest's X-Original-URL and X-Auth-Request-Redirect name no
// path.
func TestExternalAuthAbsoluteFormWithoutPath(t *testing.T) {
	svc := newAuthService(t)
	_, addr := echoBackend(t, "web")
	rt := route(match.Prefix, "/", httpBackend("prod/web:80", addr))
	rt.Auth = externalAuth(t, svc.srv.URL+"/ok", nil)
	r := newTestRouter(Options{})
	r.Publish(table("auth", vhost("shop.example.com", nil, rt)))
	req := httptest.NewRequest(http.MethodGet, "http://shop.example.com?a=b", nil)
	req.Host = "shop.example.com"
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
	got, _ := svc.request()
	require.NotNil(t, got)
	assert.Equal(t, "http://shop.example.com?a=b", got.Header.Get("X-Original-Url"))
	assert.Equal(t, "?a=b", got.Header.Get("X-Auth-Request-Redirect"))
}

// TestExternalAuthOriginalURLScheme: the auth location sets X-Original-URL
// "$scheme://$http_host$request_uri" (nginx.tmpl), and $scheme is the
// connection's: a trusted X-Forwarded-Proto changes $pass_access_scheme
// (lua_ingress.lua), which X-Scheme carries, not X-Original-URL.
func TestExternalAuthOriginalURLScheme(t *testing.T) {
	svc := newAuthService(t)
	_, addr := echoBackend(t, "web")
	rt := route(match.Prefix, "/", httpBackend("prod/web:80", addr))
	rt.Auth = externalAuth(t, svc.srv.URL+"/ok", func(x *match.ExternalAuth) { x.Method = http.MethodGet })
	r := newTestRouter(Options{TrustForwardedProto: true})
	r.Publish(table("auth", vhost("shop.example.com", nil, rt)))
	for _, tc := range []struct {
		tls              bool
		forwarded        string
		wantURL, wantSch string
	}{
		{false, "https", "http://shop.example.com/a?b", "https"},
		{true, "http", "https://shop.example.com/a?b", "http"},
		{false, "", "http://shop.example.com/a?b", "http"},
	} {
		req := httptest.NewRequest(http.MethodGet, "/a?b", nil)
		req.Host = "shop.example.com"
		if tc.tls {
			req.TLS = &tls.ConnectionState{ServerName: "shop.example.com"}
		}
		if tc.forwarded != "" {
			req.Header.Set("X-Forwarded-Proto", tc.forwarded)
		}
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code)
		got, _ := svc.request()
		require.NotNil(t, got)
		assert.Equal(t, tc.wantURL, got.Header.Get("X-Original-Url"), "tls %v, X-Forwarded-Proto %q", tc.tls, tc.forwarded)
		assert.Equal(t, tc.wantSch, got.Header.Get("X-Scheme"), "tls %v, X-Forwarded-Proto %q", tc.tls, tc.forwarded)
	}
}

// TestExternalAuthSchemeVariables: behind a balancer that ends TLS
// (use-forwarded-headers, X-Forwarded-Proto: https on a plain
// connection) an auth URL's and auth-proxy-set-headers' $scheme is the
// connection's, nginx's $scheme, while $pass_access_scheme is the
// balancer's (lua_ingress.lua rewrite); a relative sign-in URL is
// completed by absolute_redirect with the connection's scheme, and its
// rd parameter keeps $pass_access_scheme (buildAuthSignURL).
func TestExternalAuthSchemeVariables(t *testing.T) {
	svc := newAuthService(t)
	hdr, err := match.ParseVarTemplate("$scheme")
	require.NoError(t, err)
	signin, err := urltemplate.SigninURL("/start", "")
	require.NoError(t, err)
	for _, tc := range []struct {
		path, wantQuery, wantLocation string
	}{
		{"/ok?s=$scheme&p=$pass_access_scheme", "s=http&p=https", ""},
		{"/deny", "", "http://shop.example.com/start?rd=https://shop.example.com%2Fapp"},
	} {
		r, _ := authRouter(t, Options{TrustForwardedProto: true}, externalAuth(t, svc.srv.URL+tc.path, func(x *match.ExternalAuth) {
			x.Options = &match.ExternalAuthOptions{ProxySetHeaders: []match.AuthHeader{{Name: "X-Seen-Scheme", Value: hdr}}}
			x.Signin = &signin
		}))
		req := httptest.NewRequest(http.MethodGet, "/app", nil)
		req.Host = "shop.example.com"
		req.Header.Set("X-Forwarded-Proto", "https")
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		got, _ := svc.request()
		require.NotNil(t, got, tc.path)
		assert.Equal(t, "http", got.Header.Get("X-Seen-Scheme"), tc.path)
		if tc.wantLocation != "" {
			assert.Equal(t, http.StatusFound, rec.Code, tc.path)
			assert.Equal(t, tc.wantLocation, rec.Header().Get("Location"), tc.path)
			continue
		}
		assert.Equal(t, http.StatusOK, rec.Code, tc.path)
		assert.Equal(t, tc.wantQuery, got.URL.RawQuery, tc.path)
	}
}

// TestExternalAuthHTTPVariableSpellings: auth-proxy-set-headers'
// $http_x_user reads an X_User line where nginx keeps it
// (enable-underscores-in-headers) and nothing where it drops it.
func TestExternalAuthHTTPVariableSpellings(t *testing.T) {
	svc := newAuthService(t)
	who, err := match.ParseVarTemplate("$http_x_user")
	require.NoError(t, err)
	for _, underscores := range []bool{false, true} {
		r, _ := authRouter(t, Options{UnderscoresInHeaders: underscores}, externalAuth(t, svc.srv.URL+"/ok", func(x *match.ExternalAuth) {
			x.Options = &match.ExternalAuthOptions{ProxySetHeaders: []match.AuthHeader{{Name: "X-Who", Value: who}}}
		}))
		req := httptest.NewRequest(http.MethodGet, "/app", nil)
		req.Host = "shop.example.com"
		req.Header["X_User"] = []string{"alice"}
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code)
		got, _ := svc.request()
		require.NotNil(t, got)
		want := []string(nil)
		if underscores {
			want = []string{"alice"}
		}
		assert.Equal(t, want, got.Header["X-Who"], "underscores %v", underscores)
	}
}

// TestExternalAuthBestHTTPHost: an auth URL's $best_http_host is
// ingress-nginx's (lua_ingress.lua rewrite): the Host line, or under
// use-forwarded-headers the first name of X-Forwarded-Host; $http_host
// stays the Host line.
func TestExternalAuthBestHTTPHost(t *testing.T) {
	svc := newAuthService(t)
	for _, trust := range []bool{false, true} {
		r, _ := authRouter(t, Options{TrustForwardedProto: trust}, externalAuth(t, svc.srv.URL+"/ok?best=$best_http_host&host=$http_host", nil))
		req := httptest.NewRequest(http.MethodGet, "/app", nil)
		req.Host = "shop.example.com"
		req.Header.Set("X-Forwarded-Host", "www.example.com, lb.internal")
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code)
		got, _ := svc.request()
		require.NotNil(t, got)
		want := "best=shop.example.com&host=shop.example.com"
		if trust {
			want = "best=www.example.com&host=shop.example.com"
		}
		assert.Equal(t, want, got.URL.RawQuery, "use-forwarded-headers %v", trust)
	}
}

// TestAuthCacheKeyServerName: ingress-nginx keys its auth cache by the
// server block's name, the auth location and auth-cache-key
// (nginx.tmpl's $tmp_cache_key), so the hosts one wildcard server
// answers share an entry, and another server has its own.
func TestAuthCacheKeyServerName(t *testing.T) {
	var calls atomic.Int32
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
	t.Cleanup(svc.Close)
	key, err := match.ParseVarTemplate("$remote_user")
	require.NoError(t, err)
	a := externalAuth(t, svc.URL+"/", func(x *match.ExternalAuth) {
		x.Options = &match.ExternalAuthOptions{CacheKey: &key, CacheValid: []match.AuthCacheValid{{Codes: []int{200}, TTL: time.Minute}}}
	})
	_, addr := echoBackend(t, "web")
	b := httpBackend("prod/web:80", addr)
	wild, exact := route(match.Prefix, "/app", b), route(match.Prefix, "/app", b)
	wild.Auth, exact.Auth = a, a
	r := newTestRouter(Options{})
	r.Publish(table("auth", vhost("*.example.com", nil, wild), vhost("shop.example.org", nil, exact)))
	for _, host := range []string{"a.example.com", "b.example.com", "shop.example.org"} {
		res := serve(r, http.MethodGet, host, "/app/x", nil)
		body(t, res)
		require.Equal(t, http.StatusOK, res.StatusCode, host)
	}
	assert.EqualValues(t, 2, calls.Load(), "one ask for the wildcard server's hosts, one for the other server")
}

// TestAuthObserver: each external-auth subrequest gets a record of its
// own, as nginx logs ingress-nginx's auth location under
// enable-auth-access-log (log_subrequest on): the request's line and
// $req_id, the auth location as $uri, the service's status and exchange;
// from the auth cache, no exchange; a service that cannot be reached,
// 502. The request's own record is the Observer's, as before.
func TestAuthObserver(t *testing.T) {
	svc := newAuthService(t)
	key, err := match.ParseVarTemplate("$remote_user")
	require.NoError(t, err)
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	for _, tc := range []struct {
		name     string
		url      string
		cached   bool
		statuses []int // the auth records'
		tries    int
	}{
		{"passes", svc.srv.URL + "/ok", false, []int{200, 200}, 1},
		{"refuses", svc.srv.URL + "/deny", false, []int{401, 401}, 1},
		{"cached", svc.srv.URL + "/anonymous", true, []int{200, 200}, 0},
		{"unreachable", dead.URL + "/", false, []int{502, 502}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			auths := newRecords()
			r, recs := authRouter(t, Options{AuthObserver: auths.observe}, externalAuth(t, tc.url, func(x *match.ExternalAuth) {
				if tc.cached {
					x.Options = &match.ExternalAuthOptions{CacheKey: &key, CacheValid: []match.AuthCacheValid{{Codes: []int{200}, TTL: time.Minute}}}
				}
			}))
			for range 2 {
				res := serve(r, http.MethodGet, "shop.example.com", "/app/x?a=1", http.Header{"X-Request-Id": {"req-1"}})
				body(t, res)
			}
			auths.mu.Lock()
			defer auths.mu.Unlock()
			require.Len(t, auths.raw, 2)
			for i, a := range auths.raw {
				main := recs.raw[i]
				assert.Equal(t, tc.statuses[i], a.Status)
				assert.Equal(t, "/_external-auth-L2FwcC8-Prefix", a.Subrequest)
				assert.Equal(t, "", main.Subrequest)
				assert.Equal(t, "/app/x?a=1", a.Path)
				assert.Equal(t, http.MethodGet, a.Method)
				assert.Equal(t, "shop.example.com", a.Host)
				assert.Equal(t, "req-1", a.RequestID)
				assert.Equal(t, main.Route, a.Route)
				assert.False(t, a.Start.Before(main.Start), "the subrequest starts within the request")
				assert.LessOrEqual(t, a.Duration, main.Duration)
				assert.Zero(t, a.BytesOut+a.BytesIn+a.HeaderBytes+a.UpstreamBytes, "no bytes of its own")
				wantTries := tc.tries
				if tc.cached && i == 0 {
					wantTries = 1 // the first is asked
				}
				assert.Equal(t, wantTries, a.Tries, "record %d", i)
				if wantTries > 0 {
					u, err := url.Parse(tc.url)
					require.NoError(t, err)
					assert.Equal(t, u.Host, a.Endpoint)
					assert.Positive(t, a.UpstreamTime)
				} else {
					assert.Empty(t, a.Endpoint)
				}
			}
		})
	}
}
