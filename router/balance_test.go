package router

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match"
)

// balanceTransport answers in process and counts the endpoints it was sent to.
type balanceTransport struct {
	mu   sync.Mutex
	last string
	hits map[string]int
}

func (bt *balanceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	_, ep, _ := EndpointFromContext(req.Context())
	bt.mu.Lock()
	if bt.hits == nil {
		bt.hits = map[string]int{}
	}
	bt.last = ep
	bt.hits[ep]++
	bt.mu.Unlock()
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")),
		Request: req, ProtoMajor: 1, ProtoMinor: 1}, nil
}

// endpointFor sends one request and returns the endpoint that served it.
func (bt *balanceTransport) endpointFor(t *testing.T, r http.Handler, target string, header http.Header) string {
	t.Helper()
	res := serve(r, http.MethodGet, "web", target, header)
	require.Equal(t, http.StatusOK, res.StatusCode)
	bt.mu.Lock()
	defer bt.mu.Unlock()
	return bt.last
}

func balancedBackend(id string, p balance.Algorithm, key string, endpoints ...string) *match.Backend {
	b := httpBackend(id, endpoints...)
	b.Algorithm = p
	if key != "" {
		k, err := balance.ParseHashKey(key)
		if err != nil {
			panic(err)
		}
		b.HashKey = k
	}
	return b
}

// Publish hands each backend's policy and hash key to its balancer.
func TestPublishBalancerPolicy(t *testing.T) {
	rr := balancedBackend("prod/rr:80", balance.RoundRobin, "", "10.0.0.1:80")
	lc := balancedBackend("prod/lc:80", balance.LeastConn, "", "10.0.0.2:80")
	h := balancedBackend("prod/h:80", balance.Hash, "$cookie_session", "10.0.0.3:80")
	r := newTestRouter(Options{Transport: &balanceTransport{}})
	r.Publish(table("d", vhost("", rr, route(match.Prefix, "/lc", lc), route(match.Prefix, "/h", h))))
	st := r.state.Load()
	for _, b := range []*match.Backend{rr, lc, h} {
		bal := st.balancers[b]
		require.NotNil(t, bal, b.ID)
		assert.Equal(t, b.Algorithm, bal.Algorithm(), b.ID)
		assert.Equal(t, b.HashKey, bal.HashKey(), b.ID)
	}
}

// least_conn: while a slow endpoint holds a request, the next requests go to
// the others, which share them round-robin; once it finishes it is picked
// again.
func TestLeastConn(t *testing.T) {
	g, slow := newGate(t)
	_, a := echoBackend(t, "a")
	_, b := echoBackend(t, "b")
	r := newTestRouter(Options{})
	r.Publish(table("lc", vhost("", nil, route(match.Prefix, "/", balancedBackend("prod/web:80", balance.LeastConn, "", slow, a, b)))))

	// Send requests until one is held by the slow endpoint; at most one
	// round of ties.
	held := make(chan *http.Response, 1)
	for i := 0; ; i++ {
		require.Less(t, i, 3, "no request reached the slow endpoint")
		done := make(chan *http.Response, 1)
		go func() { done <- serve(r, http.MethodGet, "web", "/slow", nil) }()
		select {
		case <-g.arrived:
			go func() { held <- <-done }()
		case res := <-done:
			require.Equal(t, http.StatusOK, res.StatusCode)
			continue
		}
		break
	}
	require.Equal(t, int64(1), r.InFlight(slow))

	counts := map[string]int{}
	for range 10 {
		res := serve(r, http.MethodGet, "web", "/", nil)
		require.Equal(t, http.StatusOK, res.StatusCode)
		counts[res.Header.Get("X-Backend")]++
	}
	assert.Equal(t, map[string]int{"a": 5, "b": 5}, counts, "the busy endpoint is skipped, the idle ones alternate")
	assert.Equal(t, int64(1), r.InFlight(slow))

	close(g.release)
	assert.Equal(t, "done\n", body(t, <-held))
	for _, addr := range []string{slow, a, b} {
		assert.Zero(t, r.InFlight(addr), addr)
	}
	// Idle again, the slow endpoint takes its turn (the gate, open now,
	// answers without an X-Backend header).
	seen := map[string]bool{}
	for range 3 {
		res := serve(r, http.MethodGet, "web", "/", nil)
		require.Equal(t, http.StatusOK, res.StatusCode)
		seen[res.Header.Get("X-Backend")] = true
	}
	assert.Equal(t, map[string]bool{"": true, "a": true, "b": true}, seen)
}

// hash: the same key goes to the same endpoint on every request and across
// a Publish of an unrelated change; different keys spread; requests without
// the key go round-robin.
func TestHashAffinity(t *testing.T) {
	eps := []string{"10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80", "10.0.0.4:80"}
	web := balancedBackend("prod/web:80", balance.Hash, "$http_x_user", eps...)
	bt := &balanceTransport{}
	r := newTestRouter(Options{Transport: bt})
	r.Publish(table("one", vhost("", nil, route(match.Prefix, "/", web))))

	user := func(i int) http.Header { return http.Header{"X-User": {fmt.Sprint("user-", i)}} }
	chosen := map[int]string{}
	for i := range 40 {
		chosen[i] = bt.endpointFor(t, r, "/", user(i))
		for n := range 10 {
			require.Equal(t, chosen[i], bt.endpointFor(t, r, fmt.Sprint("/page/", n), user(i)), "user %d, request %d", i, n)
		}
	}
	spread := map[string]bool{}
	for _, ep := range chosen {
		spread[ep] = true
	}
	assert.Len(t, spread, len(eps), "40 keys reach every endpoint")

	// An unrelated change: another host and backend. The web backend is a
	// new *match.Backend value with the same identity and endpoints.
	other := httpBackend("prod/other:80", "10.0.9.9:80")
	web2 := balancedBackend("prod/web:80", balance.Hash, "$http_x_user", eps...)
	gen, changed := r.Publish(table("two", vhost("other.example.com", nil, route(match.Prefix, "/", other)), vhost("", nil, route(match.Prefix, "/", web2))))
	require.True(t, changed)
	require.Equal(t, uint64(2), gen)
	for i := range 40 {
		require.Equal(t, chosen[i], bt.endpointFor(t, r, "/", user(i)), "user %d after publish", i)
	}

	// Without the header there is no affinity to keep: round-robin.
	none := map[string]bool{}
	for range len(eps) {
		none[bt.endpointFor(t, r, "/", nil)] = true
	}
	assert.Len(t, none, len(eps))
	// An empty header is no key either.
	empty := map[string]bool{}
	for range len(eps) {
		empty[bt.endpointFor(t, r, "/", http.Header{"X-User": {""}})] = true
	}
	assert.Len(t, empty, len(eps))
}

// Taking a request's key and picking with it allocates nothing, whatever
// the policy; the in-flight count returns to zero.
func TestPickAllocations(t *testing.T) {
	eps := []string{"10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80"}
	backends := []*match.Backend{
		balancedBackend("prod/rr:80", balance.RoundRobin, "", eps...),
		balancedBackend("prod/lc:80", balance.LeastConn, "", eps...),
		balancedBackend("prod/hh:80", balance.Hash, "$http_x_user", eps...),
		balancedBackend("prod/hc:80", balance.Hash, "$cookie_session", eps...),
		balancedBackend("prod/hu:80", balance.Hash, "$request_uri", eps...),
		balancedBackend("prod/ha:80", balance.Hash, "$remote_addr", eps...),
	}
	var routes []*match.Route
	for _, b := range backends {
		routes = append(routes, route(match.Prefix, "/"+b.Name, b))
	}
	r := newTestRouter(Options{Transport: &balanceTransport{}})
	r.Publish(table("alloc", vhost("", nil, routes...)))
	st := r.state.Load()

	req := httptest.NewRequest(http.MethodGet, "/x?y=1", nil)
	req.RequestURI = "/x?y=1"
	req.Header.Set("X-User", "alice")
	req.Header.Set("Cookie", "theme=dark; session=s-42")
	for _, b := range backends {
		bal := st.balancers[b]
		if b.Algorithm == balance.Hash {
			require.NotEmpty(t, bal.Key(req), b.ID)
		}
		allocs := testing.AllocsPerRun(100, func() {
			e, ok := bal.Pick(bal.Key(req))
			if !ok {
				panic("no endpoint")
			}
			e.Release()
		})
		assert.Zero(t, allocs, b.ID)
	}
	for _, ep := range eps {
		assert.Zero(t, r.InFlight(ep), ep)
	}
}

// BenchmarkPick measures what the handler does per request to choose an
// endpoint: take the request's key, pick with it, release.
func BenchmarkPick(b *testing.B) {
	eps := []string{"10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80", "10.0.0.4:80", "10.0.0.5:80"}
	req := httptest.NewRequest(http.MethodGet, "/x", nil)
	req.Header.Set("X-User", "alice")
	req.Header.Set("Cookie", "theme=dark; session=s-42")
	for _, c := range []struct {
		name string
		p    balance.Algorithm
		key  string
	}{
		{"round_robin", balance.RoundRobin, ""},
		{"least_conn", balance.LeastConn, ""},
		{"hash_header", balance.Hash, "$http_x_user"},
		{"hash_cookie", balance.Hash, "$cookie_session"},
	} {
		b.Run(c.name, func(b *testing.B) {
			be := balancedBackend("prod/web:80", c.p, c.key, eps...)
			r := newTestRouter(Options{Transport: &balanceTransport{}})
			r.Publish(table("bench", vhost("", nil, route(match.Prefix, "/", be))))
			bal := r.state.Load().balancers[be]
			b.ReportAllocs()
			for b.Loop() {
				e, _ := bal.Pick(bal.Key(req))
				e.Release()
			}
		})
	}
}

// hash by $remote_addr hashes the client address the realip rules found,
// as nginx's $remote_addr is once real_ip_header has been applied: behind
// a trusted load balancer, clients spread by their own addresses instead
// of all landing on the endpoint of the balancer's address.
func TestHashRemoteAddrIsTheClient(t *testing.T) {
	eps := []string{"10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80", "10.0.0.4:80"}
	web := balancedBackend("prod/web:80", balance.Hash, "$remote_addr", eps...)
	bt := &balanceTransport{}
	r := newTestRouter(Options{Transport: bt, TrustForwardedFor: true, ProxyRealIPCIDR: []netip.Prefix{netip.MustParsePrefix("10.9.0.0/16")}})
	r.Publish(table("one", vhost("", nil, route(match.Prefix, "/", web))))

	endpointOf := func(peer, xff string) string {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Host, req.RemoteAddr = "web", peer
		if xff != "" {
			req.Header.Set("X-Forwarded-For", xff)
		}
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code)
		bt.mu.Lock()
		defer bt.mu.Unlock()
		return bt.last
	}
	spread := map[string]bool{}
	for i := range 40 {
		client := fmt.Sprintf("203.0.113.%d", i+1)
		ep := endpointOf("10.9.0.5:4000", client)
		spread[ep] = true
		// The same client, through another balancer or directly, keeps its endpoint.
		require.Equal(t, ep, endpointOf("10.9.0.6:4001", client+", 10.9.0.7"), client)
		require.Equal(t, ep, endpointOf(client+":5000", ""), client)
	}
	assert.Len(t, spread, len(eps), "40 clients behind one balancer reach every endpoint")
}
