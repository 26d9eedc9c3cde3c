package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
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

// An HTTP/2 connection (router/h2's) serves as many streams, and then
// says GOAWAY, as nginx does since 1.19.7: its keepalive_requests counts
// streams, so that a client kept on one connection still moves on.
func TestKeepaliveRequestsHTTP2(t *testing.T) {
	cfg := config{manifests: t.TempDir(), httpAddr: "127.0.0.1:0", pollInterval: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inst, err := start(ctx, cfg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	var dials atomic.Int32
	tr := &http.Transport{Protocols: new(http.Protocols), DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	tr.Protocols.SetUnencryptedHTTP2(true)
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	for i := 1; i <= keepaliveRequests+1; i++ {
		res, err := client.Get("http://" + inst.HTTPAddr + "/")
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		require.Equal(t, 2, res.ProtoMajor)
		require.Equal(t, int32(1+i/(keepaliveRequests+1)), dials.Load(), "request %d", i)
	}
	cancel()
	require.NoError(t, inst.Wait())
}
