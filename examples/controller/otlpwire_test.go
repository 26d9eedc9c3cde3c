package main

import (
	"context"
	"encoding/binary"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"
	gproto "google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"ramjet.dev/ramjet/router"

	"github.com/google/go-cmp/cmp"
)

// requestReceiver is an OTLP/gRPC collector keeping every request whole.
type requestReceiver struct {
	collectortrace.UnimplementedTraceServiceServer
	addr string
	mu   sync.Mutex
	reqs []*collectortrace.ExportTraceServiceRequest
	res  *collectortrace.ExportTraceServiceResponse
	// block, when set, holds every export until it is closed.
	block chan struct{}
}

func newRequestReceiver(t *testing.T) *requestReceiver {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r := &requestReceiver{addr: l.Addr().String(), res: &collectortrace.ExportTraceServiceResponse{}}
	s := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(s, r)
	go func() { _ = s.Serve(l) }()
	t.Cleanup(s.Stop)
	return r
}

func (r *requestReceiver) Export(ctx context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	if r.block != nil {
		select {
		case <-r.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, gproto.Clone(req).(*collectortrace.ExportTraceServiceRequest))
	return r.res, nil
}

func (r *requestReceiver) requests() []*collectortrace.ExportTraceServiceRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reqs
}

// sameIDs makes the SDK's spans take the IDs the controller's got.
type sameIDs struct {
	traceID trace.TraceID
	spanID  trace.SpanID
}

func (g *sameIDs) NewIDs(context.Context) (trace.TraceID, trace.SpanID) { return g.traceID, g.spanID }

func (g *sameIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID { return g.spanID }

// sdkContext is the context carrying a remote parent, as the SDK reads it.
func sdkContext(parent router.TraceContext) context.Context {
	ctx := context.Background()
	if parent.IsValid() {
		ts, _ := trace.ParseTraceState(parent.State)
		ctx = trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: parent.TraceID, SpanID: parent.SpanID, TraceFlags: trace.TraceFlags(parent.Flags), TraceState: ts, Remote: true,
		}))
	}
	return ctx
}

// sdkServerSpan makes a server span with OpenTelemetry's SDK span, as an
// adapter of trace.Tracer to router.Tracer would: what the controller's
// spans must look like to a collector.
func sdkServerSpan(tracer trace.Tracer, parent router.TraceContext, name string, start time.Time, e *router.SpanEnd) trace.SpanContext {
	_, s := tracer.Start(sdkContext(parent), name, trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start))
	sc := s.SpanContext()
	if !s.IsRecording() {
		s.End()
		return sc
	}
	s.SetName(e.Name)
	for _, a := range e.Attributes {
		if a.IsInt {
			s.SetAttributes(attribute.Int64(a.Key, a.Int))
		} else {
			s.SetAttributes(attribute.String(a.Key, a.Value))
		}
	}
	if e.Error {
		s.SetStatus(codes.Error, "")
	} else {
		s.SetStatus(codes.Ok, "")
	}
	s.End(trace.WithTimestamp(e.Time))
	return sc
}

// TestOTLPMatchesSDK: the controller's spans, encoded by hand, are the
// message OpenTelemetry's SDK span and OTLP/gRPC exporter send for the
// same requests: roots and children of a remote parent, trace state
// (and an invalid one), sampled and not, string and integer attributes
// (empty and zero ones too), none, Ok and Error, spans whose length takes
// one, two and three bytes; and each span's context, the
// one propagated, is the SDK span's.
func TestOTLPMatchesSDK(t *testing.T) {
	type request struct {
		parent router.TraceContext
		end    router.SpanEnd
	}
	start := time.Unix(1700000000, 123456789)
	attrs := []router.SpanAttribute{
		{Key: "http.method", Value: "GET"}, {Key: "http.flavor", Value: "1.1"}, {Key: "http.target", Value: "/api/v1/items?id=42"},
		{Key: "http.server_name", Value: "_"}, {Key: "http.user_agent", Value: ""}, {Key: "http.status_code", Int: 200, IsInt: true},
		{Key: "net.host.port", Int: 0, IsInt: true}, {Key: "net.peer.port", Int: -1, IsInt: true},
	}
	reqs := []request{
		{end: router.SpanEnd{Name: "/api/", Attributes: attrs, Status: 200, Time: start.Add(1500 * time.Microsecond)}},
		{
			parent: router.TraceContext{TraceID: [16]byte{0xab, 1}, SpanID: [8]byte{0xcd, 2}, Flags: 1, State: "vendor=a,other=b"},
			end:    router.SpanEnd{Name: "GET /x", Attributes: attrs[:3], Status: 503, Error: true, Time: start.Add(time.Second)},
		},
		{
			parent: router.TraceContext{TraceID: [16]byte{0xab, 2}, SpanID: [8]byte{0xcd, 3}, Flags: 0},
			end:    router.SpanEnd{Name: "not sampled", Status: 200, Time: start},
		},
		{
			parent: router.TraceContext{TraceID: [16]byte{0xab, 3}, SpanID: [8]byte{0xcd, 4}, Flags: 3, State: "not a state"},
			// Lengths of two and three bytes.
			end: router.SpanEnd{Name: strings.Repeat("long name ", 20), Status: 200, Time: start.Add(time.Hour),
				Attributes: []router.SpanAttribute{{Key: "http.user_agent", Value: strings.Repeat("x", 20000)}}},
		},
		// A span under 128 bytes: its length in one byte.
		{end: router.SpanEnd{Name: "/", Status: 200, Time: start.Add(time.Millisecond)}},
	}

	official := newRequestReceiver(t)
	exp, err := otlptrace.New(t.Context(), otlptracegrpc.NewClient(otlptracegrpc.WithEndpoint(official.addr), otlptracegrpc.WithInsecure()))
	require.NoError(t, err)
	s := defaultOtelSettings()
	ids := &sameIDs{}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(s.sdkSampler()), sdktrace.WithIDGenerator(ids), sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "nginx"))))
	sdkTracer := tp.Tracer("nginx")

	ours := newRequestReceiver(t)
	_, port, _ := net.SplitHostPort(ours.addr)
	s.CollectorHost, s.CollectorPort = "127.0.0.1", port
	l := newLiveTracer(nil)
	l.set(s)

	for i, r := range reqs {
		sp := l.StartSpan(r.parent, "start name", start)
		got := sp.Context()
		sp.End(&r.end)
		ids.traceID, ids.spanID = got.TraceID, got.SpanID
		rsc := sdkServerSpan(sdkTracer, r.parent, "start name", start, &r.end)
		want := router.TraceContext{TraceID: rsc.TraceID(), SpanID: rsc.SpanID(), Flags: byte(rsc.TraceFlags()), State: rsc.TraceState().String()}
		assert.Equal(t, want, got, "request %d: the span's context", i)
	}
	require.NoError(t, l.forceFlush(t.Context()))
	require.NoError(t, tp.Shutdown(t.Context()))

	wantReqs, gotReqs := official.requests(), ours.requests()
	require.Len(t, gotReqs, 1)
	require.Len(t, wantReqs, 1)
	require.Len(t, gotReqs[0].ResourceSpans[0].ScopeSpans[0].Spans, 4, "the sampled spans")
	if d := cmp.Diff(wantReqs[0], gotReqs[0], protocmp.Transform()); d != "" {
		t.Errorf("the controller's request differs from the SDK's (-SDK +controller):\n%s", d)
	}
}

// TestOTLPBatcherBatches: a batch goes once it is full, the rest when the
// delay is up.
func TestOTLPBatcherBatches(t *testing.T) {
	r := newRequestReceiver(t)
	s := defaultOtelSettings()
	s.MaxExportBatchSize, s.MaxQueueSize, s.ScheduleDelay = 2, 4, 50*time.Millisecond
	_, port, _ := net.SplitHostPort(r.addr)
	s.CollectorHost, s.CollectorPort = "127.0.0.1", port
	l := newLiveTracer(nil)
	l.set(s)
	defer func() { _ = l.cur.Load().shutdown(context.Background()) }()
	for range 3 {
		l.StartSpan(router.TraceContext{}, "/", time.Now()).End(&router.SpanEnd{Name: "/", Time: time.Now()})
	}
	require.Eventually(t, func() bool { return len(r.requests()) == 2 }, 5*time.Second, 5*time.Millisecond)
	reqs := r.requests()
	count := func(req *collectortrace.ExportTraceServiceRequest) int {
		return len(req.ResourceSpans[0].ScopeSpans[0].Spans)
	}
	require.Equal(t, 2, count(reqs[0]), "a full batch")
	require.Equal(t, 1, count(reqs[1]), "the rest, after the delay")
}

// TestOTLPBatcherQueueFull: with the collector not answering, spans
// beyond the queue's size are dropped and ending a span does not wait.
func TestOTLPBatcherQueueFull(t *testing.T) {
	r := newRequestReceiver(t)
	r.block = make(chan struct{})
	defer close(r.block)
	s := defaultOtelSettings()
	s.MaxExportBatchSize, s.MaxQueueSize = 2, 4
	b, err := newOTLPBatcher(nil, r.addr, "nginx", s)
	require.NoError(t, err)
	l := newLiveTracer(nil)
	l.cur.Store(&otelProvider{sampler: s.sampler(), batcher: b})
	start := time.Now()
	for range 100 {
		l.StartSpan(router.TraceContext{}, "/", time.Now()).End(&router.SpanEnd{Name: "/", Time: time.Now()})
	}
	require.Less(t, time.Since(start), 100*time.Millisecond, "ending spans waited for the collector")
	b.mu.Lock()
	held, dropped := b.queued+b.curSpans(), b.lost
	b.mu.Unlock()
	require.Equal(t, 4, held, "spans queued or being sent")
	require.Equal(t, 96, dropped)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.Error(t, b.Shutdown(ctx), "a shutdown that could not export says so")
}

// TestOTLPPartialSuccess reads the collector's count of refused spans.
func TestOTLPPartialSuccess(t *testing.T) {
	res := &collectortrace.ExportTraceServiceResponse{PartialSuccess: &collectortrace.ExportTracePartialSuccess{RejectedSpans: 7, ErrorMessage: "too old"}}
	enc, err := gproto.Marshal(res)
	require.NoError(t, err)
	n, msg := (&exportResponse{enc}).partialSuccess()
	require.Equal(t, int64(7), n)
	require.Equal(t, "too old", msg)
	n, msg = (&exportResponse{}).partialSuccess()
	require.Zero(t, n)
	require.Empty(t, msg)
}

// The one-pass attributes write the bytes of the nested ones, at the
// lengths where one byte stops being enough, one by one and in a run
// where the two forms alternate.
func TestAttributes(t *testing.T) {
	var cases []router.SpanAttribute
	for _, n := range []int{0, 1, 100, 119, 120, 121, 126, 127, 128, 300} {
		cases = append(cases, router.SpanAttribute{Value: strings.Repeat("v", n)})
	}
	for _, n := range []int64{0, 1, 127, 128, 200, 16383, 16384, 65535, 1<<21 - 1, 1 << 21, 1 << 40, -1} {
		cases = append(cases, router.SpanAttribute{Int: n, IsInt: true})
	}
	for _, num := range []protowire.Number{fSpanAttributes, fResourceAttributes, 16} {
		var all []router.SpanAttribute
		var allNested otlpEncoder
		for _, key := range []string{"", "k", "http.user_agent", strings.Repeat("k", 100), strings.Repeat("k", 127), strings.Repeat("k", 128)} {
			for _, a := range cases {
				var one, nested otlpEncoder
				one.attribute(num, key, a)
				nested.nestedAttribute(num, key, a)
				require.Equal(t, nested.b, one.b, "field %d, key of %d, %+v", num, len(key), a)
				a.Key = key
				all = append(all, a)
				allNested.nestedAttribute(num, key, a)
			}
		}
		var run otlpEncoder
		run.attributes(num, all)
		require.Equal(t, allNested.b, run.b, "field %d, all in one run", num)
	}
}

// TestOTLPDialRaw: the exporter's connection reads and writes its socket
// with raw calls (router/rawsock) on Linux, and an HTTPS proxy in the
// environment leaves the dialing to gRPC, which goes through it.
func TestOTLPDialRaw(t *testing.T) {
	t.Setenv("HTTPS_PROXY", "")
	t.Setenv("https_proxy", "")
	require.False(t, otlpProxied())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	c, err := otlpDial(t.Context(), l.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	if runtime.GOOS == "linux" {
		w, ok := c.(interface{ NetConn() net.Conn })
		require.True(t, ok, "%T is not rawsock's", c)
		require.IsType(t, &net.TCPConn{}, w.NetConn())
	}
	t.Setenv("HTTPS_PROXY", "http://proxy.example:3128")
	require.True(t, otlpProxied())
}

// spanByParts is span as it was first written, field by field: what
// TestOTLPSpanBytes holds span to.
func (e *otlpEncoder) spanByParts(num protowire.Number, s *otelSpan, end *router.SpanEnd) {
	const (
		tagTraceID = fSpanTraceID<<3 | byte(protowire.BytesType)
		tagSpanID  = fSpanSpanID<<3 | byte(protowire.BytesType)
		tagParent  = fSpanParentSpanID<<3 | byte(protowire.BytesType)
		tagKind    = fSpanKind<<3 | byte(protowire.VarintType)
		tagCode    = fStatusCode<<3 | byte(protowire.VarintType)
	)
	b := protowire.AppendTag(e.b, num, protowire.BytesType)
	at := len(b)
	b = append(b, 0, 0, tagTraceID, 16)
	b = append(b, s.traceID[:]...)
	b = append(b, tagSpanID, 8)
	b = append(b, s.spanID[:]...)
	e.b = b
	e.str(fSpanTraceState, s.state)
	if s.remoteParent {
		e.b = append(append(e.b, tagParent, 8), s.parentID[:]...)
	}
	e.str(fSpanName, end.Name)
	b = append(e.b, tagKind, byte(trace.SpanKindServer))
	e.b = b
	e.fixed64(fSpanStart, unixNano(s.start.UnixNano()))
	e.fixed64(fSpanEnd, unixNano(end.Time.UnixNano()))
	for _, a := range end.Attributes {
		e.nestedAttribute(fSpanAttributes, a.Key, a)
	}
	code := byte(statusCodeOk)
	if end.Error {
		code = statusCodeError
	}
	b = protowire.AppendTag(e.b, fSpanStatus, protowire.BytesType)
	b = append(b, 2, tagCode, code)
	flags := uint32(s.flags) | spanFlagsHasIsRemote
	if s.remoteParent {
		flags |= spanFlagsIsRemote
	}
	b = protowire.AppendTag(b, fSpanFlags, protowire.Fixed32Type)
	e.b = binary.LittleEndian.AppendUint32(b, flags)
	e.closeReserved(at)
}

// TestOTLPSpanBytes: span writes the bytes of the span written field by
// field, for parents and none, trace states, names, times, attributes of
// every kind and lengths of one, two and three bytes, zero and empty
// ones, a key left empty, and the fields numbered under and over 16.
func TestOTLPSpanBytes(t *testing.T) {
	start := time.Unix(1700000000, 123456789)
	var attrs []router.SpanAttribute
	for _, n := range []int{0, 1, 100, 119, 120, 121, 126, 127, 128, 300, 20000} {
		attrs = append(attrs, router.SpanAttribute{Key: "http.user_agent", Value: strings.Repeat("v", n)})
	}
	for _, n := range []int64{0, 1, 127, 128, 200, 16383, 16384, 65535, 1<<21 - 1, 1 << 21, 1 << 40, -1} {
		attrs = append(attrs, router.SpanAttribute{Key: "net.peer.port", Int: n, IsInt: true})
	}
	attrs = append(attrs, router.SpanAttribute{Value: "no key"}, router.SpanAttribute{Key: strings.Repeat("k", 130), Value: "v"})
	for _, n := range []int{112, 115, 117, 118, 119, 120, 121, 122, 126, 127} {
		// Keys whose KeyValue's length stops fitting a byte.
		key := strings.Repeat("k", n)
		attrs = append(attrs, router.SpanAttribute{Key: key, Int: 300, IsInt: true}, router.SpanAttribute{Key: key, Int: 5, IsInt: true}, router.SpanAttribute{Key: key, Value: "ab"})
	}
	spans := []otelSpan{
		{traceID: trace.TraceID{1}, spanID: trace.SpanID{2}, flags: 1, start: start},
		{traceID: trace.TraceID{1}, spanID: trace.SpanID{2}, parentID: trace.SpanID{3}, remoteParent: true, flags: 3, state: "a=b,c=d", start: start},
		{traceID: trace.TraceID{1}, spanID: trace.SpanID{2}, state: strings.Repeat("s", 200)},
		{traceID: trace.TraceID{1}, spanID: trace.SpanID{2}, start: time.Unix(0, 0)},
	}
	ends := []router.SpanEnd{
		{Name: "/", Status: 200, Time: start.Add(time.Millisecond)},
		{Name: "", Status: 500, Error: true},
		{Name: strings.Repeat("long name ", 20), Attributes: attrs[:3], Time: start.Add(time.Second)},
		{Name: "/api/", Attributes: benchAttrs, Status: 200, Time: start.Add(time.Millisecond)},
	}
	for i := range attrs {
		ends = append(ends, router.SpanEnd{Name: "/x", Attributes: attrs[i : i+1], Time: start}, router.SpanEnd{Name: "/y", Attributes: attrs[:i+1], Time: start})
	}
	for i := range spans {
		for j := range ends {
			for _, num := range []protowire.Number{fScopeSpansSpans, 1, 15, 16, 20} {
				var one, parts otlpEncoder
				one.b, parts.b = []byte("prefix"), []byte("prefix")
				one.span(num, &spans[i], &ends[j])
				parts.spanByParts(num, &spans[i], &ends[j])
				require.Equal(t, parts.b, one.b, "span %d, end %d, field %d", i, j, num)
			}
		}
	}
}
