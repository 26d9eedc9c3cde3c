package router

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"
	"unsafe"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/h1"
)

// The router is measured against a bare httputil.ReverseProxy with the same
// transport, the same backend and the same copy-buffer pool, twice: calling
// the handler directly (the proxying work alone) and through a listener
// with a client (requests per second as a client sees them). The bare proxy
// sets X-Forwarded-For, -Host and -Proto like any proxy in front of real
// traffic; the router also sets X-Forwarded-Port, X-Real-IP and
// X-Request-ID, and chooses the backend from a table.
//
// Each benchmark has the router and the bare proxy as sub-benchmarks in
// the same run, with the same backend and transport. On a shared machine
// repeat the run a few times and compare, e.g. with benchstat:
//
//	for i in 1 2 3 4 5 6; do go test -run '^$' -bench 'Handler|Server' ./router/; done | benchstat -col /proxy -

// benchBackend is the backend of the benchmarks: served by
// router/h1, the example controller's own HTTP/1 loop, whose few
// allocations (one per request here) leave the benchmarks' figures to the
// proxies; net/http's server allocated 37 per request of the 40 that
// BenchmarkHandler counted.
type benchBackend struct{ Listener net.Listener }

var (
	benchContentType = []string{"text/plain"}
	benchLength      = []string{"3"}
)

func benchSetup(b *testing.B) (tr *http.Transport, backend benchBackend) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	s := &h1.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header()["Content-Type"] = benchContentType
		w.Header()["Content-Length"] = benchLength
		_, _ = io.WriteString(w, "ok\n")
	}), ReadHeaderTimeout: time.Minute, IdleTimeout: time.Minute}
	go func() { _ = s.Serve(ln) }()
	b.Cleanup(func() { _ = s.Close() })
	tr = &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true, IdleConnTimeout: time.Minute}
	b.Cleanup(tr.CloseIdleConnections)
	return tr, benchBackend{ln}
}

func benchRouter(b *testing.B, tr http.RoundTripper, addr string) *Router {
	return benchRouterWith(b, Options{Transport: tr}, addr)
}

func benchRouterWith(b *testing.B, o Options, addr string) *Router {
	web := httpBackend("prod/web:80", addr)
	other := httpBackend("prod/other:80", "10.9.9.9:80")
	r := newTestRouter(o)
	r.Publish(table("bench",
		vhost("shop.example.com", nil,
			route(match.Exact, "/checkout", other),
			route(match.Prefix, "/api", web),
			route(match.Prefix, "/static", other),
			route(match.Prefix, "/", other)),
		vhost("*.example.com", nil, route(match.Prefix, "/", other)),
		vhost("", nil, route(match.Prefix, "/", other)),
	))
	return r
}

func bareProxy(tr http.RoundTripper, addr string) http.Handler {
	target := &url.URL{Scheme: "http", Host: addr}
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
		},
		Transport: tr,
		// The router's copy-buffer pool, so that the comparison is of the
		// routing work and not of a 32 KiB allocation per request.
		BufferPool: bufferPool{},
	}
}

// discardWriter is a ResponseWriter that keeps nothing, so the benchmark
// measures the handler and not a recorder.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(code int)        { w.status = code }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }

// serveOK runs req through h with w reset, and fails unless h answered 200.
func (w *discardWriter) serveOK(tb testing.TB, h http.Handler, req *http.Request) {
	clear(w.h)
	w.status = 0
	h.ServeHTTP(w, req)
	if w.status != http.StatusOK {
		tb.Fatalf("status %d", w.status)
	}
}

func benchHandler(b *testing.B, h http.Handler) {
	req := httptest.NewRequest(http.MethodGet, "/api/v1/items?id=42", nil)
	req.Host = "shop.example.com"
	req.Header.Set("User-Agent", "bench")
	req.Header.Set("Accept", "*/*")
	w := &discardWriter{h: make(http.Header)}
	b.ReportAllocs()
	for b.Loop() {
		w.serveOK(b, h, req)
	}
}

func benchServer(b *testing.B, h http.Handler) {
	front := httptest.NewServer(h)
	defer front.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true}}
	defer client.CloseIdleConnections()
	u := front.URL + "/api/v1/items?id=42"
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		req.Host = "shop.example.com"
		for pb.Next() {
			res, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				b.Errorf("status %d", res.StatusCode)
				return
			}
		}
	})
}

// proxies are the router with its own HTTP/1.1 pool (the default), the
// router with the net/http transport in Options.Transport, and the bare
// proxy with that same transport.
func proxies(b *testing.B) map[string]http.Handler {
	tr, backend := benchSetup(b)
	addr := backend.Listener.Addr().String()
	own := benchRouter(b, nil, addr)
	b.Cleanup(own.CloseIdleConnections)
	return map[string]http.Handler{"router": own, "router-nethttp": benchRouter(b, tr, addr), "bare": bareProxy(tr, addr)}
}

var proxyNames = []string{"router", "router-nethttp", "bare"}

func BenchmarkHandler(b *testing.B) {
	hs := proxies(b)
	for _, name := range proxyNames {
		b.Run("proxy="+name, func(b *testing.B) { benchHandler(b, hs[name]) })
	}
	// With an Observer, as behind metrics or an access log: the record
	// costs what it needs to name the request ID the backend got.
	_, backend := benchSetup(b)
	var seen int
	obs := benchRouterWith(b, Options{Observer: func(rec Record) { seen += rec.Status }}, backend.Listener.Addr().String())
	b.Cleanup(obs.CloseIdleConnections)
	b.Run("proxy=router-observed", func(b *testing.B) { benchHandler(b, obs) })
}

func BenchmarkServer(b *testing.B) {
	hs := proxies(b)
	for _, name := range proxyNames {
		b.Run("proxy="+name, func(b *testing.B) { benchServer(b, hs[name]) })
	}
}

// TestExchangeSizeClass holds the one allocation every proxied request
// makes within the runtime's 896-byte size class: a field or two more
// tips it into the 1024-byte class, 128 bytes per request for nothing.
func TestExchangeSizeClass(t *testing.T) {
	if size := unsafe.Sizeof(exchange{}); size > 896 {
		t.Fatalf("exchange is %d bytes, past the 896-byte size class: group its flags, or move a rarely used field behind a pointer", size)
	}
}
