package configmap

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The client connection keys read as ingress-nginx's int fields (seconds,
// requests) and worker-shutdown-timeout as an nginx time; a value nginx
// would refuse, or time every client out with, keeps the default.
func TestConnectionKeys(t *testing.T) {
	s, warns := Parse("ingress", "nginx", map[string]string{"keep-alive": "0", "keep-alive-requests": "0",
		"client-header-timeout": "0x0a", "client-body-timeout": "120", "worker-shutdown-timeout": "5m"})
	require.Empty(t, warns)
	assert.Equal(t, Connections{KeepAlive: 0, KeepAliveRequests: 1, HeaderTimeout: 10 * time.Second, BodyTimeout: 2 * time.Minute, ShutdownTimeout: 5 * time.Minute}, s.Connections)
	s, warns = Parse("ingress", "nginx", map[string]string{"keep-alive": "-1", "keep-alive-requests": "many",
		"client-header-timeout": "0", "client-body-timeout": "10s", "worker-shutdown-timeout": "-1"})
	require.Len(t, warns, 5)
	for _, w := range warns {
		assert.Equal(t, Rejected, w.Reason, w.Key)
	}
	assert.Equal(t, DefaultConnections(), s.Connections)
	assert.Empty(t, s.Keys)
}

// The upstream keep-alive keys as ingress-nginx reads them: counts,
// seconds and an nginx time; 0 connections turns keep-alive off.
func TestUpstreamKeepaliveKeys(t *testing.T) {
	s, warns := Parse("ingress", "nginx", nil)
	require.Empty(t, warns)
	assert.Equal(t, UpstreamKeepalive{Connections: 320, Timeout: time.Minute, Requests: 10000, Time: time.Hour}, s.UpstreamKeepalive)
	s, warns = Parse("ingress", "nginx", map[string]string{"upstream-keepalive-connections": "0", "upstream-keepalive-timeout": "5",
		"upstream-keepalive-requests": "100", "upstream-keepalive-time": "10m"})
	require.Empty(t, warns)
	assert.Equal(t, UpstreamKeepalive{Connections: 0, Timeout: 5 * time.Second, Requests: 100, Time: 10 * time.Minute}, s.UpstreamKeepalive)
	_, warns = Parse("ingress", "nginx", map[string]string{"upstream-keepalive-connections": "-1", "upstream-keepalive-timeout": "5s",
		"upstream-keepalive-requests": "0", "upstream-keepalive-time": "-1"})
	require.Len(t, warns, 4)
}
