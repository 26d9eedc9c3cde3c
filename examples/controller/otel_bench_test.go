package main

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"

	"ramjet.dev/ramjet/router"
)

// countingCollector is an OTLP/gRPC endpoint that takes every export
// without decoding it, so that a benchmark counts the exporter's work
// and little of the collector's.
func countingCollector(b testing.TB) (addr string, bytes *atomic.Int64) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	bytes = new(atomic.Int64)
	s := grpc.NewServer(grpc.ForceServerCodecV2(countingCodec{}), grpc.UnknownServiceHandler(func(_ any, st grpc.ServerStream) error {
		var n int
		if err := st.RecvMsg(&n); err != nil {
			return err
		}
		bytes.Add(int64(n))
		return st.SendMsg(rawMessage{})
	}))
	go func() { _ = s.Serve(l) }()
	b.Cleanup(s.Stop)
	return l.Addr().String(), bytes
}

// countingCodec receives a message as its length, without copying it,
// and sends rawMessage.
type countingCodec struct{ rawCodec }

func (countingCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*int) = data.Len()
	return nil
}

var benchAttrs = []router.SpanAttribute{
	{Key: "http.method", Value: "GET"}, {Key: "http.flavor", Value: "1.1"}, {Key: "http.target", Value: "/api/v1/items?id=42"},
	{Key: "http.server_name", Value: "shop.example.com"}, {Key: "http.host", Value: "shop.example.com"},
	{Key: "http.user_agent", Value: "bench"}, {Key: "http.status_code", Int: 200, IsInt: true},
	{Key: "http.scheme", Value: "http"}, {Key: "net.host.port", Int: 8080, IsInt: true},
	{Key: "net.peer.ip", Value: "127.0.0.1"}, {Key: "net.peer.port", Int: 40000, IsInt: true},
}

// countingTracer is the controller's tracer with its default settings,
// exporting to a countingCollector, whose byte count it returns.
func countingTracer(tb testing.TB) (*liveTracer, otelSettings, *atomic.Int64) {
	addr, sent := countingCollector(tb)
	_, port, _ := net.SplitHostPort(addr)
	s := defaultOtelSettings()
	s.CollectorHost, s.CollectorPort = "127.0.0.1", port
	l := newLiveTracer(nil)
	l.set(s)
	tb.Cleanup(func() { _ = l.shutdown(context.Background()) })
	return l, s, sent
}

// BenchmarkOtelSpan is the controller's cost of one request's span, as
// the router makes it: start (sampled, AlwaysOn), the module's
// attributes, end, batched and exported over OTLP/gRPC to a collector on
// loopback that does not decode.
func BenchmarkOtelSpan(b *testing.B) {
	l, s, sent := countingTracer(b)
	end := &router.SpanEnd{Name: "/", Attributes: benchAttrs, Status: 200}
	b.ReportAllocs()
	defer reportCPUns(b, processCPU())
	n := 0
	var sp router.Span
	for b.Loop() {
		// Restarted in the record of the last, as the router does.
		sp = l.RestartSpan(sp, router.TraceContext{}, "/", time.Now())
		_ = sp.Context()
		end.Time = time.Now()
		sp.End(end)
		// Each batch exported before the next fills, as under load
		// with the default queue, so that no span is dropped.
		if n++; n%s.MaxExportBatchSize == 0 {
			_ = l.forceFlush(b.Context())
		}
	}
	b.StopTimer()
	_ = l.forceFlush(b.Context())
	p := l.cur.Load()
	if p.batcher.lost > 0 {
		b.ReportMetric(float64(p.batcher.lost)/float64(b.N), "dropped/op")
	}
	b.ReportMetric(float64(sent.Load())/float64(b.N), "sent-B/op")
}

// BenchmarkOtelSpanSDK is BenchmarkOtelSpan through OpenTelemetry's SDK
// span, batch span processor and otlptrace exporter, as the controller
// exported before: the reference the hand-written path is measured
// against.
func BenchmarkOtelSpanSDK(b *testing.B) {
	addr, sent := countingCollector(b)
	exp, err := otlptrace.New(b.Context(), otlptracegrpc.NewClient(otlptracegrpc.WithEndpoint(addr), otlptracegrpc.WithInsecure()))
	if err != nil {
		b.Fatal(err)
	}
	s := defaultOtelSettings()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(s.sdkSampler()),
		sdktrace.WithBatcher(exp, sdktrace.WithMaxQueueSize(s.MaxQueueSize), sdktrace.WithBatchTimeout(s.ScheduleDelay), sdktrace.WithMaxExportBatchSize(s.MaxExportBatchSize)),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "nginx"))))
	tracer := tp.Tracer("nginx")
	end := &router.SpanEnd{Name: "/", Attributes: benchAttrs, Status: 200}
	b.ReportAllocs()
	defer reportCPUns(b, processCPU())
	n := 0
	for b.Loop() {
		start := time.Now()
		end.Time = time.Now()
		sdkServerSpan(tracer, router.TraceContext{}, "/", start, end)
		if n++; n%s.MaxExportBatchSize == 0 {
			_ = tp.ForceFlush(b.Context())
		}
	}
	b.StopTimer()
	_ = tp.Shutdown(b.Context())
	b.ReportMetric(float64(sent.Load())/float64(b.N), "sent-B/op")
}

// BenchmarkOtelSpanNoExport is BenchmarkOtelSpan with no collector: the
// span's IDs and sampling alone.
func BenchmarkOtelSpanNoExport(b *testing.B) {
	l := newLiveTracer(nil)
	l.set(defaultOtelSettings())
	end := &router.SpanEnd{Name: "/", Attributes: benchAttrs, Status: 200}
	b.ReportAllocs()
	defer reportCPUns(b, processCPU())
	var sp router.Span
	for b.Loop() {
		sp = l.RestartSpan(sp, router.TraceContext{}, "/", time.Now())
		_ = sp.Context()
		end.Time = time.Now()
		sp.End(end)
	}
}

// BenchmarkOTLPEncodeSpan is the encoding of one request's span, as the
// batch takes it.
func BenchmarkOTLPEncodeSpan(b *testing.B) {
	ids := idSource(1)
	s := &otelSpan{traceID: ids.traceID(), spanID: ids.spanID(), flags: 1, start: time.Now()}
	end := &router.SpanEnd{Name: "/", Attributes: benchAttrs, Status: 200, Time: s.start.Add(time.Millisecond)}
	var enc otlpEncoder
	b.ReportAllocs()
	defer reportCPUns(b, processCPU())
	for b.Loop() {
		enc.b = enc.b[:0]
		enc.span(fScopeSpansSpans, s, end)
	}
	b.ReportMetric(float64(len(enc.b)), "B/span")
}

// reportCPUns reports cpu-ns/op, the process's CPU time (user and system)
// per operation since start: on a shared machine steadier than the wall
// clock, and it counts the exporter's goroutines.
func reportCPUns(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}
