package main

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The HTTP listeners (plain and TLS) take a PROXY header from the first
// read, as nginx's ngx_http_wait_request_handler and
// ngx_http_ssl_handshake do: a header whose rest comes in a later segment,
// or a first read that is no header, is broken and the connection closed
// at once (nginx logs "broken header", and no request). A header that
// comes whole, the request after it in another segment, is served.
// Checked against nginx 1.22 on loopback.
func TestProxyProtocolHeaderInFirstRead(t *testing.T) {
	inst, cancel := startOfflineApp(t, namedBackend(t, "A"), func(c *config) { c.useProxyProtocol = true })
	defer func() {
		cancel()
		require.NoError(t, inst.Wait())
	}()
	v2 := proxyHeader(t, 2, "203.0.113.7:5555")
	for _, tc := range []struct {
		name   string
		parts  [][]byte
		served bool
	}{
		{"v1 whole", [][]byte{[]byte("PROXY TCP4 203.0.113.7 10.0.0.1 5555 80\r\n")}, true},
		{"v2 whole", [][]byte{v2}, true},
		{"v1 split in the addresses", [][]byte{[]byte("PROXY TCP4 203.0.113.7 "), []byte("10.0.0.1 5555 80\r\n")}, false},
		{"v1 split in the signature", [][]byte{[]byte("PROX"), []byte("Y TCP4 203.0.113.7 10.0.0.1 5555 80\r\n")}, false},
		{"v2 split after the fixed part", [][]byte{v2[:16], v2[16:]}, false},
		{"v2 split in the signature", [][]byte{v2[:5], v2[5:]}, false},
	} {
		for _, secure := range []bool{false, true} {
			addr := inst.HTTPAddr
			if secure {
				addr = inst.HTTPSAddr
			}
			c, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
			for i, p := range tc.parts {
				if i > 0 {
					time.Sleep(100 * time.Millisecond)
				}
				_, _ = c.Write(p)
			}
			began := time.Now()
			var conn net.Conn = c
			if secure {
				conn = tls.Client(c, &tls.Config{ServerName: "app.test", InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
			}
			_, werr := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: app.test\r\nConnection: close\r\n\r\n")
			var status int
			if werr == nil {
				if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err == nil {
					status = resp.StatusCode
					resp.Body.Close()
				}
			}
			if tc.served {
				assert.Equal(t, http.StatusOK, status, "%s secure %v", tc.name, secure)
			} else {
				assert.Zero(t, status, "%s secure %v: closed, not served", tc.name, secure)
				assert.Less(t, time.Since(began), 2*time.Second, "%s secure %v: closed at once", tc.name, secure)
			}
			c.Close()
		}
	}
}
