package router

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"

	"ramjet.dev/ramjet/match"
)

// The copy carries the client's headers as nginx's mirror subrequest
// does, after nginx dropped the names it calls invalid
// (ignore_invalid_headers): a name with '.' never reaches the mirror, and
// one with '_' does under enable-underscores-in-headers, as it reaches
// the backend.
func TestMirrorCopyInvalidHeaderNames(t *testing.T) {
	sink, addr := newMirrorSink(t)
	_, webAddr := echoBackend(t, "web")
	web := httpBackend("prod/web:80", webAddr)
	for _, underscores := range []bool{false, true} {
		r := newTestRouter(Options{UnderscoresInHeaders: underscores})
		t.Cleanup(r.CloseIdleConnections)
		r.Publish(responseTable(web, &match.Response{Mirror: &match.Mirror{Target: "http://" + addr + "$request_uri", Host: "shadow.internal"}}))
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Host = "app.example.com"
		req.Header["X.Dotted"] = []string{"d"}
		req.Header["X_Under"] = []string{"u"}
		req.Header.Set("X-Client", "c1")
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		assert.Equal(t, "web", rec.Header().Get("X-Backend"))
		assert.Equal(t, underscores, rec.Header().Get("Seen-X_under") != "", "the backend")
		c := sink.next(t)
		assert.Equal(t, "c1", c.header.Get("X-Client"))
		assert.Empty(t, c.header.Get("X.Dotted"), "an invalid name")
		assert.Equal(t, underscores, c.header.Get("X_Under") != "", "underscores %v", underscores)
	}
}
