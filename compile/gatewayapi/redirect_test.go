package gatewayapi

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"ramjet.dev/ramjet/router"
)

// redirectCase is a request of a redirect conformance test and the
// status and Location the suite expects.
type redirectCase struct {
	path     string
	code     int
	location string
}

// redirectConformance replays the RequestRedirect tests of the Gateway API
// conformance suite (tests/<name>.go, v1.6.3). The suite sends to the
// Gateway's address on port 80 with scheme http; a Location it expects
// without a host keeps the request's.
var redirectConformance = []struct {
	test  string
	cases []redirectCase
}{
	{"httproute-redirect-path", []redirectCase{
		{"/original-prefix/lemon", 302, "http://gw.test/replacement-prefix/lemon"},
		{"/full/path/original", 302, "http://gw.test/full-path-replacement"},
		{"/path-and-host", 302, "http://example.org/replacement-prefix"},
		{"/path-and-status", 301, "http://gw.test/replacement-prefix"},
		{"/full-path-and-host", 302, "http://example.org/replacement-full"},
		{"/full-path-and-status", 301, "http://gw.test/replacement-full"},
	}},
	{"httproute-redirect-host-and-status", []redirectCase{
		{"/hostname-redirect", 302, "http://example.org/hostname-redirect"},
		{"/host-and-status", 301, "http://example.org/host-and-status"},
	}},
	{"httproute-redirect-scheme", []redirectCase{
		{"/scheme", 302, "https://gw.test/scheme"},
		{"/scheme-and-host", 302, "https://example.org/scheme-and-host"},
		{"/scheme-and-status", 301, "https://gw.test/scheme-and-status"},
		{"/scheme-and-host-and-status", 302, "https://example.org/scheme-and-host-and-status"},
	}},
	{"httproute-redirect-port", []redirectCase{
		{"/port", 302, "http://gw.test:8083/port"},
		{"/port-and-host", 302, "http://example.org:8083/port-and-host"},
		{"/port-and-status", 301, "http://gw.test:8083/port-and-status"},
		{"/port-and-host-and-status", 302, "http://example.org:8083/port-and-host-and-status"},
	}},
	{"httproute-303-redirect", []redirectCase{
		{"/see-other", 303, "http://gw.test/see-other"},
	}},
}

// TestRedirectConformance serves the compiled table through the router,
// so the redirect is answered where a request would meet it: the rules
// have no backendRefs, and the snippet step answers before the missing
// backend would.
func TestRedirectConformance(t *testing.T) {
	for _, c := range redirectConformance {
		t.Run(c.test, func(t *testing.T) {
			w := load(t, filepath.Join("testdata", "conformance", "base.yaml"), filepath.Join("testdata", "conformance", c.test+".yaml"))
			res, ws := w.compile()
			if len(ws)+len(res.Warnings) != 0 {
				t.Fatalf("warnings: %v %v", ws, res.Warnings)
			}
			rt := router.New(router.Options{Logger: slog.New(slog.DiscardHandler)})
			rt.Publish(res.Table)
			for _, rc := range c.cases {
				req := httptest.NewRequest(http.MethodGet, rc.path, nil) // origin-form, as a client sends it
				req.Host = "gw.test"
				rec := httptest.NewRecorder()
				rt.ServeHTTP(rec, req)
				if rec.Code != rc.code || rec.Header().Get("Location") != rc.location {
					t.Errorf("%s %s: %d %q, %s.go wants %d %q", c.test, rc.path, rec.Code, rec.Header().Get("Location"), c.test, rc.code, rc.location)
				}
			}
		})
	}
}
