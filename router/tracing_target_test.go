package router

import (
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
