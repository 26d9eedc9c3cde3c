package router_test

import (
	"crypto/tls"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/router/configmap"
)

// ssl-session-timeout "0" is a value nginx takes (ngx_parse_time reads 0
// seconds): nginx 1.22 with ssl_session_timeout 0 resumes no session,
// from its cache or from a ticket. It is neither refused nor read as the
// default 10m.
func TestTLSSessionTimeoutZeroResumesNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		data map[string]string
	}{
		{"cache", map[string]string{"ssl-session-timeout": "0"}},
		{"cache and tickets", map[string]string{"ssl-session-timeout": "0", "ssl-session-tickets": "true"}},
	} {
		_, warns := configmap.Parse("ingress-nginx", "ingress-nginx-controller", tc.data)
		require.Empty(t, warns, tc.name)
		for _, ver := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
			t.Run(tc.name+"/"+tls.VersionName(ver), func(t *testing.T) {
				_, addr := tlsRouter(t, tc.data)
				cfg := &tls.Config{MaxVersion: ver, ClientSessionCache: tls.NewLRUClientSessionCache(8), ServerName: "shop.example.com"}
				_, err := handshake(addr, cfg)
				require.NoError(t, err)
				st, err := handshake(addr, cfg)
				require.NoError(t, err)
				assert.False(t, st.DidResume)
			})
		}
	}
}
