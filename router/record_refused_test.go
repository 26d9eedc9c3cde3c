package router

import (
	"io"
	"log"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/h1"
)

// TestRecordRefusedByServer: a request router/h1's server refuses before the
// router sees it reaches the Observer through Router.Refused, as nginx
// logs it from no location: its status, the request line, the client and
// the answer's size.
func TestRecordRefusedByServer(t *testing.T) {
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe})
	r.Publish(table("rf", vhost("shop.example.com", nil, route(match.Prefix, "/", httpBackend("prod/api:80", "127.0.0.1:1")))))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	own := &h1.Server{Handler: r, ErrorLog: log.New(io.Discard, "", 0), Refused: r.Refused}
	go func() { _ = own.Serve(ln) }()
	t.Cleanup(func() { _ = own.Close() })

	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "GET /a?b HTTP/1.1\r\nHost: Shop.Example.com.\r\nHost: b\r\nUser-Agent: t\r\n\r\n")
	require.NoError(t, err)
	raw, err := io.ReadAll(c)
	require.NoError(t, err)
	var rec Record
	select {
	case <-rs.ch:
		rs.mu.Lock()
		rec = rs.raw[len(rs.raw)-1]
		rs.mu.Unlock()
	case <-time.After(5 * time.Second):
		t.Fatal("no record")
	}
	assert.Equal(t, 400, rec.Status)
	assert.Equal(t, ReasonRefused, rec.Reason)
	assert.Equal(t, "GET /a?b HTTP/1.1", rec.RequestLine)
	assert.Equal(t, "GET", rec.Method)
	assert.Equal(t, "/a?b", rec.Path)
	assert.Equal(t, "shop.example.com", rec.Host)
	assert.Equal(t, "127.0.0.1", rec.ClientAddr)
	assert.Equal(t, uint64(1), rec.Generation)
	assert.Equal(t, int64(len(raw)), rec.HeaderBytes+rec.BytesOut)
	require.NotNil(t, rec.Request)
	assert.Equal(t, "HTTP/1.1", rec.Request.Proto)
	assert.Zero(t, rec.Tries)
}
