package router

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match"
)

// canaryTable is a table whose host shop.example.com routes to a primary
// with a canary of weight/100; extra goes into the digest, so tables that
// differ only in it are different tables with the same backends.
func canaryTable(weight int, extra string) *match.Table {
	next := httpBackend("prod/web-next:80", "10.0.2.1:8080")
	web := httpBackend("prod/web:80", "10.0.1.1:8080", "10.0.1.2:8080")
	web.Traffic = &match.Traffic{Canary: &match.Canary{Backend: next, Header: "X-Canary", Cookie: "canary", Weight: weight, WeightTotal: 100}}
	vh := vhost("shop.example.com", nil, route(match.Prefix, "/", web))
	return mustTable(match.Spec{VirtualHosts: []*match.VirtualHost{vh}, Backends: []*match.Backend{next, web}, Inputs: []byte(extra)})
}

// countingTransport answers 200 and counts requests per backend.
type countingTransport struct{ counts map[string]int }

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	id, _, _ := EndpointFromContext(req.Context())
	c.counts[id]++
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
}

// Over every full rotation the canary gets exactly its weight, however
// often tables are swapped in the middle of one: the rotation's position
// lives in the registry, keyed by the primary backend, not in the table.
func TestCanaryWeightAcrossSwaps(t *testing.T) {
	for _, weight := range []int{1, 10, 33, 50, 99} {
		t.Run(fmt.Sprint(weight), func(t *testing.T) {
			ct := &countingTransport{counts: map[string]int{}}
			r := newTestRouter(Options{Transport: ct})
			swaps := 0
			for i := range 1000 {
				if i%37 == 0 {
					_, changed := r.Publish(canaryTable(weight, fmt.Sprint("generation ", i)))
					require.True(t, changed)
					swaps++
				}
				res := serve(r, "GET", "shop.example.com", "/", nil)
				require.Equal(t, 200, res.StatusCode)
			}
			require.Greater(t, swaps, 20)
			want := map[string]int{"prod/web:80": 10 * (100 - weight), "prod/web-next:80": 10 * weight}
			require.Empty(t, cmp.Diff(want, ct.counts))
		})
	}
}

// The header and cookie rules decide without moving the rotation, so the
// weighted requests still get their exact share.
func TestCanaryRulesLeaveRotation(t *testing.T) {
	ct := &countingTransport{counts: map[string]int{}}
	r := newTestRouter(Options{Transport: ct})
	r.Publish(canaryTable(20, ""))
	for i := range 200 {
		var h http.Header
		switch i % 3 {
		case 1:
			h = http.Header{"X-Canary": {"never"}}
		case 2:
			h = http.Header{"Cookie": {"canary=always"}}
		}
		serve(r, "GET", "shop.example.com", "/", h)
	}
	// 67 forced to the primary by the header, 66 to the canary by the
	// cookie, 67 weighted: 13.4 of them canary, rounded by the rotation's
	// order (the fourth and ninth of every ten).
	require.Empty(t, cmp.Diff(map[string]int{"prod/web:80": 67 + 54, "prod/web-next:80": 66 + 13}, ct.counts))
}

// A session whose endpoint fails to connect is retried on another
// endpoint; only with session-cookie-change-on-failure does the cookie
// move there.
func TestAffinityChangeOnFailure(t *testing.T) {
	_, live := echoBackend(t, "live")
	dead := deadAddr(t)
	for _, change := range []bool{false, true} {
		t.Run(fmt.Sprint("change-on-failure=", change), func(t *testing.T) {
			web := httpBackend("prod/web:80", dead, live)
			web.Traffic = &match.Traffic{Affinity: &match.SessionAffinity{Mode: balance.Persistent, CookieName: "route", ChangeOnFailure: change}}
			r := newTestRouter(Options{})
			r.Publish(table("", vhost("shop.example.com", nil, route(match.Prefix, "/", web))))
			bal := r.state.Load().balancers[web]
			e, fresh, ok := bal.PickSession("", "")
			require.True(t, ok)
			e.Release()
			if e.Addr != dead {
				// Round-robin placed the first session on the live one; the
				// second goes to the dead one.
				e, fresh, _ = bal.PickSession("", "")
				e.Release()
			}
			require.Equal(t, dead, e.Addr)
			cookie := "route=" + fresh + "|" + bal.Token()

			res := serve(r, "GET", "shop.example.com", "/", http.Header{"Cookie": {cookie}})
			require.Equal(t, 200, res.StatusCode)
			require.Equal(t, "live", res.Header.Get("X-Backend"))
			set := res.Header.Get("Set-Cookie")
			if !change {
				require.Empty(t, set, "the session keeps its endpoint")
				return
			}
			require.Regexp(t, `^route=[0-9a-f]{16}\|`+bal.Token()+`; Path=/; HttpOnly$`, set)
			res = serve(r, "GET", "shop.example.com", "/", http.Header{"Cookie": {set[:len("route=")+33]}})
			require.Equal(t, "live", res.Header.Get("X-Backend"))
			require.Empty(t, res.Header.Get("Set-Cookie"), "the moved session is live")
		})
	}
}

// A request with no session whose first endpoint fails to connect is
// served by another; the cookie it is given names the endpoint that
// served it, as ingress-nginx's sticky balancer sets the cookie again on
// the retry's new pick (sticky.lua balance): the endpoint that failed was
// never the session's, so change-on-failure has nothing to keep.
func TestAffinityNewSessionRetried(t *testing.T) {
	_, live := echoBackend(t, "live")
	dead := deadAddr(t)
	for _, change := range []bool{false, true} {
		t.Run(fmt.Sprint("change-on-failure=", change), func(t *testing.T) {
			web := httpBackend("prod/web:80", dead, live)
			web.Traffic = &match.Traffic{Affinity: &match.SessionAffinity{Mode: balance.Persistent, CookieName: "route", ChangeOnFailure: change}}
			r := newTestRouter(Options{})
			r.Publish(table("", vhost("shop.example.com", nil, route(match.Prefix, "/", web))))
			bal := r.state.Load().balancers[web]
			// Turn the cursor until the dead endpoint is next.
			for {
				e, _ := bal.Pick("")
				e.Release()
				if e.Addr == live {
					break
				}
			}
			// The first new session goes to the dead endpoint.
			res := serve(r, "GET", "shop.example.com", "/", nil)
			require.Equal(t, 200, res.StatusCode)
			require.Equal(t, "live", res.Header.Get("X-Backend"))
			set := res.Header.Values("Set-Cookie")
			require.Len(t, set, 1)
			value, _, _ := strings.Cut(strings.TrimPrefix(set[0], "route="), ";")
			session, token := splitSession(value)
			require.Equal(t, bal.Token(), token)
			e, fresh, ok := bal.PickSession(session, "")
			require.True(t, ok)
			e.Release()
			require.Equal(t, live, e.Addr, "the cookie names the endpoint that served")
			require.Empty(t, fresh)
		})
	}
}

// endpointTransport answers 200 and counts requests per endpoint.
type endpointTransport struct{ counts map[string]int }

func (c *endpointTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	_, addr, _ := EndpointFromContext(req.Context())
	c.counts[addr]++
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
}

// Two backends of one host with balanced affinity and the same cookie
// name, on / and /api: a browser sends /api's cookie and then /'s, and
// the last of a name is the one read (StickyCookie). ingress-nginx's
// sticky balancer places a session by the cookie's key whichever backend
// set it (sticky.lua balance reads the key, not the backend part), so
// /api's requests stay on one endpoint and are given no new cookie;
// reading another backend's cookie as no session moved them at every
// request.
func TestAffinityCookieOfAnotherBackend(t *testing.T) {
	aff := &match.SessionAffinity{Mode: balance.Balanced, CookieName: "INGRESSCOOKIE"}
	web := httpBackend("prod/web:80", "10.0.1.1:8080", "10.0.1.2:8080", "10.0.1.3:8080")
	web.Traffic = &match.Traffic{Affinity: aff}
	api := httpBackend("prod/api:80", "10.0.2.1:8080", "10.0.2.2:8080", "10.0.2.3:8080")
	api.Traffic = &match.Traffic{Affinity: aff}
	et := &endpointTransport{counts: map[string]int{}}
	r := newTestRouter(Options{Transport: et})
	r.Publish(table("", vhost("shop.example.com", nil, route(match.Prefix, "/", web), route(match.Prefix, "/api", api))))
	cookie := func(res *http.Response) string {
		v, _, _ := strings.Cut(res.Header.Get("Set-Cookie"), ";")
		require.NotEmpty(t, v)
		return v
	}
	apiCookie := cookie(serve(r, "GET", "shop.example.com", "/api/", nil))
	webCookie := cookie(serve(r, "GET", "shop.example.com", "/", nil))
	clear(et.counts)
	for i := range 6 {
		res := serve(r, "GET", "shop.example.com", "/api/", http.Header{"Cookie": {apiCookie + "; " + webCookie}})
		require.Equal(t, 200, res.StatusCode)
		require.Empty(t, res.Header.Get("Set-Cookie"), "request %d", i)
	}
	require.Len(t, et.counts, 1, "one endpoint: %v", et.counts)
}

func TestSessionCookie(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	old := "Mozilla/5.0 (iPhone; CPU iPhone OS 12_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/12.0 Mobile/15E148 Safari/604.1"
	tests := []struct {
		name  string
		a     match.SessionAffinity
		ua    string
		https bool
		want  string
	}{
		{"defaults", match.SessionAffinity{CookieName: "INGRESSCOOKIE"}, "", false, "INGRESSCOOKIE=v; Path=/p; HttpOnly"},
		{"everything", match.SessionAffinity{CookieName: "c", Domain: "example.com", Expires: "60", MaxAge: "120", Secure: true, SameSite: "Strict"}, "", false,
			"c=v; Expires=Mon, 30-Nov-26 12:01:00 GMT; Max-Age=120; Domain=example.com; Path=/p; Secure; HttpOnly; SameSite=Strict"},
		{"after 2037 the year has four digits", match.SessionAffinity{CookieName: "c", Expires: "473040000"}, "", false,
			"c=v; Expires=Tue, 26-Nov-2041 12:00:00 GMT; Path=/p; HttpOnly"},
		{"negative: expired at once", match.SessionAffinity{CookieName: "c", Expires: "-3600", MaxAge: "-3600"}, "", false,
			"c=v; Expires=Mon, 30-Nov-26 11:00:00 GMT; Max-Age=-3600; Path=/p; HttpOnly"},
		{"beyond 292 years", match.SessionAffinity{CookieName: "c", Expires: "10000000000"}, "", false,
			"c=v; Expires=Thu, 21-Oct-2343 05:46:40 GMT; Path=/p; HttpOnly"},
		{"long past", match.SessionAffinity{CookieName: "c", Expires: "-9223372036854775808"}, "", false,
			"c=v; Expires=Thu, 01-Jan-70 00:00:00 GMT; Path=/p; HttpOnly"},
		{"secure over https", match.SessionAffinity{CookieName: "c"}, "", true, "c=v; Path=/p; Secure; HttpOnly"},
		{"none", match.SessionAffinity{CookieName: "c", SameSite: "None", ConditionalSameSiteNone: true}, "curl/8", false, "c=v; Path=/p; HttpOnly; SameSite=None"},
		{"none for an old browser", match.SessionAffinity{CookieName: "c", SameSite: "None", ConditionalSameSiteNone: true}, old, false, "c=v; Path=/p; HttpOnly"},
		{"none unconditionally", match.SessionAffinity{CookieName: "c", SameSite: "None"}, old, false, "c=v; Path=/p; HttpOnly; SameSite=None"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := &choice{affinity: &tt.a, cookiePath: "/p", userAgent: tt.ua, https: tt.https}
			require.Equal(t, tt.want, sessionCookie(ch, "v", now))
		})
	}
}

func TestRouteCookiePath(t *testing.T) {
	for _, tt := range []struct {
		rt   *match.Route
		want string
	}{
		{nil, "/"},
		{&match.Route{Type: match.Prefix, Path: ""}, "/"},
		{&match.Route{Type: match.Prefix, Path: "/shop"}, "/shop"},
		{&match.Route{Type: match.Prefix, Path: "/shop", CookieSlash: true}, "/shop/"},
		{&match.Route{Type: match.Exact, Path: "/a/"}, "/a/"},
		{&match.Route{Type: match.Regex, Path: "/api/.*"}, "/"},
	} {
		require.Equal(t, tt.want, routeCookiePath(tt.rt))
	}
}

// BenchmarkCanaryDecision is one request through the canary rules to the
// weight (the header and cookie present but passing on), then the pick:
// the work steer and the pick add to a request.
func BenchmarkCanaryDecision(b *testing.B) {
	r := newTestRouter(Options{Transport: &countingTransport{counts: map[string]int{}}})
	r.Publish(canaryTable(10, ""))
	st := r.state.Load()
	res := st.table.Lookup("shop.example.com", "/")
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set("X-Canary", "maybe")
	req.Header.Set("Cookie", "session=abc; canary=perhaps; theme=dark")
	b.ReportAllocs()
	start := cpuTime()
	defer func() { b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op") }()
	for b.Loop() {
		ch, _, _ := st.steer(res.Backend, res.Route, req, &defaultHeaderSettings)
		e, ok := st.balancers[ch.backend].Pick("")
		if !ok {
			b.Fatal("no endpoint")
		}
		e.Release()
	}
}

// cpuTime is the process's user and system CPU time: on a machine shared
// with other work, a benchmark's wall time includes time it was not
// running, its CPU time does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// A request whose affinity cookie names the primary stays on the primary,
// whatever the canary's header, cookie and weight say, in sticky and
// legacy mode alike (ingress-nginx's balancer.lua: a request already
// affinitized to the primary keeps it). Otherwise each request of a
// session would have the canary's weight of a chance to move to it, and
// with sticky affinity stay there.
func TestCanaryKeepsSessionPinnedToPrimary(t *testing.T) {
	for _, sticky := range []bool{true, false} {
		t.Run(fmt.Sprint("sticky=", sticky), func(t *testing.T) {
			aff := &match.SessionAffinity{Mode: balance.Persistent, CookieName: "aff"}
			next := httpBackend("prod/web-next:80", "10.0.2.1:8080")
			if sticky {
				next.Traffic = &match.Traffic{Affinity: aff}
			}
			web := httpBackend("prod/web:80", "10.0.1.1:8080", "10.0.1.2:8080")
			web.Traffic = &match.Traffic{Affinity: aff, Canary: &match.Canary{Backend: next, Header: "X-Canary", Cookie: "canary",
				Weight: 50, WeightTotal: 100, Sticky: sticky}}
			vh := vhost("shop.example.com", nil, route(match.Prefix, "/", web))
			ct := &countingTransport{counts: map[string]int{}}
			r := newTestRouter(Options{Transport: ct})
			r.Publish(mustTable(match.Spec{VirtualHosts: []*match.VirtualHost{vh}, Backends: []*match.Backend{next, web}}))
			bal := r.state.Load().balancers[web]
			e, fresh, ok := bal.PickSession("", "")
			require.True(t, ok)
			e.Release()
			cookie := "aff=" + fresh + "|" + bal.Token()
			for i := range 20 {
				h := http.Header{"Cookie": {cookie}}
				switch i % 4 {
				case 1:
					h.Set("X-Canary", "always")
				case 2:
					h.Add("Cookie", "canary=always")
				}
				res := serve(r, "GET", "shop.example.com", "/", h)
				require.Equal(t, 200, res.StatusCode)
				require.Empty(t, res.Header.Get("Set-Cookie"), "request %d", i)
			}
			require.Empty(t, cmp.Diff(map[string]int{"prod/web:80": 20}, ct.counts))
		})
	}
}

// A WebSocket (an Upgrade answered 101) that starts a session gets its
// cookie on the 101: ingress-nginx's sticky balancer sets it on the
// answer's headers before the backend's head, and nginx writes those on
// a 101 as on any answer. Over the router's own HTTP/1.1 client and over
// ReverseProxy (Options.Transport).
func TestAffinityCookieOnUpgrade(t *testing.T) {
	addr := upgradeBackend(t, "Set-Cookie: app=1")
	for _, tr := range proxyPaths() {
		t.Run(tr.name, func(t *testing.T) {
			web := httpBackend("prod/web:80", addr)
			web.Traffic = &match.Traffic{Affinity: &match.SessionAffinity{Mode: balance.Balanced, CookieName: "route"}}
			r := newTestRouter(Options{Transport: tr.rt})
			r.Publish(table("", vhost("shop.example.com", nil, route(match.Prefix, "/", web))))
			front := httptest.NewServer(r)
			defer front.Close()
			c, err := net.Dial("tcp", front.Listener.Addr().String())
			require.NoError(t, err)
			defer c.Close()
			_, err = io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: shop.example.com\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
			require.NoError(t, err)
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			require.NoError(t, err)
			require.Equal(t, http.StatusSwitchingProtocols, res.StatusCode)
			token := r.state.Load().balancers[web].Token()
			cookies := res.Header.Values("Set-Cookie")
			require.Len(t, cookies, 2, "%q", cookies)
			require.Regexp(t, `^route=[0-9a-f]{16}\|`+token+`; Path=/; HttpOnly$`, cookies[0])
			require.Equal(t, "app=1", cookies[1])
		})
	}
}

// proxy-cookie-path and proxy-cookie-domain rewrite the backend's
// Set-Cookie fields, not the session cookie the sticky balancer sets:
// nginx's proxy module rewrites the cookies it copies from the upstream's
// head (ngx_http_upstream_rewrite_set_cookie), and the balancer's goes
// straight onto the answer's headers. Buffered or not, over the router's
// own HTTP/1.1 client and over ReverseProxy.
func TestAffinityCookieNotRewritten(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Set-Cookie", "app=1; Domain=inner.svc; Path=/")
		_, _ = io.WriteString(w, "ok")
	}))
	defer backend.Close()
	addr := backend.Listener.Addr().String()
	for _, tr := range proxyPaths() {
		for _, buffering := range []bool{false, true} {
			t.Run(fmt.Sprint(tr.name, " buffering=", buffering), func(t *testing.T) {
				web := httpBackend("prod/web:80", addr)
				web.Traffic = &match.Traffic{Affinity: &match.SessionAffinity{Mode: balance.Balanced, CookieName: "route", Domain: "inner.svc"}}
				p := match.Proxying{MaxTempFileSize: -1, Buffering: buffering,
					CookieDomain: &match.HeaderRewrite{From: "inner.svc", To: "shop.example.com"},
					CookiePath:   &match.HeaderRewrite{From: "/", To: "/app/"}}
				r := newTestRouter(Options{Transport: tr.rt})
				r.Publish(table("", vhost("shop.example.com", nil, policyRoute("/", web, &match.Policy{Proxy: &p}))))
				res := serve(r, "GET", "shop.example.com", "/", nil)
				require.Equal(t, 200, res.StatusCode)
				token := r.state.Load().balancers[web].Token()
				cookies := res.Header.Values("Set-Cookie")
				require.Len(t, cookies, 2, "%q", cookies)
				require.Regexp(t, `^route=[0-9a-f]{16}\|`+token+`; Domain=inner.svc; Path=/; HttpOnly$`, cookies[0])
				require.Equal(t, "app=1; Domain=shop.example.com; Path=/app/", cookies[1])
			})
		}
	}
}

// The canary's header is nginx's $http_<name>: every kept line of any
// spelling with '_' for '-', the header's own lines first.
func TestCanaryHeaderSpellings(t *testing.T) {
	req := httptest.NewRequest("GET", "/", nil)
	req.Header = http.Header{"X-Canary": {"a"}, "X_canary": {"b"}, "X_Canary": {"c"}, "X-Canary-2": {"d"}, "X.canary": {"e"}}
	underscores := headerSettings{underscores: true}
	for _, tt := range []struct {
		name, header string
		hs           *headerSettings
		want         string
		found        bool
	}{
		{"defaults: the '_' lines were dropped", "X-Canary", &defaultHeaderSettings, "a", true},
		{"underscores kept", "X-Canary", &underscores, "a, c, b", true},
		{"invalid names kept", "X-Canary", &headerSettings{keepBadNames: true}, "a, c, b", true},
		{"defaults: '.' drops the line", "X.canary", &defaultHeaderSettings, "", false},
		{"'.' kept", "X.canary", &headerSettings{keepBadNames: true}, "e", true},
		{"no such header", "X-Other", &underscores, "", false},
	} {
		v, found := canaryHeader(req, tt.header, tt.hs)
		require.Equal(t, tt.want, v, tt.name)
		require.Equal(t, tt.found, found, tt.name)
	}
	only := httptest.NewRequest("GET", "/", nil)
	only.Header = http.Header{"X_canary": {"always"}}
	v, found := canaryHeader(only, "X-Canary", &underscores)
	require.True(t, found)
	require.Equal(t, "always", v)
}
