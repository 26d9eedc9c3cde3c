package main

import (
	"net"
	"testing"
	"time"

	"ramjet.dev/ramjet/router"
)

// BenchmarkOtelSpan is the exporter's cost of one request's span, as the
// router makes it: start, the module's attributes, end, batched and
// exported over OTLP/gRPC to an in-process collector.
func BenchmarkOtelSpan(b *testing.B) {
	rcv := newOTLPReceiverB(b)
	_, port, _ := net.SplitHostPort(rcv)
	s := defaultOtelSettings()
	s.CollectorHost, s.CollectorPort = "127.0.0.1", port
	l := newLiveTracer(nil)
	l.set(s)
	attrs := []router.SpanAttribute{
		{Key: "http.method", Value: "GET"}, {Key: "http.flavor", Value: "1.1"}, {Key: "http.target", Value: "/api/v1/items?id=42"},
		{Key: "http.server_name", Value: "shop.example.com"}, {Key: "http.host", Value: "shop.example.com"},
		{Key: "http.user_agent", Value: "bench"}, {Key: "http.status_code", Int: 200, IsInt: true},
		{Key: "http.scheme", Value: "http"}, {Key: "net.host.port", Int: 8080, IsInt: true},
		{Key: "net.peer.ip", Value: "127.0.0.1"}, {Key: "net.peer.port", Int: 40000, IsInt: true},
	}
	b.ReportAllocs()
	for b.Loop() {
		sp := l.StartSpan(router.TraceContext{}, "/", time.Now())
		_ = sp.Context()
		sp.End(&router.SpanEnd{Name: "/", Attributes: attrs, Status: 200, Time: time.Now()})
	}
	b.StopTimer()
	_ = l.forceFlush(b.Context())
}

// BenchmarkOtelSpanNoExport is BenchmarkOtelSpan with no exporter: the
// SDK's span alone.
func BenchmarkOtelSpanNoExport(b *testing.B) {
	l := newLiveTracer(nil)
	l.set(defaultOtelSettings())
	attrs := []router.SpanAttribute{
		{Key: "http.method", Value: "GET"}, {Key: "http.flavor", Value: "1.1"}, {Key: "http.target", Value: "/api/v1/items?id=42"},
		{Key: "http.server_name", Value: "shop.example.com"}, {Key: "http.host", Value: "shop.example.com"},
		{Key: "http.user_agent", Value: "bench"}, {Key: "http.status_code", Int: 200, IsInt: true},
		{Key: "http.scheme", Value: "http"}, {Key: "net.host.port", Int: 8080, IsInt: true},
		{Key: "net.peer.ip", Value: "127.0.0.1"}, {Key: "net.peer.port", Int: 40000, IsInt: true},
	}
	b.ReportAllocs()
	for b.Loop() {
		sp := l.StartSpan(router.TraceContext{}, "/", time.Now())
		_ = sp.Context()
		sp.End(&router.SpanEnd{Name: "/", Attributes: attrs, Status: 200, Time: time.Now()})
	}
}
