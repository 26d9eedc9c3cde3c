package main

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

// log-format-stream may name $proxy_protocol_addr and
// $proxy_protocol_port, nginx's variables for the source a client's PROXY
// header named (whatever enable-real-ip says), "-" for a connection
// without one.
func TestStreamAccessLogProxyProtocolVars(t *testing.T) {
	live := startTCPBackend(t, "live", false)
	pProxy, pPlain := streamPort(t, "tcp"), streamPort(t, "tcp")
	cm := "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: ingress-nginx}\n" +
		"data: {log-format-stream: \"$remote_addr $proxy_protocol_addr $proxy_protocol_port $server_port\"}\n"
	var out syncBuffer
	inst, _, _ := startStreams(t, streamManifests(map[int]string{pProxy: "default/echo:9000:PROXY", pPlain: "default/echo:9000"}, nil, []string{live.port()}, "", cm), func(c *config) {
		c.enableAccessLog, c.accessLogOut = true, &out
		c.configMap = &types.NamespacedName{Namespace: "ingress-nginx", Name: "cfg"}
	})
	for _, tc := range []struct {
		port   int
		header string
		want   string
	}{
		{pProxy, "PROXY TCP4 203.0.113.7 192.0.2.1 4444 80\r\n", "127.0.0.1 203.0.113.7 4444 " + strconv.Itoa(pProxy)},
		{pProxy, "PROXY UNKNOWN\r\n", "127.0.0.1 - - " + strconv.Itoa(pProxy)},
		{pPlain, "", "127.0.0.1 - - " + strconv.Itoa(pPlain)},
	} {
		c, err := net.Dial("tcp", inst.streams.Addrs()["tcp/"+strconv.Itoa(tc.port)])
		require.NoError(t, err)
		require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
		_, err = io.WriteString(c, tc.header)
		require.NoError(t, err)
		hello, err := bufio.NewReader(c).ReadString('\n')
		require.NoError(t, err)
		assert.Equal(t, "hello from live \n", hello)
		c.Close()
		require.Eventually(t, func() bool { return strings.Contains(out.String(), tc.want+"\n") }, 5*time.Second, 10*time.Millisecond, "%q in:\n%s", tc.want, out.String())
	}
}
