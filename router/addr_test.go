package router

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"ramjet.dev/ramjet/match"
)

// TestMalformedHostRefused: a Host nginx refuses (ngx_http_validate_host:
// an empty label, no host before the port) answers 400 over HTTP/1, and an
// HTTP/2 :authority holding bytes net/http's HTTP/1 server refuses in a Host
// answers 400 as well, instead of reaching a backend as its Host.
func TestMalformedHostRefused(t *testing.T) {
	_, addr := echoBackend(t, "c")
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe})
	r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/c:80", addr)))))
	front := h1AndH2CServer(t, r)
	frontAddr := front.Listener.Addr().String()
	// The router's own answer: a backend behind net/http would refuse
	// such a Host itself, which must not be what answers.
	reason := func(t *testing.T) string {
		t.Helper()
		select {
		case rec := <-rs.ch:
			return rec.Reason
		case <-time.After(5 * time.Second):
			t.Fatal("no record")
			return ""
		}
	}
	wantReason := func(status int) string {
		if status == http.StatusOK {
			return ""
		}
		return ReasonBadHost
	}

	for _, tt := range []struct {
		host string
		want int
	}{
		{"h.test..", 400},
		{"h..test", 400},
		{"..", 400},
		{".", 400},
		{"::1", 400},
		{":80", 400},
		{"h.test..:80", 400},
		{"h.test", 200},
		{"h.test.", 200},
		{"h.test.:8080", 200},
		{"[::1]", 200},
		{"[::1]:80", 200},
		{"127.0.0.1:80", 200},
	} {
		t.Run("HTTP/1.1 "+tt.host, func(t *testing.T) {
			res := rawRequest(t, frontAddr, "GET /x HTTP/1.1\r\nHost: "+tt.host+"\r\nConnection: close\r\n\r\n")
			assert.Equal(t, tt.want, res.StatusCode)
			assert.Equal(t, wantReason(tt.want), reason(t))
		})
		t.Run("HTTP/2 "+tt.host, func(t *testing.T) {
			assert.Equal(t, tt.want, h2StatusAuthority(t, frontAddr, tt.host))
			assert.Equal(t, wantReason(tt.want), reason(t))
		})
	}
	// What net/http's HTTP/1 server already refuses in a Host. (Control
	// bytes other than TAB never get this far over HTTP/2: the stream is
	// reset.)
	for _, authority := range []string{"h.test/x", "h.test?x", "h.test#x", `h.test\x`, "h test", "h\ttest", "h.tést"} {
		t.Run("HTTP/2 "+authority, func(t *testing.T) {
			assert.Equal(t, http.StatusBadRequest, h2StatusAuthority(t, frontAddr, authority))
			assert.Equal(t, ReasonBadHost, reason(t))
		})
		t.Run("HTTP/1.1 "+authority, func(t *testing.T) {
			res := rawRequest(t, frontAddr, "GET /x HTTP/1.1\r\nHost: "+authority+"\r\nConnection: close\r\n\r\n")
			assert.Equal(t, http.StatusBadRequest, res.StatusCode, "net/http's server answers")
		})
	}
}
