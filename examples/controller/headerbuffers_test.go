package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// large-client-header-buffers "4 8k" (config.go NewDefault,
// nginx.tmpl:272 large_client_header_buffers): nginx answers 414 to a
// request line longer than one buffer and 400 "Request Header Or Cookie
// Too Large" to a header field longer than one.
func TestHeaderBuffers(t *testing.T) {
	h := headerBuffers(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }), 8<<10)
	serve := func(target string, header map[string]string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	assert.Equal(t, 204, serve("/"+strings.Repeat("a", 8000), nil).Code)
	w := serve("/"+strings.Repeat("a", 8200), nil)
	assert.Equal(t, 414, w.Code)
	w = serve("/", map[string]string{"Cookie": strings.Repeat("c", 8200)})
	assert.Equal(t, 400, w.Code)
	assert.Contains(t, w.Body.String(), "Request Header Or Cookie Too Large")
	assert.Equal(t, 204, serve("/", map[string]string{"Cookie": strings.Repeat("c", 8000)}).Code)
}
