package main

import (
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// blackhole is a loopback port whose SYNs go unanswered: a listening
// socket with the smallest backlog, never accepted from, its queue filled.
func blackhole(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Close(fd) })
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	require.NoError(t, syscall.Listen(fd, 0))
	sa, err := syscall.Getsockname(fd)
	require.NoError(t, err)
	port := sa.(*syscall.SockaddrInet4).Port
	addr := "127.0.0.1:" + strconv.Itoa(port)
	// Fill the accept queue; later SYNs are dropped.
	for range 4 {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			break
		}
		t.Cleanup(func() { c.Close() })
	}
	c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
	if err == nil {
		c.Close()
		t.Skip("could not make a port that drops SYNs")
	}
	return strconv.Itoa(port)
}

// On shutdown, a TCP connection whose endpoint is still being dialled is
// closed when the shutdown timeout runs out, like every other, its dial
// stopped: Shutdown returns then, however long the connect timeout (60 s
// a try) would have let the dial wait on an endpoint that drops SYNs.
func TestStreamShutdownDuringDial(t *testing.T) {
	// The control: a spliced connection that outlives the timeout is
	// closed and the instance stops at once.
	b := startTCPBackend(t, "b", false)
	p0 := streamPort(t, "tcp")
	inst0, cancel0, _ := startStreams(t, streamManifests(map[int]string{p0: "default/echo:9000"}, nil, []string{b.port()}, "", ""), func(c *config) {
		c.shutdownTimeout = 300 * time.Millisecond
	})
	c0, _, _ := dialLine(t, inst0.streams.Addrs()["tcp/"+strconv.Itoa(p0)])
	defer c0.Close()
	cancel0()
	waited[inst0] = true
	began0 := time.Now()
	require.Error(t, inst0.Wait())
	t.Logf("control stopped after %v", time.Since(began0))

	hole := blackhole(t)
	p := streamPort(t, "tcp")
	inst, cancel, _ := startStreams(t, streamManifests(map[int]string{p: "default/echo:9000"}, nil, []string{hole}, "", ""), func(c *config) {
		c.shutdownTimeout = 300 * time.Millisecond
	})
	c, err := net.Dial("tcp", inst.streams.Addrs()["tcp/"+strconv.Itoa(p)])
	require.NoError(t, err)
	defer c.Close()
	time.Sleep(200 * time.Millisecond) // serve is dialling now
	cancel()
	waited[inst] = true // the cleanup would wait as long
	done := make(chan error, 1)
	began := time.Now()
	go func() { done <- inst.Wait() }()
	select {
	case err := <-done:
		t.Logf("stopped after %v: %v", time.Since(began), err)
	case <-time.After(3 * time.Second):
		t.Fatalf("the instance had not stopped %v after its shutdown timeout of 300ms ran out: a connection still dialling its endpoint holds Shutdown", time.Since(began))
	}
}
