package router

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// An HTTP/2 :path may carry spaces that HTTP/1 never delivers; copied into
// the backend's request line they would let a client write its own.
func TestTargetWithSpaceOrControlIsRefused(t *testing.T) {
	_, addr := echoBackend(t, "web")
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe})
	r.Publish(table("one", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
	for _, target := range []string{"/a HTTP/1.1 x", "/a\tb", "/a?q=1 2", "/a\x7f"} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.RequestURI = target // as an HTTP/2 server would hand it over
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		assert.Equal(t, http.StatusBadRequest, rec.Code, "%q", target)
		assert.Contains(t, rec.Body.String(), "space or control character", "%q", target)
		got := rs.last(t)
		assert.Empty(t, got.Endpoint, "%q must not reach a backend", target)
		assert.Equal(t, ReasonBadPath, got.Reason)
	}
}

// net/http's HTTP/2 server, which an embedder's http.Server runs over TLS,
// takes any :method free of control bytes; copied into an HTTP/1
// backend's request line, "GET /admin" would be read there as the
// target. nginx answers a method that is not a token 400, as router/h1
// and router/h2 refuse one.
func TestMethodNotATokenIsRefused(t *testing.T) {
	_, addr := echoBackend(t, "web")
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe})
	r.Publish(table("one", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
	for _, method := range []string{"GET /admin", "GET\t/admin", "GET(", "GÉT"} {
		req := httptest.NewRequest(http.MethodGet, "/public", nil)
		req.Method = method // as net/http's HTTP/2 server would hand it over
		req.Proto, req.ProtoMajor, req.ProtoMinor = "HTTP/2.0", 2, 0
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		assert.Equal(t, http.StatusBadRequest, rec.Code, "%q", method)
		got := rs.last(t)
		assert.Empty(t, got.Endpoint, "%q must not reach a backend", method)
		assert.Equal(t, ReasonRefused, got.Reason)
	}
	res := serve(r, "M-SEARCH", "h.test", "/public", nil)
	assert.Equal(t, http.StatusOK, res.StatusCode)
}

// net/http's HTTP/2 server routes by :authority and leaves a Host field
// beside it in the header; one naming another host, or two, make the
// request malformed (RFC 9113 §8.3.1), which nginx answers 400 and
// router/h2 refuses: a proxy in front reading Host would have routed it
// elsewhere.
func TestHTTP2HostDisagreeingIsRefused(t *testing.T) {
	_, addr := echoBackend(t, "web")
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe})
	r.Publish(table("one", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
	for _, c := range []struct {
		host []string
		ok   bool
	}{
		{[]string{"other.test"}, false},
		{[]string{"h.test", "h.test"}, false},
		{[]string{"h.test"}, true},
		{[]string{"H.Test"}, true},
		{nil, true},
	} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Proto, req.ProtoMajor, req.ProtoMinor = "HTTP/2.0", 2, 0
		req.Host = "h.test" // :authority
		if c.host != nil {
			req.Header["Host"] = c.host
		}
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		got := rs.last(t)
		if c.ok {
			assert.Equal(t, http.StatusOK, rec.Code, "%q", c.host)
			continue
		}
		assert.Equal(t, http.StatusBadRequest, rec.Code, "%q", c.host)
		assert.Empty(t, got.Endpoint, "%q must not reach a backend", c.host)
		reason := ReasonBadHost
		if len(c.host) > 1 {
			reason = ReasonRefused // as router/h1 refuses two Hosts
		}
		assert.Equal(t, reason, got.Reason, "%q", c.host)
	}
}

// A balancer of the table before the serving one can still be picked from
// by a request that loaded that state; its counter must stay the one the
// registry hands to newer balancers for the same address.
func TestSweepKeepsPreviousTablesCounters(t *testing.T) {
	_, addr := echoBackend(t, "web")
	_, other := echoBackend(t, "other")
	r := newTestRouter(Options{})
	r.Publish(table("one", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
	old := r.state.Load()

	r.Publish(table("two", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/other:80", other)))))
	r.Publish(table("three", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/other:80", other)), route(match.Exact, "/x", httpBackend("prod/x:80", other)))))
	// Two publishes since the old table served: a late pick from it must
	// still land on the counter the registry keeps for addr.
	bal := old.balancers[old.table.Lookup("", "/").Backend]
	require.NotNil(t, bal)
	e, ok := bal.Pick("")
	require.True(t, ok)
	defer e.Release()

	// The serving table names addr again: it must see the late pick.
	r.Publish(table("four", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
	assert.Equal(t, int64(1), r.InFlight(addr))
}
