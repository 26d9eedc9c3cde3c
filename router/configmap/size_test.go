package configmap

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ssl-session-cache-size goes to ssl_session_cache shared:SSL:size, read
// by ngx_parse_size: k and m, no g (nginx refuses "1g").
func TestSessionCacheSizeAsNginx(t *testing.T) {
	s, warns := Parse("ingress", "nginx", map[string]string{"ssl-session-cache-size": "20M"})
	require.Empty(t, warns)
	assert.Equal(t, int64(20<<20), s.TLS.SessionCacheSize)
	for _, v := range []string{"1g", "1G", "1kb", "1.5m"} {
		_, warns = Parse("ingress", "nginx", map[string]string{"ssl-session-cache-size": v})
		if assert.Len(t, warns, 1, v) {
			assert.Equal(t, "ssl-session-cache-size", warns[0].Key)
			assert.Contains(t, warns[0].Message, `"`+v+`"`)
		}
	}
}
