package router

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// TestLimitStatusCodes: limit-req-status-code answers a request over a
// rate, limit-conn-status-code one over limit-connections; 0 is 503.
func TestLimitStatusCodes(t *testing.T) {
	r := newTestRouter(Options{LimitReqStatusCode: 429, LimitConnStatusCode: 403})
	r.limits.clock = (&fakeClock{}).now
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.RemoteAddr = "198.51.100.1:1000"

	conns := &match.Policy{RateLimit: &match.RateLimit{Zone: "prod/conn", Connections: 1}}
	held, _, refused := r.admit(req, conns)
	require.False(t, refused)
	_, a, refused := r.admit(req, conns)
	require.True(t, refused)
	assert.Equal(t, 403, a.status)
	assert.Equal(t, ReasonRateLimited, a.reason)
	held.release()

	rate := &match.Policy{RateLimit: &match.RateLimit{Zone: "prod/rate", RPM: 1, BurstRPM: 0}}
	_, _, refused = r.admit(req, rate)
	require.False(t, refused)
	_, a, refused = r.admit(req, rate)
	require.True(t, refused)
	assert.Equal(t, 429, a.status)
	assert.Contains(t, a.body, "429 Too Many Requests")

	assert.Equal(t, ansRateLimited, newTestRouter(Options{}).live.Load().ansLimitReq)
}

// TestConfigMapHeadersSet: add-headers replace a backend's on the way out,
// proxy-set-headers the client's on the way in; SetConfigMapHeaders
// changes both and nil removes them.
func TestConfigMapHeadersSet(t *testing.T) {
	c := newConfigMapHeaders(http.Header{"x-frame-options": {"DENY"}}, http.Header{"X-Tenant": {"edge"}}, quietLogger())
	h := http.Header{"X-Frame-Options": {"SAMEORIGIN"}}
	c.setAdded(h)
	assert.Equal(t, http.Header{"X-Frame-Options": {"DENY"}}, h)
	in := http.Header{"X-Tenant": {"forged"}}
	c.setProxied(in)
	assert.Equal(t, http.Header{"X-Tenant": {"edge"}}, in)
	assert.Nil(t, newConfigMapHeaders(nil, http.Header{}, quietLogger()))

	r := newTestRouter(Options{AddHeaders: http.Header{"A": {"1"}}})
	require.NotNil(t, r.cmHeaders.Load())
	r.SetConfigMapHeaders(nil, nil)
	assert.Nil(t, r.cmHeaders.Load())
}

// TestConfigMapHeadersValues: a value empty as written clears the header
// (proxy_set_header does not pass it, more_set_headers removes it); one
// with a variable the router cannot expand is left out, not sent as
// written; one with variables is expanded per request, and a ConfigMap
// without any costs a request nothing.
func TestConfigMapHeadersValues(t *testing.T) {
	c := newConfigMapHeaders(http.Header{"X-Empty": {""}, "X-Start": {"t=${msec}"}, "X-Host": {"$host"}},
		http.Header{"X-Lit": {"a"}, "X-Cap": {"$1"}}, quietLogger())
	assert.Equal(t, http.Header{"X-Empty": nil}, c.add)
	assert.Equal(t, http.Header{"X-Lit": {"a"}}, c.proxy)
	require.Len(t, c.vars, 1)
	h := http.Header{"X-Empty": {"backend"}, "X-Start": {"backend"}}
	c.setAdded(h)
	assert.Equal(t, http.Header{"X-Start": {"backend"}}, h)

	r := newTestRouter(Options{})
	r.Publish(table("d", vhost("h.test", nil, route(match.Prefix, "/", httpBackend("prod/b:80", deadAddr(t))))))
	req := httptest.NewRequest(http.MethodGet, "/x", nil)
	req.Host = "h.test"
	s := requestState{req: req, d: r.decide(req, false)}
	got := r.forRequest(c, &s)
	assert.Equal(t, http.Header{"X-Empty": nil, "X-Host": {"h.test"}}, got.add)
	assert.Equal(t, http.Header{"X-Empty": nil}, c.add, "the shared sets are not written")

	literal := newConfigMapHeaders(http.Header{"X-A": {"1"}}, nil, quietLogger())
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		if r.forRequest(literal, &s) != literal {
			t.Fatal("copied")
		}
	}))
}

// TestConfigMapHeadersServer: an add-headers Server, literal or with
// variables, reaches the client only with server tokens on, as
// nginx.tmpl's more_clear_headers Server follows the add-headers when
// server-tokens is "false"; the other add-headers stay either way.
func TestConfigMapHeadersServer(t *testing.T) {
	for _, v := range []string{"edge/1.0", "edge-$host"} {
		for _, tokens := range []string{"", "ramjet"} {
			r := newTestRouter(Options{ServerTokens: tokens, AddHeaders: http.Header{"server": {v}, "X-A": {"1"}}})
			res := serve(r, http.MethodGet, "nowhere.test", "/", nil)
			res.Body.Close()
			want := []string(nil)
			if tokens != "" {
				want = []string{strings.ReplaceAll(v, "$host", "nowhere.test")}
			}
			assert.Equal(t, want, res.Header.Values("Server"), "value %q, server tokens %q", v, tokens)
			assert.Equal(t, "1", res.Header.Get("X-A"))
		}
	}
}

// TestLimitStatusCode444Closes: limit-req-status-code 444 closes the
// client's connection with no answer, as nginx's NGX_HTTP_CLOSE does, and
// the record shows 444 with nothing sent, as nginx logs it.
func TestLimitStatusCode444Closes(t *testing.T) {
	rs := newRecords()
	r := newTestRouter(Options{LimitReqStatusCode: 444, Observer: rs.observe, Transport: &balanceTransport{}})
	web := httpBackend("prod/web:80", "10.0.0.1:80")
	r.Publish(table("c", vhost("c", nil, policyRoute("/", web, &match.Policy{RateLimit: &match.RateLimit{Zone: "prod/c", RPM: 1}}))))
	srv := httptest.NewServer(r)
	defer srv.Close()
	get := func() (*http.Response, error) {
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
		require.NoError(t, err)
		req.Host = "c"
		return srv.Client().Do(req)
	}
	res, err := get()
	require.NoError(t, err)
	res.Body.Close()
	res, err = get()
	if err == nil {
		res.Body.Close()
		t.Fatalf("over the limit: status %d, want the connection closed", res.StatusCode)
	}
	require.Eventually(t, func() bool { rs.mu.Lock(); defer rs.mu.Unlock(); return len(rs.raw) >= 2 }, 5*time.Second, 10*time.Millisecond)
	rs.mu.Lock()
	rec := rs.raw[1]
	rs.mu.Unlock()
	assert.Equal(t, 444, rec.Status)
	assert.Equal(t, ReasonRateLimited, rec.Reason)
	assert.Zero(t, rec.BytesOut+rec.HeaderBytes)
}
