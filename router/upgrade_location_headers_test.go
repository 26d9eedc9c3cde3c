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

// TestUpgradeLocationHeaders: a backend's 101 carries the location's
// response header edits as nginx's header filters make them on a 101
// (ngx_http_upstream_upgrade sends the head through them): custom-headers
// and a configuration-snippet's more_set_headers replace the backend's
// field of the same name, more_clear_headers removes one, add_header
// applies only with "always" (1xx is not among its statuses), and the
// CORS headers, which ingress-nginx sets with more_set_headers, are there.
// Both proxy paths wrote the 101 without any of them.
func TestUpgradeLocationHeaders(t *testing.T) {
	addr := upgradeBackend(t, "X-Custom: backend\r\nX-Secret: s\r\nX-Backend: b")
	sn, err := match.NewSnippet(match.Snippet{Ops: []match.SnippetOp{
		{Kind: match.OpSetHeader, Name: "X-Custom", Value: "c$1", Literal: true},
		{Kind: match.OpClearHeader, Name: "X-Secret"},
		{Kind: match.OpAddHeader, Name: "X-Added", Value: "no"},
		{Kind: match.OpAddHeader, Name: "X-Always", Value: "yes", Always: true},
	}})
	require.NoError(t, err)
	for _, tr := range proxyPaths() {
		t.Run(tr.name, func(t *testing.T) {
			r := newTestRouter(Options{Transport: tr.rt, AddHeaders: http.Header{"X-Edge": {"e"}}})
			t.Cleanup(r.CloseIdleConnections)
			rt := route(match.Prefix, "/", httpBackend("prod/web:80", addr))
			rt.Snippet = sn
			rt.CORS = match.NewCORS(match.CORS{Origins: []string{"https://a.example"}, Methods: "GET", Headers: "X-A", MaxAge: 60})
			r.Publish(table("", vhost("shop.example.com", nil, rt)))
			front := httptest.NewServer(r)
			t.Cleanup(front.Close)
			c, err := net.Dial("tcp", front.Listener.Addr().String())
			require.NoError(t, err)
			defer c.Close()
			_, err = io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: shop.example.com\r\nOrigin: https://a.example\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
			require.NoError(t, err)
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			require.NoError(t, err)
			require.Equal(t, http.StatusSwitchingProtocols, res.StatusCode)
			assert.Equal(t, []string{"c$1"}, res.Header.Values("X-Custom"), "custom-headers over the backend's")
			assert.Empty(t, res.Header.Values("X-Secret"), "more_clear_headers")
			assert.Empty(t, res.Header.Values("X-Added"), "add_header without always")
			assert.Equal(t, []string{"yes"}, res.Header.Values("X-Always"))
			assert.Equal(t, []string{"https://a.example"}, res.Header.Values("Access-Control-Allow-Origin"))
			assert.Equal(t, []string{"b"}, res.Header.Values("X-Backend"))
			assert.Equal(t, []string{"e"}, res.Header.Values("X-Edge"))
			assert.Equal(t, "echo", res.Header.Get("Upgrade"))
			assert.Len(t, res.Header.Values("Date"), 1)
		})
	}
}

// TestUpgradeLocationHeadersServer: with location header edits on a 101,
// the answer still carries one Server: the router's, or the backend's
// with allow-backend-server-header (proxy_pass_header Server).
func TestUpgradeLocationHeadersServer(t *testing.T) {
	addr := upgradeBackend(t, "Server: backend/1.0")
	sn, err := match.NewSnippet(match.Snippet{Ops: []match.SnippetOp{{Kind: match.OpSetHeader, Name: "X-Custom", Value: "c", Literal: true}}})
	require.NoError(t, err)
	for _, tr := range proxyPaths() {
		t.Run(tr.name, func(t *testing.T) {
			for _, pass := range []bool{false, true} {
				r := newTestRouter(Options{Transport: tr.rt, ServerTokens: "ramjet", BackendServerHeader: pass})
				t.Cleanup(r.CloseIdleConnections)
				rt := route(match.Prefix, "/", httpBackend("prod/web:80", addr))
				rt.Snippet = sn
				r.Publish(table("", vhost("shop.example.com", nil, rt)))
				want := []string{"ramjet"}
				if pass {
					want = []string{"backend/1.0"}
				}
				assert.Equal(t, want, upgradeServer(t, r), "allow-backend-server-header %v", pass)
			}
		})
	}
}
