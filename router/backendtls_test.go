package router

import (
	"crypto/tls"
	"crypto/x509"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// One set of transports per distinct setting and timeouts, whatever
// table the setting came from; a request through a known setting makes
// none; past maxTLSVariants the kept sets are dropped, not grown.
func TestBackendTLSTransportsPerSetting(t *testing.T) {
	var v tlsVariants
	base := timeouts{connect: 1, read: 2}
	a := match.NewBackendTLS(match.BackendTLS{Secret: "prod/up", Verify: true, VerifyDepth: 1, CAs: []*x509.Certificate{{Raw: []byte{1}}}})
	aAgain := match.NewBackendTLS(*a) // the same setting in a newer table
	b := match.NewBackendTLS(match.BackendTLS{Secret: "prod/up", ServerName: true})

	sa := v.forTLS(a, "", base)
	assert.Same(t, sa, v.forTLS(aAgain, "", base))
	assert.NotSame(t, sa, v.forTLS(b, "", base))
	assert.NotSame(t, sa, v.forTLS(a, "", timeouts{connect: 3, read: 2}))
	require.Len(t, v.sets, 3)
	assert.NotNil(t, sa.h1.TLSClientConfig.VerifyConnection, "verify on")
	assert.Equal(t, "", sa.h1.TLSClientConfig.ServerName, "no SNI")
	assert.Equal(t, match.ProxyHostName, v.forTLS(b, "", base).h1.TLSClientConfig.ServerName, "SNI is $proxy_host without proxy-ssl-name")

	allocs := testing.AllocsPerRun(100, func() { v.forTLS(aAgain, "", base) })
	assert.Zero(t, allocs, "a known setting costs no allocation")

	for i := range maxTLSVariants {
		v.forTLS(match.NewBackendTLS(match.BackendTLS{Secret: "prod/s" + strconv.Itoa(i)}), "", base)
	}
	assert.LessOrEqual(t, len(v.sets), maxTLSVariants)
}

func TestCipherSuitesAndVersions(t *testing.T) {
	// OpenSSL's DEFAULT offers the RSA key exchange and CBC-SHA256 suites
	// Go's client default leaves out.
	assert.Contains(t, cipherSuites("DEFAULT"), tls.TLS_RSA_WITH_AES_128_GCM_SHA256)
	assert.Contains(t, cipherSuites("HIGH:!aNULL"), tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256)
	assert.NotContains(t, cipherSuites("HIGH:!AESGCM"), tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)
	assert.Equal(t, []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384},
		cipherSuites("ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384"))
	assert.Nil(t, cipherSuites("RC4-SHA"), "no cipher match: Go's default")
	lo, hi := tlsVersions([]string{"TLSv1.2", "TLSv1.3"})
	assert.Equal(t, [2]uint16{0x0303, 0x0304}, [2]uint16{lo, hi})
}
