package router

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// testTracer records spans; each span's IDs count up from 1, in its
// parent's trace or a new one.
type testTracer struct {
	mu    sync.Mutex
	next  byte
	spans []*testSpan
}

type testSpan struct {
	parent TraceContext
	ctx    TraceContext
	start  string
	end    SpanEnd
	ended  bool
	tracer *restartTracer // the restartTracer that restarts it
}

func (tr *testTracer) StartSpan(parent TraceContext, name string, _ time.Time) Span {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.next++
	s := &testSpan{parent: parent, start: name}
	s.ctx = TraceContext{TraceID: parent.TraceID, Flags: 1, State: parent.State}
	if !parent.IsValid() {
		s.ctx.TraceID = [16]byte{15: tr.next}
	}
	s.ctx.SpanID = [8]byte{7: tr.next}
	tr.spans = append(tr.spans, s)
	return s
}

func (s *testSpan) Context() TraceContext { return s.ctx }

func (s *testSpan) End(e *SpanEnd) {
	s.end = *e
	s.end.Attributes = append([]SpanAttribute(nil), e.Attributes...)
	s.ended = true
}

func (tr *testTracer) last(t *testing.T) *testSpan {
	t.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	require.NotEmpty(t, tr.spans, "no span")
	return tr.spans[len(tr.spans)-1]
}

func (tr *testTracer) count() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return len(tr.spans)
}

func (s *testSpan) attrs() map[string]any {
	m := make(map[string]any)
	for _, a := range s.end.Attributes {
		if a.IsInt {
			m[a.Key] = a.Int
		} else {
			m[a.Key] = a.Value
		}
	}
	return m
}

func spanName(t *testing.T, s string) match.SpanName {
	n, err := match.ParseSpanName(s)
	require.NoError(t, err)
	return n
}

// The W3C specification's examples and its rules for invalid values.
func TestParseTraceparent(t *testing.T) {
	c, ok := ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	require.True(t, ok)
	assert.True(t, c.Sampled())
	assert.Equal(t, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", c.Traceparent())
	c, ok = ParseTraceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-future")
	require.True(t, ok, "a later version may append fields")
	assert.False(t, c.Sampled())
	for _, bad := range []string{
		"",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", // version 00 has no more fields
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
		"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
	} {
		_, ok := ParseTraceparent(bad)
		assert.False(t, ok, bad)
	}
}

const clientParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// tracingRouter serves shop.example.com: /api traced with tr, /plain not.
func tracingRouter(t *testing.T, tr *match.Tracing, o Options) (*Router, *testTracer) {
	_, addr := echoBackend(t, "web")
	web := httpBackend("prod/web:80", addr)
	api := route(match.Prefix, "/api", web)
	api.Tracing = tr
	tt := &testTracer{}
	if o.Tracer == nil {
		o.Tracer = tt
	}
	r := newTestRouter(o)
	r.Publish(table("tracing", vhost("shop.example.com", nil, api, route(match.Prefix, "/plain", web))))
	return r, tt
}

func traced(r http.Handler, target string, h http.Header) *http.Response {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Host = "shop.example.com:8080"
	req.RemoteAddr = "203.0.113.9:40001"
	for k, v := range h {
		req.Header[k] = v
	}
	req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, &tcpAddr8080))
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	return rec.Result()
}

var tcpAddr8080 = netTCPAddr("127.0.0.1:8080")

// A traced location's span has the module's name and attributes
// (otel_ngx_module.cpp StartNgxSpan, FinishNgxSpan, kDefaultScriptAttributes),
// and the backend gets the span's context in place of the client's.
func TestTracingSpan(t *testing.T) {
	r, tt := tracingRouter(t, &match.Tracing{TrustIncomingSpan: true}, Options{})
	res := traced(r, "/api/items?id=1", http.Header{"User-Agent": {"curl/8"}, "Traceparent": {clientParent}, "Tracestate": {"vendor=1"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	s := tt.last(t)
	require.True(t, s.ended)
	assert.Equal(t, "/api/", s.start, "named after the nginx location \"/api/\"")
	assert.Equal(t, "/api/", s.end.Name)
	assert.Equal(t, clientParent, s.parent.Traceparent(), "trusted: the client's span is the parent")
	assert.Equal(t, "vendor=1", s.parent.State)
	assert.Equal(t, map[string]any{
		"http.method": "GET", "http.flavor": "1.1", "http.target": "/api/items?id=1",
		"http.server_name": "shop.example.com", "http.host": "shop.example.com:8080", "http.user_agent": "curl/8",
		"http.status_code": int64(200), "http.scheme": "http", "net.host.port": int64(8080),
		"net.peer.ip": "203.0.113.9", "net.peer.port": int64(40001),
	}, s.attrs())
	assert.False(t, s.end.Error)
	assert.Equal(t, s.ctx.Traceparent(), res.Header.Get("Seen-Traceparent"), "the backend gets the span's context")
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", s.ctx.Traceparent()[3:35], "in the client's trace")
	assert.Equal(t, "vendor=1", res.Header.Get("Seen-Tracestate"))

	// The exact twin ingress-nginx writes beside a prefix names /api.
	traced(r, "/api", nil)
	assert.Equal(t, "/api", tt.last(t).end.Name)
}

// Behind a PROXY protocol header net.host.port is the socket's port, as
// nginx's $server_port, not the header's destination port.
func TestTracingServerPortSocketPort(t *testing.T) {
	r, tt := tracingRouter(t, &match.Tracing{}, Options{})
	req := httptest.NewRequest(http.MethodGet, "/api/x", nil)
	req.Host = "shop.example.com"
	ctx := context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 8443})
	r.ServeHTTP(httptest.NewRecorder(), req.WithContext(SocketPort(ctx, 80)))
	assert.Equal(t, int64(80), tt.last(t).attrs()["net.host.port"])
}

// opentelemetry-trust-incoming-span "false": the client's context is not
// the parent, and its headers are replaced (tracestate dropped).
func TestTracingUntrusted(t *testing.T) {
	r, tt := tracingRouter(t, &match.Tracing{}, Options{})
	res := traced(r, "/api/x", http.Header{"Traceparent": {clientParent}, "Tracestate": {"vendor=1"}})
	s := tt.last(t)
	assert.False(t, s.parent.IsValid(), "no parent")
	assert.Equal(t, s.ctx.Traceparent(), res.Header.Get("Seen-Traceparent"))
	assert.NotContains(t, res.Header.Get("Seen-Traceparent"), "4bf92f3577b34da6a3ce929d0e0e4736")
	assert.Empty(t, res.Header.Values("Seen-Tracestate"))
}

// A location that is not traced makes no span and passes the client's
// trace headers on as they are; so does every location without a Tracer.
func TestTracingOff(t *testing.T) {
	r, tt := tracingRouter(t, &match.Tracing{}, Options{})
	res := traced(r, "/plain/x", http.Header{"Traceparent": {clientParent}, "Tracestate": {"vendor=1"}})
	assert.Equal(t, 0, tt.count())
	assert.Equal(t, clientParent, res.Header.Get("Seen-Traceparent"))
	assert.Equal(t, "vendor=1", res.Header.Get("Seen-Tracestate"))

	_, addr := echoBackend(t, "web")
	rt := route(match.Prefix, "/api", httpBackend("prod/web:80", addr))
	rt.Tracing = &match.Tracing{}
	plain := newTestRouter(Options{})
	plain.Publish(table("no tracer", vhost("shop.example.com", nil, rt)))
	res = traced(plain, "/api/x", http.Header{"Traceparent": {clientParent}})
	assert.Equal(t, clientParent, res.Header.Get("Seen-Traceparent"))
}

// An operation name with variables is expanded per request, as nginx
// expands opentelemetry_operation_name; a 5xx answer is an error span; an
// answer the router makes itself is traced too.
func TestTracingOperationName(t *testing.T) {
	dead := httpBackend("prod/dead:80", deadAddr(t))
	rt := route(match.Prefix, "/down", dead)
	rt.Tracing = &match.Tracing{OperationName: spanName(t, "HTTP $request_method $service_name $uri")}
	tt := &testTracer{}
	r := newTestRouter(Options{Tracer: tt})
	r.Publish(table("names", vhost("shop.example.com", nil, rt)))
	res := traced(r, "/down/x", nil)
	require.Equal(t, http.StatusBadGateway, res.StatusCode)
	s := tt.last(t)
	assert.Equal(t, "HTTP GET dead /down/x", s.end.Name)
	assert.True(t, s.end.Error)
	assert.Equal(t, int64(502), s.attrs()["http.status_code"])
}

// The external auth service gets no trace context, as ingress-nginx's
// auth subrequest gets none (TestTracingSubrequestContext); the backend
// gets the span's.
func TestTracingExternalAuth(t *testing.T) {
	svc := newAuthService(t)
	tt := &testTracer{}
	_, addr := echoBackend(t, "web")
	rt := route(match.Prefix, "/app", httpBackend("prod/web:80", addr))
	rt.Auth = externalAuth(t, svc.srv.URL+"/ok", nil)
	rt.Tracing = &match.Tracing{TrustIncomingSpan: true}
	r := newTestRouter(Options{Tracer: tt})
	r.Publish(table("auth", vhost("shop.example.com", nil, rt)))
	res := traced(r, "/app/x", http.Header{"Traceparent": {clientParent}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	got, _ := svc.request()
	s := tt.last(t)
	assert.Empty(t, got.Header["Traceparent"])
	assert.Equal(t, s.ctx.Traceparent(), res.Header.Get("Seen-Traceparent"))
}

// A Tracer on a router whose locations are not traced costs a request
// nothing.
func TestTracingOffAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	addr := cannedBackend(t)
	req := httptest.NewRequest(http.MethodGet, "/api/v1/items?id=42", nil)
	req.Host = "shop.example.com"
	w := &discardWriter{h: make(http.Header)}
	allocs := func(o Options) float64 {
		r := benchRouterWith(nil, o, addr)
		defer r.CloseIdleConnections()
		w.serveOK(t, r, req) // dials
		return testing.AllocsPerRun(200, func() { w.serveOK(t, r, req) })
	}
	without, with := allocs(Options{}), allocs(Options{Tracer: &testTracer{}})
	assert.Equal(t, without, with, "allocations per request with a Tracer and no traced location")
}

// A traced request costs the router no allocation of its own: its
// writer, the span's attributes and the traceparent's text are pooled.
func TestTracingAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	addr := cannedBackend(t)
	req := httptest.NewRequest(http.MethodGet, "/api/v1/items?id=42", nil)
	req.Host = "shop.example.com"
	req.Header.Set("User-Agent", "bench")
	w := &discardWriter{h: make(http.Header)}
	allocs := func(tr *match.Tracing) float64 {
		web := httpBackend("prod/web:80", addr)
		api := route(match.Prefix, "/api", web)
		api.Tracing = tr
		r := newTestRouter(Options{Tracer: nopTracer{}})
		r.Publish(table("traced allocs", vhost("shop.example.com", nil, api)))
		defer r.CloseIdleConnections()
		w.serveOK(t, r, req) // dials
		return testing.AllocsPerRun(200, func() { w.serveOK(t, r, req) })
	}
	off := allocs(nil)
	on := allocs(&match.Tracing{TrustIncomingSpan: true})
	assert.Equal(t, off, on, "allocations per traced request against an untraced one")
}

func netTCPAddr(s string) net.TCPAddr {
	a, err := net.ResolveTCPAddr("tcp", s)
	if err != nil {
		panic(err)
	}
	return *a
}

// nopTracer makes spans that record nothing, with a fixed context: the
// router's own share of a traced request.
type nopTracer struct{}

type nopSpan struct{}

func (nopTracer) StartSpan(TraceContext, string, time.Time) Span { return nopSpan{} }

func (nopSpan) Context() TraceContext {
	return TraceContext{TraceID: [16]byte{1}, SpanID: [8]byte{1}, Flags: 1}
}

func (nopSpan) End(*SpanEnd) {}

// BenchmarkHandlerAloneTraced is BenchmarkHandlerAlone with every
// location traced through a Tracer that records nothing: what tracing
// costs the router itself, the SDK's work aside.
func BenchmarkHandlerAloneTraced(b *testing.B) {
	addr := cannedBackend(b)
	web := httpBackend("prod/web:80", addr)
	api := route(match.Prefix, "/api", web)
	api.Tracing = &match.Tracing{TrustIncomingSpan: true}
	r := newTestRouter(Options{Tracer: nopTracer{}})
	r.Publish(table("bench traced", vhost("shop.example.com", nil, api)))
	b.Cleanup(r.CloseIdleConnections)
	benchHandler(b, r)
}

// parseTraceparentByDigit is ParseTraceparent as it was first written,
// digit by digit: FuzzParseTraceparent holds the table-driven one to it.
func parseTraceparentByDigit(v string) (TraceContext, bool) {
	var c TraceContext
	if len(v) < 55 || v[2] != '-' || v[35] != '-' || v[52] != '-' {
		return c, false
	}
	digits := func(s string) (byte, bool) {
		var n byte
		for i := range 2 {
			switch d := s[i]; {
			case d >= '0' && d <= '9':
				n = n<<4 | (d - '0')
			case d >= 'a' && d <= 'f':
				n = n<<4 | (d - 'a' + 10)
			default:
				return 0, false
			}
		}
		return n, true
	}
	ver, ok := digits(v[0:2])
	if !ok || ver == 0xff || ver == 0 && len(v) != 55 || ver != 0 && len(v) > 55 && v[55] != '-' {
		return c, false
	}
	for i := range c.TraceID {
		if c.TraceID[i], ok = digits(v[3+2*i : 5+2*i]); !ok {
			return TraceContext{}, false
		}
	}
	for i := range c.SpanID {
		if c.SpanID[i], ok = digits(v[36+2*i : 38+2*i]); !ok {
			return TraceContext{}, false
		}
	}
	if c.Flags, ok = digits(v[53:55]); !ok || !c.IsValid() {
		return TraceContext{}, false
	}
	return c, true
}

// FuzzParseTraceparent: the header a client sends is read as the
// digit-by-digit reading does, and a context read from a version-00
// header writes that header back.
func FuzzParseTraceparent(f *testing.F) {
	for _, s := range []string{
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-future",
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0z",
		"0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",
		"cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09x",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, ok := ParseTraceparent(v)
		want, wantOK := parseTraceparentByDigit(v)
		if ok != wantOK || got != want {
			t.Fatalf("ParseTraceparent(%q) = %+v, %v; digit by digit %+v, %v", v, got, ok, want, wantOK)
		}
		if ok && v[:2] == "00" && got.Traceparent() != v {
			t.Fatalf("ParseTraceparent(%q).Traceparent() = %q", v, got.Traceparent())
		}
	})
}

// FuzzIPv4Peer holds ipv4Peer to the general reading of a peer address
// it stands in for: the address as peerAddr parses and String writes it,
// the port as net.SplitHostPort and strconv.Atoi read it.
func FuzzIPv4Peer(f *testing.F) {
	for _, s := range []string{"127.0.0.1:40000", "10.0.0.255:1", "0.0.0.0:0", "1.2.3.4:080", "01.2.3.4:80", "1.2.3.256:80",
		"1.2.3:80", "1.2.3.4.5:80", "[::1]:80", "::1", "1.2.3.4", "1.2.3.4:", "1.2.3.4:+80", "1.2.3.4:-1", "255.255.255.255:65535", "1..3.4:80"} {
		f.Add(s)
	}
	for _, s := range []string{"127.0.0.1:40000", "10.0.0.255:1", "0.0.0.0:0", "1.2.3.4:080", "255.255.255.255:65535"} {
		_, _, ok := ipv4Peer(s)
		require.True(f, ok, "%q is read the short way", s)
	}
	f.Fuzz(func(t *testing.T, remote string) {
		ip, port, ok := ipv4Peer(remote)
		if !ok {
			return
		}
		a := peerAddr(remote)
		require.True(t, a.Is4(), "%q: not an IPv4 address to peerAddr", remote)
		assert.Equal(t, a.String(), ip, "%q: address", remote)
		_, p, err := net.SplitHostPort(remote)
		require.NoError(t, err, remote)
		n, err := strconv.Atoi(p)
		require.NoError(t, err, remote)
		assert.Equal(t, n, port, "%q: port", remote)
	})
}

// A mirror's copy carries its own request's client trace headers as
// received, not the span's context: ingress-nginx's mirror location
// (template.go buildMirrorLocations) has no opentelemetry_propagate and a
// proxy_set_header of its own, so the subrequest passes the client's
// headers. Each copy is sent after its request is over, when the pooled
// writer that held the span's traceparent serves the next ones; over the
// router's pool and over a Transport (where the span's context replaced
// the client's on the request's headers before the copy was made).
func TestTracingMirror(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
	}{{"pool", Options{}}, {"transport", Options{Transport: &http.Transport{}}}} {
		t.Run(tc.name, func(t *testing.T) {
			sink, addr := newMirrorSink(t)
			_, webAddr := echoBackend(t, "web")
			web := httpBackend("prod/web:80", webAddr)
			tt := &testTracer{}
			tc.o.Tracer = tt
			r := newTestRouter(tc.o)
			t.Cleanup(r.CloseIdleConnections)
			tab := responseTable(web, &match.Response{Mirror: &match.Mirror{Target: "http://" + addr + "$request_uri", Host: "shadow.internal"}})
			for vh := range tab.VirtualHosts() {
				for _, rt := range vh.Routes {
					rt.Tracing = &match.Tracing{TrustIncomingSpan: true}
				}
			}
			r.Publish(tab)
			const n = 20
			want := map[string]bool{}
			for i := range n {
				req := httptest.NewRequest(http.MethodGet, "/orders", nil)
				req.Host = "app.example.com"
				tp, ts := "", ""
				if i > 0 {
					tp = fmt.Sprintf("00-4bf92f3577b34da6a3ce929d0e0e47%02x-00f067aa0ba902b7-01", i)
					ts = fmt.Sprintf("n=%d", i)
					req.Header["Traceparent"] = []string{tp}
					req.Header["Tracestate"] = []string{ts}
				}
				want[tp+" "+ts] = true
				rec := httptest.NewRecorder()
				r.ServeHTTP(rec, req)
				require.Equal(t, http.StatusOK, rec.Code)
				if i > 0 {
					assert.Equal(t, tt.last(t).ctx.Traceparent(), rec.Header().Get("Seen-Traceparent"), "the backend gets the span's")
				}
			}
			for range n {
				sink.next(t)
			}
			got := map[string]bool{}
			sink.mu.Lock()
			for _, c := range sink.reqs {
				got[c.header.Get("Traceparent")+" "+c.header.Get("Tracestate")] = true
			}
			sink.mu.Unlock()
			assert.Equal(t, want, got, "the trace headers the mirror copies carried")
		})
	}
}

// The span's context goes on the request's headers, in place of the
// client's, only where they are sent on: the backend (written into the
// request head over the HTTP/1.1 pool, put on the headers for a
// Transport) gets it once, with the tracestate the span has, the
// external auth service none and the error backend the client's
// (TestTracingSubrequestContext); a Hook, as nginx's access phase, sees
// the client's headers. With headers from the client and without.
func TestTracingHeadersSentOn(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
	}{{"pool", Options{}}, {"transport", Options{Transport: &http.Transport{}}}} {
		t.Run(tc.name, func(t *testing.T) {
			tt := &testTracer{}
			tc.o.Tracer = tt
			var hooked []string
			tc.o.Hook = func(_ http.ResponseWriter, req *http.Request, _ Match) bool {
				hooked = req.Header["Traceparent"]
				return false
			}
			r := newTestRouter(tc.o)
			t.Cleanup(r.CloseIdleConnections)
			_, addr := echoBackend(t, "web")
			web := httpBackend("prod/web:80", addr)
			plain := route(match.Prefix, "/api", web)
			plain.Tracing = &match.Tracing{TrustIncomingSpan: true}
			svc := newAuthService(t)
			authed := route(match.Prefix, "/app", web)
			authed.Auth = externalAuth(t, svc.srv.URL+"/ok", nil)
			authed.Tracing = &match.Tracing{}
			missing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) }))
			t.Cleanup(missing.Close)
			_, errAddr := echoBackend(t, "errors")
			errs := httpBackend("prod/errors:80", errAddr)
			paged := route(match.Prefix, "/paged", httpBackend("prod/missing:80", missing.Listener.Addr().String()))
			paged.Response = &match.Response{ErrorCodes: []int{404}, ErrorBackend: errs}
			paged.Tracing = &match.Tracing{TrustIncomingSpan: true}
			r.Publish(mustTable(match.Spec{
				VirtualHosts: []*match.VirtualHost{vhost("shop.example.com", nil, plain, authed, paged)},
				Backends:     []*match.Backend{web, errs, paged.Backend},
			}))
			for _, client := range []http.Header{{}, {"Traceparent": {clientParent}, "Tracestate": {"vendor=1"}, "User-Agent": {"curl/8"}}} {
				for _, target := range []string{"/api/x", "/app/x", "/paged/x"} {
					req := httptest.NewRequest(http.MethodGet, target, nil)
					req.Host = "shop.example.com"
					req.Header = client.Clone()
					rec := httptest.NewRecorder()
					r.ServeHTTP(rec, req)
					res := rec.Result()
					require.Equal(t, http.StatusOK, res.StatusCode, target)
					s := tt.last(t)
					want := s.ctx.Traceparent()
					switch {
					case target == "/paged/x":
						assert.Equal(t, client["Traceparent"], res.Header["Seen-Traceparent"], "%v: what the error backend got", client)
						assert.Equal(t, client["Tracestate"], res.Header["Seen-Tracestate"], "%v: what the error backend got", client)
					case s.ctx.State != "":
						assert.Equal(t, []string{want}, res.Header["Seen-Traceparent"], "%s %v: what the backend got", target, client)
						assert.Equal(t, []string{s.ctx.State}, res.Header["Seen-Tracestate"], "%s %v", target, client)
					default:
						assert.Equal(t, []string{want}, res.Header["Seen-Traceparent"], "%s %v: what the backend got", target, client)
						assert.Empty(t, res.Header["Seen-Tracestate"], "%s %v", target, client)
					}
					if target == "/app/x" {
						got, _ := svc.request()
						assert.Empty(t, got.Header["Traceparent"], "what the auth service got")
						assert.Empty(t, got.Header["Tracestate"], "what the auth service got")
					}
					assert.Equal(t, client["Traceparent"], hooked, "%s %v: what the hook saw", target, client)
				}
			}
		})
	}
}

// A tracedWriter back in the pool holds nothing of its request but text
// buffers written over by the next and the location name it keeps.
func TestTracedWriterReset(t *testing.T) {
	tw := new(tracedWriter)
	v := reflect.ValueOf(tw).Elem()
	for i := range v.NumField() {
		f := reflect.NewAt(v.Field(i).Type(), unsafe.Pointer(v.Field(i).UnsafeAddr())).Elem()
		fill(f)
		require.False(t, f.IsZero(), v.Type().Field(i).Name)
	}
	tw.reset(len(tw.attrs), false)
	kept := map[string]bool{"field": true, "ip": true, "cacheRoute": true, "cacheExact": true, "cacheName": true,
		"cacheHost": true, "cacheServer": true}
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		if name == "attrs" {
			// What refers to the request, the values, is gone; the
			// constant keys and the numbers may stay.
			for j, a := range tw.attrs {
				assert.Empty(t, a.Value, "attribute %d", j)
			}
			continue
		}
		assert.Equal(t, kept[name], !v.Field(i).IsZero(), "field %s", name)
	}
	// For a SpanRestarter, the span that ended stays too.
	tw.span = nopSpan{}
	tw.reset(len(tw.attrs), true)
	assert.Equal(t, Span(nopSpan{}), tw.span)
}

// restartTracer is a testTracer that restarts the spans it made.
type restartTracer struct {
	testTracer
	restarts, anew int
}

func (tr *restartTracer) RestartSpan(ended Span, parent TraceContext, name string, start time.Time) Span {
	s, ok := ended.(*testSpan)
	if !ok || s.tracer != tr {
		tr.anew++
		s := tr.StartSpan(parent, name, start).(*testSpan)
		s.tracer = tr
		return s
	}
	if !s.ended {
		panic("restarted before it ended")
	}
	tr.restarts++
	n := tr.StartSpan(parent, name, start).(*testSpan)
	*s = *n
	s.tracer = tr
	tr.mu.Lock()
	tr.spans[len(tr.spans)-1] = s
	tr.mu.Unlock()
	return s
}

// A SpanRestarter is handed back the spans that ended, kept with the
// router's pooled state: after the first, traced requests start theirs
// in them, each span as StartSpan's would be; a span of another router's
// Tracer, kept in the same pool, is handed to it too, and it makes its
// own.
func TestTracingRestartSpan(t *testing.T) {
	rt := &restartTracer{}
	r, _ := tracingRouter(t, &match.Tracing{TrustIncomingSpan: true}, Options{Tracer: rt})
	other, ot := tracingRouter(t, &match.Tracing{}, Options{})
	for i := range 20 {
		res := traced(r, "/api/items", http.Header{"Traceparent": {clientParent}})
		require.Equal(t, http.StatusOK, res.StatusCode)
		s := rt.last(t)
		require.True(t, s.ended)
		assert.Equal(t, "/api/", s.end.Name)
		assert.Equal(t, clientParent, s.parent.Traceparent())
		assert.Equal(t, s.ctx.Traceparent(), res.Header.Get("Seen-Traceparent"), "request %d", i)
		if i%5 == 4 {
			traced(other, "/api/items", nil)
		}
	}
	assert.Equal(t, 20, rt.restarts+rt.anew)
	assert.Positive(t, rt.restarts, "no span was restarted")
	assert.Equal(t, 4, ot.count(), "the other router's spans")
}

// fill makes v, settable, non-zero all through.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			fill(reflect.NewAt(v.Field(i).Type(), unsafe.Pointer(v.Field(i).UnsafeAddr())).Elem())
		}
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i))
		}
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint8, reflect.Uint64:
		v.SetUint(1)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
	case reflect.Interface:
		if v.Type() == reflect.TypeFor[Span]() {
			v.Set(reflect.ValueOf(nopSpan{}))
		} else {
			v.Set(reflect.ValueOf(&discardWriter{}))
		}
	default:
		panic("fill: " + v.Kind().String())
	}
}

// FuzzTraceparent holds the traceparent written by words to the one
// fmt writes, and ParseTraceparent reads it back.
func FuzzTraceparent(f *testing.F) {
	f.Add([]byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}, []byte{0, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}, byte(1))
	f.Add(make([]byte, 16), make([]byte, 8), byte(0))
	f.Add([]byte("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"), []byte("\x09\x0a\x99\xa9\x9a\xaa\x00\x10"), byte(0xff))
	f.Fuzz(func(t *testing.T, trace, span []byte, flags byte) {
		var c TraceContext
		copy(c.TraceID[:], trace)
		copy(c.SpanID[:], span)
		c.Flags = flags
		want := fmt.Sprintf("00-%x-%x-%02x", c.TraceID, c.SpanID, c.Flags)
		require.Equal(t, want, c.Traceparent())
		if c.IsValid() {
			back, ok := ParseTraceparent(want)
			require.True(t, ok)
			c.Flags &= 1 // the sampled flag only is read
			require.Equal(t, c, back)
		}
	})
}
