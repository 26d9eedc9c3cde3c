package configmap

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIgnoreInvalidHeadersOff: with ignore-invalid-headers "false" nginx
// passes on every field name it calls invalid; ramjet's servers still
// drop (router/h1) or refuse (HTTP/2, net/http) a name with a byte no
// token has, so the key is applied and the loss named.
func TestIgnoreInvalidHeadersOff(t *testing.T) {
	s, warns := Parse("ingress-nginx", "cm", map[string]string{"ignore-invalid-headers": "false"})
	assert.False(t, s.Headers.IgnoreInvalid)
	assert.Contains(t, s.Keys, "ignore-invalid-headers")
	require.Len(t, warns, 1)
	assert.Equal(t, "ignore-invalid-headers", warns[0].Key)
	assert.Equal(t, Unsupported, warns[0].Reason)
	assert.Contains(t, warns[0].Message, "token")

	_, warns = Parse("ingress-nginx", "cm", map[string]string{"ignore-invalid-headers": "true"})
	assert.Empty(t, warns)
}
