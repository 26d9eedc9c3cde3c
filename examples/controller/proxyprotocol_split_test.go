package main

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/pires/go-proxyproto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The HTTP listeners take a PROXY header from the first read, as nginx's
// ngx_http_wait_request_handler and ngx_http_ssl_handshake do: a header
// whose rest comes in a later read is broken, and so is a first read that
// is no header where one is required; a header that came whole is read
// and what follows it is the request's.
func TestFirstReadConnProxyHeader(t *testing.T) {
	v1 := []byte("PROXY TCP4 203.0.113.7 10.0.0.1 5555 80\r\n")
	v2 := proxyHeader(t, 2, "203.0.113.7:5555")
	for _, tc := range []struct {
		name    string
		chunks  [][]byte
		require bool
		ok      bool
	}{
		{"v1 whole", [][]byte{v1, []byte("GET")}, true, true},
		{"v1 whole, the request in the same read", [][]byte{append(append([]byte(nil), v1...), "GET"...)}, true, true},
		{"v2 whole", [][]byte{v2, []byte("GET")}, true, true},
		{"v1 cut in the signature", [][]byte{v1[:3], v1[3:]}, true, false},
		{"v1 cut in the addresses", [][]byte{v1[:20], v1[20:]}, true, false},
		{"v1 cut before LF", [][]byte{v1[:len(v1)-1], v1[len(v1)-1:]}, true, false},
		{"v2 cut in the signature", [][]byte{v2[:5], v2[5:]}, true, false},
		{"v2 cut after the fixed part", [][]byte{v2[:16], v2[16:]}, true, false},
		{"no header where one is required", [][]byte{[]byte("GET / HTTP/1.1\r\n")}, true, false},
		{"untrusted peer: cut header", [][]byte{v1[:20], v1[20:]}, false, false},
		{"untrusted peer: no header", [][]byte{[]byte("G"), []byte("ET")}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := &firstReadConn{Conn: &chunkConn{chunks: tc.chunks}, require: tc.require}
			policy := proxyproto.REQUIRE
			if !tc.require {
				policy = proxyproto.IGNORE
			}
			pc := proxyproto.NewConn(fc, proxyproto.WithPolicy(policy))
			b := make([]byte, 3)
			_, err := io.ReadFull(pc, b)
			if !tc.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "GET", string(b))
		})
	}
}

// On the listeners (plain and TLS), a header that never completes closes
// the connection at once, with no request, as nginx logs "broken header"
// and closes, where waiting for the rest held it for the header timeout;
// a whole header, the request after it in another segment, is served.
// Checked against nginx 1.22 on loopback.
func TestProxyProtocolBrokenHeaderClosesAtOnce(t *testing.T) {
	inst, cancel := startOfflineApp(t, namedBackend(t, "A"), func(c *config) { c.useProxyProtocol = true })
	defer func() {
		cancel()
		require.NoError(t, inst.Wait())
	}()
	v2 := proxyHeader(t, 2, "203.0.113.7:5555")
	for _, tc := range []struct {
		name   string
		header []byte
		served bool
	}{
		{"v1 whole", []byte("PROXY TCP4 203.0.113.7 10.0.0.1 5555 80\r\n"), true},
		{"v2 whole", v2, true},
		{"v1 cut in the addresses", []byte("PROXY TCP4 203.0.113.7 "), false},
		{"v1 cut in the signature", []byte("PROX"), false},
		{"v2 cut after the fixed part", v2[:16], false},
	} {
		for _, secure := range []bool{false, true} {
			addr := inst.HTTPAddr
			if secure {
				addr = inst.HTTPSAddr
			}
			c, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
			_, err = c.Write(tc.header)
			require.NoError(t, err)
			began := time.Now()
			if !tc.served {
				_, err = c.Read(make([]byte, 1))
				assert.ErrorIs(t, err, io.EOF, "%s secure %v: closed, not served", tc.name, secure)
				assert.Less(t, time.Since(began), 2*time.Second, "%s secure %v: closed at once", tc.name, secure)
				c.Close()
				continue
			}
			time.Sleep(50 * time.Millisecond)
			var conn net.Conn = c
			if secure {
				conn = tls.Client(c, &tls.Config{ServerName: "app.test", InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
			}
			_, err = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: app.test\r\nConnection: close\r\n\r\n")
			require.NoError(t, err)
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err, "%s secure %v", tc.name, secure)
			resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode, "%s secure %v", tc.name, secure)
			c.Close()
		}
	}
}
