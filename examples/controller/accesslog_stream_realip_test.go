package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

// The stream access log's $remote_addr is the PROXY header's source only
// where nginx's stream realip module puts it there: ingress-nginx writes
// set_real_ip_from into its stream block only with enable-real-ip, so
// without it $remote_addr stays the peer (the load balancer).
func TestStreamAccessLogRemoteAddrFollowsEnableRealIP(t *testing.T) {
	live := startTCPBackend(t, "live", false)
	for _, realIP := range []bool{false, true} {
		p := streamPort(t, "tcp")
		cm := fmt.Sprintf("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: ingress-nginx}\ndata: {enable-real-ip: %q}\n", strconv.FormatBool(realIP))
		var out syncBuffer
		inst, _, _ := startStreams(t, streamManifests(map[int]string{p: "default/echo:9000:PROXY"}, nil, []string{live.port()}, "", cm), func(c *config) {
			c.enableAccessLog, c.accessLogOut = true, &out
			c.configMap = &types.NamespacedName{Namespace: "ingress-nginx", Name: "cfg"}
		})
		c, err := net.Dial("tcp", inst.streams.Addrs()["tcp/"+strconv.Itoa(p)])
		require.NoError(t, err)
		require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
		_, err = io.WriteString(c, "PROXY TCP4 203.0.113.7 192.0.2.1 4444 80\r\n")
		require.NoError(t, err)
		hello, err := bufio.NewReader(c).ReadString('\n')
		require.NoError(t, err)
		assert.Equal(t, "hello from live \n", hello)
		c.Close()
		want := `127\.0\.0\.1`
		if realIP {
			want = `203\.0\.113\.7`
		}
		line := regexp.MustCompile(`(?m)^\[` + want + `\] \S+ \S+\] TCP 200 `)
		require.Eventually(t, func() bool { return line.MatchString(out.String()) }, 5*time.Second, 10*time.Millisecond, "enable-real-ip %v: %s in:\n%s", realIP, line, out.String())
	}
}
