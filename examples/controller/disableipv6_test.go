package main

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ramjet.dev/ramjet/compile"
)

// disable-ipv6: ingress-nginx's template writes no "listen [::]:port"
// line (nginx.tmpl, IsIPV6Enabled = !disable-ipv6), so a listener for
// every address takes IPv4 clients only; an address the flag names
// itself is kept.
func TestDisableIPv6Listeners(t *testing.T) {
	for _, tt := range []struct {
		addr, network, want string
		disable             bool
	}{
		{":8080", "tcp", ":8080", false},
		{":8080", "tcp4", "0.0.0.0:8080", true},
		{"[::]:8080", "udp4", "0.0.0.0:8080", true},
		{"127.0.0.1:8080", "tcp", "127.0.0.1:8080", true},
		{"[::1]:8080", "tcp", "[::1]:8080", true},
	} {
		base := "tcp"
		if tt.network == "udp4" {
			base = "udp"
		}
		network, addr := listenAddr(base, tt.addr, tt.disable)
		assert.Equal(t, tt.network, network, tt.addr)
		assert.Equal(t, tt.want, addr, tt.addr)
	}

	parsed := compile.ParseConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ingress", Name: "nginx"}, Data: map[string]string{"disable-ipv6": "true"}})
	assert.Empty(t, parsed.Warnings(), "served, not warned")
	assert.True(t, parsed.Router.DisableIPv6)

	if ln, err := net.Listen("tcp6", "[::1]:0"); err != nil {
		t.Skip("no IPv6 loopback:", err)
	} else {
		ln.Close()
	}
	for _, disable := range []bool{false, true} {
		network, addr := listenAddr("tcp", ":0", disable)
		ln, err := net.Listen(network, addr)
		require.NoError(t, err)
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second)
		require.NoError(t, err, "IPv4 is served either way")
		c.Close()
		c, err = net.DialTimeout("tcp", "[::1]:"+port, time.Second)
		if disable {
			assert.Error(t, err, "disable-ipv6: no IPv6 listener")
		} else if assert.NoError(t, err) {
			c.Close()
		}
		ln.Close()
	}
}
