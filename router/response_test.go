package router

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// errorStatusBackend answers every request with the status in its
// X-Answer header (200 without), a body of its own, and a header the
// error page must not keep.
func errorStatusBackend(t testing.TB) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code := http.StatusOK
		if v := r.Header.Get("X-Answer"); v != "" && r.Header.Get("X-Code") == "" {
			code = atoiOr(v, code)
		}
		w.Header().Set("X-From-Backend", "yes")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, "the backend's own body\n")
	}))
	t.Cleanup(s.Close)
	return s.Listener.Addr().String()
}

func atoiOr(s string, def int) int {
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return def
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// responseTable serves host "app.example.com" from web with resp on its
// route; extra are listed backends (the error backend).
func responseTable(web *match.Backend, resp *match.Response, extra ...*match.Backend) *match.Table {
	rt := route(match.Prefix, "/", web)
	rt.Response = resp
	return mustTable(match.Spec{
		VirtualHosts: []*match.VirtualHost{vhost("app.example.com", nil, rt)},
		Backends:     append([]*match.Backend{web}, extra...),
	})
}

// The error backend gets ingress-nginx's X-* headers and its answer
// replaces the intercepted one, status and head included, on both upstream
// paths (the HTTP/1.1 pool and a Transport given in Options).
func TestCustomErrorPage(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
	}{{"pool", Options{}}, {"transport", Options{Transport: &http.Transport{}}}} {
		t.Run(tc.name, func(t *testing.T) {
			rs := newRecords()
			tc.o.Observer = rs.observe
			r := newTestRouter(tc.o)
			t.Cleanup(r.CloseIdleConnections)
			_, errAddr := echoBackend(t, "errors")
			web := httpBackend("prod/web:80", errorStatusBackend(t))
			errs := httpBackend("prod/errors:80", errAddr)
			r.Publish(responseTable(web, &match.Response{ErrorCodes: []int{404, 503}, ErrorBackend: errs}, errs))

			res := serve(r, http.MethodGet, "app.example.com", "/shop/cart?x=1", http.Header{
				"X-Answer": {"404"}, "Accept": {"application/json"}, "X-Request-Id": {"rid-1"}})
			assert.Equal(t, http.StatusOK, res.StatusCode, "the error backend's status, as error_page code = @location")
			assert.Equal(t, "errors\n", body(t, res), "the backend's body is dropped")
			h := res.Header
			assert.Empty(t, h.Get("X-From-Backend"), "the backend's head is dropped")
			for k, want := range map[string]string{
				"X-Code": "404", "X-Format": "application/json", "X-Original-Uri": "/shop/cart?x=1",
				"X-Namespace": "prod", "X-Ingress-Name": "test", "X-Service-Name": "web", "X-Service-Port": "80",
				"X-Request-Id": "rid-1", "X-Forwarded-For": "192.0.2.1",
			} {
				assert.Equal(t, want, h.Get("Seen-"+k), k)
			}
			assert.Equal(t, "/?x=1", h.Get("X-Seen-Uri"), "rewrite (.*) / break keeps the query")
			assert.Equal(t, "app.example.com", h.Get("X-Seen-Host"))
			rec := rs.last(t)
			assert.Equal(t, http.StatusOK, rec.Status)
			assert.Equal(t, "prod/web:80", rec.Backend)
			assert.Empty(t, rec.Reason)

			res = serve(r, http.MethodGet, "app.example.com", "/", http.Header{"X-Answer": {"500"}})
			assert.Equal(t, http.StatusInternalServerError, res.StatusCode, "not listed")
			assert.Equal(t, "the backend's own body\n", body(t, res))
			assert.Equal(t, "yes", res.Header.Get("X-From-Backend"))

			res = serve(r, http.MethodGet, "app.example.com", "/", nil)
			assert.Equal(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, "the backend's own body\n", body(t, res))
		})
	}
}

// A failure the router answers itself in the exchange is intercepted as
// nginx's own 502 is; without an error backend, or with one without
// endpoints, the page is the 404 of ingress-nginx's built-in default
// backend.
func TestCustomErrorPageRouterAnswers(t *testing.T) {
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe, ConnectTimeout: time.Second})
	_, errAddr := echoBackend(t, "errors")
	errs := httpBackend("prod/errors:80", errAddr)
	web := httpBackend("prod/web:80", deadAddr(t))
	r.Publish(responseTable(web, &match.Response{ErrorCodes: []int{502}, ErrorBackend: errs}, errs))
	res := serve(r, http.MethodGet, "app.example.com", "/", nil)
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "502", res.Header.Get("Seen-X-Code"))
	assert.Equal(t, "errors\n", body(t, res))

	r.Publish(responseTable(httpBackend("prod/web:80", errorStatusBackend(t)), &match.Response{ErrorCodes: []int{404}}))
	res = serve(r, http.MethodGet, "app.example.com", "/", http.Header{"X-Answer": {"404"}})
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	assert.Contains(t, body(t, res), "default backend - 404")
	assert.Equal(t, ReasonErrorPage, rs.last(t).Reason)

	down := httpBackend("prod/errors:80")
	r.Publish(responseTable(httpBackend("prod/web:80", errorStatusBackend(t)), &match.Response{ErrorCodes: []int{404}, ErrorBackend: down}, down))
	res = serve(r, http.MethodGet, "app.example.com", "/", http.Header{"X-Answer": {"404"}})
	assert.Equal(t, http.StatusNotFound, res.StatusCode, "an error backend without endpoints: ingress-nginx's built-in 404")
	assert.Contains(t, body(t, res), "default backend - 404")
	assert.Equal(t, ReasonErrorPage, rs.last(t).Reason)
}

// mirrorSink records the copies it receives.
type mirrorSink struct {
	mu   sync.Mutex
	reqs []seenCopy
	got  chan struct{}
}

type seenCopy struct {
	method, uri, host, body string
	header                  http.Header
}

func newMirrorSink(t testing.TB) (*mirrorSink, string) {
	m := &mirrorSink{got: make(chan struct{}, 100)}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		m.reqs = append(m.reqs, seenCopy{r.Method, r.RequestURI, r.Host, string(b), r.Header.Clone()})
		m.mu.Unlock()
		m.got <- struct{}{}
		_, _ = io.WriteString(w, "ignored")
	}))
	t.Cleanup(s.Close)
	return m, s.Listener.Addr().String()
}

func (m *mirrorSink) next(t testing.TB) seenCopy {
	t.Helper()
	select {
	case <-m.got:
	case <-time.After(5 * time.Second):
		t.Fatal("no mirrored copy arrived")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reqs[len(m.reqs)-1]
}

// The copy carries the method, the client's headers, the body and the
// target nginx builds; without variables, the subrequest's path.
func TestMirrorCopy(t *testing.T) {
	sink, addr := newMirrorSink(t)
	_, webAddr := echoBackend(t, "web")
	web := httpBackend("prod/web:80", webAddr)
	r := newTestRouter(Options{})
	t.Cleanup(r.CloseIdleConnections)

	r.Publish(responseTable(web, &match.Response{Mirror: &match.Mirror{Target: "http://" + addr + "$request_uri", Host: "shadow.internal"}}))
	req := httptest.NewRequest(http.MethodPost, "/orders?id=7", strings.NewReader("payload"))
	req.Host = "app.example.com"
	req.Header.Set("X-Client", "c1")
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusOK, rec.Code)
	c := sink.next(t)
	assert.Equal(t, seenCopy{method: "POST", uri: "/orders?id=7", host: "shadow.internal", body: "payload"},
		seenCopy{c.method, c.uri, c.host, c.body, nil})
	assert.Equal(t, "c1", c.header.Get("X-Client"))

	r.Publish(responseTable(web, &match.Response{Mirror: &match.Mirror{Target: "http://" + addr, Host: "h", Source: "/_mirror-uid", NoBody: true}}))
	req = httptest.NewRequest(http.MethodPut, "/a/b?q=1", strings.NewReader("secret"))
	req.Host = "app.example.com"
	r.ServeHTTP(httptest.NewRecorder(), req)
	c = sink.next(t)
	assert.Equal(t, "/_mirror-uid?q=1", c.uri, "proxy_pass without a URI passes the subrequest's, with the query")
	assert.Empty(t, c.body, "mirror-request-body off")
	assert.Equal(t, "PUT", c.method)

	// $uri is the subrequest's URI; $request_uri and $args are the
	// request's, which the subrequest shares.
	r.Publish(responseTable(web, &match.Response{Mirror: &match.Mirror{Target: "http://" + addr + "/copy$uri$is_args$args", Host: "h", Source: "/_mirror-uid"}}))
	_ = body(t, serve(r, http.MethodGet, "app.example.com", "/a/b?q=1", nil))
	assert.Equal(t, "/copy/_mirror-uid?q=1", sink.next(t).uri)
}

// A mirror target that never answers neither delays nor fails the real
// requests, and no more than MirrorInFlight copies wait on it: the rest
// are dropped and counted.
func TestMirrorNeverDelays(t *testing.T) {
	var mu sync.Mutex
	var conns []net.Conn
	release := make(chan struct{})
	hang := rawServer(t, func(c net.Conn) {
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
		<-release // read nothing, answer nothing
	})
	_, webAddr := echoBackend(t, "web")
	web := httpBackend("prod/web:80", webAddr)
	// A request that waited for its copy would take the copy's whole
	// bound, at least ReadTimeout: each request is measured against that,
	// not against a time the machine must be quiet to keep.
	const readTimeout = 10 * time.Second
	r := newTestRouter(Options{ReadTimeout: readTimeout})
	t.Cleanup(r.CloseIdleConnections)
	r.Publish(responseTable(web, &match.Response{Mirror: &match.Mirror{Target: "http://" + hang + "$request_uri", Host: "m"}}))

	const n = MirrorInFlight + 20
	peak := int64(0)
	for i := range n {
		start := time.Now()
		res := serve(r, http.MethodGet, "app.example.com", "/", nil)
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.Equal(t, "web\n", body(t, res))
		require.Less(t, time.Since(start), readTimeout, "request %d waited for its hanging mirror", i)
		peak = max(peak, r.mirrors.inFlight.Load())
	}
	assert.LessOrEqual(t, peak, int64(MirrorInFlight))
	assert.GreaterOrEqual(t, r.Stats().MirrorsDropped, uint64(n-MirrorInFlight))
	close(release)
	require.Eventually(t, func() bool { return r.mirrors.inFlight.Load() == 0 }, 10*time.Second, 10*time.Millisecond,
		"the copies end with their timeout")
}

// limit-rate paces the body as nginx's limit_rate: past limit-rate-after
// bytes, rate × (t + 1 s) by t seconds after the request came. Measured on
// a loopback transfer through a listener.
func TestLimitRate(t *testing.T) {
	const rate, after, size = 64 << 10, 64 << 10, 192 << 10
	payload := bytes.Repeat([]byte("x"), size)
	back := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(payload)
	}))
	t.Cleanup(back.Close)
	r := newTestRouter(Options{})
	t.Cleanup(r.CloseIdleConnections)
	front := httptest.NewServer(r)
	t.Cleanup(front.Close)
	get := func() (time.Duration, int) {
		req, _ := http.NewRequest(http.MethodGet, front.URL+"/", nil)
		req.Host = "app.example.com"
		start := time.Now()
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		n, err := io.Copy(io.Discard, res.Body)
		require.NoError(t, err)
		res.Body.Close()
		return time.Since(start), int(n)
	}
	web := httpBackend("prod/web:80", back.Listener.Addr().String())
	r.Publish(responseTable(web, &match.Response{LimitRate: rate, LimitRateAfter: after}))
	took, n := get()
	assert.Equal(t, size, n)
	// (192 KiB - 64 KiB) / 64 KiB/s - 1 s of allowance: one second.
	assert.InDelta(t, time.Second.Seconds(), took.Seconds(), 0.4, "paced transfer took %v", took)

	r.Publish(responseTable(web, nil))
	took, n = get()
	assert.Equal(t, size, n)
	assert.Less(t, took, 500*time.Millisecond, "unpaced transfer took %v", took)
}

// Record.NoAccessLog follows the location's enable-access-log.
func TestRecordNoAccessLog(t *testing.T) {
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe})
	_, webAddr := echoBackend(t, "web")
	r.Publish(responseTable(httpBackend("prod/web:80", webAddr), &match.Response{NoAccessLog: true}))
	_ = body(t, serve(r, http.MethodGet, "app.example.com", "/", nil))
	rs.mu.Lock()
	assert.True(t, rs.raw[len(rs.raw)-1].NoAccessLog)
	rs.mu.Unlock()
	_ = body(t, serve(r, http.MethodGet, "other.example.com", "/", nil))
	rs.mu.Lock()
	assert.False(t, rs.raw[len(rs.raw)-1].NoAccessLog, "no location")
	rs.mu.Unlock()
}

// BenchmarkMirror measures what a mirrored location adds to a request:
// "plain" is the same request through a location without a Response;
// "mirror" sends each copy for real, on its own goroutine (whose
// allocations the runtime counts too); "request-path" replaces the copy's
// sending with its bookkeeping alone, so its allocs/op less plain's are
// what mirroring adds to the request's own path: 5, the goroutine's
// closure and the copy of the request the copy reads (its struct, header
// map and values), as a server may reuse the request once the handler
// returned.
func BenchmarkMirror(b *testing.B) {
	tr, backend := benchSetup(b)
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) }))
	b.Cleanup(sink.Close)
	web := httpBackend("prod/web:80", backend.Listener.Addr().String())
	mirror := &match.Response{Mirror: &match.Mirror{Target: "http://" + sink.Listener.Addr().String() + "$request_uri", Host: "m"}}
	for _, tc := range []struct {
		name string
		resp *match.Response
		stub bool
	}{{"plain", nil, false}, {"mirror", mirror, false}, {"request-path", mirror, true}} {
		b.Run("location="+tc.name, func(b *testing.B) {
			r := newTestRouter(Options{Transport: tr})
			b.Cleanup(r.CloseIdleConnections)
			if tc.stub {
				r.mirrors.send = func(*match.Mirror, *http.Request, mirrorCopy) { r.mirrors.inFlight.Add(-1) }
			}
			rt := route(match.Prefix, "/api", web)
			rt.Response = tc.resp
			r.Publish(mustTable(match.Spec{VirtualHosts: []*match.VirtualHost{vhost("shop.example.com", nil, rt)}, Backends: []*match.Backend{web}}))
			benchHandler(b, r)
			b.StopTimer()
			for r.mirrors.inFlight.Load() > 0 {
				time.Sleep(time.Millisecond)
			}
		})
	}
}

// An error page is the location's answer like any other: it carries the
// router's HSTS, Server and ConfigMap add-headers as every answer does
// (nginx's header filters run on the error location's answer too), over
// what the error backend sent.
func TestCustomErrorPageKeepsRouterHeaders(t *testing.T) {
	errs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Strict-Transport-Security", "max-age=1")
		w.Header().Set("X-Added", "from the error backend")
		_, _ = io.WriteString(w, "error page\n")
	}))
	t.Cleanup(errs.Close)
	r := newTestRouter(Options{ServerTokens: "ramjet", AddHeaders: http.Header{"X-Added": {"1"}}})
	t.Cleanup(r.CloseIdleConnections)
	eb := httpBackend("prod/errors:80", errs.Listener.Addr().String())
	r.Publish(responseTable(httpBackend("prod/web:80", errorStatusBackend(t)), &match.Response{ErrorCodes: []int{404}, ErrorBackend: eb}, eb))
	res := serve(r, http.MethodGet, "app.example.com", "https://app.example.com/", http.Header{"X-Answer": {"404"}})
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "error page\n", body(t, res))
	assert.Equal(t, []string{DefaultHSTS}, res.Header.Values("Strict-Transport-Security"))
	assert.Equal(t, []string{"ramjet"}, res.Header.Values("Server"))
	assert.Equal(t, []string{"1"}, res.Header.Values("X-Added"))
}

// hide-headers (proxy_hide_header at nginx's http level) applies to the
// error backend's answer too: the error location proxies like any other.
func TestCustomErrorPageHidesHeaders(t *testing.T) {
	errs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Powered-By", "errors 1.0")
		_, _ = io.WriteString(w, "error page\n")
	}))
	t.Cleanup(errs.Close)
	r := newTestRouter(Options{HideHeaders: []string{"X-Powered-By"}})
	t.Cleanup(r.CloseIdleConnections)
	eb := httpBackend("prod/errors:80", errs.Listener.Addr().String())
	r.Publish(responseTable(httpBackend("prod/web:80", errorStatusBackend(t)), &match.Response{ErrorCodes: []int{404}, ErrorBackend: eb}, eb))
	res := serve(r, http.MethodGet, "app.example.com", "/", http.Header{"X-Answer": {"404"}})
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "error page\n", body(t, res))
	assert.Empty(t, res.Header.Values("X-Powered-By"))
}

// An intercepted status is replaced as soon as its head is in, as nginx's
// proxy_intercept_errors finalizes the upstream on the head: the backend's
// body, which the client never gets, is not waited for, on either upstream
// path and with proxy-buffering on.
func TestCustomErrorPageDoesNotWaitForTheBody(t *testing.T) {
	release := make(chan struct{})
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.(http.Flusher).Flush()
		<-release // the body never comes while the test waits
	}))
	t.Cleanup(web.Close)
	t.Cleanup(func() { close(release) })
	_, errAddr := echoBackend(t, "errors")
	for _, tc := range []struct {
		name   string
		o      Options
		policy *match.Policy
	}{
		{"pool", Options{}, nil},
		{"pool buffering", Options{}, &match.Policy{Proxy: &match.Proxying{Buffering: true}}},
		{"transport", Options{Transport: &http.Transport{}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRouter(tc.o)
			t.Cleanup(r.CloseIdleConnections)
			eb := httpBackend("prod/errors:80", errAddr)
			rt := route(match.Prefix, "/", httpBackend("prod/web:80", web.Listener.Addr().String()))
			rt.Response = &match.Response{ErrorCodes: []int{503}, ErrorBackend: eb}
			rt.Policy = tc.policy
			r.Publish(mustTable(match.Spec{VirtualHosts: []*match.VirtualHost{vhost("app.example.com", nil, rt)}, Backends: []*match.Backend{rt.Backend, eb}}))
			done := make(chan *http.Response, 1)
			go func() { done <- serve(r, http.MethodGet, "app.example.com", "/", nil) }()
			select {
			case res := <-done:
				assert.Equal(t, http.StatusOK, res.StatusCode)
				assert.Equal(t, "503", res.Header.Get("Seen-X-Code"))
				assert.Equal(t, "errors\n", body(t, res))
			case <-time.After(3 * time.Second):
				t.Fatal("no error page 3 s after the backend's 503 head came")
			}
		})
	}
}

// A body is mirrored whatever its size and however the location passes
// it on: nginx's mirror_request_body reads the body whole before the
// subrequests (a longer one into its temporary file, which both then
// read), turning proxy-request-buffering off. The backend gets the whole
// body too.
func TestMirrorCopiesEveryBody(t *testing.T) {
	sink, addr := newMirrorSink(t)
	back := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, _ = io.WriteString(w, strconv.Itoa(len(b)))
	}))
	t.Cleanup(back.Close)
	web := httpBackend("prod/web:80", back.Listener.Addr().String())
	payload := strings.Repeat("0123456789abcdef", 4<<10) // 64 KiB: past the 8 KiB held in memory
	for _, tc := range []struct {
		name   string
		policy *match.Policy
	}{
		{"held in a temporary file", nil},
		{"proxy-request-buffering off", &match.Policy{StreamRequestBody: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRouter(Options{})
			t.Cleanup(r.CloseIdleConnections)
			rt := route(match.Prefix, "/", web)
			rt.Response = &match.Response{Mirror: &match.Mirror{Target: "http://" + addr + "$request_uri", Host: "shadow.internal"}}
			rt.Policy = tc.policy
			r.Publish(mustTable(match.Spec{VirtualHosts: []*match.VirtualHost{vhost("app.example.com", nil, rt)}, Backends: []*match.Backend{web}}))
			req := httptest.NewRequest(http.MethodPost, "/upload", strings.NewReader(payload))
			req.Host = "app.example.com"
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, req)
			assert.Equal(t, http.StatusOK, rec.Code)
			assert.Equal(t, strconv.Itoa(len(payload)), rec.Body.String(), "the backend's body")
			c := sink.next(t)
			assert.Equal(t, "/upload", c.uri)
			assert.True(t, c.body == payload, "the copy's body: %d bytes of %d", len(c.body), len(payload))
			assert.Zero(t, r.Stats().MirrorsDropped)
		})
	}
}

// The error backend gets the X-Request-ID the backend got, as nginx's
// $req_id is one value per request: the client's, else one made for it
// (a client's empty value counts as none), and none with
// generate-request-id "false" when the client sent none.
func TestCustomErrorPageRequestID(t *testing.T) {
	for _, tc := range []struct {
		name   string
		o      Options
		header []string // the client's X-Request-ID; nil: none
		none   bool     // no X-Request-ID is sent on
	}{
		{name: "none sent"},
		{name: "an empty one sent", header: []string{""}},
		{name: "the client's", header: []string{"rid-7"}},
		{name: "none sent, generate-request-id off", o: Options{NoRequestID: true}, none: true},
		{name: "the client's, generate-request-id off", o: Options{NoRequestID: true}, header: []string{"rid-8"}},
		{name: "none sent, through a Transport", o: Options{Transport: &http.Transport{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var seen []string
			web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				seen = r.Header["X-Request-Id"]
				mu.Unlock()
				w.WriteHeader(http.StatusNotFound)
			}))
			t.Cleanup(web.Close)
			r := newTestRouter(tc.o)
			t.Cleanup(r.CloseIdleConnections)
			_, errAddr := echoBackend(t, "errors")
			errs := httpBackend("prod/errors:80", errAddr)
			r.Publish(responseTable(httpBackend("prod/web:80", web.Listener.Addr().String()), &match.Response{ErrorCodes: []int{404}, ErrorBackend: errs}, errs))
			h := http.Header{}
			if tc.header != nil {
				h["X-Request-Id"] = tc.header
			}
			res := serve(r, http.MethodGet, "app.example.com", "/", h)
			require.Equal(t, http.StatusOK, res.StatusCode)
			_ = body(t, res)
			mu.Lock()
			defer mu.Unlock()
			page := res.Header["Seen-X-Request-Id"]
			if tc.none {
				assert.Nil(t, seen, "the backend")
				assert.Nil(t, page, "the error backend")
				return
			}
			require.Len(t, seen, 1)
			assert.NotEmpty(t, seen[0])
			if len(tc.header) > 0 && tc.header[0] != "" {
				assert.Equal(t, tc.header[0], seen[0])
			}
			assert.Equal(t, seen, page, "the error backend gets the backend's X-Request-ID")
		})
	}
}

// An error backend that does not answer in time gets nginx's 504, as the
// @custom_ location's proxy_read_timeout gives; one that cannot be
// reached, 502.
func TestCustomErrorPageBackendTimeout(t *testing.T) {
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe, ConnectTimeout: 100 * time.Millisecond, ReadTimeout: 200 * time.Millisecond})
	t.Cleanup(r.CloseIdleConnections)
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		select {
		case <-release:
		case <-req.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) })
	web := httpBackend("prod/web:80", errorStatusBackend(t))
	errs := httpBackend("prod/errors:80", slow.Listener.Addr().String())
	r.Publish(responseTable(web, &match.Response{ErrorCodes: []int{404}, ErrorBackend: errs}, errs))
	res := serve(r, http.MethodGet, "app.example.com", "/", http.Header{"X-Answer": {"404"}})
	assert.Equal(t, http.StatusGatewayTimeout, res.StatusCode)
	_ = body(t, res)
	assert.Equal(t, ReasonErrorPage, rs.last(t).Reason)

	dead := httpBackend("prod/errors:80", deadAddr(t))
	r.Publish(responseTable(web, &match.Response{ErrorCodes: []int{404}, ErrorBackend: dead}, dead))
	res = serve(r, http.MethodGet, "app.example.com", "/", http.Header{"X-Answer": {"404"}})
	assert.Equal(t, http.StatusBadGateway, res.StatusCode)
	_ = body(t, res)
}

// TestCustomErrorPageOwnAnswersOnly: error pages without interception
// (disable-proxy-intercept-errors) replace the router's own answers, as
// nginx's error_page takes the 502 it makes for a backend it cannot
// reach whatever proxy_intercept_errors says, while the backend's own 502
// passes as it came. On both upstream paths.
func TestCustomErrorPageOwnAnswersOnly(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
	}{{"pool", Options{}}, {"transport", Options{Transport: &http.Transport{}}}} {
		t.Run(tc.name, func(t *testing.T) {
			_, errAddr := echoBackend(t, "errors")
			errs := httpBackend("prod/errors:80", errAddr)
			resp := &match.Response{ErrorCodes: []int{502}, ErrorBackend: errs, OwnOnly: true}
			r := newTestRouter(tc.o)
			t.Cleanup(r.CloseIdleConnections)

			r.Publish(responseTable(httpBackend("prod/web:80", deadAddr(t)), resp, errs))
			res := serve(r, http.MethodGet, "app.example.com", "/", nil)
			assert.Equal(t, http.StatusOK, res.StatusCode, "the router's 502: the error page")
			assert.Equal(t, "502", res.Header.Get("Seen-X-Code"))
			assert.Equal(t, "errors\n", body(t, res))

			r.Publish(responseTable(httpBackend("prod/web:80", errorStatusBackend(t)), resp, errs))
			res = serve(r, http.MethodGet, "app.example.com", "/", http.Header{"X-Answer": {"502"}})
			assert.Equal(t, http.StatusBadGateway, res.StatusCode, "the backend's 502 passes")
			assert.Equal(t, "yes", res.Header.Get("X-From-Backend"))
			assert.Equal(t, "the backend's own body\n", body(t, res))
		})
	}
}
