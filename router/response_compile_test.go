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

// A compiled mirror-target with $request_uri sends the copy the request's
// URI once: the target's path is prepared by compile and again by
// match.New, which must not add its parts twice.
func TestMirrorTargetCompiled(t *testing.T) {
	uris := make(chan string, 1)
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uris <- r.RequestURI
	}))
	defer sink.Close()
	web := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer web.Close()

	snap := tlsEndsManifests(t, web.Listener.Addr().String(), nil,
		tlsEndsIngress{"shop", "shop.example.com", "/", map[string]string{"mirror-target": "http://" + sink.Listener.Addr().String() + "$request_uri"}})
	res := compile.Compile(snap, compile.Options{AllowLoopbackEndpoints: true})
	require.Empty(t, res.Warnings)
	r := router.New(router.Options{Logger: slog.New(slog.DiscardHandler)})
	defer r.CloseIdleConnections()
	r.Publish(res.Table)

	code, _ := serveThrough(t, r, "shop.example.com", "/p?q=1")
	assert.Equal(t, http.StatusOK, code)
	select {
	case uri := <-uris:
		assert.Equal(t, "/p?q=1", uri)
	case <-time.After(5 * time.Second):
		t.Fatal("no mirrored copy arrived")
	}
}
