package router_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/router"
)

// A mirror-target's $request_uri is the client's request-target, also
// when a snippet's rewrite moved the request to another location: nginx's
// $request_uri is the request line's URI, which no rewrite changes
// (ngx_http_subrequest copies unparsed_uri; rewrites set only uri).
func TestMirrorRequestURIAfterRelocation(t *testing.T) {
	uris := make(chan string, 1)
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uris <- r.RequestURI
	}))
	defer sink.Close()
	web := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer web.Close()

	snap := tlsEndsManifests(t, web.Listener.Addr().String(), nil,
		tlsEndsIngress{"old", "shop.example.com", "/old", map[string]string{"configuration-snippet": "rewrite ^/old/(.*)$ /new/$1 last;"}},
		tlsEndsIngress{"new", "shop.example.com", "/new", map[string]string{"mirror-target": "http://" + sink.Listener.Addr().String() + "$request_uri"}})
	res := compile.Compile(snap, compile.Options{AllowLoopbackEndpoints: true, AllowSnippetAnnotations: true, AnnotationsRiskLevel: "Critical"})
	r := router.New(router.Options{Logger: slog.New(slog.DiscardHandler)})
	defer r.CloseIdleConnections()
	r.Publish(res.Table)

	code, _ := serveThrough(t, r, "shop.example.com", "/old/x?q=1")
	require.Equal(t, http.StatusOK, code)
	select {
	case uri := <-uris:
		assert.Equal(t, "/old/x?q=1", uri)
	case <-time.After(5 * time.Second):
		t.Fatal("no mirrored copy arrived")
	}
}
