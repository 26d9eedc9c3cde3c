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

// TestUpgradeAnswerHeaders: a backend's 101 reaches the client with the
// headers nginx's header filters put on every answer, as they run on a 101
// too (ngx_http_upstream_send_response sends the head before the upgrade):
// the ConfigMap's add-headers (more_set_headers) and the request ID the
// router returns, in place of the backend's fields of the same names, as
// more_set_headers replaces them. The own path's 101 had only the session
// cookie and Server; ReverseProxy's had the router's beside the backend's.
func TestUpgradeAnswerHeaders(t *testing.T) {
	addr := upgradeBackend(t, "X-Edge: backend\r\nX-Backend: b\r\nX-Request-Id: backend")
	for _, tr := range proxyPaths() {
		t.Run(tr.name, func(t *testing.T) {
			r := newTestRouter(Options{Transport: tr.rt, ReturnRequestID: true, AddHeaders: http.Header{"X-Edge": {"e"}}})
			t.Cleanup(r.CloseIdleConnections)
			r.Publish(table("", vhost("shop.example.com", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
			front := httptest.NewServer(r)
			t.Cleanup(front.Close)
			c, err := net.Dial("tcp", front.Listener.Addr().String())
			require.NoError(t, err)
			defer c.Close()
			_, err = io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: shop.example.com\r\nX-Request-Id: abc\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
			require.NoError(t, err)
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			require.NoError(t, err)
			require.Equal(t, http.StatusSwitchingProtocols, res.StatusCode)
			assert.Equal(t, "b", res.Header.Get("X-Backend"))
			assert.Equal(t, []string{"e"}, res.Header.Values("X-Edge"))
			assert.Equal(t, []string{"abc"}, res.Header.Values("X-Request-Id"))
		})
	}
}
