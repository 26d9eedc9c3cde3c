package router

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// seenBackend answers status and keeps the traceparent of each request.
func seenBackend(t *testing.T, status int) (string, func() []string) {
	var mu sync.Mutex
	var seen []string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, strings.Join(r.Header["Traceparent"], ","))
		mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(s.Close)
	return s.Listener.Addr().String(), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// endedTracer is a testTracer that hands each span over on ended once
// it ends, for a test to read it after a request it did not serve itself.
type endedTracer struct {
	testTracer
	ended chan *testSpan
}

type endedSpan struct {
	*testSpan
	ended chan *testSpan
}

func newEndedTracer() *endedTracer { return &endedTracer{ended: make(chan *testSpan, 16)} }

func (tr *endedTracer) StartSpan(parent TraceContext, name string, start time.Time) Span {
	return endedSpan{tr.testTracer.StartSpan(parent, name, start).(*testSpan), tr.ended}
}

func (s endedSpan) End(e *SpanEnd) {
	s.testSpan.End(e)
	s.ended <- s.testSpan
}

func (tr *endedTracer) next(t *testing.T) *testSpan {
	t.Helper()
	select {
	case s := <-tr.ended:
		return s
	case <-time.After(5 * time.Second):
		t.Fatal("no span ended")
		return nil
	}
}

// A request tried on three endpoints (refused, 503, 200) is one span, as
// nginx's module makes one per request whatever proxy_next_upstream
// does, and every try carries its context; over the router's pool and
// over a Transport.
func TestTracingRetriedOneSpan(t *testing.T) {
	for _, via := range []string{"pool", "transport"} {
		t.Run(via, func(t *testing.T) {
			first, firstSeen := seenBackend(t, http.StatusServiceUnavailable)
			second, secondSeen := seenBackend(t, http.StatusOK)
			o := Options{}
			if via == "transport" {
				o.Transport = &http.Transport{}
			}
			tt := &testTracer{}
			o.Tracer = tt
			rt := route(match.Prefix, "/", httpBackend("prod/web:80", deadAddr(t), first, second))
			next := match.ParseNextUpstreamCondition("error") | match.ParseNextUpstreamCondition("http_503")
			rt.Policy = &match.Policy{Proxy: &match.Proxying{NextUpstream: next, MaxTempFileSize: -1}}
			rt.Tracing = &match.Tracing{TrustIncomingSpan: true}
			r := newTestRouter(o)
			t.Cleanup(r.CloseIdleConnections)
			r.Publish(table("retry", vhost("web", nil, rt)))
			res := serve(r, http.MethodGet, "web", "/x", http.Header{"Traceparent": {clientParent}})
			body(t, res)
			require.Equal(t, http.StatusOK, res.StatusCode)
			require.Equal(t, 1, tt.count(), "one span")
			s := tt.last(t)
			assert.Equal(t, int64(200), s.attrs()["http.status_code"])
			assert.Equal(t, []string{s.ctx.Traceparent()}, firstSeen(), "the 503's try")
			assert.Equal(t, []string{s.ctx.Traceparent()}, secondSeen(), "the last try")
		})
	}
}

// A WebSocket's span is a 101 and ends with the tunnel, as nginx logs
// (and the module ends its span) once the upgraded connection closes;
// the backend gets the span's context with the Upgrade request.
func TestTracingUpgrade(t *testing.T) {
	seen := make(chan string, 1)
	echo := upgradeEcho(t)
	inner := echo.Config.Handler
	echo.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Get("Traceparent")
		inner.ServeHTTP(w, r)
	})
	tt := newEndedTracer()
	rt := route(match.Prefix, "/", httpBackend("prod/echo:80", echo.Listener.Addr().String()))
	rt.Tracing = &match.Tracing{}
	r := newTestRouter(Options{Tracer: tt})
	r.Publish(table("upgrade", vhost("", nil, rt)))
	front := httptest.NewServer(r)
	t.Cleanup(front.Close)
	c, br := dialUpgrade(t, front.Listener.Addr().String())
	_, err := io.WriteString(c, "ping\n")
	require.NoError(t, err)
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ping\n", line)
	select {
	case <-tt.ended:
		t.Fatal("the span ended while the tunnel is open")
	default:
	}
	require.NoError(t, c.Close())
	s := tt.next(t)
	assert.Equal(t, int64(http.StatusSwitchingProtocols), s.attrs()["http.status_code"])
	assert.False(t, s.end.Error)
	assert.Equal(t, s.ctx.Traceparent(), <-seen)
}

// A gRPC call over HTTP/2 is one span (http.flavor 2.0, the 200 the call
// was answered with), under the client's trusted context, and the gRPC
// backend gets the span's context; over the router's HTTP/2 client and
// net/http's.
func TestTracingGRPC(t *testing.T) {
	seen := make(chan []string, 1)
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header["Traceparent"]
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status")
		w.WriteHeader(http.StatusOK)
		w.Header().Set("Grpc-Status", "0")
	}))
	s.Config.Protocols = new(http.Protocols)
	s.Config.Protocols.SetUnencryptedHTTP2(true)
	s.Start()
	t.Cleanup(s.Close)
	for _, netHTTP2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "router/h2", true: "net/http"}[netHTTP2], func(t *testing.T) {
			tt := newEndedTracer()
			r := newTestRouter(Options{NetHTTP2Client: netHTTP2, Tracer: tt})
			t.Cleanup(r.CloseIdleConnections)
			rt := route(match.Prefix, "/pkg.Svc", backend("prod/grpc:50051", match.GRPC, match.Serving, strings.TrimPrefix(s.URL, "http://")))
			rt.Tracing = &match.Tracing{TrustIncomingSpan: true}
			r.Publish(table("grpc", vhost("", nil, rt)))
			front := h1AndH2CServer(t, r)
			client := &http.Client{Transport: h2cTransport(t)}
			req, err := http.NewRequest(http.MethodPost, front.URL+"/pkg.Svc/Call", strings.NewReader("\x00\x00\x00\x00\x00"))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/grpc")
			req.Header.Set("Traceparent", clientParent)
			res, err := client.Do(req)
			require.NoError(t, err)
			_, _ = io.ReadAll(res.Body)
			require.NoError(t, res.Body.Close())
			sp := tt.next(t)
			assert.Equal(t, int64(200), sp.attrs()["http.status_code"])
			assert.Equal(t, "2.0", sp.attrs()["http.flavor"])
			assert.Equal(t, "/pkg.Svc/", sp.end.Name)
			assert.Equal(t, clientParent, sp.parent.Traceparent())
			assert.Equal(t, []string{sp.ctx.Traceparent()}, <-seen)
			assert.Equal(t, 1, tt.count())
		})
	}
}

// An answer the router makes in a traced location (a 403 of its
// allowlist) is that location's span, as the module's span starts in the
// location's rewrite phase, before the access phase refuses.
func TestTracingRouterAnswer(t *testing.T) {
	_, addr := echoBackend(t, "web")
	rt := route(match.Prefix, "/deny", httpBackend("prod/web:80", addr))
	rt.Policy = &match.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}
	rt.Tracing = &match.Tracing{}
	tt := &testTracer{}
	r := newTestRouter(Options{Tracer: tt})
	r.Publish(table("deny", vhost("shop.example.com", nil, rt)))
	res := traced(r, "/deny/x", nil)
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	require.Equal(t, 1, tt.count())
	s := tt.last(t)
	assert.Equal(t, int64(403), s.attrs()["http.status_code"])
	assert.Equal(t, "/deny/", s.end.Name)
	assert.False(t, s.end.Error)
}
