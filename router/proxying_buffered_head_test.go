package router

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"ramjet.dev/ramjet/match"
)

// TestProxyBufferingKeepsHeaders: with proxy-buffering on, a response
// read whole gives its backend connection back before the client reads a
// byte, and the client still gets the backend's header fields: the head
// is copied before the connection goes back to the pool, which clears it
// and lets the next request read its own head into it.
func TestProxyBufferingKeepsHeaders(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Backend", "yes")
		w.Header().Set("Content-Type", "text/x-mine")
		_, _ = io.WriteString(w, "ok\n")
	}))
	t.Cleanup(s.Close)
	r, _ := proxyingRouter(t, Options{}, &match.Proxying{Buffering: true, MaxTempFileSize: -1}, s.Listener.Addr().String())
	res := serve(r, http.MethodGet, "web", "/", nil)
	if got := body(t, res); got != "ok\n" {
		t.Fatalf("body %q", got)
	}
	if res.Header.Get("X-Backend") != "yes" || res.Header.Get("Content-Type") != "text/x-mine" {
		t.Fatalf("the backend's header is lost under proxy-buffering: %v", res.Header)
	}
}
