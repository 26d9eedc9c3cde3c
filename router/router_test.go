package router

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

func TestRouting(t *testing.T) {
	_, shopAddr := echoBackend(t, "shop")
	_, checkoutAddr := echoBackend(t, "checkout")
	_, wildAddr := echoBackend(t, "wild")
	_, defAddr := echoBackend(t, "default")
	_, apiAddr := echoBackend(t, "api")
	shop := httpBackend("prod/shop:80", shopAddr)
	checkout := httpBackend("prod/checkout:80", checkoutAddr)
	wild := httpBackend("prod/wild:80", wildAddr)
	def := httpBackend("prod/default:80", defAddr)
	api := httpBackend("prod/api:8080", apiAddr)

	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe})
	// The record names the declaration matched: a route's source, or the
	// host's fallback source when the fallback answered.
	catchAll := vhost("", def, route(match.Prefix, "/api", api))
	catchAll.FallbackSource = match.Source{Namespace: "prod", Name: "default", Field: "spec.defaultBackend"}
	r.Publish(table("d1",
		vhost("shop.example.com", nil,
			route(match.Prefix, "/", shop),
			route(match.Exact, "/checkout", checkout),
			route(match.Prefix, "/api/", api)),
		vhost("*.example.com", nil, route(match.Prefix, "/", wild)),
		catchAll,
	))

	tests := []struct {
		host, target string
		want         string // backend name answering
		wantID       string
		wantEndpoint string
	}{
		{"shop.example.com", "/", "shop", "prod/shop:80", shopAddr},
		{"SHOP.example.com.:8080", "/x", "shop", "prod/shop:80", shopAddr},
		{"shop.example.com", "/checkout", "checkout", "prod/checkout:80", checkoutAddr},
		{"shop.example.com", "/checkout/", "shop", "prod/shop:80", shopAddr},
		{"shop.example.com", "/api", "api", "prod/api:8080", apiAddr},
		{"shop.example.com", "/api/v1?x=1", "api", "prod/api:8080", apiAddr},
		{"shop.example.com", "/apix", "shop", "prod/shop:80", shopAddr},
		{"shop.example.com", "/a/../checkout", "checkout", "prod/checkout:80", checkoutAddr},
		{"shop.example.com", "/%63heckout", "checkout", "prod/checkout:80", checkoutAddr},
		{"foo.example.com", "/checkout", "wild", "prod/wild:80", wildAddr},
		{"a.foo.example.com", "/", "default", "prod/default:80", defAddr},
		{"example.com", "/api/x", "api", "prod/api:8080", apiAddr},
		{"10.0.0.1", "/", "default", "prod/default:80", defAddr},
		{"", "/", "default", "prod/default:80", defAddr},
	}
	for _, tt := range tests {
		t.Run(tt.host+tt.target, func(t *testing.T) {
			res := serve(r, http.MethodGet, tt.host, tt.target, nil)
			require.Equal(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, tt.want+"\n", body(t, res))
			assert.Equal(t, tt.target, res.Header.Get("X-Seen-Uri"))
			got := rs.last(t)
			want := Record{
				Generation: 1, Method: "GET", Host: match.NormalizeHost(tt.host), Path: tt.target,
				Status: 200, Backend: tt.wantID, Endpoint: tt.wantEndpoint, Tries: 1,
				Route: match.Source{Namespace: "prod", Name: "test", Field: "spec.rules[0].http.paths[0]"},
			}
			if tt.want == "default" {
				want.Route = catchAll.FallbackSource
			}
			assert.Empty(t, cmp.Diff(want, got))
		})
	}
}

func TestRoundRobin(t *testing.T) {
	var addrs []string
	for i := range 3 {
		_, a := echoBackend(t, fmt.Sprint("ep", i))
		addrs = append(addrs, a)
	}
	b := httpBackend("prod/web:80", addrs...)
	r := newTestRouter(Options{})
	r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", b))))

	counts := map[string]int{}
	var order []string
	for range 9 {
		res := serve(r, http.MethodGet, "web", "/", nil)
		require.Equal(t, http.StatusOK, res.StatusCode)
		ep := res.Header.Get("X-Endpoint")
		counts[ep]++
		order = append(order, ep)
	}
	assert.Len(t, counts, 3, "distinct endpoints")
	for _, a := range addrs {
		assert.Equal(t, 3, counts[a], "requests to %s", a)
	}
	// Consecutive requests never hit the same endpoint twice in a row.
	for i := 1; i < len(order); i++ {
		assert.NotEqual(t, order[i-1], order[i])
	}
}

func TestAnswers(t *testing.T) {
	_, liveAddr := echoBackend(t, "live")
	dead := deadAddr(t)
	live := httpBackend("prod/live:80", liveAddr)
	empty := httpBackend("prod/empty:80")
	noSvc := backend("prod/gone:80", match.HTTP, match.ServiceNotFound)
	noPort := backend("prod/web:http", match.HTTP, match.PortNotFound)
	external := backend("prod/ext:80", match.HTTP, match.ExternalName)
	unreachable := httpBackend("prod/down:80", dead)
	grpc := backend("prod/grpc:50051", match.GRPC, match.Serving, liveAddr)

	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe, ConnectTimeout: time.Second})
	r.Publish(table("d",
		vhost("a.example.com", nil,
			route(match.Prefix, "/live", live),
			route(match.Prefix, "/empty", empty),
			route(match.Prefix, "/gone", noSvc),
			route(match.Prefix, "/noport", noPort),
			route(match.Prefix, "/ext", external),
			route(match.Prefix, "/down", unreachable),
			route(match.Prefix, "/grpc-ok", grpc)),
		vhost("b.example.com", empty),
	))

	grpcHeader := http.Header{"Content-Type": {"application/grpc+proto"}}
	tests := []struct {
		name       string
		host       string
		target     string
		header     http.Header
		wantStatus int
		wantBody   string // substring
		wantReason string
		wantID     string
	}{
		{"no route", "a.example.com", "/nothing", nil, 404, "no route", ReasonNoRoute, ""},
		{"no route other host", "c.example.com", "/live", nil, 404, "no route", ReasonNoRoute, ""},
		{"no endpoints", "a.example.com", "/empty", nil, 503, "no ready endpoints", ReasonNoEndpoints, "prod/empty:80"},
		{"fallback without endpoints", "b.example.com", "/x", nil, 503, "no ready endpoints", ReasonNoEndpoints, "prod/empty:80"},
		{"service not found", "a.example.com", "/gone", nil, 503, "Service does not exist", ReasonServiceNotFound, "prod/gone:80"},
		{"port not found", "a.example.com", "/noport/x", nil, 503, "no such port", ReasonPortNotFound, "prod/web:http"},
		{"external name", "a.example.com", "/ext", nil, 503, "ExternalName", ReasonExternalName, "prod/ext:80"},
		{"bad escape", "a.example.com", "/live/%zz", nil, 400, "percent-encoding", ReasonBadPath, ""},
		{"truncated escape", "a.example.com", "/live/%2", nil, 400, "percent-encoding", ReasonBadPath, ""},
		{"climbs", "a.example.com", "/live/../../etc", nil, 400, "climbs above /", ReasonBadPath, ""},
		{"climbs encoded", "a.example.com", "/%2e%2e/x", nil, 400, "climbs above /", ReasonBadPath, ""},
		{"asterisk", "a.example.com", "*", nil, 400, "invalid request target", ReasonRefused, ""}, // as router/h1 refuses it
		{"authority form", "a.example.com", "a.example.com:443", nil, 400, "not an absolute path", ReasonBadPath, ""},
		// nginx's host state takes no '#', as net/http and router/h1
		// refuse it on the wire; after the authority '#' ends the path.
		{"fragment in the authority", "a.example.com", "http://a.example.com#/live", nil, 400, "not an absolute path", ReasonBadPath, ""},
		{"fragment after the port", "a.example.com", "http://a.example.com:80#/live", nil, 400, "not an absolute path", ReasonBadPath, ""},
		{"fragment in an absolute form's path", "a.example.com", "http://a.example.com/live#f", nil, 200, "live", "", "prod/live:80"},
		{"unreachable", "a.example.com", "/down", nil, 502, "could not be reached", ReasonUpstreamUnreachable, "prod/down:80"},
		{"grpc to http backend", "a.example.com", "/live", grpcHeader, 502, "backend-protocol: GRPC", ReasonGRPCNotEnabled, "prod/live:80"},
		{"grpc-web is plain http", "a.example.com", "/live", http.Header{"Content-Type": {"application/grpc-web"}}, 200, "live", "", "prod/live:80"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.RequestURI = tt.target
			req.Host = tt.host
			for k, v := range tt.header {
				req.Header[k] = v
			}
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, req)
			res := rec.Result()
			got := body(t, res)
			assert.Equal(t, tt.wantStatus, res.StatusCode)
			if isGRPC(req) && tt.wantStatus != 200 {
				// Trailers-only: the reason travels in grpc-message.
				assert.Empty(t, got)
				assert.Equal(t, "application/grpc", res.Header.Get("Content-Type"))
				got = res.Header.Get("Grpc-Message")
			} else if tt.wantStatus != 200 {
				assert.Equal(t, "text/plain; charset=utf-8", res.Header.Get("Content-Type"))
			}
			assert.Contains(t, got, tt.wantBody)
			if tt.wantStatus != 200 {
				assert.NotContains(t, got, "127.0.0.1", "an answer must not show addresses")
				assert.NotContains(t, got, liveAddr)
				assert.NotContains(t, got, dead)
			}
			rec2 := rs.last(t)
			assert.Equal(t, tt.wantStatus, rec2.Status)
			assert.Equal(t, tt.wantReason, rec2.Reason)
			assert.Equal(t, tt.wantID, rec2.Backend)
			assert.Equal(t, tt.target, rec2.Path)
		})
	}
	assert.Zero(t, r.InFlight(dead))
	assert.Zero(t, r.InFlight(liveAddr))
}

func TestGRPCNotEnabledHeaders(t *testing.T) {
	_, addr := echoBackend(t, "web")
	for _, proto := range []match.Protocol{match.HTTP, match.HTTPS} {
		t.Run(proto.String(), func(t *testing.T) {
			r := newTestRouter(Options{})
			r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", backend("prod/web:80", proto, match.Serving, addr)))))
			for _, ct := range []string{"application/grpc", "application/grpc+proto", "Application/GRPC;charset=utf-8"} {
				res := serve(r, http.MethodPost, "web", "/pkg.Svc/Method", http.Header{"Content-Type": {ct}})
				assert.Empty(t, body(t, res), "trailers-only: no body")
				assert.Equal(t, http.StatusBadGateway, res.StatusCode, ct)
				assert.Equal(t, "application/grpc", res.Header.Get("Content-Type"))
				assert.Equal(t, "0", res.Header.Get("Content-Length"))
				assert.Equal(t, "14", res.Header.Get("Grpc-Status"))
				msg := res.Header.Get("Grpc-Message")
				assert.Contains(t, msg, "backend-protocol: GRPC")
				assert.NotContains(t, msg, "%", "grpc-message must need no percent-encoding")
			}
			assert.Zero(t, r.InFlight(addr))
		})
	}
}

func TestNoTableYet(t *testing.T) {
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe})
	assert.Nil(t, r.Table())
	assert.Zero(t, r.Generation())
	res := serve(r, http.MethodGet, "Shop.Example.com", "/x", nil)
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	assert.Contains(t, body(t, res), "no routing table yet")
	assert.Empty(t, cmp.Diff(Record{Method: "GET", Host: "shop.example.com", Path: "/x", Status: 503, Reason: ReasonNoTable}, rs.last(t)))
}

func TestForwardedHeaders(t *testing.T) {
	_, addr := echoBackend(t, "web")
	r := newTestRouter(Options{})
	r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
	front := httptest.NewServer(r)
	defer front.Close()
	_, frontPort, err := net.SplitHostPort(front.Listener.Addr().String())
	require.NoError(t, err)

	hex32 := regexp.MustCompile(`^[0-9a-f]{32}$`)
	tests := []struct {
		name    string
		header  http.Header
		wantXFF string
		wantID  func(string) bool
	}{
		{"first proxy", nil, "127.0.0.1", hex32.MatchString},
		// ingress-nginx's default: the client address alone, as
		// $remote_addr; the client's list goes on as X-Original-Forwarded-For.
		{"client's header not appended to", http.Header{"X-Forwarded-For": {"203.0.113.9, 198.51.100.2", "192.0.2.7"}},
			"127.0.0.1", hex32.MatchString},
		{"request id kept", http.Header{"X-Request-Id": {"abc-123"}}, "127.0.0.1",
			func(s string) bool { return s == "abc-123" }},
		{"client forwarded host and proto replaced", http.Header{"X-Forwarded-Host": {"evil"}, "X-Forwarded-Proto": {"https"}, "X-Real-Ip": {"1.2.3.4"},
			"X-Scheme": {"https"}, "X-Forwarded-Scheme": {"https"}},
			"127.0.0.1", hex32.MatchString},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, front.URL+"/p?q=1", nil)
			require.NoError(t, err)
			req.Host = "Shop.Example.com:8443"
			for k, v := range tt.header {
				req.Header[k] = v
			}
			res, err := front.Client().Do(req)
			require.NoError(t, err)
			body(t, res)
			require.Equal(t, http.StatusOK, res.StatusCode)
			h := res.Header
			assert.Equal(t, "Shop.Example.com:8443", h.Get("X-Seen-Host"), "Host unchanged")
			assert.Equal(t, []string{tt.wantXFF}, h.Values("Seen-X-Forwarded-For"))
			if xff := tt.header["X-Forwarded-For"]; xff != nil {
				assert.Equal(t, []string{strings.Join(xff, ", ")}, h.Values("Seen-X-Original-Forwarded-For"))
			} else {
				assert.Empty(t, h.Values("Seen-X-Original-Forwarded-For"))
			}
			assert.Equal(t, []string{"127.0.0.1"}, h.Values("Seen-X-Real-Ip"))
			assert.Equal(t, []string{"Shop.Example.com:8443"}, h.Values("Seen-X-Forwarded-Host"))
			assert.Equal(t, []string{frontPort}, h.Values("Seen-X-Forwarded-Port"))
			assert.Equal(t, []string{"http"}, h.Values("Seen-X-Forwarded-Proto"))
			assert.Equal(t, []string{"http"}, h.Values("Seen-X-Forwarded-Scheme"), "a client's scheme headers are replaced")
			assert.Equal(t, []string{"http"}, h.Values("Seen-X-Scheme"))
			ids := h.Values("Seen-X-Request-Id")
			require.Len(t, ids, 1)
			assert.True(t, tt.wantID(ids[0]), "X-Request-Id %q", ids[0])
		})
	}
}

func TestHopByHopRemoved(t *testing.T) {
	_, addr := echoBackend(t, "web")
	r := newTestRouter(Options{})
	r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
	front := httptest.NewServer(r)
	defer front.Close()

	raw := "GET /x HTTP/1.1\r\nHost: web\r\nConnection: keep-alive, X-Private\r\nX-Private: secret\r\n" +
		"Keep-Alive: timeout=5\r\nProxy-Authorization: Basic Zm9vOmJhcg==\r\nX-Kept: yes\r\n\r\n"
	res := rawRequest(t, front.Listener.Addr().String(), raw)
	require.Equal(t, http.StatusOK, res.StatusCode)
	for _, k := range []string{"Seen-X-Private", "Seen-Keep-Alive", "Seen-Proxy-Authorization", "Seen-Connection"} {
		assert.Empty(t, res.Header.Values(k), k)
	}
	assert.Equal(t, "yes", res.Header.Get("Seen-X-Kept"))
}

// TestProxyHeaderCleared: ingress-nginx clears the client's Proxy header
// (proxy_set_header Proxy "", against httpoxy): a CGI backend reads it as
// HTTP_PROXY and would send its own outgoing requests through the proxy
// the client names. Both upstream paths drop it.
func TestProxyHeaderCleared(t *testing.T) {
	_, addr := echoBackend(t, "web")
	for _, via := range []string{"pool", "transport"} {
		t.Run(via, func(t *testing.T) {
			o := Options{}
			if via == "transport" {
				o.Transport = &http.Transport{}
			}
			r := newTestRouter(o)
			r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
			res := serve(r, http.MethodGet, "web", "/x", http.Header{"Proxy": {"http://attacker.test:3128"}, "X-Kept": {"yes"}})
			body(t, res)
			require.Equal(t, http.StatusOK, res.StatusCode)
			assert.Empty(t, res.Header.Values("Seen-Proxy"))
			assert.Equal(t, "yes", res.Header.Get("Seen-X-Kept"))
		})
	}
}

// rawRequest writes raw bytes to addr and reads one response.
func rawRequest(t testing.TB, addr, raw string) *http.Response {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	_, err = io.WriteString(c, raw)
	require.NoError(t, err)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	body(t, res)
	return res
}

func TestRequestTargetVerbatim(t *testing.T) {
	_, addr := echoBackend(t, "web")
	r := newTestRouter(Options{})
	r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
	front := httptest.NewServer(r)
	defer front.Close()

	tests := []struct{ target, want string }{
		{"/a//b/../c?x=%2F", "/a//b/../c?x=%2F"},
		{"/p%2Fq/%2e/r", "/p%2Fq/%2e/r"},
		{"/caf%C3%a9?", "/caf%C3%a9?"},
		{"/a|b/{c}", "/a|b/{c}"},
		{"/q?a;b&c=%zz&&d", "/q?a;b&c=%zz&&d"},
		{"//double/slash?x", "//double/slash?x"},
		{"/./x", "/./x"},
		{"http://web/abs//path?q=%41", "/abs//path?q=%41"},
		{"http://web?q", "/?q"},
		{"http://web", "/"},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			res := rawRequest(t, front.Listener.Addr().String(),
				"GET "+tt.target+" HTTP/1.1\r\nHost: web\r\nConnection: close\r\n\r\n")
			require.Equal(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, tt.want, res.Header.Get("X-Seen-Uri"))
		})
	}
}

func TestPublish(t *testing.T) {
	_, addr := echoBackend(t, "web")
	b := httpBackend("prod/web:80", addr)
	r := newTestRouter(Options{})
	t1 := table("aaa", vhost("", nil, route(match.Prefix, "/", b)))
	t1again := table("aaa", vhost("", nil, route(match.Prefix, "/", b)))
	t2 := table("bbb", vhost("", nil, route(match.Prefix, "/", b)))
	// Same inputs, different routes: the digest covers the content.
	t3 := table("aaa", vhost("", nil, route(match.Prefix, "/other", b)))

	type step struct {
		t           *match.Table
		wantGen     uint64
		wantChanged bool
		wantServing *match.Table
	}
	steps := []step{
		{nil, 0, false, nil},
		{t1, 1, true, t1},
		{t1, 1, false, t1},
		{t1again, 1, false, t1},
		{t2, 2, true, t2},
		{t1again, 3, true, t1again},
		{t3, 4, true, t3},
		{t3, 4, false, t3},
	}
	for i, s := range steps {
		gen, changed := r.Publish(s.t)
		assert.Equal(t, s.wantGen, gen, "step %d generation", i)
		assert.Equal(t, s.wantChanged, changed, "step %d changed", i)
		assert.Equal(t, s.wantGen, r.Generation(), "step %d Generation()", i)
		assert.Same(t, s.wantServing, r.Table(), "step %d Table()", i)
	}
}

func TestDebugHandler(t *testing.T) {
	_, addr := echoBackend(t, "web")
	r := newTestRouter(Options{})
	res := serve(r.DebugHandler(), http.MethodGet, "", "/", nil)
	assert.Equal(t, "text/plain; charset=utf-8", res.Header.Get("Content-Type"))
	assert.Equal(t, "generation 0\nno routing table yet\n", body(t, res))

	tb := table("cafe", vhost("web.example.com", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr))))
	r.Publish(tb)
	res = serve(r.DebugHandler(), http.MethodGet, "", "/", nil)
	assert.Equal(t, "generation 1\n"+tb.String(), body(t, res))
}

// gate is a backend that holds every request until released.
type gate struct {
	arrived chan struct{}
	release chan struct{}
}

func newGate(t testing.TB) (*gate, string) {
	g := &gate{arrived: make(chan struct{}, 16), release: make(chan struct{})}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.arrived <- struct{}{}
		select {
		case <-g.release:
		case <-r.Context().Done():
		}
		_, _ = io.WriteString(w, "done\n")
	}))
	t.Cleanup(s.Close)
	t.Cleanup(func() {
		select {
		case <-g.release:
		default:
			close(g.release)
		}
	})
	return g, s.Listener.Addr().String()
}

func waitFor(t testing.TB, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("timed out")
	}
}

func TestInFlightAcrossPublish(t *testing.T) {
	g, addr := newGate(t)
	_, other := echoBackend(t, "other")
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe})
	r.Publish(table("one", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))

	done := make(chan *http.Response)
	go func() { done <- serve(r, http.MethodGet, "web", "/slow", nil) }()
	waitFor(t, g.arrived)
	assert.Equal(t, int64(1), r.InFlight(addr))

	// The next tables no longer name the endpoint at all.
	gen, changed := r.Publish(table("two", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", other)))))
	require.True(t, changed)
	require.Equal(t, uint64(2), gen)
	r.Publish(table("three", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/other:80", other)))))
	assert.Equal(t, int64(1), r.InFlight(addr), "still counted while in flight")
	res := serve(r, http.MethodGet, "web", "/fast", nil)
	assert.Equal(t, "other\n", body(t, res))

	close(g.release)
	res = <-done
	assert.Equal(t, "done\n", body(t, res))
	assert.Zero(t, r.InFlight(addr))
	assert.Zero(t, r.InFlight(other))

	var slow Record
	for _, rec := range rs.all {
		if rec.Path == "/slow" {
			slow = rec
		}
	}
	assert.Equal(t, uint64(1), slow.Generation, "served by the table it started on")
	assert.Equal(t, addr, slow.Endpoint)
}

func TestInFlightClientCancel(t *testing.T) {
	g, addr := newGate(t)
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe})
	r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
	front := httptest.NewServer(r)
	defer front.Close()

	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, front.URL+"/", nil)
	require.NoError(t, err)
	errc := make(chan error, 1)
	go func() {
		res, err := front.Client().Do(req)
		if err == nil {
			res.Body.Close()
		}
		errc <- err
	}()
	waitFor(t, g.arrived)
	require.Equal(t, int64(1), r.InFlight(addr))
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)

	select {
	case rec := <-rs.ch:
		assert.Equal(t, 499, rec.Status)
		assert.Equal(t, ReasonClientClosed, rec.Reason)
		assert.Equal(t, addr, rec.Endpoint)
	case <-time.After(5 * time.Second):
		t.Fatal("no record after client cancellation")
	}
	assert.Zero(t, r.InFlight(addr))
}

type panickingTransport struct{}

func (panickingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	panic("transport exploded")
}

func TestInFlightPanickingTransport(t *testing.T) {
	addr := "10.1.2.3:8080"
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe, Transport: panickingTransport{}})
	r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
	for range 3 {
		assert.PanicsWithValue(t, "transport exploded", func() { serve(r, http.MethodGet, "web", "/", nil) })
		assert.Zero(t, r.InFlight(addr))
	}
	rec := rs.last(t)
	assert.Equal(t, 0, rec.Status, "no status was written")
	assert.Equal(t, addr, rec.Endpoint)
	assert.Len(t, rs.all, 3, "one record per request")
}

// recordingTransport answers in process and records what it was given.
type recordingTransport struct {
	mu    sync.Mutex
	seen  []seenRequest
	err   error
	calls atomic.Int64
}

type seenRequest struct {
	BackendID, Endpoint string
	OK                  bool
	Scheme, Host        string
	RequestURI          string
	HostHeader          string
}

func (rt *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rt.calls.Add(1)
	id, ep, ok := EndpointFromContext(req.Context())
	rt.mu.Lock()
	rt.seen = append(rt.seen, seenRequest{id, ep, ok, req.URL.Scheme, req.URL.Host, req.URL.RequestURI(), req.Host})
	rt.mu.Unlock()
	if rt.err != nil {
		return nil, rt.err
	}
	return &http.Response{
		StatusCode: http.StatusTeapot, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")),
		ContentLength: 2, Request: req, ProtoMajor: 1, ProtoMinor: 1,
	}, nil
}

func TestEndpointFromContext(t *testing.T) {
	rt := &recordingTransport{}
	r := newTestRouter(Options{Transport: rt})
	r.Publish(table("d",
		vhost("", nil,
			route(match.Prefix, "/", httpBackend("prod/web:80", "10.0.0.1:8080", "10.0.0.2:8080")),
			route(match.Prefix, "/secure", backend("prod/tls:443", match.HTTPS, match.Serving, "[fd00::1]:8443")),
			route(match.Prefix, "/grpcs", backend("prod/g:443", match.GRPCS, match.Serving, "10.0.0.9:9443")))))

	for _, target := range []string{"/a%2Fb?x", "/b", "/secure//x", "/grpcs/pkg.S/M"} {
		res := serve(r, http.MethodGet, "Web.Example", target, nil)
		assert.Equal(t, http.StatusTeapot, res.StatusCode)
		assert.Equal(t, "ok", body(t, res))
	}
	want := []seenRequest{
		{"prod/web:80", "10.0.0.1:8080", true, "http", "10.0.0.1:8080", "/a%2Fb?x", "Web.Example"},
		{"prod/web:80", "10.0.0.2:8080", true, "http", "10.0.0.2:8080", "/b", "Web.Example"},
		{"prod/tls:443", "[fd00::1]:8443", true, "https", "[fd00::1]:8443", "/secure//x", "Web.Example"},
		{"prod/g:443", "10.0.0.9:9443", true, "https", "10.0.0.9:9443", "/grpcs/pkg.S/M", "Web.Example"},
	}
	assert.Empty(t, cmp.Diff(want, rt.seen))

	_, _, ok := EndpointFromContext(context.Background())
	assert.False(t, ok)
}

func TestUpstreamErrors(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus int
		wantReason string
	}{
		{"dial refused", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, 502, ReasonUpstreamUnreachable},
		{"read reset", &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}, 502, ReasonUpstreamError},
		{"header timeout", timeoutError{}, 504, ReasonUpstreamTimeout},
		{"other", io.ErrUnexpectedEOF, 502, ReasonUpstreamError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := newRecords()
			r := newTestRouter(Options{Observer: rs.observe, Transport: &recordingTransport{err: tt.err}})
			r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", "10.0.0.1:80")))))
			res := serve(r, http.MethodGet, "web", "/", nil)
			got := body(t, res)
			assert.Equal(t, tt.wantStatus, res.StatusCode)
			assert.NotContains(t, got, "10.0.0.1")
			rec := rs.last(t)
			assert.Equal(t, tt.wantStatus, rec.Status)
			assert.Equal(t, tt.wantReason, rec.Reason)
			assert.Equal(t, "10.0.0.1:80", rec.Endpoint)
			assert.Zero(t, r.InFlight("10.0.0.1:80"))
		})
	}
}

type timeoutError struct{}

func (timeoutError) Error() string { return "timeout awaiting response headers" }
func (timeoutError) Timeout() bool { return true }

func TestConcurrentPublish(t *testing.T) {
	_, a := echoBackend(t, "a")
	_, b := echoBackend(t, "b")
	tables := []*match.Table{
		table("ta", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/a:80", a)))),
		table("tb", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/b:80", b)))),
	}
	// Rebuilding a table per publish: each built afresh, as compile does.
	fresh := func(i int) *match.Table {
		addr, id := a, "prod/a:80"
		if i%2 == 1 {
			addr, id = b, "prod/b:80"
		}
		return table(fmt.Sprint("t", i), vhost("", nil, route(match.Prefix, "/", httpBackend(id, addr))))
	}
	var bad atomic.Int64
	r := newTestRouter(Options{Observer: func(rec Record) {
		// A request sees one whole table: the endpoint always belongs to
		// the backend that table chose.
		if (rec.Backend == "prod/a:80") != (rec.Endpoint == a) || rec.Status != 200 {
			bad.Add(1)
		}
	}})
	r.Publish(tables[0])

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			r.Publish(fresh(i))
			_, _ = r.GetCertificate(&shopHello)
		}
	})
	var served atomic.Int64
	for range 4 {
		wg.Go(func() {
			for range 50 {
				res := serve(r, http.MethodGet, "web", "/", nil)
				got := body(t, res)
				if res.StatusCode != 200 || (got != "a\n" && got != "b\n") {
					bad.Add(1)
				}
				served.Add(1)
			}
		})
	}
	for served.Load() < 200 {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	assert.Zero(t, bad.Load())
	assert.Greater(t, r.Generation(), uint64(1))
	assert.Zero(t, r.InFlight(a))
	assert.Zero(t, r.InFlight(b))
}

func TestRequestID(t *testing.T) {
	seen := map[string]bool{}
	hex32 := regexp.MustCompile(`^[0-9a-f]{32}$`)
	for range 200 {
		id := newRequestID()
		require.Regexp(t, hex32, id)
		require.False(t, seen[id], "duplicate id %s", id)
		seen[id] = true
	}
}

func TestUpgradeTunnelled(t *testing.T) {
	echo := upgradeEcho(t)
	addr := echo.Listener.Addr().String()
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe})
	r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/echo:80", addr)))))
	front := httptest.NewServer(r)
	defer front.Close()

	c, br := dialUpgrade(t, front.Listener.Addr().String())
	_, err := io.WriteString(c, "ping\n")
	require.NoError(t, err)
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "ping\n", line)
	assert.Equal(t, int64(1), r.InFlight(addr), "a tunnel stays in flight")

	require.NoError(t, c.Close())
	select {
	case rec := <-rs.ch:
		assert.Equal(t, http.StatusSwitchingProtocols, rec.Status)
		assert.Equal(t, addr, rec.Endpoint)
	case <-time.After(5 * time.Second):
		t.Fatal("tunnel did not end")
	}
	assert.Zero(t, r.InFlight(addr))
}

// upgradeEcho is a backend that switches to the protocol "echo" and sends
// back every line it reads.
func upgradeEcho(t *testing.T) *httptest.Server {
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "echo" {
			http.Error(w, "upgrade required", http.StatusUpgradeRequired)
			return
		}
		c, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		_ = rw.Flush()
		for {
			line, err := rw.ReadString('\n')
			if err != nil {
				return
			}
			_, _ = rw.WriteString(line)
			_ = rw.Flush()
		}
	}))
	t.Cleanup(echo.Close)
	return echo
}

// dialUpgrade opens a tunnel to "echo" through the router at front.
func dialUpgrade(t *testing.T, front string) (net.Conn, *bufio.Reader) {
	c, err := net.Dial("tcp", front)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	_, err = io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: echo\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
	require.NoError(t, err)
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusSwitchingProtocols, res.StatusCode)
	return c, br
}

// TestUpgradeRecordCountsTunnelBytes: the record of a tunnelled Upgrade
// counts the bytes the backend sent the client through the tunnel, as
// nginx's $body_bytes_sent and $bytes_sent do for a WebSocket, over the
// router's own HTTP/1.1 pool and over ReverseProxy (HTTPS and gRPC
// backends, Options.Transport).
func TestUpgradeRecordCountsTunnelBytes(t *testing.T) {
	for _, tr := range proxyPaths() {
		t.Run(tr.name, func(t *testing.T) { testUpgradeRecordCountsTunnelBytes(t, tr.rt) })
	}
}

func testUpgradeRecordCountsTunnelBytes(t *testing.T, rt http.RoundTripper) {
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\nDate: Mon, 02 Jan 2006 15:04:05 GMT\r\n\r\n")
		_ = rw.Flush()
		line, err := rw.ReadString('\n')
		if err != nil {
			return
		}
		_, _ = rw.WriteString(line + line)
		_ = rw.Flush()
	}))
	defer echo.Close()
	addr := echo.Listener.Addr().String()
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe, Transport: rt})
	r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/echo:80", addr)))))
	front := httptest.NewServer(r)
	defer front.Close()

	c, err := net.Dial("tcp", front.Listener.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: echo\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
	require.NoError(t, err)
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusSwitchingProtocols, res.StatusCode)
	// The backend's Date is hidden and the proxy's own given, as nginx
	// dates every answer.
	require.Len(t, res.Header.Values("Date"), 1)
	_, err = http.ParseTime(res.Header.Get("Date"))
	require.NoError(t, err)
	assert.NotContains(t, res.Header.Get("Date"), "2006")
	_, err = io.WriteString(c, "ping\n")
	require.NoError(t, err)
	rest, err := io.ReadAll(br)
	require.NoError(t, err)
	assert.Equal(t, "ping\nping\n", string(rest))
	// ReverseProxy's tunnel ends when both directions have.
	require.NoError(t, c.Close())
	select {
	case <-rs.ch:
	case <-time.After(5 * time.Second):
		t.Fatal("tunnel did not end")
	}
	rs.mu.Lock()
	rec := rs.raw[len(rs.raw)-1]
	rs.mu.Unlock()
	assert.Equal(t, http.StatusSwitchingProtocols, rec.Status)
	assert.Equal(t, int64(len("ping\nping\n")), rec.BytesOut, "the tunnel's bytes to the client")
}

// A named host's default location belongs to the Ingress that created it
// (ingress-nginx's createServers, Ingress: ing): when the global default
// backend answers there, the record names that Ingress, as ingress-nginx's
// $namespace and $ingress_name do. The catch-all's names none.
func TestRecordNamesHostCreatorOnGlobalFallback(t *testing.T) {
	_, defAddr := echoBackend(t, "default")
	def := httpBackend("ingress/default-http-backend:80", defAddr)
	global := match.Source{Field: "--default-backend"}
	shop := vhost("shop.example.com", def)
	shop.FallbackSource, shop.Creator = global, match.Source{Namespace: "prod", Name: "shop"}
	catchAll := vhost("", def)
	catchAll.FallbackSource = global
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe})
	r.Publish(table("d1", shop, catchAll))

	res := serve(r, http.MethodGet, "shop.example.com", "/nothing", nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, match.Source{Namespace: "prod", Name: "shop", Field: "--default-backend"}, rs.last(t).Route)
	res = serve(r, http.MethodGet, "other.example.com", "/", nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, global, rs.last(t).Route)
}
