package main

import (
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestCountSpans: the spans counted from the wire are the message's, over
// several resources and scopes, with the fields around them skipped; an
// ill-formed request is refused.
func TestCountSpans(t *testing.T) {
	span := func(name string) *tracepb.Span {
		return &tracepb.Span{TraceId: make([]byte, 16), SpanId: make([]byte, 8), Name: name,
			Attributes: []*commonpb.KeyValue{{Key: "http.method", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "GET"}}}}}
	}
	res := &resourcepb.Resource{Attributes: []*commonpb.KeyValue{{Key: "service.name", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "nginx"}}}}}
	req := &collectortrace.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{
		{Resource: res, SchemaUrl: "x", ScopeSpans: []*tracepb.ScopeSpans{
			{Scope: &commonpb.InstrumentationScope{Name: "nginx"}, Spans: []*tracepb.Span{span("a"), span("b")}},
			{Spans: []*tracepb.Span{span("c")}},
			{},
		}},
		{Resource: res, ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{span("d"), span("e"), span("f")}}}},
		{},
	}}
	b, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := countSpans(b); n != 6 || err != nil {
		t.Errorf("countSpans = %d, %v; want 6 spans", n, err)
	}
	if n, err := countSpans(nil); n != 0 || err != nil {
		t.Errorf("countSpans(empty) = %d, %v; want 0 spans", n, err)
	}
	for _, cut := range []int{1, 3, len(b) / 2, len(b) - 1} {
		if _, err := countSpans(b[:cut]); err == nil {
			t.Errorf("countSpans of the first %d of %d bytes: no error", cut, len(b))
		}
	}
}
