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

	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/router/h2"
)

// TestHTTP1Server: -http1-server picks who serves HTTP/1 on the traffic
// listeners (the debug listener is net/http's either way); the loop keeps
// each listener's http.Server, with its timeouts, for the HTTP/2 it hands
// over.
func TestHTTP1Server(t *testing.T) {
	rt := router.New(router.Options{Logger: slog.New(slog.DiscardHandler)})
	for _, tc := range []struct {
		value string
		loops int
	}{{"", 2}, {http1Ramjet, 2}, {http1NetHTTP, 0}} {
		l, err := listen(config{httpAddr: "127.0.0.1:0", httpsAddr: "127.0.0.1:0", debugAddr: "127.0.0.1:0", http1Server: tc.value},
			rt, http.NotFoundHandler(), new(atomic.Bool), slog.New(slog.DiscardHandler))
		require.NoError(t, err, tc.value)
		assert.Len(t, l.loops, tc.loops, tc.value)
		assert.Len(t, l.servers, 3, tc.value)
		for i, loop := range l.loops {
			assert.Same(t, l.servers[i], loop.Fallback)
			assert.Equal(t, l.servers[i].ReadHeaderTimeout, loop.ReadHeaderTimeout)
			assert.Equal(t, l.servers[i].IdleTimeout, loop.IdleTimeout)
		}
		l.close()
	}
	_, err := listen(config{httpAddr: "127.0.0.1:0", http1Server: "nginx"}, rt, http.NotFoundHandler(), new(atomic.Bool), slog.New(slog.DiscardHandler))
	require.ErrorContains(t, err, "-http1-server")
}

// TestHTTP1ServerFraming: under either server, a request with both
// Content-Length and Transfer-Encoding answers 400 and closes (the loop
// refuses it itself, net/http through h1.GuardFraming), and a plain
// request is answered.
func TestHTTP1ServerFraming(t *testing.T) {
	for _, value := range []string{http1Ramjet, http1NetHTTP} {
		cfg := config{manifests: t.TempDir(), httpAddr: "127.0.0.1:0", pollInterval: time.Hour, http1Server: value}
		ctx, cancel := context.WithCancel(context.Background())
		inst, err := start(ctx, cfg, slog.New(slog.DiscardHandler))
		require.NoError(t, err)
		c, err := net.Dial("tcp", inst.HTTPAddr)
		require.NoError(t, err)
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(c)
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n")
		res, err := http.ReadResponse(br, nil)
		require.NoError(t, err, value)
		io.Copy(io.Discard, res.Body)
		assert.False(t, res.Close, value)
		io.WriteString(c, "POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
		res, err = http.ReadResponse(br, nil)
		require.NoError(t, err, value)
		assert.Equal(t, http.StatusBadRequest, res.StatusCode, value)
		assert.True(t, res.Close, value)
		c.Close()
		cancel()
		require.NoError(t, inst.Wait())
	}
}

// TestHTTP2Server: -http2-server picks who serves the HTTP/2 the loop
// hands over: router/h2 by default (with the listener's timeouts and
// header bound), net/http's server when asked, and nothing of the loop's
// under -http1-server net/http.
func TestHTTP2Server(t *testing.T) {
	rt := router.New(router.Options{Logger: slog.New(slog.DiscardHandler)})
	for _, tc := range []struct {
		h1, h2 string
		own    bool
	}{{"", "", true}, {"", http1Ramjet, true}, {"", http1NetHTTP, false}, {http1NetHTTP, http1Ramjet, false}} {
		l, err := listen(config{httpAddr: "127.0.0.1:0", httpsAddr: "127.0.0.1:0", http1Server: tc.h1, http2Server: tc.h2},
			rt, http.NotFoundHandler(), new(atomic.Bool), slog.New(slog.DiscardHandler))
		require.NoError(t, err, tc)
		for i, loop := range l.loops {
			if !tc.own {
				assert.Nil(t, loop.HTTP2, tc)
				continue
			}
			s, ok := loop.HTTP2.(*h2.Server)
			require.True(t, ok, tc)
			assert.Equal(t, l.servers[i].IdleTimeout, s.IdleTimeout)
			assert.Equal(t, l.servers[i].ReadHeaderTimeout, s.ReadHeaderTimeout)
			assert.Equal(t, l.servers[i].MaxHeaderBytes, s.MaxHeaderBytes)
		}
		if !tc.own && tc.h1 == "" {
			assert.Len(t, l.loops, 2)
		}
		l.close()
	}
	_, err := listen(config{httpAddr: "127.0.0.1:0", http2Server: "nginx"}, rt, http.NotFoundHandler(), new(atomic.Bool), slog.New(slog.DiscardHandler))
	require.ErrorContains(t, err, "-http2-server")
}
