package main

import (
	"errors"
	"io"
	"net"
	"net/http"
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

	port, arrived := slowBackend(t, 500*time.Millisecond)
	inst, cancel := startOfflineApp(t, port, func(c *config) {
		writeFile(t, filepath.Join(c.manifests, "cfg.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: ingress-nginx}\n"+
			"data: {worker-shutdown-timeout: \"0\"}\n")
		c.configMap = &types.NamespacedName{Namespace: "ingress-nginx", Name: "cfg"}
	})
	defer cancel()
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, "http://"+inst.HTTPAddr+"/x", nil)
		req.Host = "app.test"
		resp, err := client.Do(req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = errors.New(resp.Status)
			}
		}
		done <- err
	}()
	waitFor(t, 5*time.Second, "the request to reach the backend", func() bool { return arrived.Load() == 1 })
	cancel()
	require.NoError(t, <-done)
	require.NoError(t, inst.Wait())
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
