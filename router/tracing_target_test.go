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
