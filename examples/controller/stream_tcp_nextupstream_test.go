package main

import (
	"context"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router"
)

// proxy-stream-next-upstream-timeout bounds when a connection may go on
// to another endpoint, not a connect under way: nginx checks it only
// before passing the connection to the next server
// (ngx_stream_proxy_next_upstream), each try having the connect timeout.
// Here the only endpoint's accept queue is full for a moment, so the
// first SYN is dropped and the retransmitted one, a second later, is
// answered: the connection is made past a next-upstream timeout of
// 200 ms, within the connect timeout.
func TestStreamDialOutlivesNextUpstreamTimeout(t *testing.T) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Close(fd) })
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	require.NoError(t, syscall.Listen(fd, 0))
	sa, err := syscall.Getsockname(fd)
	require.NoError(t, err)
	addr := "127.0.0.1:" + strconv.Itoa(sa.(*syscall.SockaddrInet4).Port)
	queued := 0
	for range 4 {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			break
		}
		queued++
		t.Cleanup(func() { c.Close() })
	}
	if c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond); err == nil {
		c.Close()
		t.Skip("could not fill the accept queue")
	}
	// The queue empties while the dial waits for its SYN's retransmission.
	go func() {
		time.Sleep(300 * time.Millisecond)
		for range queued {
			if nfd, _, err := syscall.Accept(fd); err == nil {
				syscall.Close(nfd)
			}
		}
	}()

	bal := balance.NewRegistry().Balancer(balance.Config{ID: "tcp-default-echo-9000", Endpoints: []string{addr}})
	route := router.Stream{
		Settings: match.StreamSettings{ConnectTimeout: 10 * time.Second, NextUpstream: true, NextUpstreamTries: 3, NextUpstreamTimeout: 200 * time.Millisecond},
		Balancer: bal,
	}
	began := time.Now()
	conn, ep, err := dialStream(context.Background(), route, func(a string) string { return a })
	took := time.Since(began)
	require.NoError(t, err, "after %v", took)
	conn.Close()
	ep.Release()
	assert.Greater(t, took, 200*time.Millisecond, "the first SYN was answered: the test shows nothing")
}
