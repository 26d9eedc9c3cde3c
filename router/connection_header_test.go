package router

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"

	"ramjet.dev/ramjet/match"
)

// connection-proxy-header replaces nginx's "Connection $connection_upgrade"
// with its value: the backend gets Connection: close (or keep-alive) on
// every request, an Upgrade's included (which the backend then need not
// honour); without it a plain request carries no Connection field and an
// Upgrade carries "Upgrade".
func TestConnectionProxyHeader(t *testing.T) {
	got := make(chan string, 8)
	addr := rawServer(t, func(c net.Conn) {
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		got <- req.URL.Path + " " + req.Header.Get("Connection") + " " + req.Header.Get("Upgrade")
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n")
	})
	be := httpBackend("prod/web:80", addr)
	r := newTestRouter(Options{})
	t.Cleanup(r.CloseIdleConnections)
	r.Publish(table("conn", vhost("web", nil,
		policyRoute("/close", be, &match.Policy{Proxy: &match.Proxying{MaxTempFileSize: -1, Connection: "close"}}),
		policyRoute("/keep", be, &match.Policy{Proxy: &match.Proxying{MaxTempFileSize: -1, Connection: "keep-alive", HTTP10: true}}),
		route(match.Prefix, "/plain", be),
	)))
	for _, tc := range []struct {
		path    string
		upgrade bool
		want    string
	}{
		{"/close", false, "/close close "},
		{"/close", true, "/close close websocket"},
		{"/keep", false, "/keep keep-alive "},
		{"/plain", false, "/plain  "},
		{"/plain", true, "/plain Upgrade websocket"},
	} {
		h := http.Header{}
		if tc.upgrade {
			h.Set("Connection", "Upgrade")
			h.Set("Upgrade", "websocket")
		}
		res := serve(r, http.MethodGet, "web", tc.path, h)
		res.Body.Close()
		assert.Equal(t, tc.want, <-got, "%s upgrade=%v", tc.path, tc.upgrade)
	}
}

// Through net/http's transport (Options.Transport set) the value is sent
// too.
func TestConnectionProxyHeaderNetHTTP(t *testing.T) {
	got := make(chan string, 1)
	s := h1AndH2CServer(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		got <- req.Header.Get("Connection") + " " + strconv.FormatBool(req.Close)
	}))
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	r := newTestRouter(Options{Transport: tr})
	r.Publish(table("conn", vhost("web", nil,
		policyRoute("/", httpBackend("prod/web:80", s.Listener.Addr().String()), &match.Policy{Proxy: &match.Proxying{MaxTempFileSize: -1, Connection: "close"}}))))
	res := serve(r, http.MethodGet, "web", "/", nil)
	res.Body.Close()
	assert.Equal(t, "close true", <-got)
}
