package router

import (
	"crypto/tls"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"ramjet.dev/ramjet/match"
)

// Every decoration has a case in decorate and a name of its own, and sets
// exactly the response headers it declares, which no other declares: a
// header the router puts on every answer has one place.
func TestDecorationsDeclared(t *testing.T) {
	r := newTestRouter(Options{ReturnRequestID: true, ServerTokens: "ramjet", Gzip: &Gzip{Level: 1, MinLength: 1, Types: []string{"text/plain"}},
		AddHeaders: http.Header{"X-Added": {"1"}}})
	owner := map[string]string{}
	names := map[string]bool{}
	for _, dc := range answerDecorations {
		if names[dc.name] {
			t.Errorf("decoration name %q twice", dc.name)
		}
		names[dc.name] = true
		for _, h := range dc.headers {
			if o, taken := owner[h]; taken {
				t.Errorf("%s is declared by %q and %q", h, o, dc.name)
			}
			owner[h] = dc.name
		}
		req := httptest.NewRequest(http.MethodGet, "https://a.example/", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		req.TLS = &tls.ConnectionState{}
		rec := httptest.NewRecorder()
		s := requestState{w: rec, req: req, d: decision{at: &stepNoBackend}}
		r.decorate(dc, &s, r.live.Load())
		got := slices.Sorted(maps.Keys(rec.Header()))
		var want []string
		for _, h := range dc.headers {
			if h == "*" {
				h = "X-Added" // the ConfigMap's own
			}
			want = append(want, http.CanonicalHeaderKey(h))
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("decoration %q set %v, declares %v", dc.name, got, want)
		}
		if dc == &decorCompress && s.gz == nil {
			t.Errorf("decoration %q did not compress an answer that accepts gzip", dc.name)
		}
	}
}

// With generate-request-id "false", ReturnRequestID returns the client's
// X-Request-ID and makes none: nginx's $req_id is then the client's or
// empty, and an ID the backend never got would mislead whoever quotes it.
func TestReturnRequestIDWithoutGenerating(t *testing.T) {
	r := newTestRouter(Options{ReturnRequestID: true, NoRequestID: true})
	t.Cleanup(r.CloseIdleConnections)
	_, addr := echoBackend(t, "web")
	r.Publish(table("rid", vhost("rid.test", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))

	res := serve(r, http.MethodGet, "rid.test", "/", nil)
	_ = body(t, res)
	assert.Nil(t, res.Header["Seen-X-Request-Id"], "the backend")
	assert.Nil(t, res.Header["X-Request-Id"], "the client")

	res = serve(r, http.MethodGet, "rid.test", "/", http.Header{"X-Request-Id": {"rid-1"}})
	_ = body(t, res)
	assert.Equal(t, []string{"rid-1"}, res.Header["Seen-X-Request-Id"], "the backend")
	assert.Equal(t, []string{"rid-1"}, res.Header["X-Request-Id"], "the client")
}
