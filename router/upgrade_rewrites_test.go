package router

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// TestUpgradeHeaderRewrites: a backend's 101 has its Location, Refresh
// and Set-Cookie rewritten by proxy-redirect-from/-to and
// proxy-cookie-domain/-path, as nginx 1.22 rewrites them on a 101 (its
// upstream copies every response head through proxy_redirect and
// proxy_cookie_* before it switches protocols), on both proxy paths, with
// or without the location's header edits. The own HTTP/1 path wrote the
// backend's fields as they came.
func TestUpgradeHeaderRewrites(t *testing.T) {
	addr := upgradeBackend(t, "Location: http://inner.svc:8080/next\r\n"+
		"Refresh: 3; url=http://inner.svc:8080/later\r\n"+
		"Set-Cookie: sid=1; Domain=inner.svc; Path=/v1/x\r\n"+
		"X-Backend: b")
	sn, err := match.NewSnippet(match.Snippet{Ops: []match.SnippetOp{{Kind: match.OpSetHeader, Name: "X-Custom", Value: "c", Literal: true}}})
	require.NoError(t, err)
	for _, tr := range proxyPaths() {
		for _, edits := range []bool{false, true} {
			name := tr.name
			if edits {
				name += " with header edits"
			}
			t.Run(name, func(t *testing.T) {
				r := newTestRouter(Options{Transport: tr.rt})
				t.Cleanup(r.CloseIdleConnections)
				rt := policyRoute("/", httpBackend("prod/web:80", addr), &match.Policy{Proxy: &match.Proxying{
					MaxTempFileSize: -1,
					Redirect:        &match.HeaderRewrite{From: "http://inner.svc:8080/", To: "/app/"},
					CookieDomain:    &match.HeaderRewrite{From: "inner.svc", To: "shop.example.com"},
					CookiePath:      &match.HeaderRewrite{From: "/v1/", To: "/app/"},
				}})
				if edits {
					rt.Snippet = sn
				}
				r.Publish(table("", vhost("shop.example.com", nil, rt)))
				front := httptest.NewServer(r)
				t.Cleanup(front.Close)
				c, err := net.Dial("tcp", front.Listener.Addr().String())
				require.NoError(t, err)
				defer c.Close()
				_, err = io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: shop.example.com\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
				require.NoError(t, err)
				res, err := http.ReadResponse(bufio.NewReader(c), nil)
				require.NoError(t, err)
				require.Equal(t, http.StatusSwitchingProtocols, res.StatusCode)
				assert.Equal(t, []string{"http://shop.example.com/app/next"}, res.Header.Values("Location"))
				assert.Equal(t, []string{"3; url=/app/later"}, res.Header.Values("Refresh"))
				assert.Equal(t, []string{"sid=1; Domain=shop.example.com; Path=/app/x"}, res.Header.Values("Set-Cookie"))
				assert.Equal(t, []string{"b"}, res.Header.Values("X-Backend"))
				if edits {
					assert.Equal(t, []string{"c"}, res.Header.Values("X-Custom"))
				}
				assert.Equal(t, "echo", res.Header.Get("Upgrade"))
			})
		}
	}
}
