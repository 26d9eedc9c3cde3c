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

// With more tries than endpoints, a connection whose dials fail goes
// round the endpoints again: ingress-nginx's stream balancer
// (tcp_udp_balancer.lua) takes the round-robin's next peer at every try,
// tried or not, and adds one try each time (set_more_tries(1)), so that
// only proxy-stream-next-upstream-tries ends the tries: two endpoints and
// 3 tries dial a, b, a; one endpoint, it three times.
func TestStreamDialRetriesRoundTheEndpoints(t *testing.T) {
	a := "127.0.0.1:" + strconv.Itoa(streamPort(t, "tcp"))
	b := "127.0.0.1:" + strconv.Itoa(streamPort(t, "tcp"))
	for _, tt := range []struct {
		endpoints []string
		tries     int
		want      int
	}{
		{[]string{a, b}, 3, 3},
		{[]string{a}, 3, 3},
		{[]string{a, b}, 5, 5},
		{[]string{a, b}, 1, 1},
	} {
		reg := balance.NewRegistry()
		bal := reg.Balancer(balance.Config{ID: "tcp-default-echo-9000", Endpoints: tt.endpoints})
		route := router.Stream{
			Settings: match.StreamSettings{ConnectTimeout: time.Second, NextUpstream: true, NextUpstreamTries: tt.tries, NextUpstreamTimeout: 10 * time.Second},
			Balancer: bal,
		}
		var dialed []string
		_, _, err := dialStream(context.Background(), route, func(addr string) string { dialed = append(dialed, addr); return addr })
		require.Error(t, err)
		require.Len(t, dialed, tt.want, "%d endpoints, %d tries: %v", len(tt.endpoints), tt.tries, dialed)
		for i := 1; i < len(dialed) && len(tt.endpoints) > 1; i++ {
			assert.NotEqual(t, dialed[i-1], dialed[i], "round-robin: %v", dialed)
		}
		if len(tt.endpoints) == 2 && len(dialed) >= 3 {
			assert.Equal(t, dialed[0], dialed[2], "a, b, a: %v", dialed)
		}
		assert.Zero(t, reg.InFlight(a)+reg.InFlight(b), "every failed dial is released")
	}
}

// proxy-stream-next-upstream-tries 0 is no limit: the tries go on, round
// the endpoints, until proxy-stream-next-upstream-timeout.
func TestStreamDialNoTriesLimitUntilTimeout(t *testing.T) {
	a := "127.0.0.1:" + strconv.Itoa(streamPort(t, "tcp"))
	b := "127.0.0.1:" + strconv.Itoa(streamPort(t, "tcp"))
	bal := balance.NewRegistry().Balancer(balance.Config{ID: "tcp-default-echo-9000", Endpoints: []string{a, b}})
	route := router.Stream{
		Settings: match.StreamSettings{ConnectTimeout: time.Second, NextUpstream: true, NextUpstreamTries: 0, NextUpstreamTimeout: 100 * time.Millisecond},
		Balancer: bal,
	}
	dialed := 0
	began := time.Now()
	_, _, err := dialStream(context.Background(), route, func(addr string) string { dialed++; return addr })
	require.Error(t, err)
	assert.Greater(t, dialed, 2, "more tries than endpoints")
	assert.GreaterOrEqual(t, time.Since(began), 100*time.Millisecond, "until the timeout")
}
