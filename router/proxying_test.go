package router

import (
	"bufio"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// proxyingRouter serves one route "/" on host "web" over the backend's
// endpoints with the location's Proxying p.
func proxyingRouter(t testing.TB, o Options, p *match.Proxying, endpoints ...string) (*Router, *records) {
	rt := route(match.Prefix, "/", httpBackend("prod/web:80", endpoints...))
	if p != nil {
		rt.Policy = &match.Policy{Proxy: p}
	}
	recs := newRecords()
	o.Observer = recs.observe
	r := newTestRouter(o)
	r.Publish(table("proxying", vhost("web", nil, rt)))
	return r, recs
}

// proxy-buffer-size bounds the response head: past it the answer is 502,
// as nginx answers "upstream sent too big header"; without it the
// router's own bound (1 MiB) lets the same head through.
func TestProxyBufferSizeBoundsResponseHead(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Big", strings.Repeat("a", 6<<10))
		_, _ = io.WriteString(w, "ok\n")
	}))
	t.Cleanup(s.Close)
	addr := s.Listener.Addr().String()

	r, recs := proxyingRouter(t, Options{}, &match.Proxying{BufferSize: 4 << 10, MaxTempFileSize: -1}, addr)
	res := serve(r, http.MethodGet, "web", "/", nil)
	body(t, res)
	assert.Equal(t, http.StatusBadGateway, res.StatusCode)
	assert.Equal(t, ReasonUpstreamError, recs.last(t).Reason)

	r, _ = proxyingRouter(t, Options{}, &match.Proxying{BufferSize: 8 << 10, MaxTempFileSize: -1}, addr)
	res = serve(r, http.MethodGet, "web", "/", nil)
	assert.Equal(t, "ok\n", body(t, res))
	assert.Equal(t, http.StatusOK, res.StatusCode)

	r, _ = proxyingRouter(t, Options{}, nil, addr)
	res = serve(r, http.MethodGet, "web", "/", nil)
	assert.Equal(t, "ok\n", body(t, res))
}

// proxy-http-version 1.0: the backend gets an HTTP/1.0 request line with
// Connection: close, and a chunked client body arrives read whole, with
// its length; each request opens a new connection.
func TestProxyHTTP10(t *testing.T) {
	var mu sync.Mutex
	var heads []string
	var conns atomic.Int32
	addr := rawServer(t, func(c net.Conn) {
		conns.Add(1)
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		b, _ := io.ReadAll(req.Body)
		mu.Lock()
		heads = append(heads, req.Proto+" "+req.Header.Get("Connection")+" "+strings.Join(req.TransferEncoding, ",")+" "+string(b))
		mu.Unlock()
		_, _ = io.WriteString(c, "HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nok\n")
	})
	r, _ := proxyingRouter(t, Options{}, &match.Proxying{HTTP10: true, MaxTempFileSize: -1}, addr)
	postChunkedTwice(t, r)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"HTTP/1.0 close  abcd", "HTTP/1.0 close  abcd"}, heads)
	assert.EqualValues(t, 2, conns.Load(), "no connection is reused")
}

// postChunkedTwice sends host "web" two POSTs with the chunked body
// "abcd", each answered "ok\n".
func postChunkedTwice(t *testing.T, r http.Handler) {
	t.Helper()
	for range 2 {
		req := httptest.NewRequest(http.MethodPost, "/", io.MultiReader(strings.NewReader("ab"), strings.NewReader("cd")))
		req.Host = "web"
		req.ContentLength = -1
		req.TransferEncoding = []string{"chunked"}
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code)
		assert.Equal(t, "ok\n", rec.Body.String())
	}
}

// proxy-http-version 1.0 holds for an HTTPS backend too, as nginx's
// proxy_http_version does for proxy_pass https://: net/http's transport
// writes only HTTP/1.1, so the request goes out on a connection of its
// own with an HTTP/1.0 request line, its chunked body read whole and sent
// with its length.
func TestProxyHTTP10OverTLS(t *testing.T) {
	var mu sync.Mutex
	var heads []string
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		heads = append(heads, r.Proto+" "+r.Header.Get("Connection")+" "+strings.Join(r.TransferEncoding, ",")+" "+string(b)+" "+r.Host)
		mu.Unlock()
		_, _ = io.WriteString(w, "ok\n")
	}))
	s.StartTLS()
	t.Cleanup(s.Close)
	rt := route(match.Prefix, "/", backend("prod/tls:443", match.HTTPS, match.Serving, s.Listener.Addr().String()))
	rt.Policy = &match.Policy{Proxy: &match.Proxying{HTTP10: true, MaxTempFileSize: -1}}
	r := newTestRouter(Options{})
	r.Publish(table("proxying", vhost("web", nil, rt)))
	t.Cleanup(r.CloseIdleConnections)
	postChunkedTwice(t, r)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"HTTP/1.0 close  abcd web", "HTTP/1.0 close  abcd web"}, heads)
}

// statusBackend answers every request with status and counts them.
func statusBackend(t testing.TB, status int) (string, *atomic.Int32) {
	var n atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, http.StatusText(status)+"\n")
	}))
	t.Cleanup(s.Close)
	return s.Listener.Addr().String(), &n
}

// proxy-next-upstream's conditions decide which failures move a request
// to the other endpoint: a 503 only with http_503, a POST that reached a
// backend only with non_idempotent, a refused connection never with off;
// the last answer stands when no endpoint is left.
func TestProxyNextUpstreamConditions(t *testing.T) {
	for _, tt := range []struct {
		name   string
		next   string
		method string
		first  int // the first endpoint's status; 0: it refuses connections
		want   int
		tries  int
	}{
		{"503 retried with http_503", "error http_503", http.MethodGet, 503, 200, 2},
		{"503 kept without http_503", "error timeout", http.MethodGet, 503, 503, 1},
		{"503 kept by default", "", http.MethodGet, 503, 503, 1},
		{"404 retried with http_404", "http_404", http.MethodGet, 404, 200, 2},
		{"429 retried with http_429", "http_429", http.MethodGet, 429, 200, 2},
		{"POST not retried without non_idempotent", "http_500", http.MethodPost, 500, 500, 1},
		{"POST retried with non_idempotent", "http_500 non_idempotent", http.MethodPost, 500, 200, 2},
		{"refused retried by default", "", http.MethodGet, 0, 200, 2},
		{"refused retried with error", "error", http.MethodGet, 0, 200, 2},
		{"refused not retried with off", "off", http.MethodGet, 0, 502, 1},
		{"refused not retried with http_502 alone", "http_502", http.MethodGet, 0, 502, 1},
		// nginx adds non_idempotent to a failure's conditions only once the
		// request was sent (ngx_http_upstream_next): a connection that could
		// not be opened carried nothing, so any method goes on.
		{"refused POST retried with error", "error", http.MethodPost, 0, 200, 2},
		{"refused PATCH retried with error timeout", "error timeout", http.MethodPatch, 0, 200, 2},
	} {
		for _, via := range []string{"pool", "transport"} {
			t.Run(tt.name+" "+via, func(t *testing.T) {
				o := Options{}
				if via == "transport" {
					// retry.go's path: net/http's transport in place of the pool.
					o.Transport = &http.Transport{}
				}
				testNextUpstream(t, o, tt.next, tt.method, tt.first, tt.want, tt.tries)
			})
		}
	}
}

// testNextUpstream sends one request to a backend whose first endpoint
// answers firstStatus (0: refuses connections) and whose second answers
// 200, with the location's proxy-next-upstream set to next.
func testNextUpstream(t *testing.T, o Options, next, method string, firstStatus, want, tries int) {
	cond := func(s string) match.NextUpstream {
		var n match.NextUpstream
		for _, f := range strings.Fields(s) {
			n |= match.ParseNextUpstreamCondition(f)
		}
		return n
	}
	var first string
	var firstN *atomic.Int32
	if firstStatus == 0 {
		first = deadAddr(t)
	} else {
		first, firstN = statusBackend(t, firstStatus)
	}
	second, _ := statusBackend(t, http.StatusOK)
	var p *match.Proxying
	if next != "" {
		p = &match.Proxying{NextUpstream: cond(next), MaxTempFileSize: -1}
	}
	// Round-robin starts on the first endpoint with a fresh registry.
	r, recs := proxyingRouter(t, o, p, first, second)
	res := serve(r, method, "web", "/", nil)
	body(t, res)
	assert.Equal(t, want, res.StatusCode)
	rec := recs.last(t)
	assert.Equal(t, tries, rec.Tries)
	if firstN != nil {
		assert.EqualValues(t, 1, firstN.Load())
	}
	assert.Zero(t, r.InFlight(first))
	assert.Zero(t, r.InFlight(second))
}

// proxy-request-buffering "off": nginx passes no request on once its body
// began to stream to a backend (request_body_no_buffering in
// ngx_http_upstream_next and ngx_http_upstream_test_next); a request
// without a body is not streamed (ngx_http_read_client_request_body
// clears request_body_no_buffering for it) and goes on as under
// buffering, as does one whose connection could not be opened. nginx
// 1.22 on loopback, proxy_next_upstream error timeout http_502: a GET
// "502, 200", a chunked body sent slowly "502".
func TestProxyNextUpstreamUnbuffered(t *testing.T) {
	for _, tt := range []struct {
		name  string
		first int // 0: refuses connections
		body  string
		want  int
		tries int
	}{
		{"503 with a body kept", 503, "streamed", 503, 1},
		{"503 without a body passed on", 503, "", 200, 2},
		{"refused passed on", 0, "streamed", 200, 2},
	} {
		for _, via := range []string{"pool", "transport"} {
			t.Run(tt.name+" "+via, func(t *testing.T) {
				o := Options{}
				if via == "transport" {
					o.Transport = &http.Transport{}
				}
				first := deadAddr(t)
				if tt.first != 0 {
					first, _ = statusBackend(t, tt.first)
				}
				second, _ := statusBackend(t, http.StatusOK)
				rt := route(match.Prefix, "/", httpBackend("prod/web:80", first, second))
				rt.Policy = &match.Policy{StreamRequestBody: true,
					Proxy: &match.Proxying{NextUpstream: match.RetryError | match.Retry503, MaxTempFileSize: -1}}
				recs := newRecords()
				o.Observer = recs.observe
				r := newTestRouter(o)
				t.Cleanup(r.CloseIdleConnections)
				r.Publish(table("proxying", vhost("web", nil, rt)))
				method, body := http.MethodGet, io.Reader(nil)
				if tt.body != "" {
					method, body = http.MethodPut, strings.NewReader(tt.body)
				}
				req := httptest.NewRequest(method, "/", body)
				req.Host = "web"
				rec := httptest.NewRecorder()
				r.ServeHTTP(rec, req)
				assert.Equal(t, tt.want, rec.Code)
				assert.Equal(t, tt.tries, recs.last(t).Tries)
			})
		}
	}
}

// proxy-next-upstream-timeout: no try starts past it.
func TestProxyNextUpstreamTimeout(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(150 * time.Millisecond)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(slow.Close)
	second, n := statusBackend(t, http.StatusOK)
	p := &match.Proxying{NextUpstream: match.Retry503, NextUpstreamTimeout: 100 * time.Millisecond, MaxTempFileSize: -1}
	r, _ := proxyingRouter(t, Options{}, p, slow.Listener.Addr().String(), second)
	res := serve(r, http.MethodGet, "web", "/", nil)
	body(t, res)
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	assert.Zero(t, n.Load())
}

// proxy-buffering on: a response longer than the memory buffers is read
// whole (the rest into a temporary file) before the client gets its
// head, so the backend has finished writing by then; it arrives intact.
// With buffering off the same response streams.
func TestProxyBufferingSpills(t *testing.T) {
	const size = 256 << 10
	want := strings.Repeat("0123456789abcdef", size/16)
	done := make(chan struct{}, 4)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i < len(want); i += 8 << 10 {
			_, _ = io.WriteString(w, want[i:i+8<<10])
			w.(http.Flusher).Flush()
			// Streamed, the head would reach the client long before the end.
			time.Sleep(time.Millisecond)
		}
		done <- struct{}{}
	}))
	t.Cleanup(s.Close)
	addr := s.Listener.Addr().String()

	for _, tt := range []struct {
		name string
		p    *match.Proxying
	}{
		{"spilled", &match.Proxying{Buffering: true, BuffersNumber: 2, BufferSize: 4 << 10, MaxTempFileSize: -1}},
		{"past the file", &match.Proxying{Buffering: true, BuffersNumber: 2, BufferSize: 4 << 10, MaxTempFileSize: 64 << 10}},
		{"memory only", &match.Proxying{Buffering: true, BuffersNumber: 4, BufferSize: 4 << 10, MaxTempFileSize: 0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := proxyingRouter(t, Options{BodyTempDir: t.TempDir()}, tt.p, addr)
			front := httptest.NewServer(r)
			t.Cleanup(front.Close)
			req, err := http.NewRequest(http.MethodGet, front.URL, nil)
			require.NoError(t, err)
			req.Host = "web"
			res, err := front.Client().Do(req)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, res.StatusCode)
			if tt.p.MaxTempFileSize < 0 {
				select {
				case <-done:
				default:
					t.Fatal("the client got the head before the backend finished writing")
				}
			}
			assert.Equal(t, want, body(t, res))
			if tt.p.MaxTempFileSize >= 0 {
				<-done
			}
		})
	}
}

// X-Accel-Buffering: "no" from the backend turns proxy-buffering off for
// its response, as nginx reads it (ngx_http_upstream_process_buffering):
// an event stream or a long poll behind a buffered location reaches the
// client as it comes, not once the backend ends it. The field itself is
// still hidden.
func TestProxyBufferingAccelNo(t *testing.T) {
	release := make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Accel-Buffering", "No")
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-time.After(10 * time.Second):
		}
		_, _ = io.WriteString(w, "data: last\n\n")
	}))
	t.Cleanup(s.Close)
	defer close(release)
	p := &match.Proxying{Buffering: true, MaxTempFileSize: -1}
	r, _ := proxyingRouter(t, Options{BodyTempDir: t.TempDir()}, p, s.Listener.Addr().String())
	front := httptest.NewServer(r)
	t.Cleanup(front.Close)
	c, err := net.Dial("tcp", front.Listener.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost: web\r\n\r\n")
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(3*time.Second)))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err, "the head waited for the end of the stream")
	assert.Empty(t, res.Header.Get("X-Accel-Buffering"))
	line, err := bufio.NewReader(res.Body).ReadString('\n')
	require.NoError(t, err, "the first event waited for the end of the stream")
	assert.Equal(t, "data: first\n", line)
}

// auth-cache-key: an answer the durations name is remembered per key, and
// a request with the same key does not ask the service again; another key
// does, and an answer the durations do not name is never remembered.
func TestExternalAuthCache(t *testing.T) {
	var calls atomic.Int32
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		switch r.Header.Get("Authorization") {
		case "good":
			w.Header().Set("X-User", "alice")
		case "cookie":
			w.Header().Set("Set-Cookie", "s=1")
		default:
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(svc.Close)
	key, err := match.ParseVarTemplate("$http_authorization")
	require.NoError(t, err)
	r, _ := authRouter(t, Options{}, externalAuth(t, svc.URL+"/", func(x *match.ExternalAuth) {
		x.ResponseHeaders = []string{"X-User"}
		x.Options = &match.ExternalAuthOptions{CacheKey: &key, CacheValid: []match.AuthCacheValid{{Codes: []int{200, 202, 401}, TTL: time.Minute}}}
	}))
	get := func(auth string) *http.Response {
		res := serve(r, http.MethodGet, "shop.example.com", "/app", http.Header{"Authorization": {auth}})
		body(t, res)
		return res
	}
	for range 3 {
		res := get("good")
		require.Equal(t, http.StatusOK, res.StatusCode)
		assert.Equal(t, "alice", res.Header.Get("Seen-X-User"), "the cached answer's headers are copied too")
	}
	assert.EqualValues(t, 1, calls.Load(), "a cache hit does not call the auth service")
	get("cookie")
	get("cookie")
	assert.EqualValues(t, 3, calls.Load(), "an answer setting a cookie is not cached")
	assert.Equal(t, http.StatusInternalServerError, get("bad").StatusCode)
	get("bad")
	assert.EqualValues(t, 5, calls.Load(), "a 500 is not among the durations")
}

// auth-proxy-set-headers: the ConfigMap's headers go to the service over
// the client's, variables expanded.
func TestExternalAuthProxySetHeaders(t *testing.T) {
	svc := newAuthService(t)
	v, err := match.ParseVarTemplate("$host:$remote_addr")
	require.NoError(t, err)
	r, _ := authRouter(t, Options{}, externalAuth(t, svc.srv.URL+"/ok", func(x *match.ExternalAuth) {
		x.Options = &match.ExternalAuthOptions{ProxySetHeadersFrom: "prod/auth-headers", ProxySetHeaders: []match.AuthHeader{{Name: "X-Via", Value: v}}}
	}))
	req := httptest.NewRequest(http.MethodGet, "/app", nil)
	req.Host = "shop.example.com"
	req.RemoteAddr = "203.0.113.7:4567"
	req.Header.Set("X-Via", "client")
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
	seen, _ := svc.request()
	assert.Equal(t, []string{"shop.example.com:203.0.113.7"}, seen.Header["X-Via"])
}

// $http_host in an auth-proxy-set-headers value is the Host as sent (Go
// keeps it out of the header map, where $http_<name> looked).
func TestExternalAuthHTTPHost(t *testing.T) {
	svc := newAuthService(t)
	v, err := match.ParseVarTemplate("$http_host")
	require.NoError(t, err)
	r, _ := authRouter(t, Options{}, externalAuth(t, svc.srv.URL+"/ok", func(x *match.ExternalAuth) {
		x.Options = &match.ExternalAuthOptions{ProxySetHeadersFrom: "prod/auth-headers", ProxySetHeaders: []match.AuthHeader{{Name: "X-Host", Value: v}}}
	}))
	req := httptest.NewRequest(http.MethodGet, "/app", nil)
	req.Host = "Shop.example.com:8443"
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
	seen, _ := svc.request()
	assert.Equal(t, []string{"Shop.example.com:8443"}, seen.Header["X-Host"])
}

// backend-protocol AUTO_HTTP dials the backend with the scheme of the
// client's own connection, as ingress-nginx's proxy_pass $scheme:// does:
// TLS for a client that came over TLS, plain HTTP otherwise, whatever a
// trusted X-Forwarded-Proto says ($scheme is the connection's).
func TestAutoHTTPFollowsClientScheme(t *testing.T) {
	h := func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "tls="+strconv.FormatBool(r.TLS != nil))
	}
	plain := httptest.NewServer(http.HandlerFunc(h))
	defer plain.Close()
	secure := httptest.NewTLSServer(http.HandlerFunc(h))
	defer secure.Close()
	secure.Config.ErrorLog = log.New(io.Discard, "", 0)
	r := newTestRouter(Options{TrustForwardedProto: true})
	r.Publish(table("d", vhost("web", nil,
		route(match.Prefix, "/plain", backend("prod/web:80", match.AutoHTTP, match.Serving, plain.Listener.Addr().String())),
		route(match.Prefix, "/secure", backend("prod/web:443", match.AutoHTTP, match.Serving, secure.Listener.Addr().String())))))
	t.Cleanup(r.CloseIdleConnections)

	for _, tt := range []struct {
		url    string
		header string
		code   int
		body   string
	}{
		{"http://web/plain", "", 200, "tls=false"},
		{"https://web/secure", "", 200, "tls=true"},
		// Plain HTTP to a TLS port: no answer of the backend's handler.
		{"http://web/secure", "https", 0, ""},
	} {
		req := httptest.NewRequest(http.MethodGet, tt.url, nil)
		if tt.header != "" {
			req.Header.Set("X-Forwarded-Proto", tt.header)
		}
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		if tt.code == 0 {
			assert.NotEqual(t, http.StatusOK, rec.Code, "%s: %s", tt.url, rec.Body.String())
			assert.NotContains(t, rec.Body.String(), "tls=", "%s: not dialled over TLS", tt.url)
			continue
		}
		assert.Equal(t, tt.code, rec.Code, "%s: %s", tt.url, rec.Body.String())
		assert.Equal(t, tt.body, rec.Body.String(), tt.url)
	}
}

// proxy-next-upstream with a request body the router held whole (in
// memory, or past client-body-buffer-size in its temporary file): the
// next endpoint gets the whole body again, as nginx sends its buffered
// body to the next upstream, not the first try's 503.
func TestProxyNextUpstreamResendsBody(t *testing.T) {
	var mu sync.Mutex
	var got []string
	backend := func(status int) string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			got = append(got, string(b))
			mu.Unlock()
			w.WriteHeader(status)
		}))
		t.Cleanup(s.Close)
		return s.Listener.Addr().String()
	}
	first, second := backend(http.StatusServiceUnavailable), backend(http.StatusOK)
	for _, via := range []string{"pool", "transport"} {
		// Inline with the head; sent by the body sender; from the file.
		for _, size := range []int{11, 64 << 10, 1 << 20} {
			o := Options{}
			if via == "transport" {
				o.Transport = &http.Transport{}
			}
			p := &match.Proxying{NextUpstream: match.RetryError | match.Retry503, MaxTempFileSize: -1}
			r, recs := proxyingRouter(t, o, p, first, second)
			mu.Lock()
			got = nil
			mu.Unlock()
			sent := strings.Repeat("x", size-len("hello")) + "hello"
			req := httptest.NewRequest(http.MethodPut, "/", strings.NewReader(sent))
			req.Host = "web"
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, req)
			mu.Lock()
			lens := make([]int, len(got))
			for i, g := range got {
				lens[i] = len(g)
			}
			ok := len(got) == 2 && got[0] == sent && got[1] == sent
			mu.Unlock()
			assert.True(t, ok, "%s, %d-byte PUT: bodies received %v, want two of %d", via, size, lens, size)
			assert.Equal(t, http.StatusOK, rec.Code, "%s, %d-byte PUT", via, size)
			assert.Equal(t, 2, recs.last(t).Tries, "%s, %d-byte PUT", via, size)
		}
	}
}

// proxy-next-upstream on failures after the request was sent, each
// checked against nginx 1.22 on loopback ($upstream_status): a backend
// that resets before its head is "error" ("502, 200" for a GET; a POST
// only "502" without non_idempotent), one whose head does not come within
// proxy-read-timeout is "timeout" ("504, 200"), and neither goes on
// without its condition. Over the router's own pool and an
// Options.Transport.
func TestProxyNextUpstreamAfterSend(t *testing.T) {
	reset := resetBeforeHead(t)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(2 * time.Second)
	}))
	t.Cleanup(slow.Close)
	for _, tt := range []struct {
		name, first  string
		next, method string
		want, tries  int
	}{
		{"reset retried with error", reset, "error timeout", http.MethodGet, 200, 2},
		{"reset POST kept without non_idempotent", reset, "error timeout", http.MethodPost, 502, 1},
		{"reset POST retried with non_idempotent", reset, "error non_idempotent", http.MethodPost, 200, 2},
		{"reset kept with timeout alone", reset, "timeout", http.MethodGet, 502, 1},
		{"slow retried with timeout", slow.Listener.Addr().String(), "error timeout", http.MethodGet, 200, 2},
		{"slow kept with error alone", slow.Listener.Addr().String(), "error", http.MethodGet, 504, 1},
	} {
		for _, via := range []string{"pool", "transport"} {
			t.Run(tt.name+" "+via, func(t *testing.T) {
				o := Options{}
				if via == "transport" {
					o.Transport = &http.Transport{}
				}
				var n match.NextUpstream
				for _, f := range strings.Fields(tt.next) {
					n |= match.ParseNextUpstreamCondition(f)
				}
				second, _ := statusBackend(t, http.StatusOK)
				rt := route(match.Prefix, "/", httpBackend("prod/web:80", tt.first, second))
				rt.Policy = &match.Policy{ReadTimeout: 300 * time.Millisecond, Proxy: &match.Proxying{NextUpstream: n, MaxTempFileSize: -1}}
				recs := newRecords()
				o.Observer = recs.observe
				r := newTestRouter(o)
				t.Cleanup(r.CloseIdleConnections)
				r.Publish(table("proxying", vhost("web", nil, rt)))
				res := serve(r, tt.method, "web", "/", nil)
				body(t, res)
				assert.Equal(t, tt.want, res.StatusCode)
				assert.Equal(t, tt.tries, recs.last(t).Tries)
			})
		}
	}
}

// resetBeforeHead is a backend that reads each request head and resets
// the connection without answering.
func resetBeforeHead(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				br := bufio.NewReader(c)
				for {
					l, err := br.ReadString('\n')
					if err != nil || l == "\r\n" {
						break
					}
				}
				_ = c.(*net.TCPConn).SetLinger(0)
				c.Close()
			}()
		}
	}()
	return ln.Addr().String()
}
