package router

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// fakeClock drives a limiter's clock in milliseconds.
type fakeClock struct{ ms atomic.Int64 }

func (c *fakeClock) now() int64 { return c.ms.Load() }

func testLimiter(entries int) (*limiter, *fakeClock) {
	l := newLimiter(entries)
	c := &fakeClock{}
	l.clock = c.now
	return l, c
}

// The leaky bucket of nginx's limit_req with burst and nodelay: 1 + burst
// requests pass at once, then one more for every 1/rate seconds.
func TestLimiterLeakyBucket(t *testing.T) {
	l, clock := testLimiter(1024)
	addr := l.client(netip.MustParseAddr("203.0.113.1"))
	other := l.client(netip.MustParseAddr("203.0.113.2"))
	z := l.zone("prod/shop")
	lim := &rateLimits{milliRPS: 2000, burstRPS: 3000}
	take := func(a *client) bool {
		_, ok := z.take(a, lim, clock.now())
		return ok
	}

	for i := range 4 {
		require.True(t, take(&addr), "request %d of 1 + burst 3", i+1)
	}
	require.False(t, take(&addr), "the 5th at once is refused")
	require.False(t, take(&addr), "a refused request changes nothing")
	require.True(t, take(&other), "another address has its own bucket")

	clock.ms.Add(499)
	require.False(t, take(&addr), "2 r/s: not yet half a second")
	clock.ms.Add(1)
	require.True(t, take(&addr), "half a second drains one request")
	require.False(t, take(&addr))
	clock.ms.Add(10_000)
	for i := range 4 {
		require.True(t, take(&addr), "drained to empty: 1 + burst again (%d)", i+1)
	}
	require.False(t, take(&addr))

	_, ok := l.zone("prod/other").take(&addr, lim, clock.now())
	require.True(t, ok, "another zone counts apart")
}

// A request refused by limit-rpm is not counted by limit-rps either, and
// a request refused by limit-connections was counted by both, as nginx
// runs limit_req before limit_conn.
func TestLimitBothRates(t *testing.T) {
	r := newTestRouter(Options{})
	clock := &fakeClock{}
	r.limits.clock = clock.now
	rl := &match.RateLimit{Zone: "prod/both", RPS: 1, BurstRPS: 2, RPM: 1, BurstRPM: 0}
	addr := netip.MustParseAddr("198.51.100.1")
	_, ok := r.limit(rl, addr)
	require.True(t, ok)
	for range 5 {
		_, ok = r.limit(rl, addr)
		require.False(t, ok, "the per-minute limit refuses")
	}
	cl := r.limits.client(addr)
	z := r.limits.zone(rl.Zone)
	slot := z.set(&cl).find(z.key, &cl.addr)
	require.NotNil(t, slot)
	require.Zero(t, slot.rps.excess, "the refused requests were not counted per second")
	// The per-minute rate drains a request in 62.5 s (nginx's integer rate
	// of 16 thousandths a second).
	clock.ms.Add(62_000)
	_, ok = r.limit(rl, addr)
	require.False(t, ok)
	clock.ms.Add(500)
	_, ok = r.limit(rl, addr)
	require.True(t, ok)
}

// The table never grows: a flood of addresses evicts idle counters, never
// one with requests in flight, and a set whose slots are all in flight
// refuses.
func TestLimiterBounded(t *testing.T) {
	l, clock := testLimiter(64)
	z := l.zone("prod/flood")
	capacity, used, bytes := z.usage()
	require.Equal(t, 64, capacity)
	require.Zero(t, used)
	rate := &rateLimits{milliRPS: 1000, burstRPS: 5000}
	conn := &rateLimits{conns: 1}

	held := l.client(netip.MustParseAddr("192.0.2.200"))
	ticket, ok := z.take(&held, conn, clock.now())
	require.True(t, ok)
	for i := range 10_000 {
		a := l.client(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}))
		clock.ms.Add(1)
		_, ok := z.take(&a, rate, clock.now())
		require.True(t, ok)
	}
	capacity, used, bytes2 := z.usage()
	require.Equal(t, 64, capacity)
	require.Equal(t, 64, used)
	require.Equal(t, bytes, bytes2)
	_, ok = z.take(&held, conn, clock.now())
	require.False(t, ok, "the counter in flight survived the flood")
	ticket.release()
	t2, ok := z.take(&held, conn, clock.now())
	require.True(t, ok, "released")
	t2.release()

	// One set, all eight slots in flight: a ninth address is refused.
	l1, clock1 := testLimiter(limitWays)
	one := l1.zone("prod/flood")
	var tickets []connTicket
	for i := range limitWays {
		a := l1.client(netip.AddrFrom4([4]byte{10, 0, 0, byte(i)}))
		tk, ok := one.take(&a, conn, clock1.now())
		require.True(t, ok)
		tickets = append(tickets, tk)
	}
	ninth := l1.client(netip.MustParseAddr("10.0.0.99"))
	_, ok = one.take(&ninth, conn, clock1.now())
	require.False(t, ok)
	_, ok = one.take(&ninth, rate, clock1.now())
	require.False(t, ok)
	tickets[3].release()
	_, ok = one.take(&ninth, conn, clock1.now())
	require.True(t, ok, "a released slot is taken")
}

func policyRoute(path string, b *match.Backend, p *match.Policy) *match.Route {
	r := route(match.Prefix, path, b)
	r.Policy = p
	return r
}

func serveFrom(r http.Handler, host, target, remote string) *http.Response {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Host = host
	req.RemoteAddr = remote
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	return rec.Result()
}

// Counters live in the router, keyed by zone name: publishing another
// table, even one without the limit, does not reset them.
func TestRateLimitSurvivesPublish(t *testing.T) {
	_, addr := echoBackend(t, "web")
	r := newTestRouter(Options{})
	defer r.CloseIdleConnections()
	pol := &match.Policy{RateLimit: &match.RateLimit{Zone: "prod/web", RPM: 1, BurstRPM: 1}}
	publish := func(gen string) {
		_, changed := r.Publish(table(gen, vhost("web", nil, policyRoute("/", httpBackend("prod/web:80", addr), pol))))
		require.True(t, changed)
	}
	publish("1")
	for range 2 {
		require.Equal(t, http.StatusOK, serveFrom(r, "web", "/", "203.0.113.1:1").StatusCode)
	}
	publish("2")
	res := serveFrom(r, "web", "/", "203.0.113.1:1")
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	require.Contains(t, body(t, res), "too many requests")
	publish("3")
	require.Equal(t, http.StatusOK, serveFrom(r, "web", "/", "203.0.113.2:1").StatusCode)
}

// limit-connections as ingress-nginx's e2e test checks it: 20 requests at
// once, a limit of 8: 8 answered by the backend, 12 refused with 503.
func TestLimitConnections(t *testing.T) {
	release := make(chan struct{})
	var inBackend atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		inBackend.Add(1)
		<-release
		_, _ = io.WriteString(w, "slept\n")
	}))
	defer s.Close()
	r := newTestRouter(Options{})
	defer r.CloseIdleConnections()
	pol := &match.Policy{RateLimit: &match.RateLimit{Zone: "prod/slow", Connections: 8}}
	r.Publish(table("c", vhost("limit-connections", nil, policyRoute("/", httpBackend("prod/slow:80", s.Listener.Addr().String()), pol))))

	statuses := make(chan int, 20)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { statuses <- serveFrom(r, "limit-connections", "/sleep/10", "203.0.113.9:4000").StatusCode })
	}
	require.Eventually(t, func() bool { return inBackend.Load() == 8 && len(statuses) == 12 }, 10*time.Second, time.Millisecond)
	close(release)
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for st := range statuses {
		count[st]++
	}
	require.Equal(t, map[int]int{200: 8, 503: 12}, count)
	// Every request released its count.
	for range 8 {
		require.Equal(t, http.StatusOK, serveFrom(r, "limit-connections", "/", "203.0.113.9:4000").StatusCode)
	}
}

// A source range judges the client address from ClientAddr: the peer, or
// the forwarded client behind a trusted proxy; a header from anyone else
// counts for nothing.
func TestSourceRanges(t *testing.T) {
	_, addr := echoBackend(t, "web")
	r := newTestRouter(Options{ProxyRealIPCIDR: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}, TrustForwardedFor: true})
	defer r.CloseIdleConnections()
	web := httpBackend("prod/web:80", addr)
	allow := &match.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, Deny: []netip.Prefix{netip.MustParsePrefix("10.9.0.0/16")}}
	closed := &match.Policy{DenyAll: true}
	r.Publish(table("s", vhost("acl", nil, policyRoute("/admin", web, allow), policyRoute("/closed", web, closed), route(match.Prefix, "/", web))))
	tests := []struct {
		path, remote, xff string
		want              int
	}{
		{"/admin", "10.1.2.3:1", "", 200},
		{"/admin", "10.9.2.3:1", "", 403},
		{"/admin", "[::ffff:10.1.2.3]:1", "", 200},
		{"/admin", "203.0.113.1:1", "10.1.2.3", 403},
		{"/admin", "192.0.2.5:1", "10.1.2.3", 200},
		{"/admin", "192.0.2.5:1", "10.9.0.1", 403},
		{"/admin", "192.0.2.5:1", "", 403},
		{"/admin", "garbage", "", 403},
		{"/closed", "10.1.2.3:1", "", 503}, // denied: ranges that did not parse
		{"/", "203.0.113.1:1", "", 200},
	}
	for _, tt := range tests {
		t.Run(tt.path+" "+tt.remote+" "+tt.xff, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, tt.path, nil)
			req.Host = "acl"
			req.RemoteAddr = tt.remote
			if tt.xff != "" {
				req.Header.Set("X-Forwarded-For", tt.xff)
			}
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, req)
			require.Equal(t, tt.want, rec.Code, rec.Body.String())
		})
	}
}

// proxy-read-timeout and proxy-next-upstream-tries apply per location on
// both upstream paths: the router's own HTTP/1.1 pool and the net/http
// transports (HTTPS here).
func TestPolicyTimeouts(t *testing.T) {
	slow := func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(300 * time.Millisecond)
		_, _ = io.WriteString(w, "late\n")
	}
	plain := httptest.NewServer(http.HandlerFunc(slow))
	defer plain.Close()
	secure := httptest.NewUnstartedServer(http.HandlerFunc(slow))
	secure.TLS = &tls.Config{}
	secure.StartTLS()
	defer secure.Close()
	r := newTestRouter(Options{})
	defer r.CloseIdleConnections()
	short := &match.Policy{ReadTimeout: 50 * time.Millisecond}
	h1 := httpBackend("prod/h1:80", plain.Listener.Addr().String())
	tlsB := backend("prod/tls:443", match.HTTPS, match.Serving, secure.Listener.Addr().String())
	r.Publish(table("t", vhost("t", nil,
		policyRoute("/h1/short", h1, short), route(match.Prefix, "/h1", h1),
		policyRoute("/tls/short", tlsB, short), route(match.Prefix, "/tls", tlsB))))
	for _, tt := range []struct {
		path string
		want int
	}{{"/h1/short", 504}, {"/h1/default", 200}, {"/tls/short", 504}, {"/tls/default", 200}, {"/tls/short", 504}} {
		res := serveFrom(r, "t", tt.path, "203.0.113.1:1")
		assert.Equal(t, tt.want, res.StatusCode, tt.path)
		body(t, res)
	}
}

// proxy-send-timeout bounds each write of the request to the backend: a
// backend that takes the head but never reads the body gets 504.
func TestPolicySendTimeout(t *testing.T) {
	stall := make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { <-stall }))
	defer s.Close()
	defer close(stall)
	r := newTestRouter(Options{MaxBodySize: -1})
	defer r.CloseIdleConnections()
	pol := &match.Policy{SendTimeout: 100 * time.Millisecond}
	r.Publish(table("s", vhost("s", nil, policyRoute("/", httpBackend("prod/s:80", s.Listener.Addr().String()), pol))))
	req := httptest.NewRequest(http.MethodPut, "/", strings.NewReader(strings.Repeat("x", 32<<20)))
	req.Host = "s"
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() { r.ServeHTTP(rec, req); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the send timeout did not end the exchange")
	}
	require.Equal(t, http.StatusGatewayTimeout, rec.Code, rec.Body.String())
}

// proxy-next-upstream-tries: 1 never retries, 0 (every endpoint) finds the
// one live endpoint behind three dead ones, the default stops at 3.
func TestNextUpstreamTries(t *testing.T) {
	_, live := echoBackend(t, "live")
	dead := []string{deadAddr(t), deadAddr(t), deadAddr(t)}
	for _, tt := range []struct {
		tries    int
		maxTries int
		allOK    bool
	}{{1, 1, false}, {0, 3, false}, {-1, 4, true}} {
		t.Run(fmt.Sprint(tt.tries), func(t *testing.T) {
			rs := newRecords()
			r := newTestRouter(Options{Observer: rs.observe})
			defer r.CloseIdleConnections()
			var pol *match.Policy
			if tt.tries != 0 {
				pol = &match.Policy{NextUpstreamTries: tt.tries}
			}
			b := httpBackend("prod/web:80", append(dead[:3:3], live)...)
			r.Publish(table("n", vhost("n", nil, policyRoute("/", b, pol))))
			failed := 0
			for range 8 {
				res := serveFrom(r, "n", "/", "203.0.113.1:1")
				body(t, res)
				if res.StatusCode != http.StatusOK {
					failed++
				}
			}
			most := 0
			for _, rec := range rs.all {
				most = max(most, rec.Tries)
			}
			assert.LessOrEqual(t, most, tt.maxTries)
			if tt.allOK {
				assert.Zero(t, failed)
				assert.Equal(t, tt.maxTries, most, "some request went through every endpoint")
			} else {
				assert.Positive(t, failed)
			}
		})
	}
}

// A location's proxy-body-size replaces the router's limit, lower or
// higher, and 0 lifts it.
func TestPolicyBodySize(t *testing.T) {
	addr := bodyEcho(t)
	r := newTestRouter(Options{})
	defer r.CloseIdleConnections()
	b := httpBackend("prod/web:80", addr)
	r.Publish(table("b", vhost("b", nil,
		policyRoute("/small", b, &match.Policy{MaxBodySize: 10}),
		policyRoute("/big", b, &match.Policy{MaxBodySize: 4 << 20}),
		policyRoute("/none", b, &match.Policy{MaxBodySize: -1}),
		route(match.Prefix, "/", b))))
	for _, tt := range []struct {
		path    string
		size    int
		chunked bool
		want    int
	}{
		{"/small", 10, false, 200}, {"/small", 11, false, 413}, {"/small", 11, true, 413},
		{"/big", 3 << 20, false, 200}, {"/big", 3 << 20, true, 200}, {"/big", 4<<20 + 1, true, 413},
		{"/none", 5 << 20, true, 200}, {"/", 1<<20 + 1, false, 413}, {"/", 1 << 20, true, 200},
	} {
		var rd io.Reader = strings.NewReader(strings.Repeat("x", tt.size))
		if tt.chunked {
			rd = io.MultiReader(rd) // hides the length: sent chunked
		}
		req := httptest.NewRequest(http.MethodPost, tt.path, rd)
		req.Host = "b"
		if tt.chunked {
			req.ContentLength = -1
		}
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		require.Equal(t, tt.want, rec.Code, "%s %d chunked=%v", tt.path, tt.size, tt.chunked)
		if tt.want == 200 {
			require.Equal(t, tt.size, rec.Body.Len(), "the backend got the whole body")
		}
	}
}

// A link-local peer's address carries its interface (fe80::1%eth0), which
// netip.Prefix.Contains never matches: the zone must not take a client out
// of a denied range, as nginx compares the address bits alone. The limit
// exemption reads the address the same way.
func TestSourceRangesIgnoreZone(t *testing.T) {
	_, addr := echoBackend(t, "web")
	r := newTestRouter(Options{})
	defer r.CloseIdleConnections()
	web := httpBackend("prod/web:80", addr)
	denyLinkLocal := &match.Policy{Deny: []netip.Prefix{netip.MustParsePrefix("fe80::/10")}}
	denyV6 := &match.Policy{Deny: []netip.Prefix{netip.MustParsePrefix("::/0")}}
	allowLinkLocal := &match.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("fe80::/10")}}
	r.Publish(table("z", vhost("acl", nil, policyRoute("/deny", web, denyLinkLocal), policyRoute("/v6", web, denyV6),
		policyRoute("/allow", web, allowLinkLocal))))
	for path, want := range map[string]int{"/deny": 403, "/v6": 403, "/allow": 200} {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Host, req.RemoteAddr = "acl", "[fe80::1%eth0]:4000"
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		require.Equal(t, want, rec.Code, path)
	}

	limited := &match.RateLimit{Zone: "prod/z", RPS: 1, Exempt: []netip.Prefix{netip.MustParsePrefix("fe80::/10")}}
	for i := range 5 {
		_, ok := r.limit(limited, netip.MustParseAddr("fe80::1%eth0"))
		require.True(t, ok, "an exempt link-local client, request %d", i)
	}
}

// A gRPC client refused with limit-req-status-code 429 reads UNAVAILABLE,
// and one answered 401 UNAUTHENTICATED, as gRPC maps those HTTP statuses
// (doc/http-grpc-status-mapping.md): clients retry UNAVAILABLE, never
// UNKNOWN.
func TestGRPCCodeOfLimitAnswer(t *testing.T) {
	r := newTestRouter(Options{LimitReqStatusCode: 429, Transport: &balanceTransport{}})
	web := backend("prod/web:80", match.GRPC, match.Serving, "10.0.0.1:80")
	r.Publish(table("g", vhost("g", nil, policyRoute("/", web, &match.Policy{RateLimit: &match.RateLimit{Zone: "prod/g", RPS: 1}}))))
	var codes []int
	var status []string
	for range 2 {
		req := httptest.NewRequest(http.MethodPost, "/svc.Echo/Say", nil)
		req.Host, req.RemoteAddr = "g", "203.0.113.1:4000"
		req.Header.Set("Content-Type", "application/grpc")
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		codes, status = append(codes, rec.Code), append(status, rec.Header().Get("Grpc-Status"))
	}
	require.Equal(t, []int{200, 429}, codes)
	require.Equal(t, "14", status[1])
	for code, want := range map[int]string{401: "16", 429: "14", 400: "13", 403: "7", 404: "12", 502: "14", 503: "14", 504: "14", 500: "2", 413: "2"} {
		assert.Equal(t, want, grpcCode(code), code)
	}
}

// A zone with limit-connections that finds no room for a client answers
// limit-conn-status-code, as nginx's limit_conn answers its own status
// when its zone is full. A client without a counter is new to limit_req,
// whose own zone would admit it, so a rate beside the limit changes
// nothing; a zone of rates alone answers the limit_req status.
func TestLimiterFullSetAnswersConnStatus(t *testing.T) {
	l, clock := testLimiter(limitWays)
	z := l.zone("prod/full")
	conn := &rateLimits{conns: 1}
	for i := range limitWays {
		a := l.client(netip.AddrFrom4([4]byte{10, 0, 0, byte(i)}))
		_, ok := z.take(&a, conn, clock.now())
		require.True(t, ok)
	}
	ninth := l.client(netip.MustParseAddr("10.0.0.99"))
	tk, ok := z.take(&ninth, conn, clock.now())
	require.False(t, ok)
	require.True(t, tk.connRefused, "only limit_conn could have found no room")
	tk, ok = z.take(&ninth, &rateLimits{milliRPS: 1000, burstRPS: 5000, conns: 1}, clock.now())
	require.False(t, ok)
	require.True(t, tk.connRefused, "limit_req admits a new client; limit_conn has no room")
	tk, ok = z.take(&ninth, &rateLimits{milliRPS: 1000, burstRPS: 5000}, clock.now())
	require.False(t, ok)
	require.False(t, tk.connRefused, "no limit_conn")
}

// Each Ingress's limits have their own table, as each ingress-nginx
// Ingress has its own limit_conn_zone and limit_req_zone: requests in
// flight from many addresses to one zone cannot get another zone's
// clients refused, and a flood of addresses cannot evict another zone's
// rate counters.
func TestLimitZonesApart(t *testing.T) {
	r := newTestRouter(Options{RateLimitEntries: 64})
	r.limits.clock = (&fakeClock{}).now
	flooded := &match.RateLimit{Zone: "prod/flooded", Connections: 1}
	var held []connTicket
	for i := range 10_000 {
		if tk, ok := r.limit(flooded, netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})); ok {
			held = append(held, tk)
		}
	}
	require.Len(t, held, 64, "the flooded zone's table is full of requests in flight")
	quiet := &match.RateLimit{Zone: "prod/quiet", Connections: 1}
	for i := range 256 {
		tk, ok := r.limit(quiet, netip.AddrFrom4([4]byte{192, 0, 2, byte(i)}))
		require.True(t, ok, "a client of another Ingress, %d", i)
		tk.release()
	}
	for _, tk := range held {
		tk.release()
	}

	// A rate counter of one zone outlives a flood of addresses in another.
	rate := &match.RateLimit{Zone: "prod/rate", RPM: 1, BurstRPM: 0}
	client := netip.MustParseAddr("198.51.100.7")
	_, ok := r.limit(rate, client)
	require.True(t, ok)
	flood := &match.RateLimit{Zone: "prod/flood", RPM: 1, BurstRPM: 0}
	for i := range 10_000 {
		r.limit(flood, netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}))
	}
	_, ok = r.limit(rate, client)
	require.False(t, ok, "the client's counter was not evicted by another zone's flood")
}

// A zone's counters survive a rebuild that keeps its Ingress; a zone the
// published table no longer has is dropped.
func TestLimitZonesFollowTable(t *testing.T) {
	r := newTestRouter(Options{})
	r.limits.clock = (&fakeClock{}).now
	web := httpBackend("prod/web:80", "10.0.0.1:80")
	rl := &match.RateLimit{Zone: "prod/shop", RPM: 1}
	limited := &match.Policy{RateLimit: rl}
	r.Publish(table("one", vhost("shop", nil, policyRoute("/", web, limited))))
	client := netip.MustParseAddr("198.51.100.7")
	_, ok := r.limit(rl, client)
	require.True(t, ok)
	r.Publish(table("two", vhost("shop", nil, policyRoute("/", web, limited)), vhost("other", nil, route(match.Prefix, "/", web))))
	_, ok = r.limit(rl, client)
	require.False(t, ok, "the rebuild kept the counter")
	assert.Zero(t, testing.AllocsPerRun(100, func() { r.limit(rl, client) }), "a zone is found without allocating")
	r.Publish(table("three", vhost("other", nil, route(match.Prefix, "/", web))))
	require.NotContains(t, *r.limits.zones.Load(), "prod/shop")
}

// TestLimitZonesShareTheBudget: the zones of a table share
// RateLimitEntries, each at least minZoneEntries, so that many
// rate-limited Ingresses do not each take a whole budget.
func TestLimitZonesShareTheBudget(t *testing.T) {
	web := httpBackend("prod/web:80", "10.0.0.1:80")
	tableOf := func(zones int) *match.Table {
		var routes []*match.Route
		for i := range zones {
			p := &match.Policy{RateLimit: &match.RateLimit{Zone: fmt.Sprintf("prod/shop-%d", i), RPM: 1}}
			routes = append(routes, policyRoute(fmt.Sprintf("/%d", i), web, p))
		}
		return table("zones", vhost("shop", nil, routes...))
	}
	capacity := func(r *Router, zone string) int {
		c, _, _ := (*r.limits.zones.Load())[zone].usage()
		return c
	}
	r := newTestRouter(Options{})
	r.Publish(tableOf(1))
	assert.Equal(t, DefaultRateLimitEntries, capacity(r, "prod/shop-0"), "one zone has the whole budget")
	r.Publish(tableOf(4))
	assert.Equal(t, DefaultRateLimitEntries, capacity(r, "prod/shop-0"), "a zone keeps its size, and its counters")
	assert.Equal(t, DefaultRateLimitEntries/4, capacity(r, "prod/shop-3"))
	r.Publish(tableOf(100))
	assert.Equal(t, minZoneEntries, capacity(r, "prod/shop-99"), "never under the least")

	small := newTestRouter(Options{RateLimitEntries: 64})
	small.Publish(tableOf(3))
	assert.Equal(t, 64, capacity(small, "prod/shop-2"), "a budget under the least is each zone's")
}

// TestPolicyReadTimeoutOwnTransport: a location's proxy-read-timeout
// bounds the wait for the response head through an Options.Transport too,
// as nginx's proxy_read_timeout does (504); the transport given here has
// no ResponseHeaderTimeout of its own, and the request waited as long as
// the backend did.
func TestPolicyReadTimeoutOwnTransport(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(2 * time.Second)
		_, _ = io.WriteString(w, "late\n")
	}))
	defer slow.Close()
	quick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(100 * time.Millisecond)
		_, _ = io.WriteString(w, "in time\n")
	}))
	defer quick.Close()
	r := newTestRouter(Options{Transport: &http.Transport{}})
	defer r.CloseIdleConnections()
	short := &match.Policy{ReadTimeout: 300 * time.Millisecond}
	r.Publish(table("t", vhost("t", nil,
		policyRoute("/slow", httpBackend("prod/slow:80", slow.Listener.Addr().String()), short),
		policyRoute("/quick", httpBackend("prod/quick:80", quick.Listener.Addr().String()), short))))
	start := time.Now()
	res := serveFrom(r, "t", "/slow", "203.0.113.1:1")
	assert.Equal(t, http.StatusGatewayTimeout, res.StatusCode)
	assert.Less(t, time.Since(start), 1500*time.Millisecond, "the route's read timeout, not the backend, ended the wait")
	body(t, res)
	res = serveFrom(r, "t", "/quick", "203.0.113.1:1")
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "in time\n", body(t, res))
}
