package main

import (
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseTargets(t *testing.T) {
	ts, err := parseTargets("direct=127.0.0.1:1,haproxy=[::1]:2")
	require.NoError(t, err)
	require.Equal(t, []target{{"direct", "127.0.0.1:1"}, {"haproxy", "[::1]:2"}}, ts)
	for _, bad := range []string{"", "direct", "=127.0.0.1:1", "x=10.0.0.1:1", "x=example.com:1", "x=127.0.0.1"} {
		_, err := parseTargets(bad)
		require.Error(t, err, bad)
	}
}

// TestMove moves bytes straight to the sink and through a relay in this
// process, each counted whole by the sink.
func TestMove(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	read, err := sink(addr)
	require.NoError(t, err)
	mbs, err := move(addr, 4<<20, read)
	require.NoError(t, err)
	require.Greater(t, mbs, 0.0)

	relay, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer relay.Close()
	go func() {
		c, err := relay.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		up, err := net.Dial("tcp", addr)
		if err != nil {
			return
		}
		defer up.Close()
		_, _ = up.(*net.TCPConn).ReadFrom(c)
		_ = up.(*net.TCPConn).CloseWrite()
	}()
	_, err = move(relay.Addr().String(), 3<<20+1, read)
	require.ErrorContains(t, err, "the sink read 3211264 bytes of 3145729")
}

func TestMedian(t *testing.T) {
	require.Equal(t, 2.0, median([]float64{3, 1, 2}))
	require.Equal(t, 2.5, median([]float64{4, 1, 2, 3}))
}
