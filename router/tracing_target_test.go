package router

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"ramjet.dev/ramjet/match"
)

// http.target is the module's req->unparsed_uri, nginx's $request_uri:
// an absolute-form target from its path on (nginx 1.22 on loopback:
// "GET http://shop.example.com/api/x?y=1" is "/api/x?y=1").
func TestTracingTargetAbsoluteForm(t *testing.T) {
	r, tt := tracingRouter(t, &match.Tracing{}, Options{})
	for target, want := range map[string]string{
		"http://shop.example.com/api/x?y=1":      "/api/x?y=1",
		"http://shop.example.com:8080/api/x":     "/api/x",
		"/api/x?y=1":                             "/api/x?y=1",
		"HTTP://shop.example.com/api/items?id=2": "/api/items?id=2",
	} {
		traced(r, target, nil)
		assert.Equal(t, want, tt.last(t).attrs()["http.target"], target)
	}
}

// http.server_name is the module's cscf->server_name, the server block's
// first name as ingress-nginx writes it: a wildcard host is the regex
// buildServerName makes of it (nginx 1.22 on loopback: $server_name of
// a request to a.example.com under server_name
// "~^(?<subdomain>[\w-]+)\.example\.com$" is that regex), the catch-all
// "_".
func TestTracingServerNameWildcard(t *testing.T) {
	_, addr := echoBackend(t, "web")
	web := httpBackend("prod/web:80", addr)
	wild := route(match.Prefix, "/", web)
	wild.Tracing = &match.Tracing{}
	exact := route(match.Prefix, "/", web)
	exact.Tracing = &match.Tracing{}
	tt := &testTracer{}
	r := newTestRouter(Options{Tracer: tt})
	r.Publish(table("wild", vhost("*.example.com", nil, wild), vhost("shop.example.org", nil, exact)))
	for host, want := range map[string]string{
		"a.example.com":    `~^(?<subdomain>[\w-]+)\.example\.com$`,
		"shop.example.org": "shop.example.org",
	} {
		for range 2 {
			res := serve(r, "GET", host, "/x", nil)
			body(t, res)
			assert.Equal(t, want, tt.last(t).attrs()["http.server_name"], host)
		}
	}
}

// A trusted location given a traceparent that does not parse starts a
// trace of its own, as the module's propagator leaves an
// invalid context without a parent, and the backend gets the span's
// context, without the client's tracestate (the root span has none).
func TestTracingInvalidIncoming(t *testing.T) {
	r, tt := tracingRouter(t, &match.Tracing{TrustIncomingSpan: true}, Options{})
	for _, tp := range [][]string{
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"},
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"},
		{"garbage"},
		{"garbage", clientParent},
	} {
		res := traced(r, "/api/x", http.Header{"Traceparent": tp, "Tracestate": {"vendor=1"}})
		s := tt.last(t)
		assert.False(t, s.parent.IsValid(), "%q", tp)
		assert.Equal(t, []string{s.ctx.Traceparent()}, res.Header["Seen-Traceparent"], "%q", tp)
		assert.Empty(t, res.Header["Seen-Tracestate"], "%q", tp)
	}
}

// Of several traceparent lines the first is read, as the module's
// propagator reads the first header of the name (propagate.cpp
// FindHeader), and OpenTelemetry Go's HeaderCarrier.Get too: the span
// stays in the client's trace.
func TestTracingRepeatedTraceparent(t *testing.T) {
	r, tt := tracingRouter(t, &match.Tracing{TrustIncomingSpan: true}, Options{})
	other := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	res := traced(r, "/api/x", http.Header{"Traceparent": {clientParent, other}})
	s := tt.last(t)
	assert.Equal(t, clientParent, s.parent.Traceparent())
	assert.Equal(t, []string{s.ctx.Traceparent()}, res.Header["Seen-Traceparent"])
}
