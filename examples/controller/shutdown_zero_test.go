package main

import (
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

// worker-shutdown-timeout "0" is nginx's worker_shutdown_timeout 0: no
// timeout, the requests in flight at the stop are waited for however
// long they take.
func TestShutdownTimeoutZeroWaits(t *testing.T) {
	var cfg config
	require.Empty(t, applyConfigMap(&cfg, cmData(map[string]string{"worker-shutdown-timeout": "0"}), nil))
	require.Equal(t, time.Duration(0), cfg.connections().ShutdownTimeout)

	stopWithRequestInFlight(t, 500*time.Millisecond, func(c *config) {
		writeFile(t, filepath.Join(c.manifests, "cfg.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: ingress-nginx}\n"+
			"data: {worker-shutdown-timeout: \"0\"}\n")
		c.configMap = &types.NamespacedName{Namespace: "ingress-nginx", Name: "cfg"}
	})
}

// With worker-shutdown-timeout "0" the open connections of a TCP port
// whose entry went are served on until they end, as nginx's old workers
// serve theirs without a timeout.
func TestStreamGoneGraceZeroKeepsConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer client.Close()
	c := &tcpConn{client: client.(*net.TCPConn), port: 9, cancel: func() {}}
	s := &streams{goneGrace: 0, gone: make(map[int32]*time.Timer), conns: map[*tcpConn]struct{}{c: {}}}
	s.mu.Lock()
	s.closeAfter(9)
	s.mu.Unlock()
	time.Sleep(200 * time.Millisecond)
	c.mu.Lock()
	defer c.mu.Unlock()
	require.False(t, c.aborted)
}
