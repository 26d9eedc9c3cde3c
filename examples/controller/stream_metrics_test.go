package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The series of a TCP or UDP service whose ConfigMap entry went are
// removed with the table that drops it, as the request series of an
// Ingress that went are (metrics.published; ingress-nginx's
// RemoveMetrics): churn in the ConfigMaps does not grow the scrape for
// ever. The entries that stay keep theirs.
func TestStreamMetricsOfRemovedEntryGo(t *testing.T) {
	b := startTCPBackend(t, "b", false)
	keep, drop := streamPort(t, "tcp"), streamPort(t, "tcp")
	inst, _, dir := startStreams(t, streamManifests(map[int]string{keep: "default/echo:9000", drop: "default/echo:9000"}, nil, []string{b.port()}, "", ""), func(c *config) {
		c.enableMetrics = true
	})
	for _, p := range []int{keep, drop} {
		c, _, _ := dialLine(t, inst.streams.Addrs()["tcp/"+strconv.Itoa(p)])
		c.Close()
	}
	series := func(body string, port int) bool {
		return strings.Contains(body, fmt.Sprintf(`port="%d",protocol="tcp",service="echo"}`, port))
	}
	var body string
	require.Eventually(t, func() bool {
		body, _ = httpGet("http://" + inst.DebugAddr + "/metrics")
		return series(body, keep) && series(body, drop)
	}, 5*time.Second, 20*time.Millisecond, "metrics:\n%s", body)

	writeFile(t, filepath.Join(dir, "app.yaml"), streamManifests(map[int]string{keep: "default/echo:9000"}, nil, []string{b.port()}, "", ""))
	require.Eventually(t, func() bool {
		body, _ = httpGet("http://" + inst.DebugAddr + "/metrics")
		return !series(body, drop)
	}, 5*time.Second, 20*time.Millisecond, "the removed entry's series stay:\n%s", body)
	assert.True(t, series(body, keep), "the kept entry's series stay")
}
