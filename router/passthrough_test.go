package router

import (
	"crypto/tls"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tcpPair is a connected pair of loopback TCP connections.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	server = <-accepted
	require.NotNil(t, server)
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// PeekClientHello reads the SNI without consuming the ClientHello: the
// TLS server handed the replaying connection completes the handshake.
func TestPeekClientHello(t *testing.T) {
	client, server := tcpPair(t)
	cert := TestCert(t, "peek.example.com")
	done := make(chan error, 1)
	go func() {
		c := tls.Client(client, &tls.Config{ServerName: "Peek.Example.com", InsecureSkipVerify: true})
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		done <- c.Handshake()
	}()
	require.NoError(t, server.SetDeadline(time.Now().Add(5*time.Second)))
	name, replay, err := PeekClientHello(server)
	require.NoError(t, err)
	assert.Equal(t, "Peek.Example.com", name)
	assert.NotEmpty(t, replay.Peeked)
	s := tls.Server(replay, &tls.Config{Certificates: []tls.Certificate{*cert}})
	require.NoError(t, s.Handshake())
	require.NoError(t, <-done)

	// Not TLS: an error, and the bytes are still there to answer with.
	plainC, plainS := tcpPair(t)
	_, err = io.WriteString(plainC, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	require.NoError(t, plainS.SetDeadline(time.Now().Add(5*time.Second)))
	_, replay, err = PeekClientHello(plainS)
	require.Error(t, err)
	buf := make([]byte, 5)
	_, err = io.ReadFull(replay, buf)
	require.NoError(t, err)
	assert.Equal(t, "GET /", string(buf))
}

// Splice copies between TCP connections without an allocation per byte:
// 64 times the bytes cost no more allocations than a few.
func TestSpliceAllocationsDoNotGrowWithBytes(t *testing.T) {
	mallocs := func(n int) uint64 {
		client, front := tcpPair(t)
		back, backend := tcpPair(t)
		pc := &PeekedConn{Conn: front, Peeked: []byte("hello")}
		spliced := make(chan struct{})
		go func() { pc.Splice(back); close(spliced) }()
		// The backend echoes what it reads.
		go func() { _, _ = io.Copy(backend, backend); backend.Close() }()
		chunk := make([]byte, 64<<10)
		got := make([]byte, 64<<10)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		go func() {
			for range n {
				if _, err := client.Write(chunk); err != nil {
					return
				}
			}
			_ = client.(*net.TCPConn).CloseWrite()
		}()
		total := 0
		for {
			k, err := client.Read(got)
			total += k
			if err != nil {
				break
			}
		}
		runtime.ReadMemStats(&after)
		<-spliced
		require.Equal(t, 5+n*len(chunk), total)
		return after.Mallocs - before.Mallocs
	}
	small := mallocs(4)
	large := mallocs(256) // 16 MiB each way
	t.Logf("mallocs: %d for 256 KiB, %d for 16 MiB", small, large)
	assert.Less(t, large, small+200, "allocations grow with the bytes spliced: %d for 256 KiB, %d for 16 MiB", small, large)
}
