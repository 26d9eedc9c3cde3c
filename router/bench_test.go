package router

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"ramjet.dev/ramjet/match"
)

// The router is measured against a bare httputil.ReverseProxy with the same
// transport and the same backend, twice: calling the handler directly (the
// proxying work alone) and through a listener with a client (requests per
// second as a client sees them).

func benchSetup(b *testing.B) (tr *http.Transport, backend *httptest.Server) {
	backend = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", "3")
		_, _ = io.WriteString(w, "ok\n")
	}))
	b.Cleanup(backend.Close)
	tr = &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true, IdleConnTimeout: time.Minute}
	b.Cleanup(tr.CloseIdleConnections)
	return tr, backend
}

func benchRouter(b *testing.B, tr http.RoundTripper, addr string) http.Handler {
	web := httpBackend("prod/web:80", addr)
	other := httpBackend("prod/other:80", "10.9.9.9:80")
	r := newTestRouter(Options{Transport: tr})
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
		},
		Transport: tr,
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

func benchHandler(b *testing.B, h http.Handler) {
	req := httptest.NewRequest(http.MethodGet, "/api/v1/items?id=42", nil)
	req.Host = "shop.example.com"
	req.Header.Set("User-Agent", "bench")
	req.Header.Set("Accept", "*/*")
	w := &discardWriter{h: make(http.Header)}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		w.status = 0
		h.ServeHTTP(w, req)
		if w.status != http.StatusOK {
			b.Fatalf("status %d", w.status)
		}
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

func BenchmarkRouter(b *testing.B) {
	tr, backend := benchSetup(b)
	h := benchRouter(b, tr, backend.Listener.Addr().String())
	b.Run("handler", func(b *testing.B) { benchHandler(b, h) })
	b.Run("server", func(b *testing.B) { benchServer(b, h) })
}

func BenchmarkReverseProxy(b *testing.B) {
	tr, backend := benchSetup(b)
	h := bareProxy(tr, backend.Listener.Addr().String())
	b.Run("handler", func(b *testing.B) { benchHandler(b, h) })
	b.Run("server", func(b *testing.B) { benchServer(b, h) })
}
