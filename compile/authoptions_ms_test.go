package compile

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// auth-cache-duration's times go to nginx's proxy_cache_valid, which
// counts seconds (ngx_parse_time with is_sec): nginx 1.22 refuses
// "200 500ms" ("invalid time value"), so ramjet does, naming the value.
func TestParseCacheDurationsNoMilliseconds(t *testing.T) {
	for _, bad := range []string{"200 500ms", "any 1ms", "200 5m, 404 10ms"} {
		_, err := parseCacheDurations(bad)
		if assert.Error(t, err, bad) {
			assert.Contains(t, err.Error(), "ms\"", bad)
		}
	}
	_, err := parseCacheDurations("200 5m, any 1y")
	assert.NoError(t, err)
}
