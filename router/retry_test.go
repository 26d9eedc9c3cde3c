package router

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// bodyEcho answers with the request body it read, and its own address.
func bodyEcho(t testing.TB) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Endpoint", r.Host)
		_, _ = w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s.Listener.Addr().String()
}

// resetter accepts the request and drops the connection without answering:
// the connection was open, so the request may have been acted on.
func resetter(t testing.TB) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			c.Close()
		}
	}))
	t.Cleanup(s.Close)
	return s.Listener.Addr().String()
}

// TestRetryOnDialFailure spreads requests over one dead endpoint and two
// live ones: every request is answered by a live one, those that were sent
// to the dead one first took two tries, and every count is back to zero.
func TestRetryOnDialFailure(t *testing.T) {
	dead := deadAddr(t)
	_, live1 := echoBackend(t, "a")
	_, live2 := echoBackend(t, "b")
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe})
	r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", dead, live1, live2)))))

	for range 9 {
		res := serve(r, http.MethodGet, "web", "/", nil)
		body(t, res)
		require.Equal(t, http.StatusOK, res.StatusCode)
	}
	tries := map[int]int{}
	for _, rec := range rs.all {
		tries[rec.Tries]++
		assert.NotEqual(t, dead, rec.Endpoint, "the record names the endpoint that answered")
		assert.Empty(t, rec.Reason)
	}
	// A retry takes a turn of the round-robin cursor too, so how many
	// requests start on the dead endpoint depends on the order; some do,
	// and each of those needed exactly one more try.
	assert.Greater(t, tries[2], 0, "some requests were sent to the dead endpoint first")
	assert.Equal(t, 9, tries[1]+tries[2], "no request took more than two tries: %v", tries)
	for _, a := range []string{dead, live1, live2} {
		assert.Zero(t, r.InFlight(a), a)
	}
}

func TestRetryMethods(t *testing.T) {
	tests := []struct {
		method    string
		body      string
		wantRetry bool
	}{
		{http.MethodGet, "", true},
		{http.MethodHead, "", true},
		{http.MethodOptions, "", true},
		{http.MethodDelete, "", true},
		{http.MethodPut, "the whole body, sent again", true},
		{http.MethodPost, "", false},
		{http.MethodPost, "a body", false},
		{http.MethodPatch, "a body", false},
		{"LOCK", "", false},
		{"PROPFIND", "", true}, // every method but POST, LOCK and PATCH (SPEC §13)
		{"MKCOL", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.body, func(t *testing.T) {
			dead := deadAddr(t)
			live := bodyEcho(t)
			rs := newRecords()
			r := newTestRouter(Options{Observer: rs.observe})
			// Round-robin starts with the first endpoint: the dead one.
			r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", dead, live)))))

			req := httptest.NewRequest(tt.method, "/x", strings.NewReader(tt.body))
			req.Host = "web"
			w := httptest.NewRecorder()
			r.ServeHTTP(w, req)
			res := w.Result()
			got := body(t, res)
			rec := rs.last(t)
			if tt.wantRetry {
				assert.Equal(t, http.StatusOK, res.StatusCode)
				assert.Equal(t, 2, rec.Tries)
				assert.Equal(t, live, rec.Endpoint)
				if tt.method != http.MethodHead {
					assert.Equal(t, tt.body, got, "the body reaches the second endpoint intact")
				}
			} else {
				assert.Equal(t, http.StatusBadGateway, res.StatusCode)
				assert.Equal(t, 1, rec.Tries)
				assert.Equal(t, ReasonUpstreamUnreachable, rec.Reason)
				assert.Equal(t, dead, rec.Endpoint)
			}
			assert.Zero(t, r.InFlight(dead))
			assert.Zero(t, r.InFlight(live))
		})
	}
}

func TestRetryLimits(t *testing.T) {
	var deads []string
	for range 5 {
		deads = append(deads, deadAddr(t))
	}
	_, live := echoBackend(t, "live")
	tests := []struct {
		name       string
		endpoints  []string
		wantStatus int
		wantTries  int
		wantReason string
	}{
		{"one dead endpoint, nowhere else to go", deads[:1], 502, 1, ReasonUpstreamUnreachable},
		{"two dead endpoints", deads[:2], 502, 2, ReasonUpstreamUnreachable},
		{"at most three tries", deads, 502, 3, ReasonUpstreamUnreachable},
		{"the live one is fourth in line", append(append([]string(nil), deads[:3]...), live), 502, 3, ReasonUpstreamUnreachable},
		{"the live one is third in line", append(append([]string(nil), deads[:2]...), live), 200, 3, ""},
		{"connected, then reset: not retried", []string{resetter(t), live}, 502, 1, ReasonUpstreamError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := newRecords()
			r := newTestRouter(Options{Observer: rs.observe})
			r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", tt.endpoints...)))))
			res := serve(r, http.MethodGet, "web", "/", nil)
			got := body(t, res)
			assert.Equal(t, tt.wantStatus, res.StatusCode)
			rec := rs.last(t)
			assert.Equal(t, tt.wantTries, rec.Tries)
			assert.Equal(t, tt.wantReason, rec.Reason)
			for _, a := range tt.endpoints {
				assert.Zero(t, r.InFlight(a), a)
				assert.NotContains(t, got, a, "an answer never shows an address")
			}
		})
	}
}

// TestBackendRequestTimeoutKeepsDialRetry: a Gateway API rule's
// backendRequest timeout without a retry bounds each try, and a dial
// failure still goes on to another endpoint, as on every route (SPEC §13),
// on a backend dialled through net/http's transport (H2C) too.
func TestBackendRequestTimeoutKeepsDialRetry(t *testing.T) {
	live := func() string {
		s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		s.Config.Protocols = new(http.Protocols)
		s.Config.Protocols.SetUnencryptedHTTP2(true)
		s.Start()
		t.Cleanup(s.Close)
		return strings.TrimPrefix(s.URL, "http://")
	}
	dead := deadAddr(t)
	be := backend("prod/h2c:80", match.H2C, match.Serving, dead, live(), live())
	rt := route(match.Prefix, "/", be)
	rt.Location.Policy = &match.Policy{Proxy: &match.Proxying{MaxTempFileSize: -1, TryTimeout: 10 * time.Second}}
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe})
	r.Publish(mustTable(match.Spec{VirtualHosts: []*match.VirtualHost{vhost("", nil, rt)}, Backends: []*match.Backend{be}}))

	for range 9 {
		res := serve(r, http.MethodGet, "web", "/", nil)
		body(t, res)
		require.Equal(t, http.StatusOK, res.StatusCode)
	}
	tries := map[int]int{}
	for _, rec := range rs.all {
		tries[rec.Tries]++
	}
	assert.Greater(t, tries[2], 0, "some requests were sent to the dead endpoint first")
}

// TestRetryOnTLSHandshakeTimeout: an HTTPS endpoint that accepts the
// connection but never completes the TLS handshake within the connect
// timeout got nothing of the request, like one that refuses it: an
// idempotent request goes on to another endpoint (nginx's "timeout"
// while connecting, which its default proxy_next_upstream lists), the
// try recorded 504. A POST still gets the timeout's 504 (SPEC §13).
func TestRetryOnTLSHandshakeTimeout(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { silent.Close() })
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	secure := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "secure\n")
	}))
	secure.TLS = &tls.Config{}
	secure.StartTLS()
	t.Cleanup(secure.Close)
	for _, tt := range []struct {
		method string
		want   int
		tries  int
	}{{http.MethodGet, http.StatusOK, 2}, {http.MethodPost, http.StatusGatewayTimeout, 1}} {
		t.Run(tt.method, func(t *testing.T) {
			// Round-robin starts with the first endpoint: the silent one.
			rt := route(match.Prefix, "/", backend("prod/tls:443", match.HTTPS, match.Serving, silent.Addr().String(), secure.Listener.Addr().String()))
			rt.Policy = &match.Policy{ConnectTimeout: 200 * time.Millisecond}
			rs := newRecords()
			r := newTestRouter(Options{Observer: rs.observe})
			t.Cleanup(r.CloseIdleConnections)
			r.Publish(table("h", vhost("", nil, rt)))
			res := serve(r, tt.method, "web", "/", nil)
			body(t, res)
			assert.Equal(t, tt.want, res.StatusCode)
			rec := rs.raw[len(rs.raw)-1]
			assert.Equal(t, tt.tries, rec.Tries)
			if tt.tries == 2 {
				require.Len(t, rec.PassedOn, 1)
				assert.Equal(t, silent.Addr().String(), rec.PassedOn[0].Endpoint)
				assert.Equal(t, http.StatusGatewayTimeout, rec.PassedOn[0].Status)
			}
		})
	}
}

// TestRecordNamesEveryTry: a request passed on from an endpoint it could
// not reach records that try before the one that answered, as nginx's
// $upstream_addr and $upstream_status list every try ("a, b"; "502, 200").
func TestRecordNamesEveryTry(t *testing.T) {
	dead := deadAddr(t)
	live := bodyEcho(t)
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe})
	// Round-robin starts with the first endpoint: the dead one.
	r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", dead, live)))))
	res := serve(r, http.MethodGet, "web", "/", nil)
	body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode)
	rec := rs.raw[len(rs.raw)-1]
	require.Equal(t, 2, rec.Tries)
	assert.Equal(t, live, rec.Endpoint)
	require.Len(t, rec.PassedOn, 1, "the try that failed")
	assert.Equal(t, dead, rec.PassedOn[0].Endpoint)
	assert.Equal(t, http.StatusBadGateway, rec.PassedOn[0].Status, "nginx's status for a try that failed with an error")
	assert.LessOrEqual(t, rec.PassedOn[0].Ended, rec.UpstreamTime)

	r.Publish(table("d2", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", live)))))
	res = serve(r, http.MethodGet, "web", "/", nil)
	body(t, res)
	assert.Empty(t, rs.raw[len(rs.raw)-1].PassedOn, "one try, nothing passed on")
}

// TestRecordTimesEachTry: each try passed on keeps its own connect and
// response head times, as nginx's $upstream_connect_time and
// $upstream_header_time list them: none for a try that could not connect
// (nginx's "-"), a head time from the try's start for one whose 503 was
// passed on; a last try that got no head records none, whatever an
// earlier try got. On the pool and on the net/http way out alike.
func TestRecordTimesEachTry(t *testing.T) {
	for _, via := range []string{"pool", "transport"} {
		t.Run(via, func(t *testing.T) {
			o := Options{}
			if via == "transport" {
				o.Transport = &http.Transport{}
			}
			unavailable, _ := statusBackend(t, http.StatusServiceUnavailable)
			live, _ := statusBackend(t, http.StatusOK)
			dead := deadAddr(t)
			rs := newRecords()
			o.Observer = rs.observe
			r := newTestRouter(o)
			t.Cleanup(r.CloseIdleConnections)
			proxying := &match.Policy{Proxy: &match.Proxying{NextUpstream: match.RetryError | match.Retry503, MaxTempFileSize: -1}}
			// Round-robin starts with the first endpoint.
			rt := route(match.Prefix, "/", httpBackend("prod/web:80", dead, unavailable, live))
			rt.Policy = proxying
			r.Publish(table("t", vhost("", nil, rt)))
			res := serve(r, http.MethodGet, "web", "/", nil)
			body(t, res)
			require.Equal(t, http.StatusOK, res.StatusCode)
			rec := rs.raw[len(rs.raw)-1]
			require.Len(t, rec.PassedOn, 2)
			assert.Negative(t, rec.PassedOn[0].Connect, "no connection opened")
			assert.Zero(t, rec.PassedOn[0].Header, "no response head")
			assert.GreaterOrEqual(t, rec.PassedOn[1].Connect, time.Duration(0))
			assert.Positive(t, rec.PassedOn[1].Header, "the 503's head")
			assert.LessOrEqual(t, rec.PassedOn[1].Header, rec.PassedOn[1].Ended-rec.PassedOn[0].Ended, "from the try's start")
			assert.Greater(t, rec.UpstreamHeaderTime, rec.PassedOn[1].Ended, "the last try's head came after the 503's try ended")

			rt = route(match.Prefix, "/", httpBackend("prod/web2:80", unavailable, deadAddr(t)))
			rt.Policy = proxying
			r.Publish(table("t2", vhost("", nil, rt)))
			res = serve(r, http.MethodGet, "web", "/", nil)
			body(t, res)
			require.Equal(t, http.StatusBadGateway, res.StatusCode)
			rec = rs.raw[len(rs.raw)-1]
			require.Len(t, rec.PassedOn, 1)
			assert.Positive(t, rec.PassedOn[0].Header)
			assert.Zero(t, rec.UpstreamHeaderTime, "the last try got no head")
		})
	}
}
