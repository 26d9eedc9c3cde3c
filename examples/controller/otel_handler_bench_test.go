package main

import (
	"bufio"
	"bytes"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router"
)

// cannedHTTPBackend answers every request head it reads with the same
// small response, allocating nothing per request, so that a benchmark
// counts the router's work and its tracing.
func cannedHTTPBackend(b testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	res := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nok\n")
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadSlice('\n')
					if err != nil {
						return
					}
					if len(bytes.TrimRight(line, "\r\n")) > 0 {
						continue
					}
					if _, err := c.Write(res); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// discardResponse is a ResponseWriter that keeps only the status.
type discardResponse struct {
	h      http.Header
	status int
}

func (w *discardResponse) Header() http.Header         { return w.h }
func (w *discardResponse) WriteHeader(code int)        { w.status = code }
func (w *discardResponse) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkTracedHandler is a proxied request through the router with
// the location traced (enable-opentelemetry), without a Tracer
// (tracing=off) and with the controller's (tracing=on: AlwaysOn, every
// span encoded, batched and exported over OTLP/gRPC to a collector on
// loopback that does not decode), in the same run: what tracing costs a
// request, the export included. Compare cpu-ns/op (the process's CPU
// time, the backend's and the collector's work too, the same in both)
// with benchstat over -count 8 or more:
//
//	go test -run '^$' -bench TracedHandler -count 8 . | benchstat -col /tracing -
func BenchmarkTracedHandler(b *testing.B) {
	th := newTracedHandler(b)
	for _, tc := range []struct {
		name   string
		tracer router.Tracer
	}{{"off", nil}, {"on", th.tracer}} {
		b.Run("tracing="+tc.name, func(b *testing.B) {
			serve := th.server(b, tc.tracer)
			spans := 0
			b.ReportAllocs()
			defer reportCPUns(b, processCPU())
			for b.Loop() {
				serve()
				if spans++; tc.tracer != nil && spans%th.settings.MaxExportBatchSize == 0 {
					// Each batch exported before the next fills, as
					// under load with the default queue: none dropped.
					_ = th.tracer.forceFlush(b.Context())
				}
			}
		})
	}
}

// A traced request, its span exported, allocates no more than an
// untraced one: the router's writer is pooled, the span's record kept
// with it and restarted (router.SpanRestarter), the span is encoded into
// the batch's reused buffer, and an export's own allocations, a few per
// batch of 512 spans, come to less than one a request.
func TestTracedHandlerAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	th := newTracedHandler(t)
	allocs := func(tracer router.Tracer) float64 {
		serve := th.server(t, tracer)
		return testing.AllocsPerRun(2000, serve)
	}
	off, on := allocs(nil), allocs(th.tracer)
	if on > off {
		t.Errorf("a traced request allocates %.0f times, an untraced one %.0f", on, off)
	}
}

// tracedHandler is the table of a traced location proxied to a canned
// backend, and the controller's tracer exporting to a collector on
// loopback that does not decode (AlwaysOn: every span encoded, batched
// and exported over OTLP/gRPC).
type tracedHandler struct {
	table    *match.Table
	tracer   *liveTracer
	settings otelSettings
}

func newTracedHandler(tb testing.TB) *tracedHandler {
	backend := cannedHTTPBackend(tb)
	_, port, _ := net.SplitHostPort(backend)
	objects := strings.Replace(appManifests(port), "  name: app\n  namespace: t\nspec:\n  ingressClassName",
		"  name: app\n  namespace: t\n  annotations: {ramjet.dev/enable-opentelemetry: \"true\"}\nspec:\n  ingressClassName", 1)
	snap, _, err := manifest.Decode("objects.yaml", []byte(objects))
	if err != nil {
		tb.Fatal(err)
	}
	res := compile.Compile(*snap, compile.Options{AllowLoopbackEndpoints: true})
	if len(res.Warnings) > 0 {
		tb.Fatal(res.Warnings)
	}
	tracer, s, _ := countingTracer(tb)
	return &tracedHandler{table: res.Table, tracer: tracer, settings: s}
}

// server is a router with tracer (nil for none) serving th's table, and
// a function that sends it one request, the connection to the backend
// dialled.
func (th *tracedHandler) server(tb testing.TB, tracer router.Tracer) func() {
	rt := router.New(router.Options{Logger: slog.New(slog.DiscardHandler), Tracer: tracer})
	rt.Publish(th.table)
	tb.Cleanup(rt.CloseIdleConnections)
	req := httptest.NewRequest(http.MethodGet, "/api/v1/items?id=42", nil)
	req.Host = "app.test"
	req.Header.Set("User-Agent", "bench")
	w := &discardResponse{h: make(http.Header)}
	serve := func() {
		clear(w.h)
		w.status = 0
		rt.ServeHTTP(w, req)
		if w.status != http.StatusOK {
			tb.Fatalf("status %d", w.status)
		}
	}
	serve() // dials
	return serve
}
