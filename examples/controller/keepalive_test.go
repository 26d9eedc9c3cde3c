package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An HTTP/1 connection serves ingress-nginx's keep-alive-requests, 1000
// requests, and closes with the last one's response, as nginx's
// keepalive_requests closes it.
func TestKeepaliveRequests(t *testing.T) {
	cfg := config{manifests: t.TempDir(), httpAddr: "127.0.0.1:0", pollInterval: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inst, err := start(ctx, cfg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	c, err := net.Dial("tcp", inst.HTTPAddr)
	require.NoError(t, err)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(c)
	for i := 1; i <= keepaliveRequests; i++ {
		_, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n")
		require.NoError(t, err)
		res, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		require.Equal(t, i == keepaliveRequests, res.Close, "request %d", i)
	}
	_, err = br.ReadByte()
	assert.Equal(t, io.EOF, err)
	cancel()
	require.NoError(t, inst.Wait())
}
