package main

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/pires/go-proxyproto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/router"
)

// proxyHeader is a PROXY protocol header of the given version (1 or 2)
// for a connection from client to 10.0.0.1:80; nil for none.
func proxyHeader(t testing.TB, version byte, client string) []byte {
	t.Helper()
	if version == 0 {
		return nil
	}
	src := net.TCPAddrFromAddrPort(netip.MustParseAddrPort(client))
	dst := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 80}
	if src.IP.To4() == nil {
		dst = &net.TCPAddr{IP: net.ParseIP("2001:db8::80"), Port: 80}
	}
	b, err := proxyproto.HeaderProxyFromAddrs(version, src, dst).Format()
	require.NoError(t, err)
	return b
}

// sendWithHeader opens a connection to addr, writes header and one GET, and
// returns the response body, or "" when the connection was refused its
// request.
func sendWithHeader(t testing.TB, addr string, header []byte) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(5*time.Second)))
	_, err = conn.Write(append(header, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"...))
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(body)
}

func TestProxyProtocolListener(t *testing.T) {
	tests := []struct {
		name    string
		trusted string // -proxy-real-ip-cidr; the test's peer is 127.0.0.1
		version byte   // 0: no header
		client  string
		want    string // the RemoteAddr's address the server sees; "" refused
	}{
		{name: "no CIDR: v1 header believed", version: 1, client: "203.0.113.7:5555", want: "203.0.113.7"},
		{name: "no CIDR: v2 header believed", version: 2, client: "203.0.113.8:5555", want: "203.0.113.8"},
		{name: "no CIDR: v2 IPv6", version: 2, client: "[2001:db8::7]:5555", want: "2001:db8::7"},
		{name: "no CIDR: a connection without a header is refused", version: 0, want: ""},
		{name: "trusted peer: header believed", trusted: "127.0.0.0/8", version: 2, client: "203.0.113.9:1", want: "203.0.113.9"},
		{name: "trusted peer: a header is required", trusted: "127.0.0.0/8", version: 0, want: ""},
		{name: "untrusted peer: its header is dropped", trusted: "10.0.0.0/8", version: 1, client: "203.0.113.10:1", want: "127.0.0.1"},
		{name: "untrusted peer without a header: served as itself", trusted: "10.0.0.0/8", version: 0, want: "127.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			trusted, err := parseCIDRs(tt.trusted)
			require.NoError(t, err)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ap := netip.MustParseAddrPort(r.RemoteAddr)
				fmt.Fprint(w, ap.Addr())
			})}
			go srv.Serve(proxyProtocolListener(ln, trusted, 2*time.Second))
			t.Cleanup(func() { srv.Close() })

			got := sendWithHeader(t, ln.Addr().String(), proxyHeader(t, tt.version, tt.client))
			require.Equal(t, tt.want, strings.TrimSpace(got))
		})
	}
}

// Behind a PROXY protocol header, a TLS connection's passthrough decision
// goes by the port its socket was accepted on, not the header's
// destination port, as nginx picks a server by its listening socket.
func TestTLSPassthroughPortBehindProxyProtocol(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ports := make(chan int, 1)
	tl := newTLSListener(proxyProtocolListener(ln, nil, 2*time.Second), &tls.Config{}, 2*time.Second, slog.New(slog.DiscardHandler),
		func(port int, _ string) (string, func(), router.PassthroughVerdict) {
			ports <- port
			return "", nil, router.Refuse
		}, nil, false, nil)
	defer tl.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "PROXY TCP4 203.0.113.7 198.51.100.1 5555 443\r\n")
	require.NoError(t, err)
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	go func() {
		_ = tls.Client(c, &tls.Config{ServerName: "db.example.com", InsecureSkipVerify: true}).Handshake()
	}()
	select {
	case p := <-ports:
		assert.Equal(t, ln.Addr().(*net.TCPAddr).Port, p)
	case <-time.After(5 * time.Second):
		t.Fatal("no passthrough decision")
	}
}
