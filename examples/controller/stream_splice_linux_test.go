package main

import (
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Each direction bounds the bytes queued unsent in the socket it writes
// to (TCP_NOTSENT_LOWAT): the client's and the backend's.
func TestSpliceBoundsUnsentBytes(t *testing.T) {
	in, client := tcpPair(t)   // the writer's end, the proxy's client side
	backend, out := tcpPair(t) // the proxy's backend side, the reader's end
	done := make(chan error, 1)
	go func() { done <- splice(client, backend, time.Minute, noCount, noCount) }()
	// A byte each way: both directions' movers are set up.
	b := make([]byte, 1)
	_, err := in.Write([]byte{1})
	require.NoError(t, err)
	_, err = io.ReadFull(out, b)
	require.NoError(t, err)
	_, err = out.Write([]byte{2})
	require.NoError(t, err)
	_, err = io.ReadFull(in, b)
	require.NoError(t, err)
	for name, c := range map[string]*net.TCPConn{"client": client, "backend": backend} {
		require.Equal(t, spliceNotsentLowat, notsentLowat(t, c), name)
	}
	require.NoError(t, in.CloseWrite())
	require.NoError(t, out.CloseWrite())
	require.NoError(t, <-done)
}

func notsentLowat(t *testing.T, c *net.TCPConn) int {
	rc, err := c.SyscallConn()
	require.NoError(t, err)
	var v int
	var gerr error
	require.NoError(t, rc.Control(func(fd uintptr) {
		v, gerr = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpNotsentLowat)
	}))
	require.NoError(t, gerr)
	return v
}

// A direction whose pipe is two pages, all a user over
// fs.pipe-user-pages-soft gets (a non-root controller past 32 connections
// of 1 MiB pipes), copies through user space instead: such a splice cost
// three times the CPU per byte. A full-size pipe splices.
func TestSpliceSmallPipeCopies(t *testing.T) {
	in, client := tcpPair(t)
	backend, out := tcpPair(t)
	for size, want := range map[int]mover{8 << 10: &copier{}, spliceMove: &splicer{}} {
		p, err := newKernelPipe(size)
		require.NoError(t, err)
		mv, err := moverWith(backend, client, p)
		require.NoError(t, err)
		require.IsType(t, want, mv, "a pipe of %d bytes", size)
		mv.close()
	}
	// The copy moves the bytes.
	p, err := newKernelPipe(8 << 10)
	require.NoError(t, err)
	mv, err := moverWith(backend, client, p)
	require.NoError(t, err)
	defer mv.close()
	pp := &pipe{idle: time.Minute}
	pp.last.Store(time.Now().UnixNano())
	done := make(chan error, 1)
	go func() { done <- pp.move(mv, backend, client, noCount) }()
	_, err = in.Write([]byte("hello"))
	require.NoError(t, err)
	require.NoError(t, in.CloseWrite())
	got, err := io.ReadAll(out)
	require.NoError(t, err)
	require.Equal(t, "hello", string(got))
	require.NoError(t, <-done)
}

// TestSpliceWithoutPipeCopies: when no pipe can be made (pipe2 fails for
// want of file descriptors), the direction copies through user space;
// the connection was closed.
func TestSpliceWithoutPipeCopies(t *testing.T) {
	in, client := tcpPair(t)
	backend, out := tcpPair(t)
	// The pipe fails as pipe2 does then. Not through the shared pool: a
	// pipe another test's connection puts back, or one left in another
	// P's slot of the sync.Pool, would be taken first.
	noPipe := func() (*kernelPipe, error) { return nil, syscall.EMFILE }
	mv, err := moverFrom(backend, client, noPipe)
	require.NoError(t, err)
	require.IsType(t, &copier{}, mv)
	defer mv.close()
	pp := &pipe{idle: time.Minute}
	pp.last.Store(time.Now().UnixNano())
	done := make(chan error, 1)
	go func() { done <- pp.move(mv, backend, client, noCount) }()
	_, err = in.Write([]byte("hello"))
	require.NoError(t, err)
	require.NoError(t, in.CloseWrite())
	got, err := io.ReadAll(out)
	require.NoError(t, err)
	require.Equal(t, "hello", string(got))
	require.NoError(t, <-done)
}
