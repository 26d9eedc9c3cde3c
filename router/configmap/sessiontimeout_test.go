package configmap

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nginx takes ssl_session_timeout 0 (and 0s); nothing at all is no time.
func TestSSLSessionTimeoutZero(t *testing.T) {
	for _, v := range []string{"0", "0s", "0m"} {
		s, warns := Parse("ingress-nginx", "cm", map[string]string{"ssl-session-timeout": v})
		assert.Empty(t, warns, v)
		assert.Zero(t, s.TLS.SessionTimeout, v)
	}
	s, warns := Parse("ingress-nginx", "cm", map[string]string{"ssl-session-timeout": " "})
	require.Len(t, warns, 1)
	assert.Equal(t, Rejected, warns[0].Reason)
	assert.Equal(t, DefaultTLS().SessionTimeout, s.TLS.SessionTimeout)
}
