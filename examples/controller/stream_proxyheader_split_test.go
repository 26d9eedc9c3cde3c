package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chunkConn is a connection whose reads return one chunk each, as
// segments that arrive apart.
type chunkConn struct {
	bytesConn
	chunks [][]byte
}

func (c *chunkConn) Read(p []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	if c.chunks[0] = c.chunks[0][n:]; len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	return n, nil
}

// A client's PROXY header is taken from what the first read brings, as
// nginx's stream module reads it (one recv of up to 4096 bytes when the
// connection becomes readable, ngx_stream_proxy_protocol_handler): a
// header whose rest comes in a later segment is broken, the connection
// closed as a bad request, not waited for.
func TestReadProxyHeaderOneRead(t *testing.T) {
	v1 := []byte("PROXY TCP4 203.0.113.7 192.0.2.1 4444 80\r\n")
	v2 := proxyV2(0x21, 0x11, []byte{203, 0, 113, 7, 192, 0, 2, 1, 0x11, 0x5c, 0, 80})
	for _, tc := range []struct {
		name   string
		header []byte
		at     int
	}{
		{"v1 cut in the signature", v1, 3},
		{"v1 cut in the addresses", v1, 20},
		{"v1 cut before LF", v1, len(v1) - 1},
		{"v2 cut in the signature", v2, 5},
		{"v2 cut after the fixed part", v2, 16},
		{"v2 cut in the addresses", v2, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &chunkConn{chunks: [][]byte{tc.header[:tc.at], append(append([]byte(nil), tc.header[tc.at:]...), "data"...)}}
			_, _, err := readProxyHeader(c, time.Second)
			require.Error(t, err)
			var ne net.Error
			assert.False(t, errors.As(err, &ne), "a broken header, not a timeout: %v", err)
		})
	}
	// Whole in the first read, the header is read and what follows kept.
	c := &chunkConn{chunks: [][]byte{append(append([]byte(nil), v1...), "da"...), []byte("ta")}}
	src, rest, err := readProxyHeader(c, time.Second)
	require.NoError(t, err)
	assert.Equal(t, "203.0.113.7:4444", src.String())
	assert.Equal(t, "da", string(rest))
}

// A PROXY header that starts and never completes closes the connection
// at once with 400 in the stream access log, as nginx's broken header
// does, not after proxy_protocol_timeout (which only bounds the wait for
// the first byte, and is logged 200).
func TestStreamProxyHeaderIncompleteClosesAtOnce(t *testing.T) {
	live := startTCPBackend(t, "live", false)
	p := streamPort(t, "tcp")
	var out syncBuffer
	inst, _, _ := startStreams(t, streamManifests(map[int]string{p: "default/echo:9000:PROXY"}, nil, []string{live.port()}, "", ""), func(c *config) {
		c.enableAccessLog, c.accessLogOut = true, &out
	})
	addr := inst.streams.Addrs()["tcp/"+strconv.Itoa(p)]
	for i, part := range [][]byte{
		[]byte("PROXY TCP4 203.0.1"),
		proxyV2(0x21, 0x11, []byte{203, 0, 113, 7, 192, 0, 2, 1, 0x11, 0x5c, 0, 80})[:20],
	} {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		_, err = c.Write(part)
		require.NoError(t, err)
		began := time.Now()
		require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
		n, err := c.Read(make([]byte, 64))
		assert.Zero(t, n)
		assert.Error(t, err, "closed")
		assert.Less(t, time.Since(began), 5*time.Second, "closed at once, not at the header timeout")
		c.Close()
		line := regexp.MustCompile(`(?m)^\[127\.0\.0\.1\] \S+ \S+\] TCP 400 0 0 `)
		require.Eventually(t, func() bool { return len(line.FindAllString(out.String(), -1)) == i+1 }, 5*time.Second, 10*time.Millisecond, "%d 400 lines in:\n%s", i+1, out.String())
	}
	assert.Zero(t, bytes.Count([]byte(out.String()), []byte(" 200 ")), out.String())
	live.mu.Lock()
	defer live.mu.Unlock()
	assert.Zero(t, live.conns, "no endpoint dialled")
}
