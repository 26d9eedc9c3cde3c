package router

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// TestRecordFields checks what a record says about a proxied request on
// both upstream paths, and about an answer the router made itself.
func TestRecordFields(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		w.Header().Set("X-Seen-Id", r.Header.Get("X-Request-Id"))
		w.Header().Set("X-Request-Id", "the-backends-own")
		w.Header().Set("X-Body", strings.Repeat("b", int(n)))
		w.WriteHeader(http.StatusCreated)
		http.NewResponseController(w).Flush()
		time.Sleep(20 * time.Millisecond) // headers first, then a slow body
		_, _ = io.WriteString(w, "0123456789")
	}))
	t.Cleanup(slow.Close)
	for _, tr := range proxyPaths() {
		t.Run(tr.name, func(t *testing.T) {
			rs := newRecords()
			r := newTestRouter(Options{Observer: rs.observe, Transport: tr.rt, ReturnRequestID: true})
			t.Cleanup(r.CloseIdleConnections)
			b := httpBackend("prod/api:8080", slow.Listener.Addr().String())
			b.Port = 8080
			rt := route(match.Prefix, "/api", b)
			r.Publish(table("rec", vhost("*.example.com", nil, rt)))

			req := httptest.NewRequest(http.MethodPost, "/api/x?q=1", strings.NewReader("hello"))
			req.Host = "shop.example.com"
			req.RemoteAddr = "198.51.100.7:5555"
			w := httptest.NewRecorder()
			r.ServeHTTP(w, req)
			require.Equal(t, http.StatusCreated, w.Code)
			rec := rs.raw[len(rs.raw)-1]

			id := w.Header().Get("X-Request-Id")
			assert.Len(t, id, 32, "a generated ID is returned, over the backend's own")
			assert.Equal(t, id, w.Header().Get("X-Seen-Id"), "the client gets the ID the backend got")
			assert.Equal(t, []string{id}, w.Header()["X-Request-Id"])
			assert.Equal(t, id, rec.RequestID)
			assert.Same(t, req, rec.Request)
			assert.Equal(t, "198.51.100.7", rec.ClientAddr)
			assert.Equal(t, "*.example.com", rec.VirtualHost)
			assert.Equal(t, "shop.example.com", rec.Host)
			assert.Same(t, rt, rec.MatchedRoute)
			assert.Equal(t, Service{Namespace: "prod", Name: "api", Port: 8080}, rec.Service)
			assert.Equal(t, int64(5), rec.BytesIn)
			assert.Equal(t, int64(10), rec.BytesOut)
			assert.Equal(t, 1, rec.Tries)
			assert.Equal(t, "prod/test", rec.Route.Ingress())
			assert.False(t, rec.Start.IsZero())
			assert.Positive(t, rec.UpstreamHeaderTime)
			assert.GreaterOrEqual(t, rec.UpstreamTime-rec.UpstreamHeaderTime, 15*time.Millisecond, "the body came after the headers")
			assert.GreaterOrEqual(t, rec.Duration, rec.UpstreamTime)

			// A client's own ID is kept, forwarded and returned.
			req = httptest.NewRequest(http.MethodGet, "/api", nil)
			req.Host = "shop.example.com"
			req.Header.Set("X-Request-Id", "abc")
			w = httptest.NewRecorder()
			r.ServeHTTP(w, req)
			assert.Equal(t, "abc", w.Header().Get("X-Seen-Id"))
			assert.Equal(t, "abc", w.Header().Get("X-Request-Id"))
			assert.Equal(t, "abc", rs.raw[len(rs.raw)-1].RequestID)
		})
	}
}

func TestRecordRefused(t *testing.T) {
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe, ReturnRequestID: true})
	none := httpBackend("prod/none:80")
	r.Publish(table("ref", vhost("shop.example.com", nil, route(match.Prefix, "/", none))))

	res := serve(r, http.MethodGet, "shop.example.com", "/x", nil)
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	id := res.Header.Get("X-Request-Id")
	assert.Len(t, id, 32)
	rec := rs.raw[len(rs.raw)-1]
	want := Record{
		Generation: 1, Method: "GET", Host: "shop.example.com", Path: "/x", Status: 503,
		Backend: "prod/none:80", Route: rec.MatchedRoute.Source, Reason: ReasonNoEndpoints,
		RequestID: id, ClientAddr: "192.0.2.1", VirtualHost: "shop.example.com", MatchedRoute: rec.MatchedRoute,
		Service: Service{Namespace: "prod", Name: "none", Port: 80}, Location: Service{Namespace: "prod", Name: "none", Port: 80},
		BytesOut:    int64(len(ansNoEndpoints.body)),
		HeaderBytes: headBytes(503, res.Header),
	}
	rec.Request, rec.Start, rec.Duration = nil, time.Time{}, 0
	assert.Equal(t, want, rec)

	res = serve(r, http.MethodGet, "other.example.com", "/x", nil)
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	rec = rs.raw[len(rs.raw)-1]
	assert.Equal(t, "", rec.VirtualHost)
	assert.Nil(t, rec.MatchedRoute)
	assert.Equal(t, Service{}, rec.Service)
	assert.Equal(t, res.Header.Get("X-Request-Id"), rec.RequestID)
}

// TestRecordWithoutReturn: without ReturnRequestID the client gets no ID,
// and a refusal before a backend was chosen has none in its record.
func TestRecordWithoutReturn(t *testing.T) {
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe})
	r.Publish(table("nr", vhost("shop.example.com", nil)))
	res := serve(r, http.MethodGet, "shop.example.com", "/", nil)
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	assert.Empty(t, res.Header.Values("X-Request-Id"))
	assert.Empty(t, rs.raw[0].RequestID)
}

// TestRecordClientAddr: behind a trusted proxy the record names the client
// the proxy forwarded, as X-Real-IP does; from anyone else, the peer.
func TestRecordClientAddr(t *testing.T) {
	_, web := echoBackend(t, "web")
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe, ProxyRealIPCIDR: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, TrustForwardedFor: true})
	r.Publish(table("ca", vhost("shop.example.com", nil, route(match.Prefix, "/", httpBackend("prod/web:80", web)))))
	for _, tt := range []struct{ peer, want string }{
		{"10.1.2.3:4000", "203.0.113.9"},
		{"198.51.100.1:4000", "198.51.100.1"},
	} {
		for _, host := range []string{"shop.example.com", "other.example.com"} { // proxied, refused
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.Host = host
			req.RemoteAddr = tt.peer
			req.Header.Set("X-Forwarded-For", "203.0.113.9")
			r.ServeHTTP(httptest.NewRecorder(), req)
			assert.Equal(t, tt.want, rs.raw[len(rs.raw)-1].ClientAddr, "%s %s", tt.peer, host)
		}
	}
}

// TestRecordKeepsClientHeadersUnderProxySetHeaders: the ConfigMap's
// proxy-set-headers reach the backend and leave the record's request as
// the client sent it, as nginx's proxy_set_header leaves $http_<name> and
// $request_length alone.
func TestRecordKeepsClientHeadersUnderProxySetHeaders(t *testing.T) {
	got := make(chan string, 2)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("X-Team") + "|" + r.Header.Get("X-Env")
	}))
	t.Cleanup(backend.Close)
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe, ProxySetHeaders: http.Header{"X-Team": {"payments"}, "X-Env": {"prod"}}})
	r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", backend.Listener.Addr().String())))))
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Host = "web"
	req.Header.Set("X-Env", "client")
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	require.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, "payments|prod", <-got, "the backend gets the set values")
	rec := rs.raw[len(rs.raw)-1]
	assert.Empty(t, rec.Request.Header.Values("X-Team"), "not sent by the client")
	assert.Equal(t, "client", rec.Request.Header.Get("X-Env"), "as the client sent it")
}
