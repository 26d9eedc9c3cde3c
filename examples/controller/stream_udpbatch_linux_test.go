package main

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/unix"
)

// Addresses written for recvmmsg and sendmmsg read back as they were:
// IPv4 on an AF_INET socket, IPv4 mapped and IPv6 on an AF_INET6 one; an
// IPv6 address has no AF_INET form.
func TestSockaddr(t *testing.T) {
	var sa unix.RawSockaddrInet6
	for _, c := range []struct {
		a    string
		v6   bool
		want string
		len  uint32
	}{
		{"127.0.0.1:53", false, "127.0.0.1:53", unix.SizeofSockaddrInet4},
		{"[::ffff:127.0.0.1]:5353", false, "127.0.0.1:5353", unix.SizeofSockaddrInet4},
		{"10.1.2.3:65535", true, "[::ffff:10.1.2.3]:65535", unix.SizeofSockaddrInet6},
		{"[fd00::1]:1", true, "[fd00::1]:1", unix.SizeofSockaddrInet6},
		{"[fd00::1]:1", false, "", 0},
	} {
		n := toSockaddr(&sa, netip.MustParseAddrPort(c.a), c.v6)
		assert.Equal(t, c.len, n, c.a)
		if n > 0 {
			assert.Equal(t, c.want, fromSockaddr(&sa).String(), c.a)
		}
	}
}
