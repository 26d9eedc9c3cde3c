package router_test

import (
	"crypto/tls"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/router"
)

// An IP-literal server name is never a wildcard's name: routing sends it
// to the catch-all (match.notExact skips wildcards for IPv4), and SNI
// selection must give it the default certificate, not the certificate of
// a "*.<last three octets>" TLS host that compile accepts.
func TestIPLiteralSNIGetsDefaultCertificate(t *testing.T) {
	crt, key, _ := pemPair(t, "*.0.0.1")
	snap := shopManifests(t, "*.0.0.1", "127.0.0.1:9", crt, key)
	res := compile.Compile(snap, compile.Options{AllowLoopbackEndpoints: true})
	for _, w := range res.Warnings {
		t.Logf("warning: %v", w)
	}
	def := router.TestCert(t, "default.invalid")
	r := router.New(router.Options{Logger: slog.New(slog.DiscardHandler), DefaultCertificate: def})
	r.Publish(res.Table)

	c, err := r.GetCertificate(&tls.ClientHelloInfo{ServerName: "x.0.0.1"})
	require.NoError(t, err)
	require.True(t, c != def, "a name under the wildcard gets the wildcard's certificate")

	for _, sni := range []string{"10.0.0.1", "127.0.0.1", "10.0.0.1."} {
		c, err := r.GetCertificate(&tls.ClientHelloInfo{ServerName: sni})
		require.NoError(t, err)
		assert.True(t, c == def, "SNI %q is an IP literal: default certificate wanted, got the one for %v", sni, c.Leaf.DNSNames)
	}

	// On the wire: Go's client sends "10.0.0.1" as SNI for the server
	// name "10.0.0.1." (it strips the dot after its IP check).
	leaf := servedCertificate(t, router.HandshakeListener(t, r), "10.0.0.1.")
	assert.Equal(t, def.Leaf.DNSNames, leaf.DNSNames, "certificate served to the IP-literal SNI 10.0.0.1")
}
