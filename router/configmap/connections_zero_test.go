package configmap

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// worker-shutdown-timeout and upstream-keepalive-time "0" are taken, as
// nginx takes worker_shutdown_timeout 0 (no timeout: old workers wait for
// their requests) and keepalive_time 0 (no connection is reused).
func TestZeroTimesTaken(t *testing.T) {
	s, warns := Parse("ingress", "nginx", map[string]string{"worker-shutdown-timeout": "0", "upstream-keepalive-time": "0"})
	require.Empty(t, warns)
	assert.Equal(t, time.Duration(0), s.Connections.ShutdownTimeout)
	assert.Equal(t, time.Duration(0), s.UpstreamKeepalive.Time)
	assert.ElementsMatch(t, []string{"worker-shutdown-timeout", "upstream-keepalive-time"}, s.Keys)
	s, warns = Parse("ingress", "nginx", map[string]string{"worker-shutdown-timeout": "0s", "upstream-keepalive-time": "0ms"})
	require.Empty(t, warns)
	assert.Equal(t, time.Duration(0), s.Connections.ShutdownTimeout)
	assert.Equal(t, time.Duration(0), s.UpstreamKeepalive.Time)
}
