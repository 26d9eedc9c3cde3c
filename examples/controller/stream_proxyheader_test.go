package main

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// proxyV2 is a PROXY protocol v2 header: the version and command byte,
// the family and transport byte, and the address block.
func proxyV2(verCmd, famTrans byte, block []byte) []byte {
	h := []byte("\r\n\r\n\x00\r\nQUIT\n")
	h = append(h, verCmd, famTrans)
	h = binary.BigEndian.AppendUint16(h, uint16(len(block)))
	return append(h, block...)
}

// A TCP service's client PROXY header is read as nginx reads it
// (ngx_proxy_protocol_read): a v2 header names the client only for the
// PROXY command over TCP of IPv4 or IPv6; one with another command,
// transport or family (LOCAL, UNSPEC, UDP, unix, or a value the
// specification does not define) is skipped whole, the connection served
// with the peer as its client. A wrong version, a length past nginx's
// 4096-byte header buffer, or an address block too short for its family
// closes the connection. A v1 header is read as nginx's parser reads it:
// TCP4 or TCP6, then two addresses of address characters (not checked
// against the family, nor as IPs: one that is none names no client), two
// decimal ports up to 65535 (leading zeros allowed), and CRLF.
func TestReadProxyHeaderAsNginx(t *testing.T) {
	inet4 := []byte{203, 0, 113, 7, 192, 0, 2, 1, 0x11, 0x5c, 0, 80}
	inet6 := append(append(net.ParseIP("2001:db8::7").To16(), net.ParseIP("2001:db8::1").To16()...), 0x11, 0x5c, 0, 80)
	unix := make([]byte, 216)
	copy(unix, "/run/client.sock")
	tlv := append(append([]byte(nil), inet4...), 0x04, 0, 2, 'h', 'i') // a NOOP TLV
	for _, tc := range []struct {
		name string
		in   []byte
		src  string // "" for none
		bad  bool
	}{
		{name: "v1 TCP4", in: []byte("PROXY TCP4 203.0.113.7 192.0.2.1 4444 80\r\n"), src: "203.0.113.7:4444"},
		{name: "v1 UNKNOWN", in: []byte("PROXY UNKNOWN\r\n")},
		{name: "v1 UNKNOWN with addresses", in: []byte("PROXY UNKNOWN 203.0.113.7 192.0.2.1 4444 80\r\n")},
		{name: "v1 port with leading zeros", in: []byte("PROXY TCP4 203.0.113.7 192.0.2.1 0004444 0080\r\n"), src: "203.0.113.7:4444"},
		{name: "v1 port 0", in: []byte("PROXY TCP4 203.0.113.7 192.0.2.1 0 80\r\n"), src: "203.0.113.7:0"},
		{name: "v1 TCP6 naming IPv4 addresses", in: []byte("PROXY TCP6 203.0.113.7 192.0.2.1 4444 80\r\n"), src: "203.0.113.7:4444"},
		{name: "v1 TCP4 naming IPv6 addresses", in: []byte("PROXY TCP4 2001:db8::7 2001:db8::1 4444 80\r\n"), src: "[2001:db8::7]:4444"},
		{name: "v1 address of address characters, no IP", in: []byte("PROXY TCP4 abc.def 192.0.2.1 4444 80\r\n")},
		{name: "v1 port past 65535", in: []byte("PROXY TCP4 203.0.113.7 192.0.2.1 65536 80\r\n"), bad: true},
		{name: "v1 port empty", in: []byte("PROXY TCP4 203.0.113.7 192.0.2.1  80\r\n"), bad: true},
		{name: "v1 signed port", in: []byte("PROXY TCP4 203.0.113.7 192.0.2.1 +4444 80\r\n"), bad: true},
		{name: "v1 lower-case tcp4", in: []byte("PROXY tcp4 203.0.113.7 192.0.2.1 4444 80\r\n"), bad: true},
		{name: "v1 space before CRLF", in: []byte("PROXY TCP4 203.0.113.7 192.0.2.1 4444 80 \r\n"), bad: true},
		{name: "v1 LF only", in: []byte("PROXY TCP4 203.0.113.7 192.0.2.1 4444 80\n"), bad: true},
		{name: "v1 address with another character", in: []byte("PROXY TCP4 203.0.113.7/8 192.0.2.1 4444 80\r\n"), bad: true},
		{name: "v1 addresses missing", in: []byte("PROXY TCP4 203.0.113.7\r\n"), bad: true},
		{name: "v2 PROXY TCP4", in: proxyV2(0x21, 0x11, inet4), src: "203.0.113.7:4444"},
		{name: "v2 PROXY TCP6", in: proxyV2(0x21, 0x21, inet6), src: "[2001:db8::7]:4444"},
		{name: "v2 PROXY TCP4 with a TLV", in: proxyV2(0x21, 0x11, tlv), src: "203.0.113.7:4444"},
		{name: "v2 LOCAL", in: proxyV2(0x20, 0x00, nil)},
		{name: "v2 LOCAL with addresses", in: proxyV2(0x20, 0x11, inet4)},
		{name: "v2 PROXY UNSPEC", in: proxyV2(0x21, 0x00, nil)},
		{name: "v2 PROXY UNSPEC with a block", in: proxyV2(0x21, 0x00, inet4)},
		{name: "v2 PROXY UDP4", in: proxyV2(0x21, 0x12, inet4)},
		{name: "v2 PROXY unix stream", in: proxyV2(0x21, 0x31, append(unix, unix...))},
		{name: "v2 undefined command", in: proxyV2(0x2f, 0x11, inet4)},
		{name: "v2 undefined family", in: proxyV2(0x21, 0x41, inet4)},
		{name: "v2 undefined transport", in: proxyV2(0x21, 0x13, inet4)},
		{name: "v2 version 3", in: proxyV2(0x31, 0x11, inet4), bad: true},
		{name: "v2 TCP4 block too short", in: proxyV2(0x21, 0x11, inet4[:8]), bad: true},
		{name: "v2 TCP6 block too short", in: proxyV2(0x21, 0x21, inet4), bad: true},
		{name: "v2 past nginx's buffer", in: proxyV2(0x20, 0x00, make([]byte, 4096-16+1)), bad: true},
		{name: "v2 at nginx's buffer", in: proxyV2(0x20, 0x00, make([]byte, 4096-16))},
		{name: "v2 cut short", in: proxyV2(0x21, 0x11, inet4)[:20], bad: true},
		{name: "no header", in: []byte("GET / HTTP/1.1\r\n\r\n"), bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append(append([]byte(nil), tc.in...), "data"...)
			if tc.name == "v2 cut short" {
				in = tc.in
			}
			c := &bytesConn{r: bytes.NewReader(in)}
			src, rest, err := readProxyHeader(c, time.Second)
			if tc.bad {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			if tc.src == "" {
				assert.Nil(t, src)
			} else {
				require.NotNil(t, src)
				assert.Equal(t, tc.src, src.String())
				assert.IsType(t, &net.TCPAddr{}, src)
			}
			assert.Equal(t, "data", string(rest)+string(in[len(in)-c.r.Len():]), "the stream after the header")
		})
	}
}
