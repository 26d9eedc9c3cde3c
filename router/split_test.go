package router

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// A route's weighted backends share its requests exactly over each
// rotation: an invalid alternative's share answers 500
// (ReasonInvalidBackend), one without endpoints 503, weight 0 none; a
// split without a valid backend answers every request 500, which Lookup
// reports (ReasonNoValidBackend).
func TestRouteSplit(t *testing.T) {
	a := httpBackend("prod/a:80", "10.0.1.1:8080")
	b := httpBackend("prod/b:80", "10.0.2.1:8080")
	empty := httpBackend("prod/empty:80")
	split := route(match.Prefix, "/", a)
	split.Split = &match.Split{Alternatives: []match.Alternative{{Backend: a, Weight: 3}, {Backend: b, Weight: 1}, {Weight: 2}, {Backend: empty, Weight: 1}, {Backend: b, Weight: 0}}}
	none := route(match.Prefix, "/none", nil)
	none.Split = &match.Split{Alternatives: []match.Alternative{{Weight: 1}, {Backend: a, Weight: 0}}}
	tab := mustTable(match.Spec{VirtualHosts: []*match.VirtualHost{vhost("shop.example.com", nil, split, none)}, Backends: []*match.Backend{a, b, empty}})

	ct := &countingTransport{counts: map[string]int{}}
	var reasons []string
	r := newTestRouter(Options{Transport: ct, Observer: func(rec Record) {
		if rec.Reason != "" {
			reasons = append(reasons, rec.Reason)
		}
	}})
	r.Publish(tab)
	status := map[int]int{}
	for range 70 {
		res := serve(r, "GET", "shop.example.com", "/x", nil)
		status[res.StatusCode]++
	}
	require.Empty(t, cmp.Diff(map[int]int{200: 40, 500: 20, 503: 10}, status))
	require.Empty(t, cmp.Diff(map[string]int{"prod/a:80": 30, "prod/b:80": 10}, ct.counts))
	counted := map[string]int{}
	for _, rs := range reasons {
		counted[rs]++
	}
	require.Equal(t, map[string]int{ReasonInvalidBackend: 20, ReasonNoEndpoints: 10}, counted)

	req, _ := http.NewRequest("GET", "http://shop.example.com/none", nil)
	d := r.Lookup(req)
	require.Equal(t, 500, d.Status)
	require.Equal(t, ReasonNoValidBackend, d.Reason)
	require.Equal(t, 500, serve(r, "GET", "shop.example.com", "/none", nil).StatusCode)
}

// The router looks routes up with the request's method, headers and
// query, so a route's conditions decide.
func TestRouteConditions(t *testing.T) {
	a := httpBackend("prod/a:80", "10.0.1.1:8080")
	b := httpBackend("prod/b:80", "10.0.2.1:8080")
	cond := route(match.Prefix, "/foo", a)
	cond.When = &match.Conditions{Method: "POST", Headers: []match.ValueMatch{{Name: "x-version", Value: "2"}}, Query: []match.ValueMatch{{Name: "q", Value: "a b"}}}
	tab := mustTable(match.Spec{VirtualHosts: []*match.VirtualHost{vhost("shop.example.com", nil, cond, route(match.Prefix, "/", b))}, Backends: []*match.Backend{a, b}})
	ct := &countingTransport{counts: map[string]int{}}
	r := newTestRouter(Options{Transport: ct})
	r.Publish(tab)
	serve(r, "POST", "shop.example.com", "/foo/bar?q=a+b", http.Header{"X-Version": {"2"}})
	serve(r, "GET", "shop.example.com", "/foo/bar?q=a+b", http.Header{"X-Version": {"2"}})
	serve(r, "POST", "shop.example.com", "/foo?q=a", http.Header{"X-Version": {"2"}})
	serve(r, "POST", "shop.example.com", "/foo?q=a%20b", nil)
	require.Empty(t, cmp.Diff(map[string]int{"prod/a:80": 1, "prod/b:80": 3}, ct.counts))
}

// A mirror's share copies exactly n of every d requests, spread out.
func TestMirrorShare(t *testing.T) {
	var c mirrorShare
	var got []bool
	n := 0
	for range 100 {
		ok := c.take(3, 10)
		got = append(got, ok)
		if ok {
			n++
		}
	}
	require.Equal(t, 30, n)
	for i := 0; i+10 <= len(got); i += 10 {
		k := 0
		for _, ok := range got[i : i+10] {
			if ok {
				k++
			}
		}
		require.Equal(t, 3, k, "every ten requests")
	}
	require.False(t, (*mirrorShare)(nil).take(1, 2))
}

// Mirrors to a Service (the Gateway API's RequestMirror): each copy goes
// to an endpoint of the mirror's Backend with the request's Host, and
// several mirrors each get one.
func TestMirrorToBackends(t *testing.T) {
	sink1, addr1 := newMirrorSink(t)
	sink2, addr2 := newMirrorSink(t)
	_, webAddr := echoBackend(t, "web")
	web := httpBackend("prod/web:80", webAddr)
	m1, m2 := httpBackend("prod/m1:80", addr1), httpBackend("prod/m2:80", addr2)
	r := newTestRouter(Options{})
	t.Cleanup(r.CloseIdleConnections)
	r.Publish(responseTable(web, &match.Response{
		Mirror:  &match.Mirror{Target: "http://m1.prod.svc$request_uri", Backend: m1},
		Mirrors: []*match.Mirror{{Target: "http://m2.prod.svc$request_uri", Backend: m2}},
	}, m1, m2))
	res := serve(r, http.MethodGet, "app.example.com", "/orders?id=7", nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	for _, s := range []*mirrorSink{sink1, sink2} {
		c := s.next(t)
		require.Equal(t, "/orders?id=7", c.uri)
		require.Equal(t, "app.example.com", c.host)
	}
}

// Lookup agrees with serving on a route's weighted split: every answer
// serving makes for a share it chose instead of proxying (a backend
// without ready endpoints, a Service not found, an invalid alternative,
// a backend not marked for gRPC) is one the Decision leaves to it.
func TestSplitLookupAgrees(t *testing.T) {
	s1 := httpBackend("prod/s1:80", "10.0.1.1:8080")
	empty := httpBackend("prod/empty:80")
	gone := &match.Backend{ID: "prod/gone:80", State: match.ServiceNotFound}
	two := route(match.Prefix, "/two", s1)
	two.Split = &match.Split{Alternatives: []match.Alternative{{Backend: s1, Weight: 1}, {Backend: empty, Weight: 1}}}
	all := route(match.Prefix, "/all", s1)
	all.Split = &match.Split{Alternatives: []match.Alternative{{Backend: s1, Weight: 1}, {Backend: empty, Weight: 1}, {Backend: gone, Weight: 1}, {Weight: 1}, {Backend: empty, Weight: 0}}}
	tab := mustTable(match.Spec{VirtualHosts: []*match.VirtualHost{vhost("shop.example.com", nil, two, all)}, Backends: []*match.Backend{s1, empty, gone}})
	var last Record
	r := newTestRouter(Options{Transport: &countingTransport{counts: map[string]int{}}, Observer: func(rec Record) { last = rec }})
	r.Publish(tab)
	for _, tt := range []struct {
		path    string
		grpc    bool
		answers map[string]int // reason ("" proxied) → requests, over two rotations
	}{
		{"/two/x", false, map[string]int{"": 2, ReasonNoEndpoints: 2}},
		{"/all/x", false, map[string]int{"": 2, ReasonNoEndpoints: 2, ReasonServiceNotFound: 2, ReasonInvalidBackend: 2}},
		{"/two/x", true, map[string]int{ReasonGRPCNotEnabled: 2, ReasonNoEndpoints: 2}},
	} {
		got := map[string]int{}
		for range 2 * len(tt.answers) {
			req := httptest.NewRequest(http.MethodPost, tt.path, nil)
			req.Host = "shop.example.com"
			if tt.grpc {
				req.Header.Set("Content-Type", "application/grpc")
				req.ProtoMajor, req.ProtoMinor, req.Proto = 2, 0, "HTTP/2.0"
			}
			d := r.Lookup(req)
			require.True(t, d.Proxied(), tt.path)
			r.ServeHTTP(httptest.NewRecorder(), req)
			got[last.Reason]++
			if last.Reason != "" {
				require.True(t, d.LeavesToServing(last.Reason), "%s: Lookup proxies to %s, serving answered %s", tt.path, d.Backend.ID, last.Reason)
			}
		}
		require.Equal(t, tt.answers, got, tt.path)
	}
	lookup := func(path string) Decision {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Host = "shop.example.com"
		return r.Lookup(req)
	}
	require.Equal(t, []Share{{Backend: s1, Weight: 1}, {Backend: empty, Weight: 1, Status: 503, Reason: ReasonNoEndpoints},
		{Backend: gone, Weight: 1, Status: 503, Reason: ReasonServiceNotFound}, {Weight: 1, Status: 500, Reason: ReasonInvalidBackend}},
		lookup("/all/x").Shares, "each share of positive weight, with its answer")
	require.False(t, lookup("/two/x").LeavesToServing(ReasonServiceNotFound), "an answer no share makes")
	require.Nil(t, lookup("/nothing").Shares, "no route, no shares")
}
