package router

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// nginx refuses a declared Content-Length over client_max_body_size in
// its find-config phase, before the location's rewrite phase where the
// module starts its span: that 413 makes no span. A body found too large
// as it is read (chunked) is refused later, in a span of 413.
func TestTracingBodyTooLargeDeclared(t *testing.T) {
	_, addr := echoBackend(t, "web")
	rt := route(match.Prefix, "/up", httpBackend("prod/web:80", addr))
	rt.Policy = &match.Policy{MaxBodySize: 8}
	rt.Tracing = &match.Tracing{}
	tt := &testTracer{}
	r := newTestRouter(Options{Tracer: tt})
	r.Publish(table("body", vhost("shop.example.com", nil, rt)))

	req := httptest.NewRequest(http.MethodPost, "/up/x", strings.NewReader(strings.Repeat("a", 64)))
	req.Host = "shop.example.com"
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
	assert.Equal(t, 0, tt.count(), "no span for a declared length over the limit")

	req = httptest.NewRequest(http.MethodPost, "/up/x", strings.NewReader(strings.Repeat("a", 64)))
	req.Host = "shop.example.com"
	req.ContentLength = -1
	rec = httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
	require.Equal(t, 1, tt.count(), "a span for a body found too large as it is read")
	assert.Equal(t, int64(413), tt.last(t).attrs()["http.status_code"])

	req = httptest.NewRequest(http.MethodPost, "/up/x", strings.NewReader("small"))
	req.Host = "shop.example.com"
	rec = httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, 2, tt.count())
}
